"""DCGM host-engine logs (`/var/log/nv-hostengine.log`), parsed (evidence, no judging).

Shapes (DCGM's `common/DcgmLogging` plog formatter; real excerpts NVIDIA/DCGM#270, #210,
NVIDIA/dcgm-exporter#328, #144):

    2025-01-23 22:23:53.671 DEBUG [46345:46359] Thread ... running [/builds/.../x.cpp:300] [f]
    2024-05-21 14:34:39.463 ERROR [3218460:3218461] GetLatestSample returned No data ... [..] [..]
    ERROR [1514002:1514004] [[Health]] Detected a WARNING in health system Thermal: '...GPU 2...

i.e. an optional `YYYY-MM-DD hh:mm:ss.mmm` stamp, the level, `[pid:tid]`, the message, and the
source location and function in trailing brackets (dropped here). A module tag (`[[Health]]`,
`[[NvSwitch]]`) may open the message. Journal lines of `nv-hostengine`, systemd lines and
`systemctl status` blocks of `nvidia-dcgm.service`, console lines (`Failed to start DCGM
Server: -7`, nv-hostengine's stderr) and continuation lines are read by the shared daemon-log
reader, `evidence.daemon_log`.

`health_report` reads the health watch's report out of a record's message:
`Detected a WARNING|FAILURE in health system <System>: '<text>'`, with the GPU the text names.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gpuslo.exporter.evidence.daemon_log import DaemonLog, LogRecord, LogSource

LEVELS = ("VERBOSE", "DEBUG", "INFO", "WARN", "WARNING", "ERROR", "CRITICAL", "FATAL", "NONE")
_LINE = re.compile(
    r"^(?:(\d{4})-(\d\d)-(\d\d)[ T](\d\d):(\d\d):(\d\d)(?:\.\d{1,9})?\s+)?"
    r"(VERBOSE|DEBUG|INFO|WARN|WARNING|ERROR|CRITICAL|FATAL)\s+\[(\d{1,10}):(\d{1,10})\]\s?(.*)$"
)
_LOCATION = re.compile(r"(?:\s\[[^\[\]]{1,300}:\d{1,7}\])?(?:\s\[[^\[\]]{1,200}\])?\s*$")
_MODULE = re.compile(r"^\[\[(\w{1,40})\]\]\s?")
_HEALTH = re.compile(
    r"Detected an? (WARNING|WARN|FAILURE|FAIL|ERROR) in health system ([A-Za-z][\w -]{0,30}?)"
    r"\s*:\s*'?(.*)",
    re.IGNORECASE,
)
_GPU = re.compile(r"\b(?:GPU|gpuId|GPU ID|gpu)\s?#?(\d{1,3})\b(?![-:.]\d)")


HeRecord = LogRecord  # one host-engine record (`evidence.daemon_log.LogRecord`)
HostEngineLog = DaemonLog


@dataclass(frozen=True)
class HealthReport:
    """A health-watch result in the log: `severity` as printed (WARNING, FAILURE), the health
    `system` as printed (`Thermal`, `NVLink`, `PCIe`), the GPU index the text names (None when it
    names none), the text, and the record's line."""

    severity: str
    system: str
    gpu: str | None
    text: str
    line: int


def _own(number: int, text: str, unit: str) -> LogRecord | None:
    """A record in the host engine's own `[stamp] LEVEL [pid:tid] message` format, else None."""
    match = _LINE.match(text)
    if match is None:
        return None
    groups = match.groups()
    stamp = None
    if groups[0] is not None:
        import calendar  # here, not with the module: `gpuslo inspect` imports it to detect

        try:
            stamp = float(calendar.timegm(tuple(int(g) for g in groups[:6])))
        except (ValueError, OverflowError):
            stamp = None
    message = _LOCATION.sub("", groups[9])
    module = ""
    if (tag := _MODULE.match(message)) is not None:
        module, message = tag.group(1), message[tag.end():]
    return LogRecord(number, 1, groups[6], unit, stamp, message.strip(), module=module)


SOURCE = LogSource(
    what="host-engine",
    own=_own,
    processes=r"nv-hostengine",
    services=r"nvidia-dcgm|dcgm|nv-hostengine",
    prose=r"DCGM|nv-hostengine",
    names=r"nv-hostengine|DCGM (?:Server|host ?engine)|host ?engine",
    quorum=True,
)


def parse_hostengine_log(text: str, source: str = "<nv-hostengine log>") -> DaemonLog:
    """Every record of `text` (see the module docstring). Raises ParseError only for binary
    data (NUL bytes)."""
    return SOURCE.parse(text, source)


def health_report(record: HeRecord) -> HealthReport | None:
    """The health-watch result a record carries, None when it carries none."""
    match = _HEALTH.search(record.message[:4096])
    if match is None:
        return None
    severity, system, text = match.groups()
    gpu = _GPU.search(text)
    return HealthReport(
        severity=severity.upper(),
        system=system.strip(),
        gpu=str(int(gpu.group(1))) if gpu else None,
        text=text.strip().rstrip("'"),
        line=record.line,
    )


def looks_like_hostengine_log(text: str) -> bool:
    """True when at least half of the first non-blank lines (and at least one) are host-engine
    records (`LEVEL [pid:tid]` with or without the stamp, its journal, systemd or console
    lines)."""
    return SOURCE.looks_like(text)


def claims_line(line: str) -> bool:
    """True when `line` is a host-engine record."""
    return SOURCE.claims_line(line)
