"""GPU allocations from the kubelet's pod-resources API (`KubeletAllocations`), one implementation
of the allocation contract (`jobs.contract.AllocationSource`; the other is `jobs.hpc`).

Device ids → physical GPU (`gpu_of`, pure), as NVIDIA's k8s-device-plugin writes them:
| id | GPU |
|---|---|
| `GPU-<uuid>` | the GPU with that UUID |
| `GPU-<uuid>::<n>` (time-sliced or MPS replica n) | the GPU with that UUID |
| `MIG-<uuid>` (MIG device UUID, R470+), also with `::<n>` | the GPU holding it (NVML) |
| `MIG-GPU-<uuid>/<gi>/<ci>` (drivers before R470) | the GPU with that UUID |
| `<n>` or `<n>:<m>` (`DEVICE_ID_STRATEGY=index`) | the GPU with NVML index n |
An id the inventory does not know stays visible: its allocation has gpu "" and the id as uuid.

Fail closed: when the kubelet cannot be read the source is `unknown` with the reason and no
allocation is exported (a stale list would attribute a GPU to a pod that may have left it).
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable, Iterable

from gpuslo import names
from gpuslo.exporter.evidence.kubelet.pod_resources import (
    DEFAULT_TIMEOUT_S,
    KubeletUnavailable,
    PodDevice,
    read_pod_resources,
)
from gpuslo.exporter.jobs.contract import AllocationSource
from gpuslo.exporter.snapshot import GpuAllocation, GpuInfo

log = logging.getLogger(__name__)
ReadPods = Callable[[str, float], list[PodDevice]]


def gpu_of(device_id: str, gpus: Iterable[GpuInfo]) -> GpuInfo | None:
    """The physical GPU of a device-plugin id (table in the module docstring); None when the
    inventory has no such GPU. Pure."""
    base = device_id.strip().split("::", 1)[0]
    inventory = list(gpus)
    if base.startswith("MIG-GPU-"):  # MIG-GPU-<uuid>/<gi>/<ci>
        base = base[len("MIG-"):].split("/", 1)[0]
    if base.startswith("MIG-"):
        return next((g for g in inventory
                     if base.lower() in (m.lower() for m in g.mig_uuids)), None)
    if base.startswith("GPU-"):
        return next((g for g in inventory if g.uuid.lower() == base.lower()), None)
    index = base.split(":", 1)[0]
    if index.isdigit():
        return next((g for g in inventory if g.index == str(int(index))), None)
    return None


def pod_allocations(devices: Iterable[PodDevice], gpus: Iterable[GpuInfo]) -> list[GpuAllocation]:
    """One `GpuAllocation` per (physical GPU, namespace, pod, container): several MIG slices or
    replicas of one GPU in one container count once; two pods sharing a GPU give two. Sorted by
    GPU index, then pod. Pure."""
    inventory = tuple(gpus)
    out = set()
    for device in devices:
        gpu = gpu_of(device.device_id, inventory)
        gpu_id, uuid = (gpu.index, gpu.uuid) if gpu else ("", device.device_id.split("::")[0])
        out.add(GpuAllocation(gpu_id, uuid, device.namespace, device.pod, device.container))
    return sorted(out, key=lambda a: (a.gpu == "", len(a.gpu), a.labels()))


def unknown_devices(devices: Iterable[PodDevice], gpus: Iterable[GpuInfo]) -> list[str]:
    """Device ids no GPU of the inventory explains, sorted. Pure."""
    inventory = tuple(gpus)
    return sorted({d.device_id for d in devices if gpu_of(d.device_id, inventory) is None})


class KubeletAllocations(AllocationSource):
    """`gpuslo_gpu_allocation{namespace, pod, container}` from the kubelet pod-resources API.

    Args:
        socket_path: the kubelet socket (`--pod-resources-kubelet-socket`), None when not
            configured (the source then says `not_configured` and reads nothing).
        gpus: returns the latest GPU inventory (for MIG parents and indexes).
        timeout_s: deadline of one `List` call (seconds).
        read: the I/O (injected for tests): (socket, timeout) → PodDevice list.
    """

    source = "kubelet"

    def __init__(self, socket_path: str | os.PathLike[str] | None,
                 gpus: Callable[[], Iterable[GpuInfo]] = tuple,
                 timeout_s: float = DEFAULT_TIMEOUT_S,
                 read: ReadPods = read_pod_resources) -> None:
        super().__init__("no --pod-resources-kubelet-socket")
        self.socket_path = None if socket_path is None else os.fspath(socket_path)
        self.gpus, self.timeout_s, self._read = gpus, timeout_s, read
        self._unknown: set[str] = set()

    def sample(self) -> None:
        """Read the kubelet now and keep the allocations and the state; never raises for the
        kubelet's failure (it becomes state unknown with the reason, and no allocation)."""
        if self.socket_path is None:
            return
        try:
            devices = self._read(self.socket_path, self.timeout_s)
        except KubeletUnavailable as error:
            if self._state.status != names.STATUS_UNKNOWN or self._state.reason != error.reason:
                log.warning("kubelet pod-resources: %s", error)
            self._fail(error.reason, str(error))
            return
        inventory = tuple(self.gpus())
        unknown = set(unknown_devices(devices, inventory))
        for device_id in sorted(unknown - self._unknown):
            log.warning("kubelet pod-resources: device %s is no GPU of this node's inventory",
                        device_id)
        self._unknown = unknown
        self._keep(pod_allocations(devices, inventory))
