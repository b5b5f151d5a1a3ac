"""nvidia-fabricmanager logs, parsed (evidence, no judging): `/var/log/fabricmanager.log` and the
journal of `nvidia-fabricmanager.service`.

Shapes (real excerpts: shared corpus 1xx cases, leptonai/gpud's fabric-manager component tests,
NVIDIA/gpu-operator#610, bottlerocket-kernel-kit#142, data-infra/cube-studio#29):

    [Jul 23 2024 07:53:55] [ERROR] [tid 841] detected NVSwitch fatal error 20034 on fid 0 on
        NVSwitch pci bus id 00000000:86:00.0 physical id 3 port 33            (one line)
    [ERROR] not all local fabric manager instances finished their configuration  (quoted bare)
    [Feb 25 2025 13:59:45] [INFO] [tid 1803] Received an inband message:  Message header ...
    Message payload details:Team release request: ...                       (continuation)
    May 16 15:10:22 host nv-fabricmanager[29850]: [May 16 2025 15:10:21] [INFO] [tid 30042] ...
    11月 15 14:15:47 host nv-fabricmanager[4177]: request to query NVSwitch device ...
    Sep 18 03:19:01 host nvidia-fabricmanager-start.sh[4753]: Detected Pre-NVL5 system
    11月 15 14:15:47 host systemd[1]: nvidia-fabricmanager.service: Control process exited, ...
    ✔ NVSwitch not detected, skipping fabric manager check        (a health tool's verdict line)

    ● nvidia-fabricmanager.service - NVIDIA fabric manager service       (`systemctl status`)
    <node ip>: fabric manager config file item: X has an invalid value    (FM's stderr)

The time stamp's month is the locale's abbreviation (`evidence.kernel_log.parse.MONTHS`); a year
is printed in the log's own stamp, not in a journal prefix. What is not FM's own format (journal,
systemd, `systemctl status`, console lines, continuations) is read by the shared daemon-log
reader, `evidence.daemon_log`, which never raises on a line it does not know.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gpuslo.exporter.evidence.daemon_log import DaemonLog, LogRecord, LogSource
from gpuslo.exporter.evidence.kernel_log.parse import MONTHS
from gpuslo.exporter.evidence.pci import normalise_pci

_STAMP = r"\[(\S{1,12}) {1,2}(\d{1,2}) (\d{4}) (\d\d):(\d\d):(\d\d)\]"
# The stamp may be missing (a record quoted without it: `[ERROR] [tid 12727] detected ...`).
_FILE_LINE = re.compile(
    r"(?:" + _STAMP + r" )?\[(INFO|WARNING|WARN|ERROR|FATAL|CRITICAL|DEBUG|NOTICE)\] "
    r"\[tid (\d{1,12})\] ?(.*)$",
    re.IGNORECASE,
)
# A record quoted without its stamp and thread id, `[ERROR] failed to configure all the available
# GPUs or NVSwitches` (fresh16 case 1812, lines quoted in a pull request): a bracketed level is
# common to many logs, so such a line is FM's only when its message names FM or an NVSwitch.
_BARE_LINE = re.compile(
    r"\[(INFO|WARNING|WARN|ERROR|FATAL|CRITICAL|DEBUG|NOTICE)\] (.*)$", re.IGNORECASE
)
_FM_NAMES = re.compile(r"fabric[ -]?manager|NVSwitch|\bFM instances?\b", re.IGNORECASE)
_SWITCH_ERROR = re.compile(
    r"detected NVSwitch (fatal|non-fatal|nonfatal) error (\d{1,6})"
    r"(?: on (?:fid|NodeId) (\d{1,6}))?(?: on NVSwitch pci bus id ([0-9a-fA-F:.]{7,20}))?"
    r"(?: physical id (\d{1,4}))?(?: port (\d{1,4}))?",
    re.IGNORECASE,
)

FmRecord = LogRecord  # one fabric-manager record (`evidence.daemon_log.LogRecord`)


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
class FmLog(DaemonLog):
    """A parsed fabric-manager log (`DaemonLog`: records, and the lines that are no record)."""

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
    import calendar  # here, not with the module: `gpuslo inspect` imports it to detect (issue 30)

    try:
        return float(calendar.timegm((year, month, day, hh, mm, ss)))
    except (ValueError, OverflowError):
        return None


def _own(number: int, text: str, unit: str) -> LogRecord | None:
    """A record in FM's own `[stamp] [LEVEL] [tid N] message` format, None when not one."""
    if (match := _FILE_LINE.match(text)) is None:
        bare = _BARE_LINE.match(text)
        if bare is None or _FM_NAMES.search(bare.group(2)[:4096]) is None:
            return None
        return LogRecord(number, 1, bare.group(1).upper(), unit, None, bare.group(2).strip())
    groups = match.groups()
    return LogRecord(number, 1, groups[6].upper(), unit, _stamp(groups), groups[8].strip(),
                     tid=int(groups[7]))


SOURCE = LogSource(
    what="fabric-manager",
    own=_own,
    processes=r"nv-fabricmanager|nvidia-fabricmanager[\w.-]{0,40}|fabricmanager|nvlsm",
    services=r"nvidia-fabricmanager",
    prose=r"[Ff]abric ?[Mm]anager",
    names=r"fabric[ -]?manager|NVSwitch(?:es)?",
    own_names=r"fabric",
    log_type=FmLog,
)


def parse_fabricmanager_log(text: str, source: str = "<fabricmanager log>") -> FmLog:
    """Every record of `text` (see the module docstring) and the lines that are none. Raises
    ParseError only for text that is not text (NUL bytes)."""
    return SOURCE.parse(text, source)  # an FmLog


def switch_error(record: LogRecord) -> SwitchError | None:
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
    `[Mon DD YYYY hh:mm:ss] [LEVEL] [tid N]` stamp, a journal line of its processes, a systemd
    line or `systemctl status` block of its service, or a console line naming it."""
    return SOURCE.looks_like(text)


def claims_line(line: str) -> bool:
    """True when `line` is a fabric-manager record this reader reads."""
    return SOURCE.claims_line(line)
