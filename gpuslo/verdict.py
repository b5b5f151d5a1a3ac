"""Check results, inspect findings and the fail-closed rules that combine them into verdicts.

Rules (shared/DESIGN.md §2):
- a GPU or node is `healthy` only when every required check is `ok` or `warn` and fresh;
- any `fail` makes it `unhealthy`, except the return-to-service gate's own `fail` with reason
  `validation` (`names.REASON_VALIDATION`: a fault cleared, the GPU not yet validated);
- otherwise any `unknown` result, or a result older than 3 × its check's interval, makes it
  `unknown`; no results at all is `unknown` too. Unknown is never healthy;
- otherwise a `validation` result makes it `validating` (not usable, platform time).
Worst first: unhealthy, unknown, validating, healthy.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import Any

from gpuslo import names, signal_names

STALE_INTERVALS = 3  # a result older than this many intervals no longer counts (DESIGN.md §2)
NODE_SCOPE = "node"


@dataclass(frozen=True)
class CheckResult:
    """One answer of one check about one scope.

    Attributes:
        check: check name (`gpu_inventory`, `xid`, ...).
        scope: `node`, a GPU UUID (`GPU-...`) or a device name (`mlx5_0`, `efa0`).
        status: one of `names.STATUSES`.
        reason: one of `names.REASONS` when status is fail/unknown, else "".
        layer: one of `names.LAYERS`; derived from the reason when not given.
        action: one of `names.ACTIONS`.
        message: one human line.
        source: evidence source (`nvml`, `kmsg`, `dcgm-exporter http://...`, ...).
        observed_at: end of the run that produced this result (Unix seconds).
        duration_s: how long that run took (seconds).
        applicable: False when the check does not apply to this node (no NVSwitch, no EFA); such a
            result has status `ok` and says so in its message.
        gpu: GPU index as a string when the scope is a GPU, else "".
    """

    check: str
    scope: str
    status: str
    reason: str = ""
    layer: str = ""
    action: str = names.ACTION_NONE
    message: str = ""
    source: str = ""
    observed_at: float = 0.0
    duration_s: float = 0.0
    applicable: bool = True
    gpu: str = ""

    def __post_init__(self) -> None:
        if self.status not in names.STATUSES:
            raise ValueError(f"status {self.status!r} not in {names.STATUSES}")
        if self.status in (names.STATUS_FAIL, names.STATUS_UNKNOWN) and not self.reason:
            raise ValueError(f"a {self.status} result needs a reason ({self.check})")
        if self.reason and self.reason not in names.REASON_LAYER:
            raise ValueError(f"reason {self.reason!r} is not in names.REASON_LAYER")
        if self.action not in names.ACTIONS:
            raise ValueError(f"action {self.action!r} not in names.ACTIONS")
        if not self.layer and self.reason:
            object.__setattr__(self, "layer", names.layer_of(self.reason))

    def to_dict(self) -> dict[str, Any]:
        """The result as a JSON-ready dict with sorted keys."""
        return dict(sorted(dataclasses.asdict(self).items()))

    def is_stale(self, now: float, interval_s: float) -> bool:
        """True when this result is older than `STALE_INTERVALS` × `interval_s` at `now`."""
        return now - self.observed_at > STALE_INTERVALS * interval_s


def stale_as_unknown(result: CheckResult, now: float, interval_s: float) -> CheckResult:
    """Return `result`, or an `unknown`/`stale_data` copy of it when it is older than
    3 intervals."""
    if not result.is_stale(now, interval_s):
        return result
    age = now - result.observed_at
    return dataclasses.replace(
        result,
        status=names.STATUS_UNKNOWN,
        reason="stale_data",
        layer=names.LAYER_OBSERVABILITY,
        action=names.ACTION_NONE,
        message=f"last result is {age:.0f} s old (more than {STALE_INTERVALS} x {interval_s:g} s)",
    )


def combine(statuses: Iterable[str], validating: bool = False) -> str:
    """Fold check statuses into a verdict: any fail → unhealthy; else any unknown, or none at all,
    → unknown; else `validating` when `validating`, else healthy."""
    seen = set(statuses)
    if names.STATUS_FAIL in seen:
        return names.VERDICT_UNHEALTHY
    if not seen or names.STATUS_UNKNOWN in seen:
        return names.VERDICT_UNKNOWN
    return names.VERDICT_VALIDATING if validating else names.VERDICT_HEALTHY


def is_validating(result: CheckResult) -> bool:
    """True for the return-to-service gate's result of a GPU being validated."""
    return result.status == names.STATUS_FAIL and result.reason == names.REASON_VALIDATION


def verdict_of(results: Iterable[CheckResult]) -> str:
    """The verdict over `results` (the module's rules); none at all → unknown."""
    results = list(results)
    gate = any(is_validating(r) for r in results)
    statuses = [r.status for r in results if not is_validating(r)]
    if gate and not statuses:
        statuses = [names.STATUS_OK]
    return combine(statuses, validating=gate)


def gpu_scoped(results: list[CheckResult], gpus: Iterable[Any]) -> list[CheckResult]:
    """Results scoped `pci:<bus id>` (a kernel-log event without a UUID map) or `gpu:<index>` (a
    daemon's log naming `GPU 2`) moved to the GPU of the inventory at that bus id or index (every
    source writes NVML's form, `evidence.pci`), so the GPU's verdict sees them; others
    unchanged. A moved result also takes the GPU's index (`gpu`), so it is printed as that GPU
    (`check`'s `gpu0`, newcomer7 F12), as the inventory's own results are."""
    gpus = list(gpus)
    by_pci = {f"pci:{g.pci_bus_id}": g for g in gpus}
    by_pci.update({f"gpu:{g.index}": g for g in gpus if g.index})  # a log naming `GPU 2`
    return [
        dataclasses.replace(r, scope=by_pci[r.scope].uuid, gpu=r.gpu or by_pci[r.scope].index)
        if r.scope in by_pci
        else r
        for r in results
    ]


def gpu_verdicts(results: Iterable[CheckResult], gpu_scopes: Iterable[str]) -> dict[str, str]:
    """Verdict per GPU scope: the GPU's own results plus every node-scoped result (a node problem
    affects every GPU on it). A GPU with no result at all is `unknown`."""
    results = list(results)
    node_results = [r for r in results if r.scope == NODE_SCOPE]
    out = {}
    for scope in gpu_scopes:
        own = [r for r in results if r.scope == scope]
        out[scope] = verdict_of(own + node_results) if own or node_results else (
            names.VERDICT_UNKNOWN)
    return out


def node_verdict(results: Iterable[CheckResult]) -> str:
    """Verdict of the node over every result, whatever its scope."""
    return verdict_of(results)


def problems(results: Iterable[CheckResult]) -> list[CheckResult]:
    """The results that stop a GPU or node being usable (fail or unknown), in a stable order."""
    bad = [r for r in results if r.status in (names.STATUS_FAIL, names.STATUS_UNKNOWN)]
    return sorted(bad, key=lambda r: (r.scope, r.check, r.reason))


# ------------------------------------------------------------------------------------------------
# inspect findings
# ------------------------------------------------------------------------------------------------

FINDING_KEYS = (
    "kind",
    "signal",
    "xid",
    "sxid",
    "pci",
    "gpu",
    "uuid",
    "device",
    "class",
    "layer",
    "action",
    "reason",
    "events",
    "caused_by",
    "count",
    "state",
    "physical_state",
    "links",
    "message",
    "line",
)


@dataclass
class Finding:
    """One conclusion `gpuslo inspect` draws from evidence.

    The JSON keys are those of shared/corpus/expected.yaml (`FINDING_KEYS`); `class_` is written
    as `class`. A finding names a code (`xid`, `sxid`) or a `signal` from `signal_names.SIGNALS`.
    Classes are `names.FINDING_CLASSES`: `fatal` makes the verdict unhealthy, `unknown` makes it
    unknown (unless something is fatal), the others leave it healthy.
    """

    kind: str
    class_: str
    signal: str | None = None
    xid: int | None = None
    sxid: int | None = None
    pci: str | None = None
    gpu: str | None = None
    uuid: str | None = None
    device: str | None = None
    layer: str | None = None
    action: str | None = None
    reason: str | None = None
    events: int | None = None
    caused_by: int | None = None
    count: int | None = None
    state: str | None = None
    physical_state: str | None = None
    links: list[int] | None = None
    message: str | None = None
    line: int | None = None
    extra: dict[str, Any] = field(default_factory=dict)

    def __post_init__(self) -> None:
        if self.class_ not in names.FINDING_CLASSES:
            raise ValueError(f"class {self.class_!r} not in {names.FINDING_CLASSES}")
        if self.signal is not None and self.signal not in signal_names.SIGNALS:
            raise ValueError(f"signal {self.signal!r} is not in signal_names.SIGNALS")
        if self.layer is None and self.reason:
            self.layer = names.layer_of(self.reason)

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready dict: the keys that apply (None dropped), `class_` spelt `class`."""
        out: dict[str, Any] = {}
        for key in FINDING_KEYS:
            value = getattr(self, "class_" if key == "class" else key)
            if value is not None:
                out[key] = value
        out.update(self.extra)
        return out


def layer_of_class(class_: str) -> str:
    """Layer of a non-fatal class: the job's own faults are `training`, the rest `node` (one
    map for `inspect`, the exporter and a training log's Xid stop: goodput.logs.xidlayer)."""
    return names.LAYER_TRAINING if class_ == names.CLASS_APPLICATION else names.LAYER_NODE


def verdict_from_findings(findings: Iterable[Finding]) -> str:
    """Node verdict from inspect findings: any `fatal` → unhealthy; else any `unknown` → unknown;
    no findings at all → unknown (nothing read is never healthy); else healthy."""
    classes = {f.class_ for f in findings}
    if names.CLASS_FATAL in classes:
        return names.VERDICT_UNHEALTHY
    if not classes or names.CLASS_UNKNOWN in classes:
        return names.VERDICT_UNKNOWN
    return names.VERDICT_HEALTHY


def worst_verdict(verdicts: Iterable[str]) -> str:
    """The worst of several verdicts (unhealthy > unknown > validating > healthy); none →
    unknown."""
    seen = set(verdicts)
    order = (names.VERDICT_UNHEALTHY, names.VERDICT_UNKNOWN, names.VERDICT_VALIDATING,
             names.VERDICT_HEALTHY)
    for verdict in order:
        if verdict in seen:
            return verdict
    return names.VERDICT_UNKNOWN


def as_mapping(results: Iterable[CheckResult]) -> Mapping[tuple[str, str], CheckResult]:
    """Index results by (check, scope); a later result for the same key replaces an earlier one."""
    return {(r.check, r.scope): r for r in results}
