"""Every GPU probed at once, under one deadline that grows with the GPU count.

Issue 26: the probe took 6.6 s of the check's 10 s deadline on one H200, one GPU after another,
so 8 GPUs would have read `unknown` (check_timeout) for the whole node. Here each GPU gets its own
thread in the check's child process (PyTorch releases the GIL while the GPU works; a CUDA context
is per device), all started together, and the probe stops waiting at its own deadline:
`probe_deadline_s` = `BASE_S` + `PER_GPU_S` × GPUs, at most `SHARE` of the check's deadline, so
the answer (with the GPUs that finished) reaches the runner before the runner's deadline. A GPU
still measuring then is `timed_out` (its thread is a daemon; the runner kills the child's process
group once it has answered). `measure_all` takes the measuring function and the clock, so tests
drive it with the probe replay.

Figures: `BASE_S` covers importing PyTorch (~2 s) and creating the first CUDA context; `PER_GPU_S`
the contexts the driver creates one after another and the work of 8 GPUs sharing host CPU and
PCIe. They are estimates (no multi-GPU node was lent to measure them); the node config overrides
them (`checks.gpu_probe.base_s`, `per_gpu_s`).
"""

from __future__ import annotations

import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from gpuslo.exporter.evidence.gpu_activity import GpuActivity
from gpuslo.exporter.evidence.probe import ContextUnavailable, ProbeMeasurement

BASE_S = 5.0
PER_GPU_S = 0.5
SHARE = 0.8  # of the check's deadline: the answer must still reach the runner


@dataclass(frozen=True)
class Outcome:
    """How one GPU's measurement ended: `measurement` (done), `no_context` (ContextUnavailable,
    with its text in `error`), `error` (any other exception's text) or `timed_out`."""

    index: str
    measurement: ProbeMeasurement | None = None
    no_context: bool = False
    error: str = ""
    timed_out: bool = False


def probe_deadline_s(
    gpus: int,
    check_timeout_s: float,
    base_s: float = BASE_S,
    per_gpu_s: float = PER_GPU_S,
) -> float:
    """The probe's own deadline for `gpus` GPUs (s): base + per GPU × count, capped at `SHARE` of
    the check's deadline. Pure."""
    return min(base_s + per_gpu_s * max(gpus, 1), SHARE * check_timeout_s)


def _run(
    measure: Callable[[GpuActivity, bool], ProbeMeasurement],
    gpu: GpuActivity,
    full: bool,
    box: dict[str, Outcome],
) -> None:
    try:
        outcome = Outcome(gpu.index, measurement=measure(gpu, full))
    except ContextUnavailable as error:
        outcome = Outcome(gpu.index, no_context=True, error=str(error)[:200])
    except Exception as error:  # noqa: BLE001 - one GPU's error is its result, not the probe's
        outcome = Outcome(gpu.index, error=f"{type(error).__name__}: {error}"[:200])
    box[gpu.index] = outcome


def measure_all(
    measure: Callable[[GpuActivity, bool], ProbeMeasurement],
    plan: list[tuple[GpuActivity, bool]],
    deadline_s: float,
    clock: Callable[[], float] = time.monotonic,
) -> dict[str, Outcome]:
    """Run `measure(gpu, full)` for every (gpu, full) of `plan` concurrently; return an Outcome
    per GPU index once all are done or `deadline_s` has passed (those still running:
    `timed_out`)."""
    box: dict[str, Outcome] = {}
    threads = []
    for gpu, full in plan:
        thread = threading.Thread(
            target=_run, args=(measure, gpu, full, box), name=f"probe-gpu{gpu.index}", daemon=True
        )
        thread.start()
        threads.append(thread)
    end = clock() + deadline_s
    for thread in threads:
        thread.join(max(0.0, end - clock()))
    return {
        gpu.index: box.get(gpu.index) or Outcome(gpu.index, timed_out=True) for gpu, _ in plan
    }
