"""Who is using each GPU, from NVML (evidence, no judging): the active probe reads it before and
after measuring, so that it never judges speed on a GPU another process uses (issue 26: a probe
run beside a training job measured 316 instead of ~790 bf16 TFLOPS and failed a healthy H200).

Per GPU (`GpuActivity`): its NVML index, UUID and model; the PIDs of its compute processes
(`nvmlDeviceGetComputeRunningProcesses`, plus `nvmlDeviceGetMPSComputeRunningProcesses` where
the library has it; None when NVML does not report them, e.g. NOT_SUPPORTED); its utilisation
(`nvmlDeviceGetUtilizationRates().gpu`, the share of the last sample period, 1/6 s to 1 s, during
which a kernel ran; ratio 0-1, None when not reported); and whether its compute mode lets only
one process hold a context (`nvmlDeviceGetComputeMode`: EXCLUSIVE_PROCESS = 3) or none
(PROHIBITED = 2). Constants are nvml.h's (`nvmlComputeMode_t`).

`read_activity(nvml)` is the I/O edge (it takes the NVML module so tests pass the NVML replay,
gpuslo/data/nvml_replay, whose `busy` mode lists a process on every GPU); it raises what
`evidence.nvml.read_node` raises (DependencyMissing, ToolError). A GPU whose identity cannot be
read is left out: the probe cannot name it, and gpu_inventory reports it.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass
from typing import Any

from gpuslo.errors import ToolError

# the NVML module's guarded start and text decoding, shared so both read NVML one way
from gpuslo.exporter.evidence.nvml import _code, _start, _text

COMPUTE_MODE_PROHIBITED = 2
COMPUTE_MODE_EXCLUSIVE_PROCESS = 3
NOT_REPORTED = (3, 13)  # NVML_ERROR_NOT_SUPPORTED, NVML_ERROR_FUNCTION_NOT_FOUND
PROCESS_CALLS = (
    "nvmlDeviceGetComputeRunningProcesses",
    "nvmlDeviceGetMPSComputeRunningProcesses",
)


@dataclass(frozen=True)
class GpuActivity:
    """One GPU as NVML saw it at one moment (see the module docstring). `processes` are PIDs as
    NVML reports them (the host's PID namespace), sorted; None = not reported."""

    index: str
    uuid: str
    model: str
    processes: tuple[int, ...] | None
    utilization: float | None
    exclusive: bool = False
    prohibited: bool = False


def _call(nvml: Any, name: str, handle: Any) -> Any:
    """`nvml.<name>(handle)`; None when the library lacks it or answers NOT_SUPPORTED."""
    function = getattr(nvml, name, None)
    if function is None:
        return None
    try:
        return function(handle)
    except nvml.NVMLError as error:
        if _code(error) in NOT_REPORTED:
            return None
        raise


def _processes(nvml: Any, handle: Any) -> tuple[int, ...] | None:
    found: set[int] | None = None
    for name in PROCESS_CALLS:
        listed = _call(nvml, name, handle)
        if listed is None:
            continue
        found = (found or set()) | {int(getattr(p, "pid", -1)) for p in listed}
    return None if found is None else tuple(sorted(found))


def gpu_activity(nvml: Any, index: int) -> GpuActivity | None:
    """One GPU's activity; None when its handle, UUID or name cannot be read. NVML errors other
    than NOT_SUPPORTED on the activity calls raise ToolError naming the call."""
    try:
        handle = nvml.nvmlDeviceGetHandleByIndex(index)
        uuid = _text(nvml.nvmlDeviceGetUUID(handle), "nvmlDeviceGetUUID")
        model = _text(nvml.nvmlDeviceGetName(handle), "nvmlDeviceGetName")
    except nvml.NVMLError:
        return None
    try:
        processes = _processes(nvml, handle)
        rates = _call(nvml, "nvmlDeviceGetUtilizationRates", handle)
        mode = _call(nvml, "nvmlDeviceGetComputeMode", handle)
    except nvml.NVMLError as error:
        raise ToolError(f"GPU {index}: NVML activity query failed: {error}") from None
    gpu = getattr(rates, "gpu", None)
    utilization = gpu / 100.0 if isinstance(gpu, int) and not isinstance(gpu, bool) else None
    return GpuActivity(
        index=str(index),
        uuid=uuid,
        model=model,
        processes=processes,
        utilization=utilization,
        exclusive=mode == COMPUTE_MODE_EXCLUSIVE_PROCESS,
        prohibited=mode == COMPUTE_MODE_PROHIBITED,
    )


def read_activity(nvml: Any) -> list[GpuActivity]:
    """Every GPU NVML lists that it can name, in index order (I/O; see the module docstring)."""
    _start(nvml)
    try:
        try:
            count = int(nvml.nvmlDeviceGetCount())
        except nvml.NVMLError as error:
            raise ToolError(f"nvmlDeviceGetCount failed: {error}") from None
        found = (gpu_activity(nvml, index) for index in range(count))
        return [gpu for gpu in found if gpu is not None]
    finally:
        with contextlib.suppress(Exception):
            nvml.nvmlShutdown()
