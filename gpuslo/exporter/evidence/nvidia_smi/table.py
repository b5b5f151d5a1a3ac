"""The default `nvidia-smi` table, from the 2014 layout ("NVIDIA-SMI 5.325.15") to today's.

Each GPU is a row `| idx  name  persistence | bus-id disp | volatile uncorr. ECC |` followed by
`| fan temp perf pwr:usage/cap | memory-usage | util compute |`. nvidia-smi prints `ERR!` for a
field it could not read: a transient power-reading `ERR!` is not actionable (NVIDIA's answer in
Azure/azhpc-diagnostics#77), an `ERR!` ECC count means ECC health cannot be told, so does an
`ERR!` fan or temperature for thermal health (`values.COOLING_FIELDS`), and a row of `ERR!`
(name or bus id, or most fields) is a GPU the driver cannot talk to.

MIG (NVIDIA MIG user guide; the 470-590 captures): a MIG-enabled GPU is still one GPU row (its
third line says `Enabled` under `MIG M.`), and its ECC cell shows the ECC mode (`On`) instead of a
count: the volatile uncorrectable counts move to the "MIG devices" table, one row per MIG device
`| GPU  GI  CI  MIG | memory | SM  Unc | CE ENC DEC OFA JPG |` (`Unc` = "Vol Unc ECC"). MIG devices
are instances of their GPU, never GPUs: they are not counted, their `Unc` counts are summed into
their GPU's `ecc_dbe_volatile`, and an `ERR!` there is that GPU's ECC read error.

A paste cut inside the table: a GPU whose rows are there is read as they show it (a missing
second row leaves temperature unknown); a GPU row cut before its ECC cell counts the GPU, with
its health unread (unknown, never healthy).
"""

from __future__ import annotations

import re
from dataclasses import replace

from gpuslo.exporter.evidence.families import family_of
from gpuslo.exporter.evidence.gpu_status import GpuStatus
from gpuslo.exporter.evidence.nvidia_smi.values import (
    NO_DEVICES,
    GpuReading,
    SmiReading,
    clean,
    handle_error,
    is_error,
    pci_bus_id,
    to_int,
    to_number,
)

_MODES = ("On", "Off", "N/A", "ERR!", "TCC", "WDDM")
_CUT_ROW = re.compile(r"\|\s{1,6}(\d{1,3})\s{2,}\S")  # `|   2  GeForce GTX 108...  Off  | 0000`
_ECC_MODES = ("On", "Off")  # the ECC cell of a MIG-enabled GPU: the mode, counts per MIG device
_BUS = re.compile(r"[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7]|ERR!")
_VERSION = re.compile(r"Driver Version:\s*(\S+)(?:.*CUDA Version:\s*(\S+))?")
_WHOLE_ROW_ERRORS = 4  # this many ERR! fields in one GPU's rows: the GPU cannot be read at all
MAX_LINE_CHARS = 4096


def _detail_fields(line: str) -> dict[str, str]:
    """Name the fields of a GPU's second row (fan, temperature, perf, power, memory, ...)."""
    stripped = line.rstrip()  # `| a | b | c |`, split in code (a lazy pattern was cubic)
    cells = stripped[1:-1].split("|", 2) if stripped[:1] == stripped[-1:] == "|" else []
    if len(cells) != 3:
        return {}
    first, memory, utilisation = (cell.strip() for cell in cells)
    # `N/A   41C    P0    362W /  700W`: the fan's `N/A` (a GPU with no fan of its own) holds a
    # slash too, so only the last one parts usage from cap.
    usage, slash, cap = first.rpartition("/")
    tokens = [*usage.split(), slash, *cap.split()] if slash else []
    names = ("fan", "temperature", "performance_state", "power_draw", "/", "power_limit")
    fields = dict(zip(names, tokens, strict=False)) if len(tokens) == 6 else {"power": first}
    fields.pop("/", None)
    util = utilisation.split()
    fields.update({"memory_usage": memory, "utilization": util[0] if util else ""})
    return fields


def match_row(line: str) -> tuple[str, ...] | None:
    """A GPU's first row `| 0  NVIDIA H200  On | 00000000:18:00.0 Off | 0 |` as (index, name,
    persistence, bus id, display, ECC), else None (pure). Cut at the `|`s and split in code, in
    linear time: the regular expression it replaces (lazy name between runs of spaces) was
    quadratic on a 4 KiB line."""
    text = line.rstrip()
    if len(text) < 2 or text[0] != "|" or text[-1] != "|":
        return None
    cells = text[1:-1].split("|", 2)
    if len(cells) != 3:
        return None
    first, second = cells[0].split(), cells[1].split()
    if len(first) < 2 or not first[0].isdigit() or not first[0].isascii():
        return None
    if first[-1] not in _MODES or len(second) != 2 or not _BUS.fullmatch(second[0]):
        return None
    head = cells[0].strip()
    name = head[len(first[0]) : len(head) - len(first[-1])].strip()
    return (first[0], name, first[-1], second[0], second[1], cells[2].strip())


def _reading(row: tuple[str, ...], detail: dict[str, str], number: int, source: str) -> GpuReading:
    index, name, persistence, bus, _disp, ecc = row
    cells = {"name": name, "persistence_mode": persistence, "pci.bus_id": bus, **detail}
    errors = [(k, v) for k, v in cells.items() if "ERR!" in v]
    ecc_error, ecc_mode = is_error(ecc), ecc in _ECC_MODES
    if ecc_error:
        errors.append(("ecc_dbe_volatile", ecc))
    whole_row = is_error(name) or is_error(bus) or len(errors) >= _WHOLE_ROW_ERRORS
    model = None if is_error(name) else clean(name)
    status = GpuStatus(
        index=index,
        pci_bus_id=pci_bus_id(bus),
        model=model,
        family=family_of(model) if model else None,
        ecc_dbe_volatile=None
        if ecc_error or ecc_mode
        else to_int(ecc, source, number, "Volatile Uncorr. ECC"),
        temperature_c=None
        if "ERR!" in detail.get("temperature", "")
        else to_number(detail.get("temperature"), source, number + 1, "Temp"),
        power_draw_w=None
        if "ERR!" in detail.get("power_draw", "")
        else to_number(detail.get("power_draw"), source, number + 1, "Pwr:Usage"),
        accessible=False if whole_row else None,
        error="; ".join(f"{k}: {v}" for k, v in errors) if whole_row else None,
    )
    return GpuReading(status=status, field_errors=tuple(errors), line=number)


def match_mig_row(line: str) -> tuple[str, str] | None:
    """A "MIG devices" row `|  0    2   0   0  |  26MiB / 40448MiB | 60      0 | 3 0 3 0 3 |` as
    (GPU index, Vol Unc ECC cell), else None (pure)."""
    text = line.rstrip()
    if len(text) < 2 or text[0] != "|" or text[-1] != "|":
        return None
    cells = text[1:-1].split("|")
    ids = cells[0].split()
    if len(cells) != 4 or len(ids) != 4 or not all(i.isascii() and i.isdigit() for i in ids):
        return None
    sm_unc = cells[2].split()
    return (ids[0], sm_unc[-1]) if len(sm_unc) == 2 else None


def _with_mig_ecc(reading: GpuReading, counts: list[tuple[str, int]], source: str) -> GpuReading:
    """`reading` with the sum of its MIG devices' Vol Unc ECC counts as `ecc_dbe_volatile`, when
    its own ECC cell held none (the mode, in MIG mode); an `ERR!` count is an ECC read error.
    Raises ParseError (with the line) for a count that is no number."""
    status = reading.status
    if not counts or status.ecc_dbe_volatile is not None:
        return reading
    if any(name == "ecc_dbe_volatile" for name, _ in reading.field_errors):
        return reading
    if any(is_error(value) for value, _ in counts):
        errors = (*reading.field_errors, ("ecc_dbe_volatile", "ERR!"))
        return replace(reading, field_errors=errors)
    values = [to_int(value, source, number, "Vol Unc ECC") for value, number in counts]
    known = [value for value in values if value is not None]
    if not known:
        return reading
    return replace(reading, status=replace(status, ecc_dbe_volatile=sum(known)))


def _in_gpu_rows(line: str, before: bool) -> bool:
    """Whether the lines from `line` on are the GPU rows: from the GPU header (`Persistence-M`)
    to the "MIG devices" or "Processes" table."""
    if "Persistence-M" in line:
        return True
    return before and not ("MIG devices" in line or "Processes:" in line)


def _cut_row(line: str, number: int) -> GpuReading | None:
    """A GPU's first row cut before its closing `|` (a paste cut mid-line: `|   2  GeForce GTX
    108...  Off  | 00000000:DB:0`): the GPU is there and counted, but its ECC cell was not read,
    so its health is unknown (`ecc_dbe_volatile` unread). None for any other line."""
    text = line.rstrip()
    match = _CUT_ROW.match(text)
    if match is None or text.endswith("|"):
        return None
    bus = _BUS.search(text)
    status = GpuStatus(index=match.group(1), pci_bus_id=pci_bus_id(bus.group(0)) if bus else None)
    return GpuReading(status=status, field_errors=(("ecc_dbe_volatile", "row cut"),), line=number)


def parse_table(text: str, source: str) -> SmiReading:
    """Parse the default nvidia-smi table. Raises ParseError (with the line) when a GPU row's
    ECC or temperature field has an unexpected shape."""
    lines = text.splitlines()
    gpus, errors, no_devices = [], [], False
    mig: dict[str, list[tuple[str, int]]] = {}  # GPU index -> (Vol Unc ECC cell, line)
    driver = cuda = None
    in_gpus = False
    for position, line in enumerate(lines):
        number = position + 1
        if len(line) > MAX_LINE_CHARS:
            continue
        version = _VERSION.search(line)
        if version:
            driver, cuda = version.group(1), version.group(2)
        handle = handle_error(line)
        if handle:
            status = GpuStatus(
                index=handle.index, pci_bus_id=handle.pci, accessible=False, error=handle.text
            )
            gpus.append(GpuReading(status=status, line=number))
            continue
        no_devices = no_devices or bool(NO_DEVICES.match(line.strip("| ")))
        in_gpus = _in_gpu_rows(line, in_gpus)
        row = match_row(line)
        if row:
            following = lines[position + 1] if position + 1 < len(lines) else ""
            detail = _detail_fields(following[:MAX_LINE_CHARS].rstrip())
            gpus.append(_reading(row, detail, number, source))
        elif in_gpus and (cut := _cut_row(line, number)):
            gpus.append(cut)
        device = match_mig_row(line)
        if device:
            mig.setdefault(device[0], []).append((device[1], number))
    return SmiReading(
        gpus=tuple(_with_mig_ecc(g, mig.get(g.status.index or "", []), source) for g in gpus),
        driver_version=driver,
        cuda_version=cuda,
        no_devices=no_devices,
        errors=tuple(errors),
    )


def looks_like_table(text: str) -> bool:
    """A GPU row of the default table, or its `NVIDIA-SMI ... Driver Version` banner."""
    head = text[:65536]
    if re.search(r"\|\s*NVIDIA-SMI\s+\S+\s+Driver Version:", head):
        return True
    return any(
        match_row(line) for line in head.splitlines() if len(line) < MAX_LINE_CHARS
    )
