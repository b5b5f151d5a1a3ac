"""`gpu_probe` (opt-in, `--active`): a short workload that must compute correctly and, on an idle
GPU, at the speed its SKU should reach — a GPU that answers status queries can still fail under
load. It never judges speed on a GPU another process uses (issue 26).

Evidence: NVML's view of who uses each GPU (`evidence.gpu_activity`), read before and after the
measurement, and the measurement itself (`evidence.probe`: PyTorch on the GPU, or the probe
replay when `GPUSLO_PROBE_REPLAY` names a file). Every GPU is measured at once, under the probe's
own deadline (`evidence.probe.parallel.probe_deadline_s`: grows with the GPU count, at most 0.8
of the check's deadline), so an 8-GPU node answers inside the check's deadline and a GPU that
hangs is `unknown` alone. Judging is `policy.probe` with the per-SKU speed table
`policy.speeds` (packaged gpuslo/data/probe_speeds.yaml; overlay: node config `probe_speeds`),
and the node config's `checks.gpu_probe.min_tflops` / `min_d2d_tbps` over both.

Results: one per GPU (see `policy.probe`), only those of `config["probe_gpus"]` (UUIDs) when the
return-to-service gate runs it as a validator; not requested → one `ok` with `applicable=False`.
Requested but no NVML, no PyTorch or no CUDA GPU → `DependencyMissing` (`unknown`). Facts
(`ProbeFacts`): the runs that did not judge a GPU's speed, by (UUID, why), cumulative in
`probe_not_judged.json` in the state dir (atomic, locked: `gpuslo check` and the exporter share
it), for `gpuslo_gpu_probe_speed_not_judged_total`.
"""

from __future__ import annotations

import os
from pathlib import Path
from typing import Any

from gpuslo import names
from gpuslo.errors import DependencyMissing, ParseError
from gpuslo.exporter.checks.base import CheckContext, CheckOutput, ProbeFacts
from gpuslo.exporter.evidence.gpu_activity import GpuActivity, read_activity
from gpuslo.exporter.evidence.nvml import load_nvml
from gpuslo.exporter.evidence.probe import replay_path
from gpuslo.exporter.evidence.probe.parallel import (
    BASE_S,
    PER_GPU_S,
    measure_all,
    probe_deadline_s,
)
from gpuslo.exporter.evidence.probe.replay import ReplayBackend
from gpuslo.exporter.evidence.probe.torch_probe import TorchBackend
from gpuslo.exporter.policy.probe import Busy, busy_after, busy_before, judge_probe, probe_pids
from gpuslo.exporter.policy.speeds import SpeedPolicy, SpeedThresholds, load_speed_policy
from gpuslo.exporter.state import locked, read_json_state, write_json_atomic
from gpuslo.verdict import NODE_SCOPE, CheckResult

NAME = "gpu_probe"
COUNTS_FILE = "probe_not_judged.json"


def load_backend() -> Any:
    """The probe replay when `GPUSLO_PROBE_REPLAY` names a file, else PyTorch."""
    path = replay_path()
    return ReplayBackend(path) if path else TorchBackend()


def thresholds(
    policy: SpeedPolicy, model: str, settings: dict[str, float]
) -> SpeedThresholds | None:
    """The SKU table's thresholds for `model`, with the node config's `min_tflops` /
    `min_d2d_tbps` over them (pure)."""
    table = policy.thresholds_for(model)
    if "min_tflops" not in settings and "min_d2d_tbps" not in settings:
        return table
    return SpeedThresholds(
        "node config",
        settings.get("min_tflops", table.min_bf16_tflops if table else 0.0),
        settings.get("min_d2d_tbps", table.min_copy_tbps if table else 0.0),
        "configured",
    )


def _merge(first: Busy, second: Busy) -> Busy:
    return first if first.why else second


def probe_node(
    before: list[GpuActivity],
    read_after: Any,
    backend: Any,
    policy: SpeedPolicy,
    settings: dict[str, float],
    check_timeout_s: float,
    own_pid: int,
) -> CheckOutput:
    """Measure every GPU of `before` at once and judge each (`read_after()` re-reads NVML)."""
    busy = {g.index: busy_before(g, policy.busy_utilization, own_pid) for g in before}
    plan = [(g, not busy[g.index].why) for g in before if not busy[g.index].skip]
    deadline = probe_deadline_s(
        len(before), check_timeout_s, settings.get("base_s", BASE_S),
        settings.get("per_gpu_s", PER_GPU_S),
    )
    outcomes = measure_all(backend.measure, plan, deadline)
    after = {g.index: g for g in read_after()}
    own = probe_pids({g.index: g for g in before}, after, [g.index for g, _ in plan], own_pid)
    results: list[CheckResult] = []
    not_judged: dict[tuple[str, str], int] = {}
    for gpu in before:
        why = _merge(busy[gpu.index], busy_after(gpu, after.get(gpu.index), own))
        outcome = outcomes.get(gpu.index)
        limits = thresholds(policy, gpu.model, settings)
        results.append(judge_probe(gpu, outcome, why, limits, deadline))
        if why.why or (outcome is not None and outcome.no_context):
            not_judged[(gpu.uuid, why.why or names.PROBE_NOT_JUDGED[1])] = 1
    return CheckOutput(results, ProbeFacts(not_judged))


class GpuProbeCheck:
    """The active probe (see the module docstring)."""

    name = NAME
    interval_s = 3600.0  # a workload: hourly in the exporter, or on demand with `gpuslo check`
    dependencies = ("NVML", "PyTorch with CUDA (or the probe replay)", "a CUDA GPU")

    def run(self, context: CheckContext) -> list[CheckResult] | CheckOutput:
        """Probe every GPU; not applicable unless `context.active`."""
        if not context.active:
            return [
                CheckResult(
                    check=self.name,
                    scope=NODE_SCOPE,
                    status=names.STATUS_OK,
                    applicable=False,
                    message="active probe not requested (--active)",
                )
            ]
        nvml = load_nvml()
        only = context.config.get("probe_gpus")  # the return-to-service gate's GPUs (UUIDs)
        before = [g for g in read_activity(nvml) if only is None or g.uuid in only]
        if not before:
            raise DependencyMissing("NVML lists no GPU the probe can name")
        policy = load_speed_policy(context.config.get("probe_speeds"))
        backend = load_backend()
        backend.prepare(before)
        settings = context.config.get("checks", {}).get(self.name, {})
        output = probe_node(
            before, lambda: read_activity(nvml), backend, policy, settings, context.timeout_s,
            os.getpid(),
        )
        totals = count_not_judged(Path(context.state_dir), output.facts.probe_speed_not_judged)
        return CheckOutput(output.results, ProbeFacts(totals))


def count_not_judged(state_dir: Path, runs: dict[tuple[str, str], int]) -> dict:
    """Add this run's not-judged GPUs to the cumulative counts in the state dir and return them
    (I/O). A broken file is a ParseError (`unknown`), never reset."""
    state_dir.mkdir(parents=True, exist_ok=True)
    path = state_dir / COUNTS_FILE
    with locked(path, 5.0):
        raw = read_json_state(path, [])
        try:
            counts = {(str(u), str(w)): int(n) for u, w, n in raw}
        except (TypeError, ValueError) as error:
            raise ParseError(str(path), f"state file has an unexpected shape ({error})") from None
        for key, n in runs.items():
            counts[key] = counts.get(key, 0) + n
        if runs:
            write_json_atomic(path, sorted([*key, n] for key, n in counts.items()))
    return counts
