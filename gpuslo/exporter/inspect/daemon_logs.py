"""Daemon logs for `gpuslo inspect` (registered in `registry.KINDS`): the nvidia-fabricmanager
log and DCGM's nv-hostengine log, read by one inspector.

Parsing is `evidence.fabricmanager` / `evidence.hostengine` (over the shared
`evidence.daemon_log` reader); judging is `policy.fabricmanager` (NVSwitch SXid catalogue of the
Fabric Manager user guide, FM's message catalogue) / `policy.hostengine` (DCGM health systems
and results, the host engine's own failures), with the device-and-severity fallback — the same
functions the live `fabricmanager` and `hostengine` checks use, so both draw the same
conclusions from the same log. The lines that are no record are left to `inspect`'s fallback,
which runs once over a text several log readers share.
"""

from __future__ import annotations

from collections.abc import Callable

from gpuslo.exporter.evidence.daemon_log import DaemonLog
from gpuslo.exporter.evidence.fabricmanager import (
    looks_like_fabricmanager_log,
    parse_fabricmanager_log,
)
from gpuslo.exporter.evidence.hostengine import looks_like_hostengine_log, parse_hostengine_log
from gpuslo.exporter.inspect.options import InspectOptions
from gpuslo.exporter.policy import fabricmanager, hostengine
from gpuslo.verdict import Finding

SOURCE_UNAVAILABLE = "source_unavailable"

__all__ = [
    "inspect_fabricmanager_log",
    "inspect_hostengine_log",
    "looks_like_fabricmanager_log",
    "looks_like_hostengine_log",
]

Inspector = Callable[[str, InspectOptions, str], list[Finding]]


def log_inspector(
    kind: str,
    what: str,
    parse: Callable[[str, str], DaemonLog],
    judge: Callable[[DaemonLog, str], list[Finding]],
) -> Inspector:
    """The `inspect` entry for one daemon's log: its findings, with one `log_read` inventory
    finding (count = records) so a clean log reads healthy, not unknown; no `log_read` when a
    finding says the daemon itself did not run or answer (`source_unavailable`: its records are
    no reading of the node, fresh21 case 2320); empty when the text holds no record of the
    daemon."""

    def inspect_log(text: str, options: InspectOptions, source: str) -> list[Finding]:
        log = parse(text, source)
        findings = judge(log, kind)
        if log.records and not any(f.signal == SOURCE_UNAVAILABLE for f in findings):
            findings.append(
                Finding(kind=kind, class_="ok", signal="log_read", count=len(log.records),
                        message=f"{source}: {len(log.records)} {what} records read")
            )
        return findings

    inspect_log.__name__ = f"inspect_{kind.replace('-', '_')}"
    return inspect_log


inspect_fabricmanager_log = log_inspector(
    fabricmanager.KIND, "fabric-manager", parse_fabricmanager_log,
    lambda log, kind: fabricmanager.fabricmanager_findings(
        log, fabricmanager.packaged_fm_policy(), kind, other_lines=False),
)
inspect_hostengine_log = log_inspector(
    hostengine.KIND, "host-engine", parse_hostengine_log,
    lambda log, kind: hostengine.hostengine_findings(
        log, hostengine.packaged_hostengine_policy(), kind, other_lines=False),
)
