"""NVML evidence: read every GPU through `pynvml` (nvidia-ml-py) into `gpu_health.GpuStatus`,
with `nvidia-smi -q -x` as the fallback when NVML cannot be used from Python (`read_gpus`).

Runs inside the runner's child process: NVML calls can block inside the driver, and only a process
can be killed (shared/DESIGN.md §3). `read_node(nvml)` is the I/O edge; it takes the NVML module as
an argument so tests pass a fake. `load_nvml()` imports `pynvml`, first putting the directory named
by the environment variable `GPUSLO_NVML_PATH` on `sys.path`: that is how tests and benchmarks
swap in the NVML replay of gpuslo/data/nvml_replay/
(`GPUSLO_NVML_PATH=gpuslo/data/nvml_replay gpuslo check` reads the recorded H200 node), in the
child as well as in the parent.

Rules of reading (fail closed):
- no `pynvml` module, no NVML library or no driver loaded → `DependencyMissing`;
- NVML library and kernel driver of different versions → `ToolError` (driver_mismatch);
- other errors of `nvmlInit` / `nvmlDeviceGetCount` → `ToolError`;
- per GPU, `NVML_ERROR_NOT_SUPPORTED` means "not reported" (None); any other error, on the handle
  or on any call, makes the GPU inaccessible (`accessible=False`, `error` names the first failing
  call): a field that could not be read must not pass for one that reads fine;
- a value of the wrong type (garbage from a broken library) → `ParseError` naming the call.

Constants are NVML's own (nvml.h, NVML API reference), written out so a fake needs none of them.
"""

from __future__ import annotations

import contextlib
import ctypes
import importlib
import os
import subprocess
import sys
from dataclasses import dataclass, replace
from typing import Any

from gpuslo.errors import DeadlineExceeded, DependencyMissing, ParseError, ToolError
from gpuslo.exporter.evidence.clock_events import reasons_of_mask
from gpuslo.exporter.evidence.families import family_of
from gpuslo.exporter.evidence.gpu_status import GpuStatus
from gpuslo.exporter.evidence.nvidia_smi.query import parse_xml
from gpuslo.exporter.evidence.pci import normalise_pci

NVML_PATH_ENV = "GPUSLO_NVML_PATH"
SOURCE = "nvml"
# nvml.h return codes
ERROR_NOT_SUPPORTED = 3
ERROR_DRIVER_NOT_LOADED = 9
ERROR_LIBRARY_NOT_FOUND = 12
ERROR_FUNCTION_NOT_FOUND = 13
ERROR_LIB_RM_VERSION_MISMATCH = 18
MISSING_CODES = (ERROR_DRIVER_NOT_LOADED, ERROR_LIBRARY_NOT_FOUND)
NOT_REPORTED_CODES = (ERROR_NOT_SUPPORTED, ERROR_FUNCTION_NOT_FOUND)
# nvml.h enums
TEMPERATURE_GPU = 0
TEMPERATURE_THRESHOLD_SLOWDOWN = 1
MEMORY_ERROR_TYPE_CORRECTED, MEMORY_ERROR_TYPE_UNCORRECTED = 0, 1
VOLATILE_ECC, AGGREGATE_ECC = 0, 1
CLOCKS_EVENT_HW_SLOWDOWN = 0x08
CLOCKS_EVENT_HW_THERMAL_SLOWDOWN = 0x40
# nvmlClocksEventReasonSwPowerCap, nvmlClocksEventReasonSwThermalSlowdown (nvml.h)
CLOCKS_EVENT_SW_POWER_CAP = 0x04
CLOCKS_EVENT_SW_THERMAL_SLOWDOWN = 0x20
FI_DEV_GET_GPU_RECOVERY_ACTION = 230
RECOVERY_ACTIONS = {
    0: "None",
    1: "GPU_Reset",
    2: "Node_Reboot",
    3: "Drain_P2P",
    4: "Drain_And_Reset",
}
NVLINK_MAX_LINKS = 18  # NVLink5 (Blackwell) has 18 links per GPU
NVLINK_ERROR_COUNTERS = {0: "dl_replay", 1: "dl_recovery", 2: "dl_crc_flit", 3: "dl_crc_data"}
FABRIC_STATES = {1: "Not Started", 2: "In Progress", 3: "Completed"}  # 0: not supported
MAX_MIG_DEVICES = 8  # nvml.h NVML_MAX_MIG_DEVICES_PER_GPU (7 on A100/H100, 8 reserved)


@dataclass(frozen=True)
class NvmlNode:
    """What NVML reported about the node: driver and CUDA versions ("" when not reported), the
    device count NVML gives, and one `GpuStatus` per index (inaccessible ones included).
    `utilization` maps GPU index -> GPU utilisation (ratio 0-1), for "under load" rules."""

    driver_version: str
    cuda_version: str
    device_count: int
    gpus: tuple[GpuStatus, ...]
    utilization: dict[str, float]
    source: str = SOURCE


def load_nvml() -> Any:
    """Import `pynvml` (honouring `GPUSLO_NVML_PATH`); `DependencyMissing` when it is absent."""
    extra = os.environ.get(NVML_PATH_ENV)
    if extra and extra not in sys.path:
        sys.path.insert(0, extra)
    try:
        return importlib.import_module("pynvml")
    except ImportError as error:
        raise DependencyMissing(f"nvidia-ml-py (module pynvml) is not installed: {error}") from None


def _code(error: BaseException) -> int | None:
    return getattr(error, "value", None)


def _start(nvml: Any) -> None:
    try:
        nvml.nvmlInit()
    except nvml.NVMLError as error:
        if _code(error) in MISSING_CODES:
            raise DependencyMissing(
                f"NVML library or NVIDIA driver not available: {error}"
            ) from None
        if _code(error) == ERROR_LIB_RM_VERSION_MISMATCH:
            raise ToolError(f"driver_mismatch: NVML and kernel driver differ: {error}") from None
        raise ToolError(f"nvmlInit failed: {error}") from None


def _text(value: Any, call: str) -> str:
    if isinstance(value, bytes):
        try:
            value = value.decode()
        except UnicodeDecodeError:
            raise ParseError(SOURCE, "not UTF-8 text", field=call) from None
    if not isinstance(value, str) or not value.isprintable():
        raise ParseError(SOURCE, f"expected text, got {value!r:.40}", field=call)
    return value


def _count(value: Any, call: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise ParseError(SOURCE, f"expected a count, got {value!r:.40}", field=call)
    return value


class _Gpu:
    """Guarded calls on one device handle: NOT_SUPPORTED → None, other errors recorded."""

    def __init__(self, nvml: Any, handle: Any) -> None:
        self.nvml, self.handle, self.error = nvml, handle, None

    def call(self, name: str, *args: Any) -> Any:
        function = getattr(self.nvml, name, None)
        if function is None:
            return None
        try:
            return function(self.handle, *args)
        except self.nvml.NVMLError as error:
            if _code(error) not in NOT_REPORTED_CODES and self.error is None:
                self.error = f"{name}: {error}"
            return None

    def count(self, name: str, *args: Any) -> int | None:
        value = self.call(name, *args)
        return None if value is None else _count(value, name)

    def field(self, field_id: int) -> int | None:
        values = self.call("nvmlDeviceGetFieldValues", [field_id])
        if not values or getattr(values[0], "nvmlReturn", 1) != 0:
            return None
        return _count(int(values[0].value.ullVal), f"field {field_id}")


def _memory(gpu: _Gpu) -> dict[str, Any]:
    ecc_mode = gpu.call("nvmlDeviceGetEccMode")
    rows = gpu.call("nvmlDeviceGetRemappedRows")  # (correctable, uncorrectable, pending, failure)
    action = gpu.field(FI_DEV_GET_GPU_RECOVERY_ACTION)
    if rows is not None and (not isinstance(rows, list | tuple) or len(rows) != 4):
        raise ParseError(
            SOURCE, f"expected 4 values, got {rows!r:.40}", field="nvmlDeviceGetRemappedRows"
        )
    errors = "nvmlDeviceGetTotalEccErrors"
    return {
        "ecc_mode": None if ecc_mode is None else ("Enabled" if ecc_mode[0] else "Disabled"),
        "ecc_sbe_volatile": gpu.count(errors, MEMORY_ERROR_TYPE_CORRECTED, VOLATILE_ECC),
        "ecc_dbe_volatile": gpu.count(errors, MEMORY_ERROR_TYPE_UNCORRECTED, VOLATILE_ECC),
        "ecc_dbe_aggregate": gpu.count(errors, MEMORY_ERROR_TYPE_UNCORRECTED, AGGREGATE_ECC),
        "remapped_rows_uncorrectable": None if rows is None else _count(rows[1], "remapped rows"),
        "remapped_rows_pending": None if rows is None else bool(rows[2]),
        "remapped_rows_failure": None if rows is None else bool(rows[3]),
        "recovery_action": None if action is None else RECOVERY_ACTIONS.get(action, str(action)),
    }


def _thermal_and_pcie(gpu: _Gpu) -> dict[str, Any]:
    reasons = gpu.count("nvmlDeviceGetCurrentClocksEventReasons")
    if reasons is None:
        reasons = gpu.count("nvmlDeviceGetCurrentClocksThrottleReasons")
    return {
        "hw_thermal_slowdown": None
        if reasons is None
        else bool(reasons & CLOCKS_EVENT_HW_THERMAL_SLOWDOWN),
        "hw_slowdown": None if reasons is None else bool(reasons & CLOCKS_EVENT_HW_SLOWDOWN),
        "sw_thermal_slowdown": None
        if reasons is None
        else bool(reasons & CLOCKS_EVENT_SW_THERMAL_SLOWDOWN),
        "sw_power_cap": None if reasons is None else bool(reasons & CLOCKS_EVENT_SW_POWER_CAP),
        "clock_events": None if reasons is None else reasons_of_mask(reasons),
        "temperature_c": gpu.count("nvmlDeviceGetTemperature", TEMPERATURE_GPU),
        "slowdown_temperature_c": gpu.count(
            "nvmlDeviceGetTemperatureThreshold", TEMPERATURE_THRESHOLD_SLOWDOWN
        ),
        "pcie_gen_current": gpu.count("nvmlDeviceGetCurrPcieLinkGeneration"),
        "pcie_gen_max": gpu.count("nvmlDeviceGetMaxPcieLinkGeneration"),
        "pcie_width_current": gpu.count("nvmlDeviceGetCurrPcieLinkWidth"),
        "pcie_width_max": gpu.count("nvmlDeviceGetMaxPcieLinkWidth"),
    }


def _nvlink(gpu: _Gpu) -> dict[str, Any]:
    states: dict[int, bool] = {}
    counters: dict[int, dict[str, int]] = {}
    for link in range(NVLINK_MAX_LINKS):
        state = gpu.call("nvmlDeviceGetNvLinkState", link)
        if state is None:
            continue
        states[link] = bool(state)
        counts = {
            name: gpu.count("nvmlDeviceGetNvLinkErrorCounter", link, counter)
            for counter, name in NVLINK_ERROR_COUNTERS.items()
        }
        counters[link] = {k: v for k, v in counts.items() if v is not None}
    return {"nvlink_states": states or None, "nvlink_error_counts": counters or None}


def _fabric(gpu: _Gpu) -> dict[str, Any]:
    structure = getattr(gpu.nvml, "c_nvmlGpuFabricInfoV_t", None)
    if structure is None:
        return {}
    info = structure()
    if gpu.call("nvmlDeviceGetGpuFabricInfoV", ctypes.byref(info)) is None and not info.state:
        return {}  # not supported, or the call failed (recorded on the GPU)
    if info.state not in FABRIC_STATES:
        return {}
    return {
        "fabric_state": FABRIC_STATES[info.state],
        "fabric_status": "Success" if info.status == 0 else f"Failure ({info.status})",
    }


def _mig(gpu: _Gpu) -> dict[str, Any]:
    """The UUIDs of the MIG devices on `gpu` (what the kubelet hands out for a MIG resource).
    MIG calls that fail leave `mig_uuids` None and do not make the GPU inaccessible: MIG is a
    partitioning, not a health signal; an empty slot (NVML_ERROR_NOT_FOUND) is skipped."""
    get_handle = getattr(gpu.nvml, "nvmlDeviceGetMigDeviceHandleByIndex", None)
    slots = getattr(gpu.nvml, "nvmlDeviceGetMaxMigDeviceCount", None)
    if get_handle is None or slots is None:
        return {}
    try:
        count = min(_count(slots(gpu.handle), "nvmlDeviceGetMaxMigDeviceCount"), MAX_MIG_DEVICES)
        uuids = []
        for slot in range(count):
            try:
                handle = get_handle(gpu.handle, slot)
            except gpu.nvml.NVMLError:
                continue  # no MIG device in this slot
            uuids.append(_text(gpu.nvml.nvmlDeviceGetUUID(handle), "MIG nvmlDeviceGetUUID"))
    except gpu.nvml.NVMLError:
        return {}
    return {"mig_uuids": tuple(uuids)}


def _identity(gpu: _Gpu, index: int) -> dict[str, Any]:
    name = gpu.call("nvmlDeviceGetName")
    uuid = gpu.call("nvmlDeviceGetUUID")
    pci = gpu.call("nvmlDeviceGetPciInfo_v3") or gpu.call("nvmlDeviceGetPciInfo")
    model = None if name is None else _text(name, "nvmlDeviceGetName")
    return {
        "index": str(index),
        "uuid": None if uuid is None else _text(uuid, "nvmlDeviceGetUUID"),
        "pci_bus_id": None if pci is None else normalise_pci(_text(pci.busId, "busId")),
        "model": model,
        "family": None if model is None else family_of(model),
    }


def read_gpu(nvml: Any, index: int) -> tuple[GpuStatus, float | None]:
    """One GPU's status and its utilisation (ratio 0-1, None when not reported)."""
    try:
        handle = nvml.nvmlDeviceGetHandleByIndex(index)
    except nvml.NVMLError as error:
        status = GpuStatus(index=str(index), accessible=False, error=f"no handle: {error}")
        return status, None
    gpu = _Gpu(nvml, handle)
    fields = {**_identity(gpu, index), **_memory(gpu), **_thermal_and_pcie(gpu)}
    fields.update({**_nvlink(gpu), **_fabric(gpu), **_mig(gpu)})
    rates = gpu.call("nvmlDeviceGetUtilizationRates")
    utilization = None if rates is None else _count(rates.gpu, "utilization") / 100.0
    status = GpuStatus(**fields, accessible=gpu.error is None and fields["uuid"] is not None)
    if not status.accessible:
        status = replace(status, error=gpu.error or "no UUID reported")
    return status, utilization


def _system(nvml: Any) -> tuple[str, str]:
    try:
        driver = _text(nvml.nvmlSystemGetDriverVersion(), "nvmlSystemGetDriverVersion")
    except nvml.NVMLError:
        driver = ""
    try:
        cuda = _count(nvml.nvmlSystemGetCudaDriverVersion_v2(), "nvmlSystemGetCudaDriverVersion")
        cuda_text = f"{cuda // 1000}.{cuda % 1000 // 10}"
    except nvml.NVMLError:
        cuda_text = ""
    return driver, cuda_text


def read_node(nvml: Any | None = None) -> NvmlNode:
    """Read every GPU NVML lists. Raises DependencyMissing, ToolError or ParseError (see the
    module docstring); never returns a partial node silently: unreadable GPUs are in `gpus` with
    `accessible=False`."""
    nvml = nvml if nvml is not None else load_nvml()
    _start(nvml)
    try:
        driver, cuda = _system(nvml)
        try:
            count = _count(nvml.nvmlDeviceGetCount(), "nvmlDeviceGetCount")
        except nvml.NVMLError as error:
            raise ToolError(f"nvmlDeviceGetCount failed: {error}") from None
        gpus, utilization = [], {}
        for index in range(count):
            status, used = read_gpu(nvml, index)
            gpus.append(status)
            if used is not None:
                utilization[str(index)] = used
        return NvmlNode(driver, cuda, count, tuple(gpus), utilization)
    finally:
        with contextlib.suppress(Exception):  # shutting down must not hide the answer
            nvml.nvmlShutdown()


# ------------------------------------------------------------------------------------------------
# fallback: nvidia-smi, when NVML cannot be used from Python
# ------------------------------------------------------------------------------------------------

SMI_COMMAND = ("nvidia-smi", "-q", "-x")


def node_from_smi(text: str, source: str) -> NvmlNode:
    """The node as `nvidia-smi -q -x` shows it (pure; ParseError from the XML parser). GPUs the
    header counts ("Attached GPUs") but that have no block are inaccessible."""
    reading = parse_xml(text, source)
    gpus = [
        replace(g.status, accessible=g.status.accessible is not False and bool(g.status.uuid))
        for g in reading.gpus
    ]
    count = max(reading.attached_gpus or 0, len(gpus))
    gpus += [
        GpuStatus(index=str(i), accessible=False, error="counted but not reported")
        for i in range(len(gpus), count)
    ]
    gpus = [g if g.index else replace(g, index=str(i)) for i, g in enumerate(gpus)]
    return NvmlNode(
        reading.driver_version or "",
        reading.cuda_version or "",
        count,
        tuple(gpus),
        {},
        source="nvidia-smi",
    )


def read_node_smi(timeout_s: float) -> NvmlNode:
    """Run `nvidia-smi -q -x` (I/O). DependencyMissing when it is not installed;
    DeadlineExceeded past `timeout_s`; ToolError on a non-zero exit (nvidia-smi prints its
    error on stdout: quoted)."""
    command = " ".join(SMI_COMMAND)
    try:
        done = subprocess.run(
            SMI_COMMAND,
            capture_output=True,
            text=True,
            errors="replace",
            timeout=timeout_s,
            check=False,
        )
    except FileNotFoundError:
        raise DependencyMissing("nvidia-smi is not installed") from None
    except subprocess.TimeoutExpired:
        raise DeadlineExceeded(
            f"{command}: no answer within its deadline of {timeout_s:g} s"
        ) from None
    if done.returncode != 0:
        said = (done.stdout.strip() or done.stderr.strip()).splitlines()[:1]
        raise ToolError(f"{command} exited {done.returncode}: {' '.join(said)[:200]}")
    return node_from_smi(done.stdout, command)


def read_gpus(timeout_s: float) -> NvmlNode:
    """NVML; when NVML is missing (no pynvml, library or driver), nvidia-smi. Both missing →
    DependencyMissing naming both; a broken nvidia-smi raises its own ToolError/ParseError."""
    try:
        return read_node()
    except DependencyMissing as nvml_missing:
        try:
            return read_node_smi(timeout_s)
        except DependencyMissing as smi_missing:
            raise DependencyMissing(f"{nvml_missing}; {smi_missing}") from None
