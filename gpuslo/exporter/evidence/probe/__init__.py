"""The active probe's measurements (evidence, no judging): a short workload on each GPU.

Two backends measure a GPU the same way and return a `ProbeMeasurement`:
- `torch_probe.TorchBackend` runs the workload on the GPU with PyTorch (CUDA ordinals matched to
  NVML by UUID);
- `replay.ReplayBackend` answers from recorded measurements (gpuslo/data/probe_replay), chosen by
  the environment variable `GPUSLO_PROBE_REPLAY=<file>`, so the probe, the return-to-service gate
  and their tests run on CPU as the NVML replay lets the NVML checks run.

A measurement is `full` (speed measured: the GPU was idle) or correctness-only (a small
allocation beside another process: the matrix result and a memory pattern, no speed).
`parallel.measure_all` runs one measurement per GPU concurrently under one deadline.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Protocol

from gpuslo.exporter.evidence.gpu_activity import GpuActivity

REPLAY_ENV = "GPUSLO_PROBE_REPLAY"
REPLAY_MODE_ENV = "GPUSLO_PROBE_REPLAY_MODE"


@dataclass(frozen=True)
class ProbeMeasurement:
    """One GPU's probe.

    Attributes:
        index: NVML index of the GPU, as a string.
        full: True when speed was measured (idle GPU), False for correctness only.
        max_relative_error: float32 matrix product against a float64 CPU reference (ratio).
        pattern_ok: every memory pattern written read back unchanged.
        pattern_bytes: bytes the memory pattern covered.
        bf16_tflops: dense bf16 matrix-product throughput (TFLOP/s); None when not measured.
        copy_tbps: device-to-device copy bandwidth, read + write bytes (TB/s); None when not
            measured.
        seconds: wall time of the measurement (s).
    """

    index: str
    full: bool
    max_relative_error: float
    pattern_ok: bool
    pattern_bytes: int
    bf16_tflops: float | None = None
    copy_tbps: float | None = None
    seconds: float = 0.0


class ContextUnavailable(Exception):  # noqa: N818 - what CUDA calls it
    """No CUDA context (or not even a small allocation) could be had on the GPU: an
    exclusive-process GPU another process holds, or memory another process filled. Busy, not
    failed."""


class Backend(Protocol):
    """What the probe check needs of a backend."""

    name: str

    def prepare(self, gpus: list[GpuActivity]) -> None:
        """Load what measuring needs (PyTorch, the replay file); DependencyMissing when absent,
        ParseError for a broken replay file."""
        ...

    def measure(self, gpu: GpuActivity, full: bool) -> ProbeMeasurement:
        """Measure one GPU; ContextUnavailable when busy, any other exception an error."""
        ...


def replay_path() -> str | None:
    """The probe replay file `GPUSLO_PROBE_REPLAY` names, None when unset."""
    return os.environ.get(REPLAY_ENV) or None
