"""nvidia-fabricmanager logs, parsed (evidence, no judging): `/var/log/fabricmanager.log` and the
journal of `nvidia-fabricmanager.service`.

Shapes (real excerpts: shared corpus 1xx cases, leptonai/gpud's fabric-manager component tests,
NVIDIA/gpu-operator#610, bottlerocket-kernel-kit#142, data-infra/cube-studio#29):

    [Jul 23 2024 07:53:55] [ERROR] [tid 841] detected NVSwitch fatal error 20034 on fid 0 on
        NVSwitch pci bus id 00000000:86:00.0 physical id 3 port 33            (one line)
    [Feb 25 2025 13:59:45] [INFO] [tid 1803] Received an inband message:  Message header ...
    Message payload details:Team release request: ...                       (continuation)
    May 16 15:10:22 host nv-fabricmanager[29850]: [May 16 2025 15:10:21] [INFO] [tid 30042] ...
    11月 15 14:15:47 host nv-fabricmanager[4177]: request to query NVSwitch device ...
    Sep 18 03:19:01 host nvidia-fabricmanager-start.sh[4753]: Detected Pre-NVL5 system
    11月 15 14:15:47 host systemd[1]: nvidia-fabricmanager.service: Control process exited, ...
    ✔ NVSwitch not detected, skipping fabric manager check        (a health tool's verdict line)

The time stamp's month is the locale's abbreviation (`evidence.kernel_log.parse.MONTHS`); a year
is printed in the log's own stamp, not in a journal prefix. A line that is none of these shapes
and follows a record is a continuation of that record (FM prints multi-line messages), up to a
blank line. `parse_fabricmanager_log` never raises on a line it does not know: it keeps every
line, recognised or not, so the policy can judge (or fall back on) each of them.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass

from gpuslo.errors import ParseError
from gpuslo.exporter.evidence.kernel_log.parse import MONTHS
from gpuslo.exporter.evidence.pci import normalise_pci

_STAMP = r"\[(\S{1,12}) {1,2}(\d{1,2}) (\d{4}) (\d\d):(\d\d):(\d\d)\]"
# The stamp may be missing (a record quoted without it: `[ERROR] [tid 12727] detected ...`).
_FILE_LINE = re.compile(
    r"(?:" + _STAMP + r" )?\[(INFO|WARNING|WARN|ERROR|FATAL|CRITICAL|DEBUG|NOTICE)\] "
    r"\[tid (\d{1,12})\] ?(.*)$",
    re.IGNORECASE,
)
# `<syslog or journal prefix> <unit>[pid]: <rest>` for the fabric manager's own processes.
_UNIT_LINE = re.compile(
    r"^.{0,120}?\b(nv-fabricmanager|nvidia-fabricmanager[\w.-]{0,40}|fabricmanager|nvlsm)"
    r"\[(\d{1,10})\]: ?(.*)$"
)
# systemd about the service (`nvidia-fabricmanager.service: ...`, `Starting NVIDIA fabric manager
# service...`, `Failed to start NVIDIA fabric manager service.`).
_SYSTEMD_LINE = re.compile(
    r"^.{0,120}?\bsystemd\[\d{1,10}\]: ?"
    r"(nvidia-fabricmanager\.service: .*|.{0,60}\b[Ff]abric ?[Mm]anager\b.*)$"
)
# A health tool's one-line verdict about the service (leptonai/gpud's fabric-manager component:
# `✔ fabric manager found and active`, `NVSwitch not detected, skipping fabric manager check`).
_STATUS_LINE = re.compile(
    r"^\W{0,4}(?:.{0,40}\b)?(?:fabric ?manager|NVSwitch(?:es)?)\b.{0,60}?"
    r"\b(?:active|inactive|running|not running|detected|not detected|not found|failed)\b",
    re.IGNORECASE,
)
_SWITCH_ERROR = re.compile(
    r"detected NVSwitch (fatal|non-fatal|nonfatal) error (\d{1,6})"
    r"(?: on fid (\d{1,6}))?(?: on NVSwitch pci bus id ([0-9a-fA-F:.]{7,20}))?"
    r"(?: physical id (\d{1,4}))?(?: port (\d{1,4}))?",
    re.IGNORECASE,
)
LOOK_LINES = 400


@dataclass(frozen=True)
class FmRecord:
    """One fabric-manager log record (a multi-line message is one record).

    Attributes:
        line: 1-based line of its first line; lines: physical lines it spans.
        level: `INFO`, `WARNING`, `ERROR`, `FATAL`, ... as printed, upper-cased; "" when the line
            carries none (a journal line of the start script, a systemd line).
        unit: "" for the log file's own lines, else the journal unit (`nv-fabricmanager`,
            `nvidia-fabricmanager-start.sh`, `systemd`).
        tid: the FM thread id, None when not printed.
        timestamp: Unix seconds of the FM stamp (the year it prints), None without one.
        message: the text after the prefix, continuation lines joined with newlines.
    """

    line: int
    lines: int
    level: str
    unit: str
    tid: int | None
    timestamp: float | None
    message: str


@dataclass(frozen=True)
class SwitchError:
    """`detected NVSwitch fatal|non-fatal error N ...` from one record: the SXid `code`, the
    `token` (`Fatal` / `Non-fatal`) FM wrote, the NVSwitch's PCI address (NVML form, None when
    absent), its physical id and port (None when absent), and the record's line."""

    code: int
    token: str
    pci: str | None
    physical_id: int | None
    port: int | None
    line: int
    message: str


@dataclass(frozen=True)
class FmLog:
    """A parsed fabric-manager log: its records and the lines that are no record (1-based line,
    text): blank-separated text nothing recognises, kept for the fallback."""

    records: tuple[FmRecord, ...]
    other: tuple[tuple[int, str], ...]

    def switch_errors(self) -> list[SwitchError]:
        """Every NVSwitch error FM reported, in line order."""
        return [e for r in self.records if (e := switch_error(r)) is not None]


def _stamp(groups: tuple[str, ...]) -> float | None:
    if groups[0] is None:
        return None
    month = MONTHS.get(groups[0].lower().rstrip("."))
    if month is None:
        return None
    day, year, hh, mm, ss = (int(g) for g in groups[1:6])
    try:
        return float(calendar.timegm((year, month, day, hh, mm, ss)))
    except (ValueError, OverflowError):
        return None


def _record(number: int, line: str) -> FmRecord | None:
    """The record a physical line starts, None when it starts none."""
    unit, rest = "", line
    if (match := _UNIT_LINE.match(line)) is not None:
        unit, rest = match.group(1), match.group(3)
    elif (match := _SYSTEMD_LINE.match(line)) is not None:
        return FmRecord(number, 1, "", "systemd", None, None, match.group(1).strip())
    if (match := _FILE_LINE.match(rest.strip())) is not None:
        groups = match.groups()
        return FmRecord(
            number, 1, groups[6].upper(), unit, int(groups[7]), _stamp(groups), groups[8].strip()
        )
    if unit:
        return FmRecord(number, 1, "", unit, None, None, rest.strip())
    if _STATUS_LINE.match(line):
        return FmRecord(number, 1, "", "status", None, None, line.strip())
    return None


def parse_fabricmanager_log(text: str, source: str = "<fabricmanager log>") -> FmLog:
    """Every record of `text` (see the module docstring) and the lines that are none. Raises
    ParseError only for text that is not text (NUL bytes)."""
    if "\0" in text[:65536]:
        raise ParseError(source, "binary data, not a fabric-manager log")
    records: list[FmRecord] = []
    other: list[tuple[int, str]] = []
    open_record = False
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip("\r")
        record = _record(number, line[:65536])
        if record is not None:
            records.append(record)
            open_record = True
        elif not line.strip():
            open_record = False
        elif open_record:
            last = records[-1]
            message = f"{last.message}\n{line.strip()}"
            records[-1] = FmRecord(last.line, number - last.line + 1, last.level, last.unit,
                                   last.tid, last.timestamp, message[:65536])
        else:
            other.append((number, line))
    return FmLog(tuple(records), tuple(other))


def switch_error(record: FmRecord) -> SwitchError | None:
    """The NVSwitch error a record reports, None when it reports none."""
    match = _SWITCH_ERROR.search(record.message[:4096])
    if match is None:
        return None
    token, code, _fid, pci, physical, port = match.groups()
    return SwitchError(
        code=int(code),
        token="Fatal" if token.lower() == "fatal" else "Non-fatal",
        pci=normalise_pci(pci) if pci else None,
        physical_id=int(physical) if physical else None,
        port=int(port) if port else None,
        line=record.line,
        message=record.message.split("\n", 1)[0],
    )


def looks_like_fabricmanager_log(text: str) -> bool:
    """True when one of the first lines is a fabric-manager record: the log file's
    `[Mon DD YYYY hh:mm:ss] [LEVEL] [tid N]` stamp, or a journal line of its processes or of
    systemd about its service."""
    for line in text[:65536].splitlines()[:LOOK_LINES]:
        if _FILE_LINE.match(line.strip()) or _UNIT_LINE.match(line) or _SYSTEMD_LINE.match(line):
            return True
        if _STATUS_LINE.match(line) and "fabric" in line.lower():
            return True
    return False


def claims_line(line: str) -> bool:
    """True when `line` is a fabric-manager record this reader reads (file, journal, systemd or
    a health tool's verdict line about the service)."""
    return _record(0, line[:65536]) is not None
