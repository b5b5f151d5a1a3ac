"""A daemon's log as a reader sees it (evidence, no judging): what the nvidia-fabricmanager and
nv-hostengine readers share, so one piece of code reads both (`evidence.fabricmanager`,
`evidence.hostengine` only give their own line format and names).

Every line of a daemon's log is one of these (tried in order), else the continuation of the
record before it (a multi-line message) up to a blank line, else a line that is no record:

- a journal or syslog line of one of its processes, `<prefix> <process>[pid]: <rest>`: the rest
  is read in the daemon's own format, else kept as a record without level;
- a systemd line about its service (`systemd[1]: nvidia-fabricmanager.service: ...`, or one that
  names the daemon: `Failed to start NVIDIA fabric manager service.`);
- the header of a `systemctl status <service>` block (`● nvidia-dcgm.service - ...`): the block's
  property lines continue it, and its `Active:` line becomes the record's first line
  (`nvidia-dcgm.service: active (running) since ...`), whatever service wraps the log;
- a line in the daemon's own format (`LogSource.own`);
- a console line: the daemon's stderr or a health tool's one-line verdict that names the daemon
  with a state word (`fabric manager is not active`, `Failed to start DCGM Server: -7`,
  `<node>: fabric manager config file item: X has an invalid value`).

A reader never raises on a line it does not know: it keeps every line, recognised or not, so the
policy can judge (or fall back on) each of them. Only binary text (NUL bytes) is a ParseError.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass, replace

from gpuslo.errors import ParseError

LOOK_LINES = 400
MAX_LINE = 65536
_STATE_WORDS = (
    r"active|inactive|running|not running|detected|not detected|not found|failed|invalid|"
    r"exiting|aborting|terminated|crash\w*"
)
_START_FAILED = r"(?:failed|unable|could not|cannot) to (?:start|initiali[sz]e)"
_STATUS_PROPERTY = re.compile(r"^\s*Active:\s*(\S.*)$")


@dataclass(frozen=True)
class LogRecord:
    """One record of a daemon's log (a multi-line message is one record).

    Attributes:
        line: 1-based line of its first line; lines: physical lines it spans.
        level: the level as printed, upper-cased (`INFO`, `ERROR`, ...); "" when the line carries
            none (a journal line of a start script, a systemd line, a console line).
        unit: "" for the daemon's own lines, else the journal process (`nv-fabricmanager`),
            `systemd`, `systemctl` (a status block) or `console`.
        timestamp: Unix seconds of the daemon's own stamp, None without one.
        message: the text after the prefix, continuation lines joined with newlines.
        tid: the thread id the daemon printed, None when none.
        module: the module tag that opened the message (`Health`, `NvSwitch`), "" when none.
    """

    line: int
    lines: int
    level: str
    unit: str
    timestamp: float | None
    message: str
    tid: int | None = None
    module: str = ""


@dataclass(frozen=True)
class DaemonLog:
    """A parsed daemon log: its records, and the lines that are no record (1-based line, text),
    kept for the device-and-severity fallback."""

    records: tuple[LogRecord, ...]
    other: tuple[tuple[int, str], ...]


Own = Callable[[int, str, str], "LogRecord | None"]


@dataclass(frozen=True)
class LogSource:
    """One daemon's log: `what` it is (in messages), `own` (number, text, unit) -> record for
    its own line format, and regular-expression alternations for its journal `processes`, its
    systemd `services` (unit names without `.service`), the `prose` naming it in a systemd line
    (case-sensitive), the `names` naming it in a console line (any case) and, of those, the
    `own_names` that name it alone (default: all of them; `NVSwitch` alone is no fabric-manager
    output). `quorum`: detected when at least half the first lines are records, else when any
    is. `log_type`: the `DaemonLog` (sub)class `parse` returns."""

    what: str
    own: Own
    processes: str
    services: str
    prose: str
    names: str
    own_names: str = ""
    quorum: bool = False
    log_type: type[DaemonLog] = DaemonLog

    def __post_init__(self) -> None:
        patterns = {
            "_journal": rf"^.{{0,120}}?\b({self.processes})\[(\d{{1,10}})\]: ?(.*)$",
            "_systemd": rf"^.{{0,120}}?\bsystemd\[\d{{1,10}}\]: ?((?:{self.services})\.service: "
            rf".*|.{{0,60}}\b(?:{self.prose})\b.*)$",
            "_header": rf"^\s{{0,8}}\W{{0,2}}\s{{0,2}}((?:{self.services})\.service)(?: - .*)?$",
            "_console": rf"^\W{{0,4}}(?:.{{0,40}}\b)?(?:(?:{self.names})\b.{{0,60}}?\b"
            rf"(?:{_STATE_WORDS})|(?:{_START_FAILED}).{{0,20}}?\b(?:{self.names}))\b",
        }
        for name, pattern in patterns.items():
            flags = re.IGNORECASE if name == "_console" else 0
            object.__setattr__(self, name, re.compile(pattern, flags))

    def record(self, number: int, line: str) -> LogRecord | None:
        """The record a physical line starts, None when it starts none (module docstring)."""
        if (match := self._journal.match(line)) is not None:
            unit, rest = match.group(1), match.group(3)
            own = self.own(number, rest.strip(), unit)
            return own or LogRecord(number, 1, "", unit, None, rest.strip())
        if (match := self._systemd.match(line)) is not None:
            return LogRecord(number, 1, "", "systemd", None, match.group(1).strip())
        if (match := self._header.match(line)) is not None:
            return LogRecord(number, 1, "", "systemctl", None, line.strip())
        own = self.own(number, line.strip(), "")
        if own is not None:
            return own
        if self._console.match(line):
            return LogRecord(number, 1, "", "console", None, line.strip())
        return None

    def claims_line(self, line: str) -> bool:
        """True when `line` starts a record of this log (a console line: one naming the daemon
        by one of its `own_names`, so a kernel line about an NVSwitch stays the kernel reader's
        and the fallback's)."""
        record = self.record(0, line[:MAX_LINE])
        return record is not None and bool(self._counts(record))

    def parse(self, text: str, source: str) -> DaemonLog:
        """The records of `text` and the lines that are no record. Raises ParseError only for
        text that is not text (NUL bytes)."""
        if "\0" in text[:MAX_LINE]:
            raise ParseError(source, f"binary data, not a {self.what} log")
        records: list[LogRecord] = []
        other: list[tuple[int, str]] = []
        open_record = False
        for number, raw in enumerate(text.splitlines(), 1):
            line = raw.rstrip("\r")[:MAX_LINE]
            record = self.record(number, line)
            if record is not None:
                records.append(record)
                open_record = True
            elif not line.strip():
                open_record = False
            elif open_record:
                records[-1] = _continued(records[-1], number, line.strip())
            else:
                other.append((number, line))
        return self.log_type(tuple(records), tuple(other))

    def looks_like(self, text: str) -> bool:
        """True when the first lines hold a record of this log (see `quorum`; a `systemctl
        status` block counts with its property lines); a console line counts only when it names
        the daemon by one of its `own_names`."""
        lines = [line for line in text[:MAX_LINE].splitlines()[:LOOK_LINES] if line.strip()]
        if "\0" in text[:MAX_LINE]:
            return False
        records = self.parse("\n".join(lines), "<head>").records
        hits = sum(self._counts(record) for record in records)
        return hits > 0 and (not self.quorum or hits * 2 >= len(lines))

    def _counts(self, record: LogRecord) -> int:
        if record.unit == "systemctl":
            return record.lines
        if record.unit != "console":
            return 1
        return re.search(self.own_names or self.names, record.message.split("\n", 1)[0],
                         re.IGNORECASE) is not None


def _continued(last: LogRecord, number: int, line: str) -> LogRecord:
    """`last` with `line` joined; a status block's `Active:` line becomes its first line."""
    message = f"{last.message}\n{line}"
    if last.unit == "systemctl" and (active := _STATUS_PROPERTY.match(line)) is not None:
        unit = last.message.split("\n", 1)[0].split()
        name = next((word for word in unit if word.endswith(".service")), "service")
        message = f"{name}: {active.group(1)}\n{last.message}"
    return replace(last, lines=number - last.line + 1, message=message[:MAX_LINE])
