"""`gpu_probe` (opt-in, `--active`): a short workload that must compute correctly and at expected
speed on every GPU — a GPU that answers status queries can still fail under load.

Evidence: the GPU itself, through PyTorch, in the runner's child (CuPy, which the issue also
allows, is not supported yet). Per GPU (CUDA ordinals in PCI bus order,
`CUDA_DEVICE_ORDER=PCI_BUS_ID`, the order NVML numbers GPUs in):
1. matrix product: a 512×512 float32 product checked against a float64 reference on the CPU
   (max relative error ≤ `MAX_RELATIVE_ERROR`), then bf16 8192×8192 products timed (TFLOPS);
2. memory pattern: 1 GiB written with 0x55555555, 0x2AAAAAAA, 0x0F0F0F0F and read back;
3. device-to-device copy bandwidth of that 1 GiB (TB/s, read + write bytes).
Wrong results → `fail` `probe_failed` (drain and reset); TFLOPS or bandwidth below
`SPEED_RATIO` × expected → `fail` `probe_failed` too (the job would crawl). Expected figures come
from the node config (`checks.gpu_probe.min_tflops`, `min_d2d_tbps`) or `EXPECTED` below, measured
by shared/fixtures/h200-extra/active-check.py on a healthy H200 (779 bf16 TFLOPS, 4.13 TB/s);
with neither, speed is reported but not judged. Not requested → `ok`, `applicable=False`.
Requested but no PyTorch or no CUDA GPU → `DependencyMissing` (`unknown`).
"""

from __future__ import annotations

import os
import time
from dataclasses import dataclass

from gpuslo import names
from gpuslo.errors import DependencyMissing
from gpuslo.exporter.checks.base import CheckContext
from gpuslo.verdict import NODE_SCOPE, CheckResult

MAX_RELATIVE_ERROR = 1e-3
SPEED_RATIO = 0.7
PATTERNS = (0x55555555, 0x2AAAAAAA, 0x0F0F0F0F)
PATTERN_BYTES = 1 << 30
EXPECTED = {"NVIDIA H200": {"min_tflops": 779.0 * SPEED_RATIO, "min_d2d_tbps": 4.13 * SPEED_RATIO}}


@dataclass(frozen=True)
class ProbeMeasurement:
    """One GPU's probe: `uuid` ("GPU-…"), `model`, the float32 product's max relative error
    (ratio), whether every memory pattern read back, bf16 TFLOPS and copy bandwidth (TB/s)."""

    index: str
    uuid: str
    model: str
    max_relative_error: float
    pattern_ok: bool
    bf16_tflops: float
    d2d_tbps: float


def judge_probe(m: ProbeMeasurement, expected: dict[str, float]) -> CheckResult:
    """The result for one measurement against `expected` (`min_tflops`, `min_d2d_tbps`); pure."""
    figures = f"bf16 {m.bf16_tflops:.0f} TFLOPS, copy {m.d2d_tbps:.2f} TB/s"
    wrong = []
    if not m.max_relative_error <= MAX_RELATIVE_ERROR:
        wrong.append(f"matrix product off by {m.max_relative_error:.2g} (relative)")
    if not m.pattern_ok:
        wrong.append("memory pattern did not read back")
    if m.bf16_tflops < expected.get("min_tflops", 0.0):
        wrong.append(f"bf16 {m.bf16_tflops:.0f} TFLOPS below {expected['min_tflops']:.0f}")
    if m.d2d_tbps < expected.get("min_d2d_tbps", 0.0):
        wrong.append(f"copy {m.d2d_tbps:.2f} TB/s below {expected['min_d2d_tbps']:.2f}")
    common = {"check": "gpu_probe", "scope": m.uuid, "gpu": m.index, "source": "active probe"}
    if wrong:
        return CheckResult(
            **common,
            status=names.STATUS_FAIL,
            reason="probe_failed",
            action=names.ACTION_DRAIN_AND_RESET,
            message="; ".join(wrong),
        )
    judged = "" if expected else " (no expected speed configured)"
    return CheckResult(**common, status=names.STATUS_OK, message=f"correct; {figures}{judged}")


def _torch_measure(torch, index: int) -> ProbeMeasurement:  # pragma: no cover - needs a GPU
    device = torch.device("cuda", index)
    props = torch.cuda.get_device_properties(device)
    a, b = torch.randn(512, 512, dtype=torch.float64), torch.randn(512, 512, dtype=torch.float64)
    reference = a @ b
    product = (a.float().to(device) @ b.float().to(device)).double().cpu()
    error = float(((product - reference).abs().max() / reference.abs().max()).item())
    x = torch.randn(8192, 8192, device=device, dtype=torch.bfloat16)
    for _ in range(3):
        _ = x @ x
    torch.cuda.synchronize(device)
    start = time.perf_counter()
    for _ in range(10):
        _ = x @ x
    torch.cuda.synchronize(device)
    tflops = 2 * 8192**3 * 10 / (time.perf_counter() - start) / 1e12
    memory = torch.empty(PATTERN_BYTES // 4, dtype=torch.int32, device=device)
    ok = all(bool((memory.fill_(p) == p).all().item()) for p in PATTERNS)
    copy = torch.empty_like(memory)
    torch.cuda.synchronize(device)
    start = time.perf_counter()
    for _ in range(10):
        copy.copy_(memory)
    torch.cuda.synchronize(device)
    tbps = 2 * PATTERN_BYTES * 10 / (time.perf_counter() - start) / 1e12
    uuid = f"GPU-{props.uuid}" if not str(props.uuid).startswith("GPU-") else str(props.uuid)
    return ProbeMeasurement(str(index), uuid, props.name, error, ok, tflops, tbps)


def _load_torch():
    os.environ.setdefault("CUDA_DEVICE_ORDER", "PCI_BUS_ID")
    try:
        import torch
    except ImportError:
        raise DependencyMissing("gpu_probe needs PyTorch with CUDA; it is not installed") from None
    if not torch.cuda.is_available():
        raise DependencyMissing("PyTorch sees no CUDA GPU (driver or GPU absent)")
    return torch


class GpuProbeCheck:
    """The active probe (see the module docstring)."""

    name = "gpu_probe"
    interval_s = 3600.0  # a workload: hourly in the exporter, or on demand with `gpuslo check`
    dependencies = ("PyTorch with CUDA", "NVIDIA driver", "a CUDA GPU")

    def run(self, context: CheckContext) -> list[CheckResult]:
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
        torch = _load_torch()
        settings = context.config.get("checks", {}).get(self.name, {})
        results = []
        for index in range(torch.cuda.device_count()):
            measured = _torch_measure(torch, index)
            expected = {k: v for k, v in settings.items() if k in ("min_tflops", "min_d2d_tbps")}
            results.append(judge_probe(measured, expected or EXPECTED.get(measured.model, {})))
        return results
