"""DCGM command-line and log evidence: `dcgmi dmon` tables, `dcgmi health` reports (JSON or the
boxed text) and dcgm-exporter log lines, parsed; `gpuslo.exporter.inspect.dcgm` judges them.

- `dcgmi dmon -e 230` prints `#Entity  XIDER` with one row per entity (`GPU 1   120`); XIDER is
  field 230 `DCGM_FI_DEV_XID_ERRORS`, the LAST Xid (0 = none), classified with the Xid policy.
- `dcgmi health -c -j` prints `{"body": {"Overall Health": {"value": "Healthy"}, ...}}`; the
  boxed text form is the same tree (`links.parse_tree`). Past the overall result each entity
  with an incident is a node `GPU` > `<gpuId>` (its health) > `Errors` > `<system>` (`Memory
  system`, `InfoROM system`, ...: its health, the messages as overflow lines), from DCGM's
  `dcgmi/Health.cpp`. DCGM health watches can say Healthy while the same node shows a fatal Xid
  (shared/corpus case 034): the Xid finding wins, since the verdict takes the worst finding.
- dcgm-exporter logs `Host engine connection invalid/disconnected` (and similar) when
  nv-hostengine is gone; from then on the exporter serves nothing current: `source_stale`,
  layer observability, verdict unknown.
"""

from __future__ import annotations

import json
import re
from dataclasses import dataclass

from gpuslo.errors import ParseError
from gpuslo.exporter.evidence.dcgm.links import load_json_document, parse_tree, tree_from_json

# ------------------------------------------------------------------------------------------------
# dcgmi dmon / dcgmi health
# ------------------------------------------------------------------------------------------------

_DMON_HEAD = re.compile(r"#[ \t]*Entity[ \t]+(\S.*)$")
# The row's values greedy and split in code: `(.+?)\s*$` was quadratic on a long line.
_DMON_ROW = re.compile(r"^(GPU(?:-I|-CI)?)\s++(\d+)\s++(.+)$")
_HEALTH_TEXT = re.compile(r"Overall Health\W+(Healthy|Warning|Failure)\b", re.I)


def parse_dmon(text: str) -> list[dict[str, str]]:
    """Rows of `dcgmi dmon` tables: `[{"entity": "GPU", "id": "1", "XIDER": "120"}, ...]`.

    Columns come from the `#Entity` header line (a later header starts a new table); values are
    kept as printed (`N/A` included). Never raises."""
    rows, columns = [], []
    for line in text.splitlines():
        if match := _DMON_HEAD.search(line[:4096]):  # after a prompt or pasted noise too
            columns = match.group(1).split()
        elif columns and (match := _DMON_ROW.match(line.strip())):
            values = match.group(3).split()
            row = {"entity": match.group(1), "id": match.group(2)}
            row.update(zip(columns, values, strict=False))
            rows.append(row)
    return rows


def parse_health(text: str, source: str = "<dcgmi health>") -> str | None:
    """`Healthy`, `Warning` or `Failure` from `dcgmi health -c` (JSON or text); None when the text
    holds no health report. Raises ParseError when a JSON report is broken or lacks the field."""
    start = re.search(r"^[ \t]*+\{", text, re.M)  # `^\s*` crossed lines: quadratic
    if start and '"Overall Health"' in text[start.start() :]:
        try:
            report, _ = json.JSONDecoder().raw_decode(text[start.start() :].lstrip())
            value = report["body"]["Overall Health"]["value"]
        except (ValueError, KeyError, TypeError) as error:
            line = text[: start.start()].count("\n") + 1
            raise ParseError(
                source, f"dcgmi health JSON unreadable ({error})", line=line, field="Overall Health"
            ) from None
        return str(value).strip().capitalize()
    match = _HEALTH_TEXT.search(text)
    return match.group(1).capitalize() if match else None


@dataclass(frozen=True)
class HealthIncident:
    """One entity's incidents in a `dcgmi health -c` report: entity group (`GPU`, `NvSwitch`),
    its DCGM id, its health (`Healthy`, `Warning`, `Failure`), and per system (`Memory system`)
    its health and messages."""

    group: str
    entity: str
    health: str
    systems: tuple[tuple[str, str, tuple[str, ...]], ...] = ()


def parse_health_incidents(text: str, source: str = "<dcgmi health>") -> list[HealthIncident]:
    """The entities a `dcgmi health -c` report lists under the overall result (JSON or boxed
    text), in report order; empty when it lists none. Raises ParseError for a broken JSON
    document."""
    document = load_json_document(text, source) if '"Overall Health"' in text else None
    _, tree = tree_from_json(document) if document else parse_tree(text, source)
    out = []
    for group, node in tree.items():
        if group == "Overall Health":
            continue
        for entity, child in node.children.items():
            errors = child.children.get("Errors")
            systems = tuple(
                (system, leaf.value.strip(), tuple(leaf.overflow))
                for system, leaf in (errors.children.items() if errors else ())
            )
            out.append(HealthIncident(group, entity, child.value.strip(), systems))
    return out


def looks_like_dcgmi(text: str) -> bool:
    """True for `dcgmi dmon` tables or `dcgmi health` reports."""
    head = text[:200_000]
    return bool(re.search(r"^#[ \t]*Entity[ \t]+\S", head, re.M) or "Overall Health" in head)


# ------------------------------------------------------------------------------------------------
# dcgm-exporter logs
# ------------------------------------------------------------------------------------------------

# logrus's text formatter on a terminal (the dcgm-exporter container run with `-t`, or a log copied
# from one): the level upper-cased and cut to four letters, coloured by ANSI escapes unless
# stripped, then `[seconds since start]` or `[full timestamp]` and the message padded to 44
# columns (sirupsen/logrus text_formatter.go, printColored; NVIDIA/DCGM#61, fresh9 case 1117).
LOGRUS_LEVELS = ("TRAC", "DEBU", "INFO", "WARN", "ERRO", "FATA", "PANI")


def logrus_tty(*levels: str) -> str:
    """Regular-expression source of a logrus terminal line (`FATA[0000] msg`) at one of `levels`
    (all of `LOGRUS_LEVELS` when none); the level letters match in upper case only."""
    alternatives = "|".join(levels or LOGRUS_LEVELS)
    return rf"^\s*(?:\x1b\[[\d;]*m)?(?-i:{alternatives})(?:\x1b\[[\d;]*m)?\[[^\]\n]{{1,40}}\] "


# logrus/slog text (`time="..." level=error msg="..."`), slog JSON (`{"time":"...","level":...`)
# and logrus's terminal form (`logrus_tty`).
_LOG_LINE = re.compile(
    r'^\s*(?:(?:time=\S+|\S*\d{4}-\d\d-\d\dT\S+)\s+level=\w+\s+msg=|\{"time":"[^"]+","level":")|'
    + logrus_tty(),
    re.I,
)
_EXPORTER_START = re.compile(r"Starting dcgm-exporter|DCGM successfully initialized", re.I)
# The echo lines of the shell-script dcgm-exporter (NVIDIA/gpu-monitoring-tools, before the Go
# exporter, 1.x): it starts nv-hostengine, then pipes `dcgmi dmon` into a .prom file.
SCRIPT_EXPORTER_LINE = re.compile(
    r"^\s*(?:Starting NVIDIA host engine\.\.\.|Collecting metrics at \S+ every \d+ms\.\.\."
    r"|Stopping NVIDIA host engine\.\.\.)\s*$",
    re.M,
)
# Messages that mean nv-hostengine (DCGM) is gone or unreachable, so the page is frozen or empty.
HOST_ENGINE_GONE = re.compile(
    r"host engine connection invalid|connection to the host engine|"
    r"(?:error|unable|failed|cannot|could not)[^\"]{0,40}connect[^\"]{0,40}"
    r"(?:host ?engine|nv-hostengine)|"
    r"DCGM (?:is )?not initialized|hostengine[^\"]{0,40}(?:disconnected|not running)",
    re.I,
)
# nv-hostengine's own messages that it did not start (DCGM `hostengine/src/main.cpp`: `Err: Failed
# to start DCGM Server: <ret>` when the server cannot listen, `Error: DCGM engine failed to
# initialize` / `Error: DCGM failed to start embedded engine` to syslog, the parent's `Got error N
# while waiting for SIGUSR1 from child process`, `Host engine failed to write to pid file`; the
# legacy engine of DCGM 1.x, `LwcmServer::run`: `Failed to start host engine server`, which the
# shell-script dcgm-exporter of gpu-monitoring-tools prints between its own echo lines, fresh21
# case 2320). After any of them no DCGM data exists, whatever the exporter prints next.
HOST_ENGINE_START_FAILED = re.compile(
    r"Failed to start (?:DCGM Server|(?:the )?(?:NVIDIA )?host ?engine(?: server)?)\b|"
    r"Host engine failed to (?:start|initiali[sz]e|write to pid file)|"
    r"DCGM (?:engine )?failed to (?:initiali[sz]e|start embedded engine)|"
    r"Got error -?\d+ while waiting for SIGUSR1 from child process",
    re.I,
)
# The host engine's own line once it listens (main.cpp: `Started host engine version <v> using
# port number: <n>` / `socket path: <p>` / `vsock CID:PORT: <c>`), and the Go exporter's once it
# holds a DCGM handle (`DCGM successfully initialized!`): a start failure before such a line was
# retried, and the engine runs.
HOST_ENGINE_STARTED = re.compile(
    r"^\W{0,4}Started host engine version \S+ using (?:port number|socket path|vsock)|"
    r"DCGM successfully initiali[sz]ed",
    re.I,
)


def unretried(failed: list[int], started: list[int]) -> list[int]:
    """The start failures (1-based lines) that no later start line (`HOST_ENGINE_STARTED`, lines
    in `started`) follows: the ones that left the host engine down. [] when every failure was
    retried successfully."""
    last = max(started, default=0)
    return [n for n in failed if n > last]


# The prefix journald / syslog puts before each line of the exporter's process (`Feb 28 16:29:08
# gx01 dcgm-exporter[1298060]: time=...`, `journalctl -u dcgm-exporter`; fresh14 case 1617): the
# rest is the exporter's own line.
_JOURNAL_PREFIX = re.compile(r"^.{0,120}?\bdcgm-exporter\[\d{1,10}\]: ?")


def exporter_line(line: str) -> str:
    """`line` without a journal or syslog prefix of the dcgm-exporter process, else unchanged."""
    match = _JOURNAL_PREFIX.match(line[:4096])
    return line[match.end():] if match else line


def looks_like_exporter_log(text: str) -> bool:
    """True for dcgm-exporter log lines (logrus/slog `time=... level=... msg=...`, slog JSON,
    logrus's terminal `INFO[0000] ...`), each also behind a journal prefix of its process:
    half the first 50 lines, or any one of them naming the exporter's start (`Starting
    dcgm-exporter`, `DCGM successfully initialized`) — a short log pasted under a `kubectl get
    pods` table or above the Go trace of the exporter's own crash; or any one of them an echo
    line of the shell-script exporter (`SCRIPT_EXPORTER_LINE`)."""
    lines = [exporter_line(line) for line in text[:200_000].splitlines() if line.strip()][:50]
    if any(SCRIPT_EXPORTER_LINE.match(line) for line in lines):
        return True
    logged = [line for line in lines if _LOG_LINE.match(line)]
    if any(_EXPORTER_START.search(line) for line in logged):
        return True
    return bool(lines) and len(logged) * 2 >= len(lines)
