"""DCGM host-engine logs for `gpuslo inspect` (registered in `inspect.kinds.KINDS`).

Parsing is `gpuslo.exporter.evidence.hostengine`; judging is
`gpuslo.exporter.policy.hostengine` (DCGM health systems and results, the host engine's own
failures, the device-and-severity fallback), shared with the live `hostengine` check.
"""

from __future__ import annotations

from gpuslo.exporter.evidence.hostengine import looks_like_hostengine_log, parse_hostengine_log
from gpuslo.exporter.inspect.options import InspectOptions
from gpuslo.exporter.policy.hostengine import KIND, hostengine_findings, packaged_hostengine_policy
from gpuslo.verdict import Finding

__all__ = ["inspect_hostengine_log", "looks_like_hostengine_log"]


def inspect_hostengine_log(text: str, options: InspectOptions, source: str) -> list[Finding]:
    """Findings for an nv-hostengine log (see `policy.hostengine`), with one `log_read`-style
    inventory finding so a clean log reads healthy, not unknown; empty when the text holds no
    host-engine record."""
    log = parse_hostengine_log(text, source)
    findings = hostengine_findings(log, packaged_hostengine_policy(), KIND, other_lines=False)
    if log.records:
        findings.append(
            Finding(kind=KIND, class_="ok", signal="log_read", count=len(log.records),
                    message=f"{source}: {len(log.records)} host-engine records read")
        )
    return findings
