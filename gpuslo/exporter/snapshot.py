"""What one node knows at one moment: the hand-off between the check runner and the exporter.

The runner (`gpuslo.exporter.runner`) builds a `NodeSnapshot` after every check cycle; the
exporter's collector (`gpuslo.exporter.collector`) turns the latest snapshot into metric families
on each scrape without running anything. Frozen dataclasses, so a scrape can never see a
half-updated snapshot: the runner swaps the whole object.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gpuslo.verdict import CheckResult


@dataclass(frozen=True)
class GpuInfo:
    """One GPU of the inventory. `index` is the NVML index as a string, `pci_bus_id` NVML's
    `00000000:00:06.0` form, `family` one of `names.GPU_FAMILIES` or "unknown", `mig_uuids` the
    UUIDs of its MIG devices (empty when MIG is off or not reported)."""

    index: str
    uuid: str
    pci_bus_id: str
    model: str
    family: str
    mig_uuids: tuple[str, ...] = ()


@dataclass(frozen=True)
class GpuAllocation:
    """One physical GPU in use by one workload: a row of `gpuslo_gpu_allocation`.

    Every allocation source fills the same record, so one collector function exports them all:
    the kubelet pod-resources API (`namespace`, `pod`, `container`; `hpc_job` "") and the HPC
    job-mapping directory of Slurm (`hpc_job`; the pod labels ""). `gpu` is the NVML index as a
    string and `uuid` the GPU UUID, both of the *physical* GPU (a MIG device or a time-sliced
    replica maps to its GPU); "" when the inventory does not know the device (`uuid` then holds
    the id the source gave, so the series is still seen but joins with nothing)."""

    gpu: str
    uuid: str
    namespace: str = ""
    pod: str = ""
    container: str = ""
    hpc_job: str = ""

    def labels(self) -> tuple[str, str, str, str, str, str]:
        """Label values in the order of `names.METRICS["gpuslo_gpu_allocation"]`."""
        return (self.gpu, self.uuid, self.namespace, self.pod, self.container, self.hpc_job)


@dataclass(frozen=True)
class AllocationSourceState:
    """How the last read of one allocation source went: a row of
    `gpuslo_gpu_allocation_source`. `source` is one of `names.ALLOCATION_SOURCES`, `status` one of
    `names.ALLOCATION_SOURCE_STATUSES` (`ok`; `unknown` with `reason` check_timeout,
    dependency_missing, tool_error or parse_error; `not_configured`), `message` for the log."""

    source: str
    status: str
    reason: str = ""
    message: str = ""


@dataclass(frozen=True)
class Heartbeat:
    """Liveness of one check. Timestamps are Unix seconds (0.0 = never); `errors_total` counts
    runs that could not answer, by reason (`check_timeout`, `dependency_missing`, ...)."""

    check: str
    interval_s: float
    last_run: float = 0.0
    last_success: float = 0.0
    duration_s: float = 0.0
    runs_total: int = 0
    errors_total: dict[str, int] = field(default_factory=dict)


@dataclass(frozen=True)
class NodeSnapshot:
    """The node's latest state.

    Attributes:
        node: node name (hostname unless configured).
        driver_version, cuda_version: as the driver reports them, "" when unknown.
        gpus: the GPU inventory.
        results: the latest CheckResult per (check, scope).
        heartbeats: one per configured check.
        xid_events: cumulative Xid event counts by (pci_bus_id, xid, class).
        sxid_events: cumulative SXid event counts by (nvswitch, sxid, class).
        kernel_log_records_lost: cumulative /dev/kmsg records overwritten before being read.
        unrecognised_messages: lines the device-and-severity fallback read, by source
            (`xid`, `fabricmanager`, `hostengine`).
        network_devices, network_devices_expected: by kind (`infiniband`, `efa`).
        gpus_expected: GPUs the node should have (node config, --expect-gpus, or the count
            learned at the first healthy run), None when nobody knows yet. Known even when no
            GPU is readable: it is the fleet's provisioned denominator.
        taken_at: when the snapshot was built (Unix seconds).
        probe_speed_not_judged: cumulative active-probe runs that did not judge a GPU's speed,
            by (GPU UUID, why: `names.PROBE_NOT_JUDGED`).
        validation: the return-to-service gate (None: not run, as in a bare runner cycle).
    """

    node: str
    driver_version: str = ""
    cuda_version: str = ""
    gpus: tuple[GpuInfo, ...] = ()
    results: tuple[CheckResult, ...] = ()
    heartbeats: tuple[Heartbeat, ...] = ()
    xid_events: dict[tuple[str, str, str], int] = field(default_factory=dict)
    sxid_events: dict[tuple[str, str, str], int] = field(default_factory=dict)
    kernel_log_records_lost: int = 0
    unrecognised_messages: dict[str, int] = field(default_factory=dict)
    network_devices: dict[str, int] = field(default_factory=dict)
    network_devices_expected: dict[str, int] = field(default_factory=dict)
    gpus_expected: int | None = None
    taken_at: float = 0.0
    probe_speed_not_judged: dict[tuple[str, str], int] = field(default_factory=dict)
    validation: ValidationState | None = None


@dataclass(frozen=True)
class GpuValidation:
    """One GPU the return-to-service gate holds (`gpuslo.exporter.policy.return_to_service`):
    `state` held, validating or failed; validation `tries` spent; `since` when the state began
    (Unix s); `hold_down` when no validator is available and clean cycles are counted instead."""

    uuid: str
    gpu: str
    state: str
    tries: int = 0
    since: float = 0.0
    hold_down: bool = False


@dataclass(frozen=True)
class ValidationState:
    """The gate on this node, for the `gpuslo_gpu_validation_*` series.

    Attributes:
        gpus: the GPUs it holds (none: every GPU is past the gate).
        gates_total: gates ended per (GPU UUID, outcome: passed, held_down, failed), cumulative
            (kept in the state dir).
        validators: per validator of `names.VALIDATORS`: available, unavailable or
            not_configured (`names.VALIDATOR_STATES`).
        gate_unavailable: no validator available: cleared GPUs are held down instead.
        hold_down_cycles: the clean cycles a hold-down lasts.
    """

    gpus: tuple[GpuValidation, ...] = ()
    gates_total: dict[tuple[str, str], int] = field(default_factory=dict)
    validators: dict[str, str] = field(default_factory=dict)
    gate_unavailable: bool = False
    hold_down_cycles: int = 0
