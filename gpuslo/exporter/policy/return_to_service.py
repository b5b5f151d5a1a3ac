"""The return-to-service gate, pure: when a GPU's fault has cleared, and whether a cleared GPU has
been validated (issue 26: "validate a machine before it takes work", Netflix's layer-2 promise;
NVSentinel's post-remediation validation, NHC's return to service only after checks pass).

The policy is data (`gpuslo/data/return_to_service.yaml`, which explains every field; node config
`validation:` overlays it). Per GPU the gate is `None` (nothing pending) or a `GpuGate`:

    held ──(every fault cleared)──▶ validating ──(validators pass)──▶ None (healthy)
      ▲                                 │ no pass in max_tries
      └────────(a new fault)────────────┴──▶ failed ──(cleared again)──▶ validating

`step_faults` moves a GPU through held/validating/failed from the check results of one cycle and
the clearing evidence (`Marks`: boot id, last driver load, admin resumes); `step_validation`
applies one try's validator outcomes to a validating GPU; `gate_results` states the gate as
check results (check `validation`): a held fault its check no longer reports keeps its own
reason; validating is reason `validation` (layer platform; the verdict reads `validating`); a
failed gate is reason `validation_failed` (layer node). With no validator available the gate
falls back to `hold_down_cycles` clean cycles and says so (`gate_unavailable`).
"""

from __future__ import annotations

import dataclasses
import functools
from collections.abc import Iterable
from dataclasses import dataclass, field
from importlib import resources
from typing import Any

from gpuslo import names
from gpuslo.config_file import parse_yaml
from gpuslo.errors import ConfigError
from gpuslo.verdict import NODE_SCOPE, CheckResult

PACKAGED = "return_to_service.yaml"
CHECK = names.GATE_CHECK
CLEAR_EVENTS = ("check_ok", "reboot", "driver_reload", "admin_resume")
VALIDATORS = names.VALIDATORS
HELD, VALIDATING, FAILED = "held", "validating", "failed"
PASS, FAIL, INCONCLUSIVE, UNAVAILABLE = "pass", "fail", "inconclusive", "unavailable"
EVENT_WORDS = {"check_ok": "no longer reported", "reboot": "reboot", "driver_reload":
               "driver reload", "admin_resume": "admin resume"}
KEYS = ("version", "clears", "validators", "dcgm_diag_level", "dcgm_diag_timeout_s", "max_tries",
        "hold_down_cycles")


@dataclass(frozen=True)
class GatePolicy:
    """See gpuslo/data/return_to_service.yaml. `validators` are those this node has."""

    clears: dict[str, tuple[str, ...]]
    validators: tuple[str, ...] = VALIDATORS
    dcgm_diag_level: int = 2
    dcgm_diag_timeout_s: float = 300.0
    max_tries: int = 3
    hold_down_cycles: int = 3

    def clears_for(self, reason: str) -> tuple[str, ...]:
        """The events that clear a fault of `reason` (the `default` entry when not listed)."""
        return self.clears.get(reason, self.clears["default"])


@dataclass(frozen=True)
class Marks:
    """The clearing evidence at one moment: the boot id ("" unknown), the uptime of the last
    NVIDIA driver load this boot (None unseen), and how many admin resumes gpuslo has seen."""

    boot_id: str = ""
    driver_load: float | None = None
    resumes: int = 0


@dataclass(frozen=True)
class Fault:
    """A fault the gate holds: what reported it, and the `Marks` when it was first seen."""

    check: str
    reason: str
    action: str
    message: str
    since: float
    marks: Marks = Marks()


@dataclass(frozen=True)
class GpuGate:
    """One GPU's gate: `phase` (held, validating, failed), the faults it holds, when the phase
    began (`since`, Unix s), validation tries and clean hold-down cycles so far, what cleared it
    (`cleared_by`), the last validator or hold-down words (`last`), the `Marks` at the
    failure (a failed gate re-opens when one of its clearing events is seen after them), and
    the GPU's index when known (for a run that did not read the inventory)."""

    phase: str
    faults: tuple[Fault, ...] = ()
    since: float = 0.0
    tries: int = 0
    clean_cycles: int = 0
    cleared_by: str = ""
    last: str = ""
    failed_marks: Marks = Marks()
    gpu: str = ""


@dataclass(frozen=True)
class ValidatorOutcome:
    """One validator on one GPU: `status` pass, fail, inconclusive (busy, timed out, tool error:
    no verdict either way) or unavailable (not installed on this node), with its words."""

    validator: str
    status: str
    message: str = ""


@dataclass(frozen=True)
class Step:
    """What one validation try did: the new gate (None: passed) and the outcome that ended a gate
    (`passed`, `held_down`, `failed`; "" while it goes on)."""

    gate: GpuGate | None
    ended: str = ""


@dataclass(frozen=True)
class GateTotals:
    """Gates ended per (GPU UUID, outcome), for `gpuslo_gpu_validation_gates_total`."""

    counts: dict[tuple[str, str], int] = field(default_factory=dict)

    def add(self, uuid: str, outcome: str) -> GateTotals:
        counts = dict(self.counts)
        counts[(uuid, outcome)] = counts.get((uuid, outcome), 0) + 1
        return GateTotals(counts)


# --- policy ----------------------------------------------------------------------------------


def _whole(value: Any, low: int) -> bool:
    return isinstance(value, int) and not isinstance(value, bool) and value >= low


def policy_from_mapping(data: Any, source: str) -> GatePolicy:
    """Validate a merged policy (pure); ConfigError naming `source` and every bad field."""
    if not isinstance(data, dict):
        raise ConfigError(f"{source}: expected a mapping of fields at the top level")
    problems = [f"{key}: unknown field" for key in data if key not in KEYS]
    clears = data.get("clears")
    if not isinstance(clears, dict) or "default" not in clears:
        problems.append("clears: expected a mapping of reason to events, with `default`")
        clears = {"default": ["check_ok"]}
    for reason, events in clears.items():
        if reason != "default" and reason not in names.REASON_LAYER:
            problems.append(f"clears.{reason}: not a reason (names.REASON_LAYER)")
        if not isinstance(events, list) or not events or not set(events) <= set(CLEAR_EVENTS):
            problems.append(f"clears.{reason}: expected a list of {CLEAR_EVENTS}")
    validators = data.get("validators", list(VALIDATORS))
    if not isinstance(validators, list) or not set(validators) <= set(VALIDATORS):
        problems.append(f"validators: expected a list of {VALIDATORS} (may be empty)")
        validators = []
    numbers = {"dcgm_diag_level": 1, "max_tries": 1, "hold_down_cycles": 1}
    for key, low in numbers.items():
        if not _whole(data.get(key), low):
            problems.append(f"{key}: expected a whole number ≥ {low}")
    timeout = data.get("dcgm_diag_timeout_s")
    if isinstance(timeout, bool) or not isinstance(timeout, int | float) or timeout <= 0:
        problems.append("dcgm_diag_timeout_s: expected seconds > 0")
    if problems:
        raise ConfigError(f"{source}: " + "; ".join(problems))
    return GatePolicy(
        clears={str(k): tuple(v) for k, v in clears.items()},
        validators=tuple(validators),
        dcgm_diag_level=int(data["dcgm_diag_level"]),
        dcgm_diag_timeout_s=float(timeout),
        max_tries=int(data["max_tries"]),
        hold_down_cycles=int(data["hold_down_cycles"]),
    )


def merge(packaged: dict[str, Any], overlay: dict[str, Any]) -> dict[str, Any]:
    """The overlay over the packaged policy (pure): `clears` key by key, other fields replace."""
    merged = dict(packaged)
    for key, value in overlay.items():
        if key == "clears" and isinstance(value, dict):
            merged[key] = {**packaged.get("clears", {}), **value}
        else:
            merged[key] = value
    return merged


@functools.cache
def _packaged() -> dict[str, Any]:
    text = resources.files("gpuslo").joinpath("data", PACKAGED).read_text(encoding="utf-8")
    return parse_yaml(text, f"gpuslo/data/{PACKAGED}")


def load_gate_policy(overlay: dict[str, Any] | None = None, source: str = "node config") -> (
        GatePolicy):
    """The packaged policy with the node config's `validation:` mapping merged over it.
    ConfigError naming `source` (`node config: validation.<field>`) for a bad field."""
    if not overlay:
        return policy_from_mapping(_packaged(), f"gpuslo/data/{PACKAGED}")
    return policy_from_mapping(merge(_packaged(), overlay), f"{source}: validation")


# --- faults -----------------------------------------------------------------------------------


def faults_by_gpu(results: Iterable[CheckResult], uuids: Iterable[str]) -> dict[str, list]:
    """The fail results of each GPU of `uuids` (its own scope), the gate's own left out. Pure."""
    wanted = set(uuids)
    out: dict[str, list] = {uuid: [] for uuid in wanted}
    for r in results:
        if r.status == names.STATUS_FAIL and r.scope in wanted and r.check != CHECK:
            out[r.scope].append(r)
    return out


def answered_checks(results: Iterable[CheckResult], uuid: str) -> set[str]:
    """The checks that answered about GPU `uuid` this cycle (pure): a result on the GPU or the
    node, and none `unknown` there. A fault whose check did not answer is not cleared: an unknown
    is no evidence of a repair."""
    seen: dict[str, bool] = {}
    for r in results:
        if r.scope in (uuid, NODE_SCOPE) and r.check != CHECK:
            seen[r.check] = seen.get(r.check, True) and r.status != names.STATUS_UNKNOWN
    return {check for check, answered in seen.items() if answered}


def seen_since(event: str, fault: Fault, now: Marks) -> bool:
    """True when clearing `event` happened after `fault` was first seen (pure)."""
    then = fault.marks
    if event == "reboot":
        return bool(then.boot_id and now.boot_id and then.boot_id != now.boot_id)
    if event == "driver_reload":
        same_boot = then.boot_id == now.boot_id
        return same_boot and now.driver_load is not None and (
            then.driver_load is None or now.driver_load > then.driver_load)
    if event == "admin_resume":
        return now.resumes > then.resumes
    return event == "check_ok"


def _cleared_by(fault: Fault, marks: Marks, policy: GatePolicy) -> str:
    """The first clearing event of the fault's policy seen since it began, "" when none."""
    return next((e for e in policy.clears_for(fault.reason) if seen_since(e, fault, marks)), "")


def _reopened(gate: GpuGate, marks: Marks, policy: GatePolicy) -> str:
    """A failed gate's clearing event since the failure ("" none): its faults' events only."""
    probe = Fault("", "", "", "", 0.0, gate.failed_marks)
    events = {e for f in gate.faults for e in policy.clears_for(f.reason)} - {"check_ok"}
    return next((e for e in CLEAR_EVENTS if e in events and seen_since(e, probe, marks)), "")


def step_faults(
    gate: GpuGate | None,
    reported: list[CheckResult],
    answered: set[str],
    marks: Marks,
    now: float,
    policy: GatePolicy,
) -> GpuGate | None:
    """The GPU's gate after one check cycle (pure; see the module docstring). `reported` are the
    GPU's fail results this cycle (`faults_by_gpu`), `answered` the checks that answered about it
    (`answered_checks`): a fault of a check that did not is neither reported nor cleared."""
    held = {(f.check, f.reason): f for f in gate.faults} if gate else {}
    for r in reported:
        held.setdefault((r.check, r.reason), Fault(r.check, r.reason, r.action, r.message, now,
                                                   marks))
    if gate is None and not held:
        return None
    now_reported = {(r.check, r.reason) for r in reported}
    left, cleared = [], []
    for key, fault in sorted(held.items()):
        silent = key in now_reported or fault.check not in answered
        event = "" if silent else _cleared_by(fault, marks, policy)
        (cleared if event else left).append((fault, event))
    faults = tuple(f for f, _ in left)
    if faults:
        return GpuGate(HELD, faults, gate.since if gate and gate.phase == HELD else now)
    assert gate is not None
    if gate.phase == HELD:
        return GpuGate(VALIDATING, tuple(f for f, _ in cleared), now,
                       cleared_by=", ".join(sorted({EVENT_WORDS[e] for _, e in cleared})))
    if gate.phase == FAILED:
        event = _reopened(gate, marks, policy)
        if event:
            return GpuGate(VALIDATING, gate.faults, now, cleared_by=EVENT_WORDS[event])
    return gate


def record_faults(gates: dict[str, GpuGate], reported: dict[str, list], marks: Marks,
                  now: float, policy: GatePolicy) -> dict[str, GpuGate]:
    """The gates that change when the faults `reported` ({scope: fail results}) are held and
    nothing else is stepped (pure): a scope with a fault its gate does not hold (none, or not
    `held` with it) is held with it added; nothing clears, since no check is taken as answered.
    For the paths that see a fault outside a full cycle (a run restricted to some checks, the
    exporter's kernel-log fast path): a fatal fault seen once is held until its own clearing
    events, even when the log that showed it is rotated before the next full cycle."""
    out = {}
    for scope, results in sorted(reported.items()):
        gate = gates.get(scope)
        held = {(f.check, f.reason) for f in gate.faults} if gate and gate.phase == HELD else set()
        if results and not {(r.check, r.reason) for r in results} <= held:
            out[scope] = step_faults(gate, results, set(), marks, now, policy)
    return out


def rekeyed(gates: dict[str, GpuGate], by_pci: dict[str, str]) -> dict[str, GpuGate]:
    """`gates` with those kept under a bus id (`pci:<bus id>`: a fault seen before its GPU's
    UUID was known, e.g. by a run that read no inventory) moved to the UUID `by_pci` now gives,
    their faults joined to that GPU's own gate (pure; `step_faults` then re-judges them all)."""
    out = {key: gate for key, gate in gates.items() if key not in by_pci}
    for key, gate in sorted(gates.items()):
        uuid = by_pci.get(key)
        if uuid is None:
            continue
        mine = out.get(uuid)
        if mine is None:
            out[uuid] = gate
            continue
        known = {(f.check, f.reason) for f in mine.faults}
        extra = tuple(f for f in gate.faults if (f.check, f.reason) not in known)
        out[uuid] = dataclasses.replace(mine, faults=mine.faults + extra)
    return out


def step_validation(gate: GpuGate, outcomes: list[ValidatorOutcome], marks: Marks, now: float,
                    policy: GatePolicy) -> Step:
    """One try on a validating GPU (pure): every available validator passing ends the gate
    (`passed`); none available counts a clean hold-down cycle (`held_down` after
    `hold_down_cycles`); otherwise the try is spent, and `max_tries` spent fail the gate."""
    available = [o for o in outcomes if o.status != UNAVAILABLE]
    if not available:
        cycles = gate.clean_cycles + 1
        missing = "; ".join(f"{o.validator}: {o.message}" for o in outcomes) or "none configured"
        words = f"gate_unavailable ({missing}): hold-down {cycles}/{policy.hold_down_cycles}"
        if cycles >= policy.hold_down_cycles:
            return Step(None, "held_down")
        return Step(dataclasses.replace(gate, clean_cycles=cycles, last=words))
    if all(o.status == PASS for o in available):
        return Step(None, "passed")
    tries = gate.tries + 1
    bad = "; ".join(f"{o.validator}: {o.message}" for o in available if o.status != PASS)
    if tries >= policy.max_tries:
        failed = dataclasses.replace(gate, phase=FAILED, since=now, tries=tries, last=bad,
                                     failed_marks=marks)
        return Step(failed, "failed")
    return Step(dataclasses.replace(gate, tries=tries, last=bad))


# --- results ----------------------------------------------------------------------------------


def gate_results(gates: dict[str, GpuGate], reported: dict[str, list], index: dict[str, str],
                 policy: GatePolicy, now: float) -> list[CheckResult]:
    """The gate as check results, one per fault it holds that no check reports any more, and one
    per validating or failed GPU (pure). `index` maps UUID → GPU index."""
    out = []
    for uuid, gate in sorted(gates.items()):
        common = {"check": CHECK, "scope": uuid, "gpu": index.get(uuid) or gate.gpu,
                  "source": "return-to-service gate", "observed_at": now}
        if gate.phase == HELD:
            active = {(r.check, r.reason) for r in reported.get(uuid, [])}
            for f in gate.faults:
                if (f.check, f.reason) in active:
                    continue
                wait = " or ".join(EVENT_WORDS[e] for e in policy.clears_for(f.reason))
                out.append(CheckResult(**common, status=names.STATUS_FAIL, reason=f.reason,
                                       action=f.action, message=f"{f.check} {f.reason} not "
                                       f"reported now but not cleared: waiting for {wait}"))
        elif gate.phase == VALIDATING:
            tried = f"; try {gate.tries}/{policy.max_tries}: {gate.last}" if gate.tries else ""
            hold = f"; {gate.last}" if gate.clean_cycles else ""
            why = ", ".join(sorted({f.reason for f in gate.faults}))
            out.append(CheckResult(**common, status=names.STATUS_FAIL, reason="validation",
                                   message=f"validating: {why} cleared ({gate.cleared_by})"
                                   f"{tried}{hold}"))
        else:
            out.append(CheckResult(**common, status=names.STATUS_FAIL, reason="validation_failed",
                                   action=names.ACTION_DRAIN_AND_RESET,
                                   message=f"return-to-service gate failed after {gate.tries} "
                                   f"tries: {gate.last}"))
    return out
