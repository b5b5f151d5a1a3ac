"""The state machine that turns kernel-log lines into `KernelEvent`s (multi-line events once).

`EventBuilder.feed(line_number, line)` takes lines in order (line numbers may skip: lines with
no marker need not be fed); `finish()` returns the events with the `GPU at PCI` UUID map
applied. Grouping rules (each bounded to a few adjacent lines, so identical complete lines stay
separate events):
- Xid 13: ChID / SM Warp / SM Global / ESR lines of one exception report on one GPU and pid;
- SXid: the Data / Fatal|Non-fatal / Severity lines of one code on one NVSwitch;
- a `The NVIDIA GPU <pci>` block: the NVRM lines that continue its sentence (`(PCI ID: ...)
  installed in this system has` / `fallen off the bus and ...`, or `... is not supported by the`
  / `NVIDIA 470.xx driver release.`) are one `driver_message` event naming that GPU, a
  `fallen_off_bus` event when the sentence says so;
- the `GPU <pci>: GPU has fallen off the bus` line that follows an Xid 79 joins the Xid;
- MMU fault continuation lines (`MMU Fault: ...`, `Fault is of type ...`) after an Xid line;
- a kernel splat (oops, BUG, WARNING, lockup, hung task, RCU stall) whose frames are in an NVIDIA
  module: its header and NVIDIA frame lines are one `kernel_splat` event (`splats.Splats`).
Every other NVRM line is a `driver_message` event with the GPU it names (`GPU 0000:0a:00.0:`,
`(PCI:...)`), or the GPU of the initialisation burst it is part of (`adapter_init`), or none;
the driver-message catalogue (`gpuslo.exporter.policy`) decides which of them matter, so no NVRM
line is dropped here.
"""

from __future__ import annotations

import re
from dataclasses import replace

from gpuslo.exporter.evidence.kernel_log.adapter_init import with_init_gpus
from gpuslo.exporter.evidence.kernel_log.parse import (
    _BARE_XID,
    _BARE_XID_HEAD,
    _CAUSED,
    _GPU_AT,
    _GPU_FALLEN,
    _NVLINK_TOKEN,
    _PID,
    _PORT,
    _RECOVERY,
    _SXID,
    _THE_GPU,
    _XID,
    MIG_SUFFIX,
    XID_WORDS,
    KernelEvent,
    parse_timestamp,
    sxid_part,
    with_uuids,
    xid13_part,
)
from gpuslo.exporter.evidence.kernel_log.splats import Splats
from gpuslo.exporter.evidence.pci import normalise_pci

NEAR_LINES = 4  # lines of one multi-line event are at most this far apart
_PCI_IN_LINE = re.compile(r"\(PCI:([0-9a-fA-F]{4,8}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}(?:\.[0-7])?)\)")
NVLINK5_CODES = range(144, 151)


class EventBuilder:
    """Accumulates events from lines fed in order; see the module docstring."""

    def __init__(self) -> None:
        self.events: list[KernelEvent] = []
        self.ends: list[int] = []  # last line number of each event
        self.uuids: dict[str, str] = {}
        self._last_on_pci: dict[str | None, int] = {}
        self._last_cause: dict[str | None, int] = {}
        self._xid13: dict[int, tuple[int, str]] = {}  # event index -> (rank, pid)
        self._sxid_parts: dict[int, set[str]] = {}
        self._last_sxid: dict[tuple[str | None, int], int] = {}
        # index of the open `The NVIDIA GPU <pci>` block event
        self._block: int | None = None
        self.splats = Splats()

    def _add(self, event: KernelEvent) -> int:
        self.events.append(event)
        self.ends.append(event.line)
        return len(self.events) - 1

    def _extend(self, index: int, line_number: int, **changes: object) -> None:
        event = self.events[index]
        self.events[index] = replace(event, lines=event.lines + 1, **changes)
        self.ends[index] = line_number

    def _near(self, index: int | None, line_number: int) -> bool:
        return index is not None and line_number - self.ends[index] <= NEAR_LINES

    def feed(self, number: int, line: str) -> None:
        """Recognise one physical line (1-based `number`)."""
        if any(word in line for word in XID_WORDS) and self._xid(number, line):
            return
        if "SXid" in line and self._sxid(number, line):
            return
        if "NVRM: GPU at PCI:" in line:
            match = _GPU_AT.search(line)
            if match and normalise_pci(match.group(1)):
                self.uuids[normalise_pci(match.group(1))] = match.group(2)
            return
        if "NVRM: loading NVIDIA" in line:
            stamp, clock, sequence = parse_timestamp(line[: line.index("NVRM: loading")])
            self._add(
                KernelEvent(
                    "driver_load",
                    timestamp=stamp,
                    clock_kind=clock,
                    line=number,
                    message=line.strip(),
                    sequence=sequence,
                )
            )
            return
        if "NVRM: The NVIDIA GPU" in line:
            self._block_start(number, line)
            return
        if "NVRM" in line and self._block_continues(number, line):
            return
        if "fallen off the bus" in line:
            self._fallen(number, line)
            return
        if "NVRM" in line or "SXid" in line or _bare_head(line) >= 0:
            self._driver_message(number, line)  # an SXid or Xid line no recogniser read too
            return
        if "mlx5" in line and "Link" in line:
            self._port(number, line)
            return
        if self.splats.feed(number, line):
            return
        self._continuation(number, line)

    def _xid(self, number: int, line: str) -> bool:
        match = _XID.search(line) or _BARE_XID.search(line)
        if not match:
            return False
        address, instance = match.group("address"), None
        if (mig := MIG_SUFFIX.match(address.strip())) is not None:
            address, instance = mig.group(1), int(mig.group(2))
        pci, code, rest = normalise_pci(address), int(match.group("code")), match.group("rest")
        stamp, clock, sequence = parse_timestamp(line[: match.start("at")])
        pid = _PID.search(rest)
        pid_text = pid.group(1) if pid else ""
        last = self._last_on_pci.get(pci)
        if code == 13 and self._joins_xid13(last, number, rest, pid_text):
            return True
        event = KernelEvent(
            "xid",
            code=code,
            pci=pci,
            timestamp=stamp,
            clock_kind=clock,
            line=number,
            message=line[match.start("at") :].strip(),
            sequence=sequence,
            caused_by=self._cause(code, pci, rest),
            recovery=_recovery(code, rest),
            token=_nvlink_token(code, rest),
            gpu_instance=instance,
        )
        index = self._add(event)
        self._last_on_pci[pci] = index
        if code == 13 and xid13_part(rest) is not None:
            self._xid13[index] = (xid13_part(rest), pid_text)
        if code != 45:
            self._last_cause[pci] = code
        return True

    def _joins_xid13(self, last: int | None, number: int, rest: str, pid: str) -> bool:
        rank = xid13_part(rest)
        if rank is None or last is None or last not in self._xid13 or not self._near(last, number):
            return False
        last_rank, last_pid = self._xid13[last]
        if rank <= last_rank or pid != last_pid:
            return False
        self._xid13[last] = (rank, pid)
        self._extend(last, number)
        return True

    def _cause(self, code: int, pci: str | None, rest: str) -> int | None:
        if code != 45:
            return None
        match = _CAUSED.search(rest)
        return int(match.group(1)) if match else self._last_cause.get(pci)

    def _sxid(self, number: int, line: str) -> bool:
        match = _SXID.search(line)
        if not match:
            return False
        device, pci = match.group(1), normalise_pci(match.group(2))
        code, rest = int(match.group(3)), match.group(4)
        part = sxid_part(rest)
        token = rest.split(",", 1)[0].strip() if part == "token" else None
        token = "Non-fatal" if token == "Nonfatal" else token
        last = self._last_sxid.get((device, code))
        if part != "other" and self._near(last, number) and part not in self._sxid_parts[last]:
            self._sxid_parts[last].add(part)
            self._extend(last, number, **({"token": token} if token else {}))
            return True
        stamp, clock, sequence = parse_timestamp(line[: match.start()])
        event = KernelEvent(
            "sxid",
            code=code,
            pci=pci,
            device=device,
            token=token,
            timestamp=stamp,
            clock_kind=clock,
            line=number,
            message=line[match.start() :].strip(),
            sequence=sequence,
        )
        index = self._add(event)
        self._sxid_parts[index] = {part}
        self._last_sxid[(device, code)] = index
        return True

    def _block_start(self, number: int, line: str) -> None:
        """`NVRM: The NVIDIA GPU <pci>`: opens a block that its continuation lines join."""
        the_gpu = _THE_GPU.search(line)
        start = line.index("NVRM: The NVIDIA GPU")
        stamp, clock, sequence = parse_timestamp(line[:start])
        text = line[start:].strip()
        self._block = self._add(
            KernelEvent(
                "fallen_off_bus" if "fallen off the bus" in text else "driver_message",
                pci=normalise_pci(the_gpu.group(1)) if the_gpu else None,
                timestamp=stamp,
                clock_kind=clock,
                line=number,
                message=text,
                sequence=sequence,
            )
        )
        self._last_on_pci[self.events[self._block].pci] = self._block

    def _block_continues(self, number: int, line: str) -> bool:
        """Join an NVRM line to the open block while its sentence goes on (no full stop yet),
        within `NEAR_LINES`, when the line names no GPU of its own."""
        index = self._block
        if index is None:
            return False
        event = self.events[index]
        if event.message.endswith(".") or not self._near(index, number) or _own_pci(line):
            self._block = None
            return False
        text = line[line.index("NVRM") :].removeprefix("NVRM:").strip()
        message = f"{event.message} {text}"
        kind = "fallen_off_bus" if "fallen off the bus" in message else event.kind
        self._extend(index, number, message=message, kind=kind)
        return True

    def _fallen(self, number: int, line: str) -> None:
        own = _GPU_FALLEN.search(line)
        start = max(line.find("NVRM"), 0)
        pci = normalise_pci(own.group(1)) if own else None
        stamp, clock, sequence = parse_timestamp(line[:start])
        last = self._last_on_pci.get(pci)
        if self._near(last, number) and self.events[last].code == 79 and pci is not None:
            self._extend(last, number)
            return
        event = KernelEvent(
            "fallen_off_bus",
            pci=pci,
            timestamp=stamp,
            clock_kind=clock,
            line=number,
            sequence=sequence,
            message=line[start:].strip(),
        )
        self._last_on_pci[pci] = self._add(event)

    def _driver_message(self, number: int, line: str) -> None:
        start = line.find("NVRM")
        start = line.find("SXid") if start < 0 else start
        start = _bare_head(line) if start < 0 else start
        stamp, clock, sequence = parse_timestamp(line[:start])
        if self._names_previous(number, line, start, stamp):
            return
        self._add(
            KernelEvent(
                "driver_message",
                pci=_own_pci(line),
                timestamp=stamp,
                clock_kind=clock,
                line=number,
                message=line[start:].strip(),
                sequence=sequence,
            )
        )

    def _names_previous(self, number: int, line: str, start: int, stamp: object) -> bool:
        """Join an unstamped, indented NVRM line that names a GPU to the driver message on the line
        just before it when that one names none: dmesg prints the later lines of one multi-line
        printk without a stamp, indented under the first (the driver's `This PCI I/O region
        assigned to your NVIDIA device is invalid:` / `NVRM: BAR1 is 0M @ 0x0
        (PCI:0000:14:00.0)`; fresh11 1318, 1319)."""
        pci = _own_pci(line)
        if (stamp is not None or not line[:start].isspace() or pci is None or not self.events
                or self.ends[-1] != number - 1):
            return False
        event = self.events[-1]
        if event.kind != "driver_message" or event.pci is not None:
            return False
        text = line[start:].removeprefix("NVRM:").strip()
        self._extend(len(self.events) - 1, number, pci=pci, message=f"{event.message} {text}")
        return True

    def _port(self, number: int, line: str) -> None:
        match = _PORT.search(line)
        if not match:
            return
        stamp, clock, sequence = parse_timestamp(line[: match.start()])
        self._add(
            KernelEvent(
                "port_state",
                pci=normalise_pci(match.group(1)),
                device=match.group(2),
                state=match.group(4),
                timestamp=stamp,
                clock_kind=clock,
                line=number,
                message=line[match.start() :].strip(),
                sequence=sequence,
            )
        )

    def _continuation(self, number: int, line: str) -> None:
        if not self.events or self.ends[-1] != number - 1 or self.events[-1].kind != "xid":
            return
        text = line.strip()
        if text.startswith(("MMU Fault", "Fault is of type")):
            event = self.events[-1]
            self._extend(len(self.events) - 1, number, message=f"{event.message} {text}")

    def finish(self) -> list[KernelEvent]:
        """The events in line order, with UUIDs from the `GPU at PCI` map attached."""
        splats = self.splats.events(self.events)
        events = sorted(self.events + splats, key=lambda e: e.line) if splats else self.events
        return with_uuids(with_init_gpus(events), self.uuids)


def _bare_head(line: str) -> int:
    """Where the Xid record without its NVRM tag starts in `line` (`anchors.BARE_XID_HEAD`), -1
    when it holds none."""
    if "Xid" not in line:
        return -1
    match = _BARE_XID_HEAD.search(line)
    return -1 if match is None else match.start("at")


def _own_pci(line: str) -> str | None:
    """The GPU an NVRM line names (`NVRM: GPU 0000:0a:00.0:` or `(PCI:0000:01:00.0)`), NVML's
    form; None when it names none (`GPU6 ...` is the driver's own instance number)."""
    match = _GPU_FALLEN.search(line) or _PCI_IN_LINE.search(line)
    return normalise_pci(match.group(1)) if match else None


def _recovery(code: int, rest: str) -> str | None:
    if code != 154:
        return None
    matches = _RECOVERY.findall(rest)
    return matches[-1].strip() if matches else None


def _nvlink_token(code: int, rest: str) -> str | None:
    if code not in NVLINK5_CODES:
        return None
    match = _NVLINK_TOKEN.search(rest)
    if not match:
        return None
    return "Nonfatal" if match.group(1) == "Non-fatal" else match.group(1)
