"""`nvidia-smi --query-gpu=... --format=csv[,noheader][,nounits]`.

Column names are the `--query-gpu` names (`nvidia-smi --help-query-gpu`), with a unit suffix in
the header unless `nounits` (`power.draw [W]`); values may carry units (`124.04 W`). Without a
header the caller names the columns (`--csv-columns`). Lines nvidia-smi prints instead of data
("Unable to determine the device handle ...", NVML errors, "No devices were found") are never
read as GPU rows: they become inaccessible GPUs, error lines or `no_devices`.
"""

from __future__ import annotations

import csv
import re
from collections.abc import Sequence

from gpuslo.errors import ParseError
from gpuslo.exporter.evidence.families import family_of
from gpuslo.exporter.evidence.gpu_status import GpuStatus
from gpuslo.exporter.evidence.nvidia_smi.csv_columns import (  # noqa: F401 - re-exported
    KNOWN_COLUMNS,
    OTHER_COLUMNS,
    check_columns,
    column_name,
)
from gpuslo.exporter.evidence.nvidia_smi.status import reading_from_fields
from gpuslo.exporter.evidence.nvidia_smi.values import (
    NO_DEVICES,
    GpuReading,
    SmiReading,
    handle_error,
    pci_bus_id,
)

_HEADER_CELL = re.compile(r"^[a-z][a-z0-9_.]*(\s*\[[^\]]*\])?$", re.IGNORECASE)
_ERROR_WORDS = re.compile(r"error|failed|unable|not found|no devices|insufficient", re.IGNORECASE)
# A bracketed cell is a field nvidia-smi could not read for that query (`[Unknown Error]`,
# `[Not Supported]`, `[Insufficient Permissions]`; nvidia-smi(1)): the row is still a GPU's.
_BRACKETED = re.compile(r"\[[^\]\n]{0,64}\]")
_ROW_START = re.compile(
    r"^\s*(\d+|GPU-[0-9a-fA-F-]+|[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7])\s*,"
)
MAX_CELL_CHARS = 4096
# A row of the wide `--query-gpu` captures (nvidia_gpu_exporter asks for ~200 columns: a 6 KB
# header) is longer than one cell may be; a line past this is no CSV row.
MAX_LINE_CHARS = MAX_CELL_CHARS * 64
# The command pasted above its output (with or without a prompt): `$ nvidia-smi
# --query-gpu=name,memory.total --format=csv,noheader`. Its `--query-gpu` list names the columns
# of headerless output, in order (nvidia-smi(1): the output has one column per name). On Windows
# the program is `nvidia-smi.exe` (NVIDIA's Windows driver installs it under ...\NVSMI\ or
# System32), typed with or without its path and extension.
QUERY_COMMAND = re.compile(
    r"(?:^|[\s$#%>])(?:[\w./\\:-]{0,256}[/\\])?nvidia-smi(?:\.exe)?\s[^\n]{0,1024}?"
    r"--query-gpu[= ]\s*"
    r"([A-Za-z0-9_.,]+)"
)


def is_header(cells: Sequence[str]) -> bool:
    """True when `cells` look like a `--query-gpu` header naming a column gpuslo reads."""
    return all(_HEADER_CELL.match(c.strip()) for c in cells) and any(
        column_name(c) in KNOWN_COLUMNS for c in cells
    )


def is_error_line(line: str) -> bool:
    """True when `line` is a message nvidia-smi printed instead of a row: an error word outside
    the bracketed cells (`_BRACKETED`)."""
    return _ERROR_WORDS.search(_BRACKETED.sub("", line[:MAX_LINE_CHARS])) is not None


def _cells(line: str, source: str, number: int) -> list[str]:
    if len(line) > MAX_LINE_CHARS:
        raise ParseError(source, f"line of {len(line)} characters is not a CSV row", number)
    try:
        return [cell.strip() for cell in next(csv.reader([line], skipinitialspace=True))]
    except csv.Error as error:
        raise ParseError(source, f"not CSV: {error}", number) from None


def _special(line: str, number: int, state: dict) -> bool:
    """Handle a line nvidia-smi prints instead of data; True when it was one."""
    if NO_DEVICES.match(line):
        state["no_devices"] = True
        return True
    handle = handle_error(line)
    if handle:
        status = GpuStatus(index=handle.index, pci_bus_id=handle.pci, accessible=False, error=line)
        state["gpus"].append(GpuReading(status=status, line=number))
        return True
    return False


def query_columns(text: str) -> tuple[int, list[str]] | None:
    """(line number, column names) of the `nvidia-smi --query-gpu=...` command when it is the
    first non-blank line of `text` (`QUERY_COMMAND`); None otherwise."""
    for number, line in enumerate(text[:65536].splitlines()[:64], 1):
        if not line.strip():
            continue
        match = QUERY_COMMAND.search(line[:MAX_CELL_CHARS])
        if match is None:
            return None
        names = [column_name(name) for name in match.group(1).split(",") if name]
        return (number, names) if names else None
    return None


def is_annotation(line: str) -> bool:
    """True for a line a person added to a pasted capture (`#  Missing :04:00.0`): nvidia-smi's
    CSV never starts a line with `#`, so one that is no pasted command (`QUERY_COMMAND`, a root
    prompt `# nvidia-smi --query-gpu=...`) is a comment, not a row (fresh12 case 1417)."""
    stripped = line.lstrip()
    return stripped.startswith("#") and QUERY_COMMAND.search(stripped[:MAX_CELL_CHARS]) is None


# The identity columns whose values have one shape no other `--query-gpu` field has, so that a
# headerless capture of them names itself (`nvidia-smi --query-gpu=index,pci.bus_id,name
# --format=csv,noheader`): a GPU UUID, a PCI address, a GPU model name, a whole-number index.
_UUID = re.compile(r"^GPU-[0-9a-fA-F]{8}(?:-[0-9a-fA-F]{4}){3}-[0-9a-fA-F]{12}$")
_BRAND = re.compile(r"^(?:NVIDIA|Tesla|Quadro|GeForce|TITAN|GRID)\b")


def _identity(values: Sequence[str], first: bool) -> str | None:
    """The identity field every one of a column's `values` is, or None; a whole number is an
    index only in the first column (where `--query-gpu=index,...` puts it) and distinct per row."""
    if all(_UUID.match(v) for v in values):
        return "uuid"
    if all(pci_bus_id(v) for v in values):
        return "pci.bus_id"
    if all(_BRAND.match(v) or family_of(v) != "unknown" for v in values):
        return "name"
    if first and all(v.isdigit() for v in values) and len(set(values)) == len(values):
        return "index"
    return None


def identity_columns(text: str) -> list[str] | None:
    """Column names for headerless `--query-gpu` rows whose every column is an identity field
    (`_identity`: uuid, pci.bus_id, name, index -- each at most once), else None: health fields
    (counts, Yes/No, Enabled) cannot be told apart by their values, so they still need
    `--csv-columns` or the pasted command. None as well when a header row is present (it wins)."""
    rows = []
    for line in text[:65536].splitlines()[:1024]:
        line = line.strip()
        if not line or is_annotation(line) or is_error_line(line) or len(line) > MAX_CELL_CHARS:
            continue
        try:
            cells = [c.strip() for c in next(csv.reader([line], skipinitialspace=True))]
        except csv.Error:
            return None
        if is_header(cells):
            return None
        rows.append(cells)
    if not rows or len({len(row) for row in rows}) != 1:
        return None
    names = [_identity([row[j] for row in rows], j == 0) for j in range(len(rows[0]))]
    if None in names or len(set(names)) != len(names):
        return None
    return names  # type: ignore[return-value]


def parse_csv(text: str, source: str, columns: Sequence[str] | None = None) -> SmiReading:
    """Parse `--query-gpu` CSV. `columns` names the columns of headerless output, else the
    `--query-gpu` list of the command pasted above it (`query_columns`), else the identity
    columns the values name (`identity_columns`); a header row, when present, wins. Comment
    lines a person added (`is_annotation`) are no rows. Raises ParseError (with the line) for
    headerless output without column names, a row whose field count differs from the header,
    or a malformed known value."""
    state: dict = {"gpus": [], "errors": [], "no_devices": False}
    names = [column_name(c) for c in columns] if columns else None
    command = query_columns(text)
    if command is not None and names is None:
        names = command[1]
    names = names or identity_columns(text)
    header_seen = False
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.strip()
        if command is not None and number == command[0]:
            continue
        if not line or is_annotation(line) or _special(line, number, state):
            continue
        cells = _cells(line, source, number)
        if not header_seen and is_header(cells):
            names, header_seen = [column_name(c) for c in cells], True
            continue
        if names is None:
            raise ParseError(
                source, "CSV without a header row: pass --csv-columns NAME,...", number
            )
        if len(cells) != len(names):
            if _ERROR_WORDS.search(line):
                state["errors"].append((number, line[:200]))
                continue
            raise ParseError(
                source, f"{len(cells)} fields where the columns are {len(names)}", number
            )
        fields = {name: (value, number) for name, value in zip(names, cells, strict=True)}
        state["gpus"].append(reading_from_fields(fields, source, line=number))
    return SmiReading(
        gpus=tuple(state["gpus"]), no_devices=state["no_devices"], errors=tuple(state["errors"])
    )


def looks_like_csv(text: str) -> bool:
    """A `--query-gpu` header naming a known column, or headerless rows that all have the same
    number (at least 2) of fields and start with an index, a GPU UUID or a PCI address, or
    below the `nvidia-smi --query-gpu=...` command (`query_columns`), rows with one field per
    name it queries."""
    lines = [
        line for line in text[:65536].splitlines()[:64] if line.strip() and not is_annotation(line)
    ]
    command = query_columns(text)
    if command is not None:
        return _rows_fit(lines[1:], len(command[1]))
    if not lines or len(lines[0]) > MAX_LINE_CHARS:
        return False
    try:
        if is_header(next(csv.reader([lines[0]], skipinitialspace=True))):
            return True
    except csv.Error:
        return False
    rows = [line for line in lines if not is_error_line(line)]
    widths = {line.count(",") for line in rows}
    return bool(rows) and len(widths) == 1 and all(_ROW_START.match(line) for line in rows)


def _rows_fit(lines: Sequence[str], width: int) -> bool:
    """At least one line, and every line that is no error line a header or a CSV row of `width`
    fields."""
    rows = [line for line in lines if not is_error_line(line)]
    try:
        cells = [next(csv.reader([row[:MAX_LINE_CHARS]], skipinitialspace=True)) for row in rows]
    except (csv.Error, StopIteration):
        return False
    return bool(rows) and all(is_header(row) or len(row) == width for row in cells)
