"""The return-to-service gate on a node: state across check cycles, the clearing evidence, and the
validators (issue 26). The rules are pure (`policy.return_to_service`); this module is the edge.

After every check cycle `ReturnToService.apply(snapshot)`:
1. reads the clearing evidence (`Marks`): the boot id (`<procfs>/sys/kernel/random/boot_id`),
   the last NVIDIA driver load of this boot (the xid check's /dev/kmsg cursor), and the admin
   resumes gpuslo has seen (`note_slurm`);
2. moves every GPU of the inventory through held / validating / failed (`step_faults`);
3. runs the validators on the validating GPUs, in child processes with deadlines (a `Runner` of
   the `gpu_probe` check restricted to them, and `dcgm_diag`), and applies the try
   (`step_validation`); a validator whose tool is missing is unavailable, and with none available
   the gate holds the GPU down for `hold_down_cycles` clean cycles (`gate_unavailable`);
4. saves the state (`return_to_service.json` in the state dir: atomic write, under a lock shared
   by `gpuslo check` and the exporter) and returns the snapshot with the gate's results
   (check `validation`) and `ValidationState`.
Fail closed: a state file that cannot be read makes every GPU `unknown` (`validation` /
`parse_error`), never healthy.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import shutil
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

from gpuslo import names
from gpuslo.errors import DeadlineExceeded, ParseError
from gpuslo.exporter.checks.base import CheckContext
from gpuslo.exporter.checks.dcgm_diag import DcgmDiagCheck
from gpuslo.exporter.checks.gpu_probe import GpuProbeCheck
from gpuslo.exporter.checks.xid_cursor import forget_problems, load_cursor
from gpuslo.exporter.evidence.kernel_log.kmsg import read_boot_id
from gpuslo.exporter.evidence.probe import replay_path
from gpuslo.exporter.policy import return_to_service as rts
from gpuslo.exporter.policy.return_to_service import (
    GatePolicy,
    GateTotals,
    GpuGate,
    Marks,
    ValidatorOutcome,
)
from gpuslo.exporter.runner import Runner
from gpuslo.exporter.snapshot import GpuValidation, NodeSnapshot, ValidationState
from gpuslo.exporter.state import locked, read_json_state, write_json_atomic
from gpuslo.verdict import NODE_SCOPE, CheckResult

STATE_FILE = "return_to_service.json"
VERSION = 1
LOCK_S = 5.0
CHECK_OF = {"probe": "gpu_probe", "dcgm_diag": "dcgm_diag"}
NOT_JUDGED = ("busy:", "activity unknown:")


@dataclasses.dataclass
class GateFile:
    """What the state file holds: the gates, their totals, admin resumes seen, and whether the
    Slurm node carries gpuslo's own drain."""

    gpus: dict[str, GpuGate] = dataclasses.field(default_factory=dict)
    totals: GateTotals = GateTotals()
    resumes: int = 0
    drained: bool = False


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
    })


# --- validators -------------------------------------------------------------------------------


def validator_states(policy: GatePolicy) -> dict[str, str]:
    """available / unavailable / not_configured per validator (cheap: nothing is run). The probe
    needs PyTorch or the probe replay; dcgm_diag needs `dcgmi` on PATH."""
    have = {
        "probe": bool(replay_path()) or importlib.util.find_spec("torch") is not None,
        "dcgm_diag": shutil.which("dcgmi") is not None,
    }
    return {
        v: ("available" if have[v] else "unavailable") if v in policy.validators
        else "not_configured"
        for v in names.VALIDATORS
    }


MISSING = {"probe": "PyTorch not installed", "dcgm_diag": "dcgmi not installed"}


def outcome_of(validator: str, results: list[CheckResult], uuid: str) -> ValidatorOutcome:
    """A validator's outcome on one GPU from its check's results (pure): ok → pass (a probe that
    did not judge speed → inconclusive), fail → fail, a missing dependency → unavailable,
    anything else (timeout, tool error, no result) → inconclusive."""
    own = [r for r in results if r.scope == uuid] or [r for r in results if r.scope == NODE_SCOPE]
    if not own:
        return ValidatorOutcome(validator, rts.INCONCLUSIVE, "no result for this GPU")
    r = own[0]
    if r.status == names.STATUS_FAIL:
        return ValidatorOutcome(validator, rts.FAIL, r.message)
    if r.status == names.STATUS_UNKNOWN:
        status = rts.UNAVAILABLE if r.reason == "dependency_missing" else rts.INCONCLUSIVE
        return ValidatorOutcome(validator, status, f"{r.reason}: {r.message}"[:200])
    if not r.applicable or r.message.startswith(NOT_JUDGED):
        return ValidatorOutcome(validator, rts.INCONCLUSIVE, r.message)
    return ValidatorOutcome(validator, rts.PASS, r.message)


class Validators:
    """Runs the available validators on some GPUs, each in a child process with its deadline."""

    def __init__(self, context: CheckContext, policy: GatePolicy) -> None:
        self.context, self.policy = context, policy
        self.probe_counts: dict[tuple[str, str], int] = {}  # the probe's cumulative facts

    def run(self, gpus: dict[str, str], states: dict[str, str]) -> dict[str, list]:
        """{UUID: [ValidatorOutcome]} for `gpus` ({index: UUID}), one outcome per configured
        validator (unavailable ones without running them)."""
        ready = [v for v in self.policy.validators if states.get(v) == "available"]
        checks = [GpuProbeCheck() if v == "probe" else DcgmDiagCheck() for v in ready]
        results: dict[str, list[CheckResult]] = {}
        if checks:
            config = {**self.context.config, "probe_gpus": sorted(gpus.values()),
                      "validate_gpus": gpus, "dcgm_diag_level": self.policy.dcgm_diag_level}
            context = dataclasses.replace(self.context, active=True, config=config)
            timeouts = {"dcgm_diag": self.policy.dcgm_diag_timeout_s}
            runner = Runner(checks, context, timeouts=timeouts, node="validators")
            try:
                snapshot = runner.cycle(force=True)
            finally:
                runner.close()
            for r in snapshot.results:
                results.setdefault(r.check, []).append(r)
            self.probe_counts = dict(snapshot.probe_speed_not_judged or self.probe_counts)
        out = {}
        for uuid in gpus.values():
            out[uuid] = [
                outcome_of(v, results.get(CHECK_OF[v], []), uuid) if v in ready
                else ValidatorOutcome(v, rts.UNAVAILABLE, MISSING[v])
                for v in self.policy.validators
            ]
        return out


class BackgroundValidators:
    """Validators on a thread of their own, for the exporter: a `dcgmi diag -r 2` takes minutes
    and must not hold up the check cycles (their results would go stale). `run` starts a try
    when none is running and answers {} meanwhile; the next call after it finished answers its
    outcomes (for the GPUs still asked about)."""

    def __init__(self, inner: Validators) -> None:
        self.inner = inner
        self._thread: threading.Thread | None = None
        self._done: dict[str, list] | None = None
        self._lock = threading.Lock()

    @property
    def probe_counts(self) -> dict[tuple[str, str], int]:
        """The probe's cumulative counts of the last finished try."""
        return self.inner.probe_counts

    def run(self, gpus: dict[str, str], states: dict[str, str]) -> dict[str, list]:
        """The outcomes of the last finished try ({} while one runs; see the class)."""
        with self._lock:
            if self._done is not None:
                done, self._done = self._done, None
                return {u: o for u, o in done.items() if u in gpus.values()}
            if self._thread is None or not self._thread.is_alive():
                self._thread = threading.Thread(target=self._work, args=(dict(gpus), states),
                                                name="gpuslo-validators", daemon=True)
                self._thread.start()
            return {}

    def _work(self, gpus: dict[str, str], states: dict[str, str]) -> None:
        try:
            outcomes = self.inner.run(gpus, states)
        except Exception as error:  # noqa: BLE001 - a try that broke is inconclusive, not lost
            outcomes = {u: [ValidatorOutcome("validators", rts.INCONCLUSIVE, str(error)[:200])]
                        for u in gpus.values()}
        with self._lock:
            self._done = outcomes


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
        uuids = {**_result_gpus(snapshot), **{g.uuid: g.index for g in snapshot.gpus}}
        by_pci = {f"pci:{g.pci_bus_id}": g.uuid for g in snapshot.gpus}
        seen = [dataclasses.replace(r, scope=by_pci[r.scope]) if r.scope in by_pci else r
                for r in snapshot.results]  # a kernel-log event named by bus id is its GPU's
        reported = rts.faults_by_gpu(seen, uuids)
        gates: dict[str, GpuGate] = {}
        for uuid in sorted(set(uuids) | set(state.gpus)):
            answered = rts.answered_checks(seen, uuid)
            gate = rts.step_faults(state.gpus.get(uuid), reported.get(uuid, []), answered,
                                   marks, now, self.policy)
            if gate is not None:
                gates[uuid] = dataclasses.replace(gate, gpu=uuids.get(uuid) or gate.gpu)
        states = validator_states(self.policy)
        totals = self._validate(gates, uuids, states, marks, now, state.totals)
        state = dataclasses.replace(state, gpus=gates, totals=totals)
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
                  states: dict[str, str], marks: Marks, now: float,
                  totals: GateTotals) -> GateTotals:
        """One try on every validating GPU; updates `gates` in place, returns the totals."""
        due = {uuids.get(u, ""): u for u, g in gates.items() if g.phase == rts.VALIDATING}
        if not due:
            return totals
        outcomes = self.validators.run(due, states)
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
        return totals

    def view(self, snapshot: NodeSnapshot, checks: set[str]) -> NodeSnapshot:
        """Read-only, for a run restricted to some `checks` (`gpuslo check --check xid`, one
        node-problem-detector rule): the saved gates of the GPUs holding a fault of one of them,
        as results, without stepping or validating (a partial run cannot tell that every fault
        cleared). So a check's NPD condition holds while the gate holds its fault."""
        try:
            state = load_gate_file(self.path)
        except (ParseError, OSError) as error:
            unknown = CheckResult(check=rts.CHECK, scope=NODE_SCOPE, status=names.STATUS_UNKNOWN,
                                  reason="parse_error", message=str(error)[:300],
                                  source="return-to-service gate")
            return dataclasses.replace(snapshot, results=(*snapshot.results, unknown))
        gates = {u: g for u, g in state.gpus.items() if {f.check for f in g.faults} & checks}
        index = {**_result_gpus(snapshot), **{g.uuid: g.index for g in snapshot.gpus}}
        seen = {u: [r for r in snapshot.results if r.scope == u and r.status == "fail"]
                for u in gates}
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


def _result_gpus(snapshot: NodeSnapshot) -> dict[str, str]:
    """GPU UUIDs results name that the inventory lacks (their index from the result)."""
    return {r.scope: r.gpu for r in snapshot.results if r.gpu and r.scope.startswith("GPU-")}


def gate_for(context: CheckContext, overlay: dict[str, Any] | None = None,
             background: bool = False) -> ReturnToService:
    """The gate for a node: the packaged policy with the node config's `validation:` over it;
    `background` runs the validators on a thread of their own (the serving exporter)."""
    policy = rts.load_gate_policy(overlay)
    validators = Validators(context, policy)
    return ReturnToService(context, policy,
                           BackgroundValidators(validators) if background else validators)

