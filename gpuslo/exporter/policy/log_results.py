"""Findings of a daemon's log turned into live check results (pure), so the live checks and
`inspect` draw the same conclusions from the same log: the live check judges a log with the very
function `inspect` uses and maps each finding here.

Mapping (the module docstring of `policy.unrecognised` for the unrecognised lines):
- fatal -> `fail` with the finding's reason and action;
- unknown with reason `unrecognised_message` / `unrecognised_driver_message` -> `warn` naming the
  line, and counted (`gpuslo_unrecognised_messages_total`): chatter no catalogue knows must not
  make a GPU unusable until the next reboot;
- any other unknown -> `unknown` with its reason (the source itself failed: never healthy);
- warn, contained, application -> `warn`; ok, noise, secondary -> `ok`.
One result per scope (the worst), the scope being the device the finding names: GPU UUID,
`pci:<bus id>`, `gpu:<index>` (both moved to the inventory GPU by the collector), the NVSwitch or
network device, else `node`.
"""

from __future__ import annotations

from gpuslo import names
from gpuslo.verdict import NODE_SCOPE, CheckResult, Finding

UNRECOGNISED_REASONS = ("unrecognised_message", "unrecognised_driver_message")
_RANK = {names.STATUS_OK: 0, names.STATUS_WARN: 1, names.STATUS_UNKNOWN: 2, names.STATUS_FAIL: 3}
_WARN_CLASSES = (names.CLASS_WARN, names.CLASS_CONTAINED, names.CLASS_APPLICATION)


def scope_of(finding: Finding) -> str:
    """The result scope of the device a finding names (see the module docstring)."""
    if finding.uuid:
        return finding.uuid
    if finding.pci and finding.sxid is None:
        return f"pci:{finding.pci}"
    if finding.device:
        return finding.device
    if finding.sxid is not None and finding.pci:
        return f"nvswitch:{finding.pci}"
    if finding.gpu is not None:
        return f"gpu:{finding.gpu}"
    return NODE_SCOPE


def status_of(finding: Finding) -> tuple[str, str]:
    """(status, reason) of one finding in a live check."""
    if finding.class_ == names.CLASS_FATAL:
        return names.STATUS_FAIL, finding.reason or "xid_fatal"
    if finding.class_ == names.CLASS_UNKNOWN:
        if finding.reason in UNRECOGNISED_REASONS:
            return names.STATUS_WARN, ""
        return names.STATUS_UNKNOWN, finding.reason or "parse_error"
    if finding.class_ in _WARN_CLASSES:
        return names.STATUS_WARN, ""
    return names.STATUS_OK, ""


def unrecognised_count(findings: list[Finding]) -> int:
    """Lines read as unrecognised (the counter's increment): the `events` of the findings whose
    reason is an unrecognised one (fatal-class ones included)."""
    reasons = (*UNRECOGNISED_REASONS, "unrecognised_fatal_message")
    return sum(f.events or 1 for f in findings if f.reason in reasons)


def results_from_findings(
    check: str, findings: list[Finding], source: str, now: float
) -> list[CheckResult]:
    """One result per scope, the worst of its findings (messages of that status joined)."""
    by_scope: dict[str, list[tuple[str, str, Finding]]] = {}
    for finding in findings:
        status, reason = status_of(finding)
        by_scope.setdefault(scope_of(finding), []).append((status, reason, finding))
    out = []
    for scope, items in sorted(by_scope.items()):
        status, reason, worst = max(
            items, key=lambda i: (_RANK[i[0]], names.ACTION_SEVERITY[i[2].action or "none"])
        )
        messages = [f.message for s, _, f in items if s == status and f.message]
        out.append(
            CheckResult(
                check=check,
                scope=scope,
                status=status,
                reason=reason,
                action=(worst.action or names.ACTION_NONE) if status != names.STATUS_OK
                else names.ACTION_NONE,
                message="; ".join(dict.fromkeys(messages))[:300],
                source=source,
                observed_at=now,
                gpu=worst.gpu or "",
            )
        )
    return out
