"""dcgm-exporter's own log for `gpuslo inspect` (kind `dcgm-exporter-log`).

The exporter is the observability path, not a GPU: what its log can show is whether that path
works. Three outcomes, from the exporter's documented start-up sequence (`Starting dcgm-exporter`,
`DCGM successfully initialized!`, entity initialisation, `Starting webserver`) and Go/logrus
process-exit conventions (`level=fatal`, `FATA[0000]` in logrus's terminal form, exits the
process; a Go `panic:`, a runtime `fatal error:` or a signal trace such as `SIGABRT: abort` kill
it; a line that is only `exit status N`, N > 0, is Go's `exec.ExitError` text, printed when the
process the container runs exits non-zero, as dcgm-exporter 4.x does with no message of its own:
NVIDIA/dcgm-exporter#612, fresh3 case 419, a CrashLoopBackOff):

- the host engine gone (`HOST_ENGINE_GONE`): `source_stale` — the page is frozen or empty;
- the exporter dying (fatal/panic log level, Go panic or signal trace, an uncaught C++ exception,
  a bare non-zero `exit status`), or its host engine not starting or not running (nv-hostengine's
  own console messages, `dcgmi.HOST_ENGINE_START_FAILED` and `HOST_ENGINE_FAILED`; the
  shell-script exporter of gpu-monitoring-tools prints them between its own echo lines, and its
  `Collecting metrics at ...` after a failed start collects nothing, fresh21 case 2320) — a start
  failure that a later start line follows (`dcgmi.HOST_ENGINE_STARTED`: the start was retried and
  the engine runs) is not one:
  `source_unavailable` — no metrics are exported at all; unknown, layer observability, never
  fatal (the GPUs were not judged);
- a clean start (`DCGM successfully initialized!`, no error-level line other than benign
  start-up notes such as `no switches to monitor` on a node without NVSwitch): one `log_read`
  inventory finding, ok.

Anything else gives no finding, which `inspect` reads as unknown (a log alone proves little).

The log read through the journal (`journalctl -u dcgm-exporter -u nvidia-dcgm`) is the same log:
each line's `<stamp> <host> dcgm-exporter[pid]: ` prefix is taken off first (`dcgmi.exporter_line`),
and systemd's lines of the exporter's unit or the host engine's unit exiting non-zero or killed by
a signal are the exporter's death and the host engine gone (fresh14 case 1617).

The lines behind the first two outcomes are this reader's (`claims_line`): the device-and-severity
fallback (`inspect.fallback.log_lines`) does not judge them again — `FATA[0000] Error adding GPU 1
to group: This GPU is not supported by DCGM` (NVIDIA/DCGM#61) is the exporter's death, not a
fault of GPU 1 — except a line whose message (the logger's level taken out) carries a
fatal-class word about a device: this reader judges the exporter, not the GPUs, so that line
still fails closed in the fallback.
"""

from __future__ import annotations

import re

from gpuslo import names
from gpuslo.exporter.evidence.dcgm.dcgmi import (
    HOST_ENGINE_GONE,
    HOST_ENGINE_START_FAILED,
    HOST_ENGINE_STARTED,
    exporter_line,
    logrus_tty,
    unretried,
)
from gpuslo.exporter.inspect.options import InspectOptions
from gpuslo.exporter.policy.severity_words import is_fatal_text, without_log_level
from gpuslo.verdict import Finding

__all__ = ["claims_line", "inspect_exporter_log"]

KIND = "dcgm-exporter-log"

# The exporter process dying: logrus fatal/panic (exit; key=value or terminal `FATA[0000]`), slog
# JSON/text FATAL, a Go panic or runtime fatal error, a Go signal trace (cgo abort, segfault), an
# uncaught C++ exception.
PROCESS_DEATH = re.compile(
    r"\blevel=\"?(?:fatal|panic)\b|\"level\":\"(?:fatal|panic)\"|"
    + logrus_tty("FATA", "PANI")
    + r"|^\s*panic: |^\s*fatal error: |^\s*SIG(?:ABRT|SEGV|BUS|ILL|FPE): |"
    r"terminate called after throwing|"
    r"^\s*(?:\[pod/[^\]]*\]\s*)?exit status [1-9]\d*\s*$",
    re.I,
)
# nv-hostengine's own console messages that it is not running (DCGM nv-hostengine main: `--term`
# found no engine; its start failures are `dcgmi.HOST_ENGINE_START_FAILED`, read apart since a
# later start line retries them), and the shell-script exporter's own stop (`Stopping NVIDIA host
# engine...`: its `dcgmi dmon` pipeline ended, nothing is collected).
HOST_ENGINE_FAILED = re.compile(
    r"Unable to terminate host engine, it may not be running|"
    r"nv-hostengine failed to parse command line|"
    r"^\s*Stopping NVIDIA host engine\.\.\.\s*$|Could not stop NVIDIA host engine",
    re.I,
)
# systemd's own lines when the journal of the units is read (`journalctl -u dcgm-exporter -u
# nvidia-dcgm`; fresh14 case 1617, DGX A100 with DCGM 3.3.5): the exporter's unit exiting non-zero
# or killed by a signal is the exporter's death; the host engine's unit (`nvidia-dcgm.service`, the
# older `dcgm.service`) likewise is the engine gone, nothing is exported (systemd.exec(5): `code=
# exited, status=N`, `code=killed|dumped, status=SIG`; `Failed with result '...'`).
_UNIT_DOWN = (
    r"\.service: (?:Main process exited, code=(?:exited, status=[1-9]|killed|dumped)"
    r"|Failed with result)"
)
EXPORTER_UNIT_DOWN = re.compile(r"\bsystemd\[\d{1,10}\]: dcgm-exporter" + _UNIT_DOWN)
HOST_ENGINE_UNIT_DOWN = re.compile(r"\bsystemd\[\d{1,10}\]: (?:nvidia-)?dcgm" + _UNIT_DOWN)
STARTED = re.compile(r"DCGM successfully initiali[sz]ed", re.I)
ERROR_LEVEL = re.compile(
    r"\blevel=\"?(?:error|err|warn|warning)\b|\"level\":\"(?:error|warn)|"
    + logrus_tty("ERRO", "WARN"),
    re.I,
)
# Start-up notes the exporter logs when a node lacks a device family or a profiling module: not a
# loss of the metrics it does export.
BENIGN = re.compile(
    r"no switches to monitor|not collecting (?:switch|link|cpu|nvswitch|nvlink)|"
    r"falling back to|skipping line|doesn't have sufficient privileges|"
    r"DCP (?:metrics )?(?:not|are not) (?:loaded|supported|enabled)|"
    r"not collecting DCP",
    re.I,
)


_READ = (PROCESS_DEATH, HOST_ENGINE_GONE, HOST_ENGINE_FAILED, HOST_ENGINE_START_FAILED,
         EXPORTER_UNIT_DOWN, HOST_ENGINE_UNIT_DOWN)


def claims_line(line: str) -> bool:
    """True when this reader reads `line` (the exporter's death, its host engine gone or not
    started) and its message carries no fatal-class word (module doc)."""
    text = exporter_line(line[:4096])
    if not any(p.search(text) for p in _READ):
        return False
    return not is_fatal_text(without_log_level(text))


def _lines(text: str, *patterns: re.Pattern) -> list[int]:
    """1-based numbers of the lines (journal prefix of the exporter taken off) one of `patterns`
    is found in."""
    return [
        n for n, line in enumerate(text.splitlines(), 1)
        if any(p.search(exporter_line(line[:4096])) for p in patterns)
    ]


def _unknown(signal: str, reason: str, hits: list[int], message: str) -> Finding:
    return Finding(
        kind=KIND,
        class_=names.CLASS_UNKNOWN,
        signal=signal,
        reason=reason,
        layer=names.LAYER_OBSERVABILITY,
        events=len(hits),
        line=hits[0],
        message=message,
    )


def _clean_start(text: str) -> bool:
    if not _lines(text, STARTED):
        return False
    lines = text.splitlines()
    return all(BENIGN.search(lines[n - 1]) for n in _lines(text, ERROR_LEVEL))


def inspect_exporter_log(text: str, options: InspectOptions, source: str) -> list[Finding]:
    """`inspect` entry for dcgm-exporter logs (see the module docstring): `source_stale` and/or
    `source_unavailable` (unknown, observability, `events` = lines, `line` = the first), else one
    ok `log_read` for a clean start, else nothing."""
    findings = []
    gone = _lines(text, HOST_ENGINE_GONE)
    if gone:
        findings.append(_unknown(
            "source_stale", "stale_data", gone,
            "dcgm-exporter lost its DCGM host engine: its metrics are stale or absent",
        ))
    dead = _lines(text, PROCESS_DEATH, EXPORTER_UNIT_DOWN)
    if dead:
        findings.append(_unknown(
            "source_unavailable", "tool_error", dead,
            "dcgm-exporter exited (fatal error, panic, abort or non-zero exit status): no GPU "
            "metrics are exported",
        ))
    started = _lines(text, HOST_ENGINE_STARTED)
    not_started = unretried(_lines(text, HOST_ENGINE_START_FAILED), started)
    failed = sorted({*_lines(text, HOST_ENGINE_FAILED, HOST_ENGINE_UNIT_DOWN), *not_started})
    if failed:
        findings.append(_unknown(
            "source_unavailable", "tool_error", failed,
            "nv-hostengine did not start or is not running, or the exporter stopped collecting: "
            "no GPU metrics are exported",
        ))
    if findings or not _clean_start(text):
        return findings
    records = sum(1 for line in text.splitlines() if line.strip())
    return [Finding(
        kind=KIND, class_=names.CLASS_OK, signal="log_read", count=records,
        message="dcgm-exporter started: DCGM initialised, no error reported",
    )]
