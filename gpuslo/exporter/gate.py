"""The return-to-service gate on a node: state across check cycles, the clearing evidence, and the
validators (issue 26). The rules are pure (`policy.return_to_service`); this module is the edge.

After every check cycle `ReturnToService.apply(snapshot)`:
1. reads the clearing evidence (`Marks`): the boot id (`<procfs>/sys/kernel/random/boot_id`),
   the last NVIDIA driver load of this boot (the xid check's /dev/kmsg cursor), and the admin
   resumes gpuslo has seen (`note_slurm`);
2. moves every GPU of the inventory through held / validating / failed (`step_faults`);
3. runs the validators on the validating GPUs, in child processes with deadlines (a `Runner` of
   the `gpu_probe` check restricted to them, and `dcgm_diag`), and applies the try
   (`step_validation`); a validator whose tool is missing, or whose last try answered that it
   cannot run here (the probe with PyTorch but no CUDA: `dependency_missing`, kept in the state
   file), is unavailable, and with none available the gate holds the GPU down for
   `hold_down_cycles` clean cycles and says so (`gate_unavailable`);
4. saves the state (`return_to_service.json` in the state dir: atomic write, under a lock shared
   by `gpuslo check` and the exporter) and returns the snapshot with the gate's results
   (check `validation`) and `ValidationState`.
Fail closed: a state file that cannot be read makes every GPU `unknown` (`validation` /
`parse_error`), never healthy. A path that sees faults outside a full cycle — a run restricted by
`--check`, the exporter's kernel-log fast path — records them (`record`) without stepping the
gate: a fault seen once is held until its own clearing events (a rotated or truncated log is
none). The validators live in `gpuslo.exporter.validators`.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gpuslo import names
from gpuslo.errors import DeadlineExceeded, ParseError
from gpuslo.exporter.checks.base import CheckContext
from gpuslo.exporter.checks.xid_cursor import forget_problems, load_cursor
from gpuslo.exporter.evidence.kernel_log.kmsg import read_boot_id
from gpuslo.exporter.policy import return_to_service as rts
from gpuslo.exporter.policy.return_to_service import GatePolicy, GateTotals, GpuGate, Marks
from gpuslo.exporter.snapshot import GpuValidation, NodeSnapshot, ValidationState
from gpuslo.exporter.state import locked, read_json_state, write_json_atomic
from gpuslo.exporter.validators import (
    BackgroundValidators,
    Validators,
    as_answered,
    outcome_of,
    unavailable_answers,
    validator_states,
)
from gpuslo.verdict import NODE_SCOPE, CheckResult, gpu_scoped

STATE_FILE = "return_to_service.json"
VERSION = 1
LOCK_S = 5.0
__all__ = ["ReturnToService", "gate_for", "load_gate_file", "outcome_of", "save_gate_file"]


@dataclasses.dataclass
class GateFile:
    """What the state file holds: the gates, their totals, admin resumes seen, whether the
    Slurm node carries gpuslo's own drain, and the validators whose last try answered that they
    cannot run here ({validator: words}; `validators.unavailable_answers`)."""

    gpus: dict[str, GpuGate] = dataclasses.field(default_factory=dict)
    totals: GateTotals = GateTotals()
    resumes: int = 0
    drained: bool = False
    unavailable: dict[str, str] = dataclasses.field(default_factory=dict)


# --- the state file ---------------------------------------------------------------------------


def _marks(raw: Any) -> Marks:
    boot, load, resumes = raw
    return Marks(str(boot), None if load is None else float(load), int(resumes))


def _gate(raw: dict) -> GpuGate:
    faults = tuple(rts.Fault(str(c), str(r), str(a), str(m), float(t), _marks(k))
                   for c, r, a, m, t, k in raw["faults"])
    return GpuGate(str(raw["phase"]), faults, float(raw["since"]), int(raw["tries"]),
                   int(raw["clean_cycles"]), str(raw["cleared_by"]), str(raw["last"]),
                   _marks(raw["failed_marks"]), str(raw["gpu"]))


def load_gate_file(path: Path) -> GateFile:
    """The state file, or an empty one when it does not exist. ParseError naming the file when
    it has another shape (someone else wrote it: refuse, do not reset)."""
    raw = read_json_state(path, None)
    if raw is None:
        return GateFile()
    try:
        return GateFile(
            gpus={str(uuid): _gate(gate) for uuid, gate in raw["gpus"].items()},
            totals=GateTotals({(str(u), str(o)): int(n) for u, o, n in raw["totals"]}),
            resumes=int(raw["resumes"]),
            drained=bool(raw["drained"]),
            unavailable={str(v): str(w) for v, w in raw.get("unavailable", {}).items()},
        )
    except (KeyError, TypeError, ValueError, AttributeError) as error:
        raise ParseError(str(path), f"state file has an unexpected shape ({error})") from None


def _gate_json(gate: GpuGate) -> dict[str, Any]:
    marks = lambda m: [m.boot_id, m.driver_load, m.resumes]  # noqa: E731
    return {
        "phase": gate.phase, "since": gate.since, "tries": gate.tries,
        "clean_cycles": gate.clean_cycles, "cleared_by": gate.cleared_by, "last": gate.last,
        "failed_marks": marks(gate.failed_marks), "gpu": gate.gpu,
        "faults": [[f.check, f.reason, f.action, f.message, f.since, marks(f.marks)]
                   for f in gate.faults],
    }


def save_gate_file(path: Path, state: GateFile) -> None:
    """Write the state file atomically (sorted keys)."""
    write_json_atomic(path, {
        "version": VERSION,
        "gpus": {uuid: _gate_json(gate) for uuid, gate in sorted(state.gpus.items())},
        "totals": sorted([*key, n] for key, n in state.totals.counts.items()),
        "resumes": state.resumes,
        "drained": state.drained,
        "unavailable": dict(sorted(state.unavailable.items())),
    })


# --- the gate ---------------------------------------------------------------------------------


class ReturnToService:
    """The gate across cycles (see the module docstring).

    Args:
        context: the checks' context (state dir, procfs, config, deadlines).
        policy: the gate policy (`policy.return_to_service.load_gate_policy`).
        validators: runs validators; default `Validators(context, policy)`.
        clock: Unix seconds.
    """

    def __init__(self, context: CheckContext, policy: GatePolicy, validators: Any = None,
                 clock: Callable[[], float] = time.time) -> None:
        self.context, self.policy, self.clock = context, policy, clock
        self.validators = validators or Validators(context, policy)
        self.path = Path(context.state_dir) / STATE_FILE

    def marks(self, resumes: int) -> Marks:
        """The clearing evidence now: boot id, this boot's last driver load, resumes seen."""
        boot = read_boot_id(self.context.procfs)
        try:
            load = load_cursor(Path(self.context.state_dir), boot).driver_load if boot else None
        except ParseError:
            load = None  # the xid check reports its broken cursor itself
        return Marks(boot, load, resumes)

    def apply(self, snapshot: NodeSnapshot) -> NodeSnapshot:
        """The snapshot with the gate's results and state (see the module docstring)."""
        Path(self.context.state_dir).mkdir(parents=True, exist_ok=True)
        try:
            with locked(self.path, LOCK_S):
                return self._apply(snapshot, load_gate_file(self.path))
        except (ParseError, DeadlineExceeded, OSError) as error:
            reason = "check_timeout" if isinstance(error, DeadlineExceeded) else "parse_error"
            unknown = CheckResult(check=rts.CHECK, scope=NODE_SCOPE, status=names.STATUS_UNKNOWN,
                                  reason=reason, message=str(error)[:300],
                                  source="return-to-service gate")
            return dataclasses.replace(snapshot, results=(*snapshot.results, unknown))

    def _apply(self, snapshot: NodeSnapshot, state: GateFile) -> NodeSnapshot:
        now, marks = self.clock(), self.marks(state.resumes)
        uuids, seen = _scoped(snapshot)
        held = rts.rekeyed(state.gpus, _by_pci(snapshot))
        reported = rts.faults_by_gpu(seen, uuids)
        gates: dict[str, GpuGate] = {}
        for uuid in sorted(set(uuids) | set(held)):
            answered = rts.answered_checks(seen, uuid)
            gate = rts.step_faults(held.get(uuid), reported.get(uuid, []), answered,
                                   marks, now, self.policy)
            if gate is not None:
                gates[uuid] = dataclasses.replace(gate, gpu=uuids.get(uuid) or gate.gpu)
        states = validator_states(self.policy)
        totals, unavailable = self._validate(gates, uuids, states, marks, now, state.totals,
                                             state.unavailable)
        states = as_answered(states, unavailable)
        state = dataclasses.replace(state, gpus=gates, totals=totals, unavailable=unavailable)
        save_gate_file(self.path, state)
        results = rts.gate_results(gates, reported, uuids, self.policy, now)
        view = ValidationState(
            gpus=tuple(GpuValidation(u, g.gpu, g.phase, g.tries, g.since,
                                     g.clean_cycles > 0) for u, g in sorted(gates.items())),
            gates_total=dict(totals.counts),
            validators=states,
            gate_unavailable="available" not in states.values(),
            hold_down_cycles=self.policy.hold_down_cycles,
        )
        counts = dict(snapshot.probe_speed_not_judged)  # both cumulative from one state file
        for key, n in getattr(self.validators, "probe_counts", {}).items():
            counts[key] = max(n, counts.get(key, 0))
        return dataclasses.replace(snapshot, results=(*snapshot.results, *results),
                                   validation=view, probe_speed_not_judged=counts)

    def _validate(self, gates: dict[str, GpuGate], uuids: dict[str, str],
                  states: dict[str, str], marks: Marks, now: float, totals: GateTotals,
                  unavailable: dict[str, str]) -> tuple[GateTotals, dict[str, str]]:
        """One try on every validating GPU; updates `gates` in place, returns the totals and
        the validators that answered they cannot run (`unavailable` updated by this try: a
        validator PyTorch's presence calls available but that cannot run is not exported as
        available, newcomer 7 F4)."""
        due = {uuids.get(u, ""): u for u, g in gates.items() if g.phase == rts.VALIDATING}
        if not due:
            return totals, unavailable
        outcomes = self.validators.run(due, states)
        unavailable = unavailable_answers(unavailable, outcomes)
        for uuid in due.values():
            if uuid not in outcomes:  # a try still running in the background: no step now
                continue
            step = rts.step_validation(gates[uuid], outcomes.get(uuid, []), marks, now,
                                       self.policy)
            if step.gate is None:
                del gates[uuid]
            else:
                gates[uuid] = step.gate
            if step.ended:
                totals = totals.add(uuid, step.ended)
        return totals, unavailable

    def record(self, snapshot: NodeSnapshot) -> list[str]:
        """Hold every GPU fault `snapshot` reports that the gate does not hold yet, stepping and
        validating nothing (`policy.return_to_service.record_faults`): every path that sees a
        fault outside a full cycle records it — a run restricted to some checks (`view`), the
        exporter's kernel-log fast path — so a fatal Xid seen once is held even when the log is
        rotated or truncated before the next full cycle. A fault on a GPU the snapshot has no
        UUID for is kept under its bus id (`pci:<bus id>`) until one does. Returns the scopes
        recorded; reads and writes nothing when the snapshot reports no GPU fault. Raises
        ParseError (state file), DeadlineExceeded (lock), OSError."""
        scopes, seen = _scoped(snapshot)
        reported = {s: rs for s, rs in rts.faults_by_gpu(seen, scopes).items() if rs}
        if not reported:
            return []
        Path(self.context.state_dir).mkdir(parents=True, exist_ok=True)
        with locked(self.path, LOCK_S):
            state = load_gate_file(self.path)
            gates = rts.rekeyed(state.gpus, _by_pci(snapshot))
            new = rts.record_faults(gates, reported, self.marks(state.resumes), self.clock(),
                                    self.policy)
            new = {s: dataclasses.replace(g, gpu=scopes.get(s) or g.gpu) for s, g in new.items()}
            if new:
                save_gate_file(self.path, dataclasses.replace(state, gpus={**gates, **new}))
        return sorted(new)

    def view(self, snapshot: NodeSnapshot, checks: set[str]) -> NodeSnapshot:
        """For a run restricted to some `checks` (`gpuslo check --check xid`, one
        node-problem-detector rule): records the faults it saw (`record`), then gives the saved
        gates of the GPUs holding a fault of one of the checks as results, without stepping or
        validating (a partial run cannot tell that every fault cleared). So a check's NPD
        condition holds while the gate holds its fault, and a fault one such run saw is held
        when the next run no longer finds it in a rotated log."""
        try:
            self.record(snapshot)
            state = load_gate_file(self.path)
        except (ParseError, DeadlineExceeded, OSError) as error:
            reason = "check_timeout" if isinstance(error, DeadlineExceeded) else "parse_error"
            unknown = CheckResult(check=rts.CHECK, scope=NODE_SCOPE, status=names.STATUS_UNKNOWN,
                                  reason=reason, message=str(error)[:300],
                                  source="return-to-service gate")
            return dataclasses.replace(snapshot, results=(*snapshot.results, unknown))
        gates = {u: g for u, g in rts.rekeyed(state.gpus, _by_pci(snapshot)).items()
                 if {f.check for f in g.faults} & checks}
        index, scoped = _scoped(snapshot)
        seen = {u: [r for r in scoped if r.scope == u and r.status == "fail"] for u in gates}
        results = rts.gate_results(gates, seen, index, self.policy, self.clock())
        return dataclasses.replace(snapshot, results=(*snapshot.results, *results))

    def note_slurm(self, drained_by_gpuslo: bool | None, resumed_by_someone: bool) -> bool:
        """Record what Slurm shows before a cycle: `resumed_by_someone` (gpuslo's drain is gone
        and gpuslo did not resume it) counts an admin resume and makes the xid check forget the
        kernel-log problems of this boot; `drained_by_gpuslo` (None: unchanged) after the
        decision. Returns True when an admin resume was counted."""
        Path(self.context.state_dir).mkdir(parents=True, exist_ok=True)
        with locked(self.path, LOCK_S):
            state = load_gate_file(self.path)
            counted = resumed_by_someone and state.drained
            if counted:
                state.resumes += 1
                state.drained = False
                forget_problems(Path(self.context.state_dir), read_boot_id(self.context.procfs))
            if drained_by_gpuslo is not None:
                state.drained = drained_by_gpuslo
            save_gate_file(self.path, state)
            return counted


def _scoped(snapshot: NodeSnapshot) -> tuple[dict[str, str], list[CheckResult]]:
    """The scopes the gate keys, {GPU UUID or `pci:<bus id>`: GPU index ("" unknown)}, and the
    snapshot's results as the gate reads them: one named by bus id or `GPU <n>` is the
    inventory's GPU (`verdict.gpu_scoped`). A fail on a bus id no GPU of the snapshot has (a
    GPU fallen off the bus, a run that read no inventory) keeps its bus id as its scope."""
    seen = gpu_scoped(list(snapshot.results), snapshot.gpus)
    scopes = {r.scope: "" for r in seen
              if r.scope.startswith("pci:") and r.status == names.STATUS_FAIL}
    scopes.update({r.scope: r.gpu for r in seen if r.gpu and r.scope.startswith("GPU-")})
    scopes.update({g.uuid: g.index for g in snapshot.gpus})
    return scopes, seen


def _by_pci(snapshot: NodeSnapshot) -> dict[str, str]:
    """{`pci:<bus id>`: GPU UUID} of the snapshot's inventory."""
    return {f"pci:{g.pci_bus_id}": g.uuid for g in snapshot.gpus}


def gate_for(context: CheckContext, overlay: dict[str, Any] | None = None,
             background: bool = False) -> ReturnToService:
    """The gate for a node: the packaged policy with the node config's `validation:` over it;
    `background` runs the validators on a thread of their own (the serving exporter)."""
    policy = rts.load_gate_policy(overlay)
    validators = Validators(context, policy)
    return ReturnToService(context, policy,
                           BackgroundValidators(validators) if background else validators)

