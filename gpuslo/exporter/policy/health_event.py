"""Judging health events (pure): DCGM error codes by DCGM's own error table, Xids by the Xid
policy. The data is `gpuslo/data/dcgm_errors.yaml` (its header names the source: DCGM's
dcgm_errors.c severity per code).

Rules:
- an event whose message names an Xid (`DCGM_FR_XID_ERROR` ... `Detected XID 31`), or a syslog
  condition whose code is the Xid itself, is that Xid classed by the Xid policy (an Xid 31 is
  the application's fault, whatever the condition's recommended action);
- any other code: DCGM's severity — ISOLATE and RESET fatal (a recovery-action code asks for
  its action), MONITOR and CONFIG warn (CONFIG is no GPU fault: `DCGM_FR_IMEX_UNHEALTHY` on a
  node with no IMEX domain, ECC disabled), TRIAGE and UNKNOWN unknown (needs a look: never
  healthy, never a fault by itself — `DCGM_FR_NVLINK_DOWN` is raised for PCIe GPUs with no
  NVLink at all); a code the table does not know is unknown;
- one `dcgm_health` finding per (GPU, code), with the health `system` of the code's category.
"""

from __future__ import annotations

import functools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from gpuslo import names
from gpuslo.exporter.evidence.health_event import HealthEvent
from gpuslo.exporter.policy.classify import xid_finding
from gpuslo.exporter.policy.xid import XidPolicy
from gpuslo.packaged import packaged_yaml
from gpuslo.verdict import Finding

PACKAGED = "dcgm_errors.yaml"
KIND = "health-event"
REASONS = {
    "memory": "ecc_uncorrectable",
    "nvlink": "nvlink_errors",
    "nvswitch": "sxid_fatal",
    "pcie": "pcie_degraded",
    "driver": "recovery_action",
    "xid": "xid_fatal",
}


@dataclass(frozen=True)
class ErrorRule:
    """What DCGM's table says of one code: its severity, class, action and health system."""

    severity: str
    class_: str
    action: str
    system: str


@functools.cache
def packaged_error_table() -> Mapping[str, ErrorRule]:
    """`DCGM_FR_<NAME>` -> its rule, from the packaged table (compiled once)."""
    return table_from_mapping(packaged_yaml(PACKAGED))


def table_from_mapping(data: Mapping[str, Any]) -> dict[str, ErrorRule]:
    """Compile the table (the packaged file is checked by the tests)."""
    out = {}
    for severity, systems in data["codes"].items():
        meaning = data["severities"][severity]
        for system, codes in systems.items():
            for code in codes:
                action = data["recovery"].get(code, meaning["action"])
                out[f"DCGM_FR_{code}"] = ErrorRule(severity, meaning["class"], action, system)
    return out


def _where(event: HealthEvent) -> dict[str, Any]:
    return {"gpu": event.gpu, "pci": event.pci, "uuid": event.uuid}


def event_finding(
    event: HealthEvent, table: Mapping[str, ErrorRule], policy: XidPolicy, family: str | None
) -> Finding:
    """The finding for one event (see the module docstring)."""
    xid = int(event.code) if event.code.isdigit() else event.xid
    if xid is not None and (event.code.isdigit() or event.code == "DCGM_FR_XID_ERROR"):
        finding = xid_finding(KIND, xid, policy, family=family, **_where(event))
        finding.message = f"{event.condition or 'health event'}: {event.message}"[:300]
        finding.line = event.line
        return finding
    rule = table.get(event.code)
    if rule is None:
        class_, action, system, severity = names.CLASS_UNKNOWN, names.ACTION_NONE, "other", "?"
    else:
        class_, action, system, severity = rule.class_, rule.action, rule.system, rule.severity
    fatal, unknown = class_ == names.CLASS_FATAL, class_ == names.CLASS_UNKNOWN
    return Finding(
        kind=KIND,
        class_=class_,
        signal="dcgm_health",
        reason=REASONS.get(system, "diagnostic_failed") if fatal else "tool_error" if unknown
        else None,
        layer=None if fatal or unknown else names.LAYER_NODE,
        action=action if fatal else names.ACTION_NONE,
        message=f"{event.code} ({severity} in DCGM's error table; recommended "
        f"{event.action or 'nothing'}): {event.message}"[:300],
        extra={"system": system, "error_code": event.code},
        line=event.line,
        **_where(event),
    )


def health_event_findings(
    events: list[HealthEvent], policy: XidPolicy, family: str | None = None
) -> list[Finding]:
    """One finding per (GPU, code, class) of the events, `events` counting repeats."""
    table = packaged_error_table()
    grouped: dict[tuple, Finding] = {}
    for event in events:
        finding = event_finding(event, table, policy, family)
        key = (finding.gpu, finding.pci, event.code, finding.xid, finding.class_)
        if key in grouped:
            grouped[key].events = (grouped[key].events or 1) + 1
        else:
            finding.events = 1
            grouped[key] = finding
    return list(grouped.values())
