"""A check's answer from its child, turned into what the runner keeps: results (anything
malformed is `unknown`/`tool_error`, never `ok`) and facts folded into the latest of each kind,
then read into the snapshot by attribute (`with_facts`). Pure; the runner (`runner.Runner`) and
the exporter's fast path (`xid_fast`) share it.
"""

from __future__ import annotations

import dataclasses
from typing import Any

from gpuslo import names
from gpuslo.exporter.checks.base import (
    FACT_TYPES,
    CheckOutput,
    Facts,
    InventoryFacts,
    KernelLogFacts,
    NetworkFacts,
    ProbeFacts,
    UnrecognisedFacts,
)
from gpuslo.exporter.snapshot import NodeSnapshot
from gpuslo.verdict import NODE_SCOPE, CheckResult

__all__ = ["keep_facts", "results_of", "with_facts"]


def _unknown(check: str, reason: str, message: str) -> CheckResult:
    return CheckResult(
        check=check,
        scope=NODE_SCOPE,
        status=names.STATUS_UNKNOWN,
        reason=reason,
        message=message[:500],
        source="runner",
    )


def with_facts(snapshot: NodeSnapshot, *facts: Facts) -> NodeSnapshot:
    """`snapshot` with the checks' facts, read by attribute (a driver or CUDA version nobody has
    read yet is ""). Pure."""
    for fact in facts:
        if isinstance(fact, InventoryFacts):
            snapshot = dataclasses.replace(
                snapshot, gpus=tuple(fact.gpus), driver_version=fact.driver_version or "",
                cuda_version=fact.cuda_version or "")
        elif isinstance(fact, KernelLogFacts):
            snapshot = dataclasses.replace(
                snapshot, xid_events=fact.xid_events, sxid_events=fact.sxid_events,
                kernel_log_records_lost=fact.kernel_log_records_lost)
        elif isinstance(fact, NetworkFacts):
            snapshot = dataclasses.replace(
                snapshot, network_devices=fact.network_devices,
                network_devices_expected=fact.network_devices_expected)
        elif isinstance(fact, ProbeFacts):
            snapshot = dataclasses.replace(
                snapshot, probe_speed_not_judged=fact.probe_speed_not_judged)
        elif isinstance(fact, UnrecognisedFacts):
            snapshot = dataclasses.replace(
                snapshot, unrecognised_messages=dict(fact.unrecognised_messages))
    return snapshot


def keep_facts(facts: dict[type, Facts], new: Facts) -> None:
    """Keep `new` as the latest of its kind; an InventoryFacts without versions keeps the last
    known ones (as a GPU inventory read from the bus alone cannot tell them); UnrecognisedFacts
    of several checks (each its own sources) are merged."""
    old = facts.get(type(new))
    if isinstance(new, InventoryFacts) and isinstance(old, InventoryFacts):
        new = dataclasses.replace(
            new, driver_version=old.driver_version if new.driver_version is None
            else new.driver_version,
            cuda_version=old.cuda_version if new.cuda_version is None else new.cuda_version)
    if isinstance(new, UnrecognisedFacts) and isinstance(old, UnrecognisedFacts):
        new = UnrecognisedFacts({**old.unrecognised_messages, **new.unrecognised_messages})
    facts[type(new)] = new


def results_of(name: str, kind: str, value: Any, facts: dict[type, Facts]) -> list[CheckResult]:
    """Turn a child's answer into results; anything malformed is `tool_error`, never ok."""
    if kind != "ok":
        return [_unknown(name, kind, str(value))]
    if isinstance(value, CheckOutput):
        given = value.facts if isinstance(value.facts, tuple) else (value.facts,)
        wrong = [type(f).__name__ for f in given if not isinstance(f, FACT_TYPES)]
        if wrong or not given:
            return [_unknown(name, "tool_error", f"check returned facts of {wrong or 'nothing'}")]
        for fact in given:
            keep_facts(facts, fact)
        value = value.results
    if not isinstance(value, list | tuple) or not all(isinstance(r, CheckResult) for r in value):
        return [_unknown(name, "tool_error", f"check returned {type(value).__name__}, not results")]
    if not value:
        return [_unknown(name, "no_data", "check returned no result")]
    wrong = sorted({r.check for r in value if r.check != name})
    if wrong:
        return [_unknown(name, "tool_error", f"check returned results named {wrong}")]
    return list(value)
