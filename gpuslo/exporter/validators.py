"""The return-to-service gate's validators (issue 26): which are available on this node, how a
validator check's results become one `ValidatorOutcome` per GPU, and the runs themselves, each in
a child process with its deadline (`Validators`), or on a thread of their own for the serving
exporter (`BackgroundValidators`). The gate (`gpuslo.exporter.gate`) applies the outcomes."""

from __future__ import annotations

import dataclasses
import importlib.util
import shutil
import threading

from gpuslo import names
from gpuslo.exporter.checks.base import CheckContext
from gpuslo.exporter.checks.dcgm_diag import DcgmDiagCheck
from gpuslo.exporter.checks.gpu_probe import GpuProbeCheck
from gpuslo.exporter.evidence.probe import replay_path
from gpuslo.exporter.policy import return_to_service as rts
from gpuslo.exporter.policy.return_to_service import GatePolicy, ValidatorOutcome
from gpuslo.exporter.runner import Runner
from gpuslo.verdict import NODE_SCOPE, CheckResult

CHECK_OF = {"probe": "gpu_probe", "dcgm_diag": "dcgm_diag"}
NOT_JUDGED = ("busy:", "activity unknown:")

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


def unavailable_answers(previous: dict[str, str],
                        outcomes: dict[str, list[ValidatorOutcome]]) -> dict[str, str]:
    """{validator: its words} of the validators whose last try answered `unavailable` on every
    GPU it ran on (pure): `previous` updated by one try's `outcomes` ({UUID: [outcome]}); a
    validator that answered anything else on some GPU is dropped, one not in the try is kept.
    Why (newcomer 7 F4): the cheap `validator_states` finds PyTorch importable, but the probe
    itself answers `dependency_missing` on a node without CUDA; the gate must then say the
    probe is unavailable, not export it as available while holding GPUs down without it."""
    seen: dict[str, list[ValidatorOutcome]] = {}
    for items in outcomes.values():
        for outcome in items:
            seen.setdefault(outcome.validator, []).append(outcome)
    out = {v: w for v, w in previous.items() if v not in seen}
    for validator, items in sorted(seen.items()):
        if all(o.status == rts.UNAVAILABLE for o in items):
            out[validator] = items[0].message
    return out


def as_answered(states: dict[str, str], unavailable: dict[str, str]) -> dict[str, str]:
    """`states` (`validator_states`) with every validator the last try found unavailable
    (`unavailable_answers`) reading `unavailable` (pure): fail closed, an availability the
    validator itself denied is not exported."""
    return {v: "unavailable" if s == "available" and v in unavailable else s
            for v, s in states.items()}


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
