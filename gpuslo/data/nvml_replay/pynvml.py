"""A fake `pynvml` (nvidia-ml-py) that answers from a recorded NVML probe, for tests and benchmarks.

Put this directory first on `sys.path` through `GPUSLO_NVML_PATH=gpuslo/data/nvml_replay` (see
gpuslo/exporter/nvml_source.py); the runner's child processes inherit the variable.

- `GPUSLO_FAKE_NVML`: the node JSON to answer from, in the shape of
  shared/fixtures/h200-extra/nvml-probe.json (written by nvml-probe.py on a real H200); default
  `h200x8.json` beside this file (that probe's GPU repeated on 8 bus ids).
- `GPUSLO_FAKE_NVML_MODE`: how the fake misbehaves, for the fault-injection tests:
  `ok` (default), `missing` (no library), `hang` (nvmlInit blocks forever), `crash` (the process
  aborts, as a segfaulting driver call would), `exit` (prints an error on stdout and exits 3),
  `error` (every device call answers NVML_ERROR_UNKNOWN), `garbage` (values of the wrong type),
  `partial` (only the first half of the devices answer), `slow` (nvmlInit takes 0.3 s);
  and how busy the GPUs are, for the active probe: `busy` (every GPU lists one compute process,
  `BUSY_PROCESS`, at 97 % utilisation: a training job), `busy_after` (the same process appears
  only from the second time a GPU's processes are read: a job that starts while the probe
  measures), `exclusive` (`busy` on GPUs in EXCLUSIVE_PROCESS compute mode: no second context).
  `GPUSLO_FAKE_NVML_BUSY=0,3` limits the busy modes to those GPU indices (default: all).

A GPU's optional `processes` (a list of `{"pid", "usedGpuMemory"}`) answers
`nvmlDeviceGetComputeRunningProcesses`; without it an idle GPU lists none (the recorded H200 was
idle: 0 % utilisation, 645 MB used by the driver) — the NVML probe did not record the call.
From a process's second read of a GPU's processes on, that process is listed too (the probe
reads before and after measuring, and holds a CUDA context after).

A GPU's optional `mig_devices` (a list of MIG UUIDs, `null` for an empty slot) answers the MIG
calls. A recorded value `"ERR:NVMLError_NotSupported:..."` or `"RET3"` raises NOT_SUPPORTED; other
`ERR:` values raise NVML_ERROR_UNKNOWN; a function missing from the record raises NOT_SUPPORTED.
"""

import ctypes
import json
import os
import sys
import time
from pathlib import Path
from types import SimpleNamespace

_MODE = os.environ.get("GPUSLO_FAKE_NVML_MODE", "ok")
_PATH = os.environ.get("GPUSLO_FAKE_NVML", str(Path(__file__).with_name("h200x8.json")))
_NODE = None
_BUSY = os.environ.get("GPUSLO_FAKE_NVML_BUSY", "")
# A PyTorch Lightning job holding ~70 GiB, as on the H200 of issue 26 (pid is made up).
BUSY_PROCESS = {"pid": 424242, "usedGpuMemory": 75161927680}
BUSY_UTILIZATION = 97
_PROCESS_READS: dict = {}


class NVMLError(Exception):
    def __init__(self, value):
        super().__init__(value)
        self.value = value

    def __str__(self):
        return {
            3: "Not Supported",
            9: "Driver Not Loaded",
            12: "NVML Shared Library Not Found",
            15: "GPU is lost",
            999: "Unknown Error",
        }.get(self.value, f"NVML error {self.value}")


class c_nvmlGpuFabricInfoV_t(ctypes.Structure):
    _fields_ = [("version", ctypes.c_uint), ("status", ctypes.c_uint), ("state", ctypes.c_uint)]


def _node():
    global _NODE
    if _NODE is None:
        _NODE = json.loads(Path(_PATH).read_text())
    return _NODE


def _value(value):
    if isinstance(value, str) and value.startswith(("ERR:", "RET")):
        raise NVMLError(3 if ("NotSupported" in value or value in ("RET2", "RET3")) else 999)
    if _MODE == "garbage":
        return "\x00garbage\x07"
    return value


def _gpu(handle):
    if _MODE == "error":
        raise NVMLError(999)
    return _node()["gpus"][handle]


def nvmlInit():
    if _MODE == "missing":
        raise NVMLError(12)
    if _MODE == "hang":
        time.sleep(10**6)
    if _MODE == "slow":
        time.sleep(0.3)
    if _MODE == "crash":
        os.abort()
    if _MODE == "exit":
        print("NVML: Unable to determine the device handle for GPU0000:00:06.0: Unknown Error")
        sys.stdout.flush()
        os._exit(3)
    _node()


def nvmlShutdown():
    pass


def nvmlSystemGetDriverVersion():
    return _node()["driver"]


def nvmlSystemGetCudaDriverVersion_v2():
    return _node()["cuda"]


def nvmlDeviceGetCount():
    return len(_node()["gpus"])


def nvmlDeviceGetMaxMigDeviceCount(handle):
    """MIG slots: the recorded `mig_devices` list of UUIDs (absent: MIG not supported)."""
    devices = _gpu(handle).get("mig_devices")
    if devices is None:
        raise NVMLError(3)
    return len(devices)


def nvmlDeviceGetMigDeviceHandleByIndex(handle, slot):
    devices = _gpu(handle).get("mig_devices") or []
    if slot >= len(devices) or devices[slot] is None:
        raise NVMLError(6)  # NVML_ERROR_NOT_FOUND: an empty slot
    return ("mig", handle, slot)


def nvmlDeviceGetHandleByIndex(index):
    if _MODE == "partial" and index >= len(_node()["gpus"]) // 2:
        raise NVMLError(15)
    return index


def _recorded(name):
    def call(handle):
        if isinstance(handle, tuple) and name == "nvmlDeviceGetUUID":  # a MIG device handle
            return _value(_gpu(handle[1])["mig_devices"][handle[2]])
        value = _value(_gpu(handle).get(name, "ERR:NVMLError_NotSupported:missing"))
        if isinstance(value, dict):
            return SimpleNamespace(**value)
        return value

    call.__name__ = name
    return call


for _name in (
    "nvmlDeviceGetName",
    "nvmlDeviceGetUUID",
    "nvmlDeviceGetPciInfo_v3",
    "nvmlDeviceGetEccMode",
    "nvmlDeviceGetRemappedRows",
    "nvmlDeviceGetCurrentClocksEventReasons",
    "nvmlDeviceGetCurrPcieLinkGeneration",
    "nvmlDeviceGetMaxPcieLinkGeneration",
    "nvmlDeviceGetCurrPcieLinkWidth",
    "nvmlDeviceGetMaxPcieLinkWidth",
):
    globals()[_name] = _recorded(_name)


def _busy(handle, reads=2):
    """True when the mode makes this GPU busy at its `reads`-th process read."""
    if _MODE not in ("busy", "busy_after", "exclusive"):
        return False
    if _BUSY and str(handle) not in _BUSY.split(","):
        return False
    return _MODE != "busy_after" or reads > 1


def nvmlDeviceGetComputeRunningProcesses(handle):
    """The recorded `processes`, the busy modes' job, and from this process's second read of the
    GPU on, this process itself: the active probe reads before and after measuring, and after
    measuring it holds a CUDA context there, as NVML would show."""
    _PROCESS_READS[handle] = reads = _PROCESS_READS.get(handle, 0) + 1
    listed = list(_gpu(handle).get("processes", []))
    if _busy(handle, reads):
        listed.append(BUSY_PROCESS)
    if reads > 1:
        listed.append({"pid": os.getpid(), "usedGpuMemory": 1610612736})
    return [SimpleNamespace(**process) for process in listed]


def nvmlDeviceGetUtilizationRates(handle):
    rates = _recorded("nvmlDeviceGetUtilizationRates")(handle)
    if _MODE in ("busy", "exclusive") and _busy(handle, 1):
        return SimpleNamespace(gpu=BUSY_UTILIZATION, memory=40)
    return rates


def nvmlDeviceGetComputeMode(handle):
    if _MODE == "exclusive" and _busy(handle, 1):
        return 3  # NVML_COMPUTEMODE_EXCLUSIVE_PROCESS
    return _value(_gpu(handle).get("nvmlDeviceGetComputeMode", "RET3"))

_ECC = {
    (0, 0): "ecc_corr_vol",
    (0, 1): "ecc_corr_agg",
    (1, 0): "ecc_uncorr_vol",
    (1, 1): "ecc_uncorr_agg",
}


def nvmlDeviceGetTotalEccErrors(handle, error_type, counter_type):
    return _value(_gpu(handle)[_ECC[(error_type, counter_type)]])


def nvmlDeviceGetTemperature(handle, sensor):
    return _value(_gpu(handle)["temp_gpu"])


def nvmlDeviceGetTemperatureThreshold(handle, threshold):
    key = {0: "NVML_TEMPERATURE_THRESHOLD_SHUTDOWN", 1: "NVML_TEMPERATURE_THRESHOLD_SLOWDOWN"}
    return _value(_gpu(handle).get(key.get(threshold, ""), "RET3"))


def nvmlDeviceGetNvLinkState(handle, link):
    links = {entry["link"]: entry for entry in _gpu(handle).get("nvlink", [])}
    return _value(links.get(link, {}).get("state", "RET3"))


def nvmlDeviceGetNvLinkErrorCounter(handle, link, counter):
    links = {entry["link"]: entry for entry in _gpu(handle).get("nvlink", [])}
    return _value(links.get(link, {}).get("errors", {}).get(str(counter), "RET3"))


_FIELDS = {230: "NVML_FI_DEV_GET_GPU_RECOVERY_ACTION"}


def nvmlDeviceGetFieldValues(handle, field_ids):
    out = []
    for field_id in field_ids:
        recorded = _gpu(handle).get("fields", {}).get(_FIELDS.get(field_id, ""), "RET3")
        ret = int(recorded[3:]) if isinstance(recorded, str) and recorded.startswith("RET") else 0
        value = SimpleNamespace(ullVal=0 if ret else _value(recorded))
        out.append(SimpleNamespace(fieldId=field_id, nvmlReturn=ret, value=value))
    return out


def nvmlDeviceGetGpuFabricInfoV(handle, pointer):
    fabric = _gpu(handle).get("fabric")
    if not isinstance(fabric, dict):
        raise NVMLError(3)
    info = pointer._obj
    info.state, info.status = fabric["state"], fabric["status"]
    return 0
