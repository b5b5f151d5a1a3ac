"""The probe's workload on a real GPU, with PyTorch (CuPy is not supported yet).

Per GPU, in its own thread (`parallel.measure_all`), on the CUDA device whose UUID is the NVML
GPU's (CUDA ordinals need not follow NVML's order, and CUDA_VISIBLE_DEVICES may hide some):
1. a 512 × 512 float32 product checked against a float64 product on the CPU (max relative
   error);
2. memory patterns 0x55555555, 0x2AAAAAAA, 0x0F0F0F0F written over `PATTERN_BYTES` and read back;
then, on an idle GPU only (`full`):
3. dense bf16 8192 × 8192 products, 3 warm-up and 10 timed (2 n³ flops each → TFLOP/s);
4. 10 device-to-device copies of the pattern buffer (read + write bytes → TB/s).
A busy GPU gets steps 1-2 on `SMALL_PATTERN_BYTES` only (a small allocation beside the job).

A context that cannot be created (cudaErrorDevicesUnavailable: "busy or unavailable", an
exclusive-process GPU another process holds) or memory that cannot be had beside another process
raises `ContextUnavailable`: busy, not failed. Workload shapes follow
shared/fixtures/h200-extra/active-check.py, which measured 779 TFLOP/s and 4.13 TB/s on an H200.
"""

from __future__ import annotations

import os
import time
from typing import Any

from gpuslo.errors import DependencyMissing
from gpuslo.exporter.evidence.gpu_activity import GpuActivity
from gpuslo.exporter.evidence.probe import ContextUnavailable, ProbeMeasurement

PATTERNS = (0x55555555, 0x2AAAAAAA, 0x0F0F0F0F)
PATTERN_BYTES = 1 << 30
SMALL_PATTERN_BYTES = 64 << 20
MATMUL_N = 8192
TIMED_PRODUCTS = 10
TIMED_COPIES = 10
BUSY_WORDS = ("busy or unavailable", "out of memory", "cudaErrorDevicesUnavailable")


def _uuid_of(props: Any) -> str:
    text = str(getattr(props, "uuid", ""))
    return text if text.startswith("GPU-") else f"GPU-{text}"


class TorchBackend:
    """Measures with PyTorch on the real GPUs (see the module docstring)."""

    name = "pytorch"

    def __init__(self) -> None:
        self.torch: Any = None
        self.ordinals: dict[str, int] = {}

    def prepare(self, gpus: list[GpuActivity]) -> None:  # pragma: no cover - needs a GPU
        """Import PyTorch and map NVML UUIDs to CUDA ordinals; DependencyMissing without PyTorch
        or a CUDA GPU."""
        os.environ.setdefault("CUDA_DEVICE_ORDER", "PCI_BUS_ID")
        try:
            import torch
        except ImportError:
            missing = "gpu_probe needs PyTorch with CUDA; it is not installed"
            raise DependencyMissing(missing) from None
        if not torch.cuda.is_available():
            raise DependencyMissing("PyTorch sees no CUDA GPU (driver or GPU absent)")
        self.torch = torch
        for ordinal in range(torch.cuda.device_count()):
            self.ordinals[_uuid_of(torch.cuda.get_device_properties(ordinal))] = ordinal

    def measure(self, gpu: GpuActivity, full: bool) -> ProbeMeasurement:  # pragma: no cover
        """One GPU's workload; ContextUnavailable when CUDA says it is busy."""
        if gpu.uuid not in self.ordinals:
            raise RuntimeError(f"{gpu.uuid} is not visible to CUDA (CUDA_VISIBLE_DEVICES?)")
        try:
            return self._measure(gpu.index, self.ordinals[gpu.uuid], full)
        except RuntimeError as error:  # torch.cuda.OutOfMemoryError is a RuntimeError
            if any(word in str(error) for word in BUSY_WORDS):
                raise ContextUnavailable(str(error).splitlines()[0]) from None
            raise

    def _measure(  # pragma: no cover - needs a GPU
        self, index: str, ordinal: int, full: bool
    ) -> ProbeMeasurement:
        torch = self.torch
        started = time.perf_counter()
        device = torch.device("cuda", ordinal)
        torch.cuda.set_device(device)
        a, b = (torch.randn(512, 512, dtype=torch.float64) for _ in range(2))
        reference = a @ b
        product = (a.float().to(device) @ b.float().to(device)).double().cpu()
        error = float(((product - reference).abs().max() / reference.abs().max()).item())
        size = PATTERN_BYTES if full else SMALL_PATTERN_BYTES
        memory = torch.empty(size // 4, dtype=torch.int32, device=device)
        ok = all(bool((memory.fill_(p) == p).all().item()) for p in PATTERNS)
        tflops = tbps = None
        if full:
            tflops = self._matmul_tflops(device)
            tbps = self._copy_tbps(device, memory, size)
        del memory
        seconds = time.perf_counter() - started
        return ProbeMeasurement(index, full, error, ok, size, tflops, tbps, seconds)

    def _matmul_tflops(self, device: Any) -> float:  # pragma: no cover - needs a GPU
        torch = self.torch
        x = torch.randn(MATMUL_N, MATMUL_N, device=device, dtype=torch.bfloat16)
        for _ in range(3):
            _ = x @ x
        torch.cuda.synchronize(device)
        start = time.perf_counter()
        for _ in range(TIMED_PRODUCTS):
            _ = x @ x
        torch.cuda.synchronize(device)
        return 2 * MATMUL_N**3 * TIMED_PRODUCTS / (time.perf_counter() - start) / 1e12

    def _copy_tbps(self, device: Any, memory: Any, size: int) -> float:  # pragma: no cover
        torch = self.torch
        copy = torch.empty_like(memory)
        torch.cuda.synchronize(device)
        start = time.perf_counter()
        for _ in range(TIMED_COPIES):
            copy.copy_(memory)
        torch.cuda.synchronize(device)
        return 2 * size * TIMED_COPIES / (time.perf_counter() - start) / 1e12
