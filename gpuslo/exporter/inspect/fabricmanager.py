"""nvidia-fabricmanager logs for `gpuslo inspect` (registered in `inspect.kinds.KINDS`).

Parsing is `gpuslo.exporter.evidence.fabricmanager`; judging is
`gpuslo.exporter.policy.fabricmanager` (NVSwitch SXid catalogue of the Fabric Manager user
guide, FM's message catalogue, the device-and-severity fallback), shared with the live
`fabricmanager` check so both draw the same conclusions from the same log.
"""

from __future__ import annotations

from gpuslo.exporter.evidence.fabricmanager import (
    looks_like_fabricmanager_log,
    parse_fabricmanager_log,
)
from gpuslo.exporter.inspect.options import InspectOptions
from gpuslo.exporter.policy.fabricmanager import KIND, fabricmanager_findings, packaged_fm_policy
from gpuslo.verdict import Finding

__all__ = ["inspect_fabricmanager_log", "looks_like_fabricmanager_log"]


def inspect_fabricmanager_log(text: str, options: InspectOptions, source: str) -> list[Finding]:
    """Findings for a fabric-manager log file or journal (see `policy.fabricmanager`); empty
    when the text holds no fabric-manager record."""
    log = parse_fabricmanager_log(text, source)
    findings = fabricmanager_findings(log, packaged_fm_policy(), KIND, other_lines=False)
    if log.records:
        findings.append(
            Finding(kind=KIND, class_="ok", signal="log_read", count=len(log.records),
                    message=f"{source}: {len(log.records)} fabric-manager records read")
        )
    return findings
