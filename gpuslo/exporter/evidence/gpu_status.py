"""One normalised record per GPU, whatever the source (`GpuStatus`): evidence, no judging.

Every source — nvidia-smi text, XML and CSV, NVML, dcgm-exporter — fills a `GpuStatus`; every
field is optional and None means "not reported". The rules that judge it are
`gpuslo.exporter.policy.gpu.evaluate_gpu`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")


@dataclass(frozen=True)
class GpuStatus:
    """What one source reported about one GPU; None = not reported.

    Attributes:
        index: GPU index as NVML numbers it, as a string ("0").
        uuid: "GPU-…"; pci_bus_id: NVML form "00000000:00:06.0".
        model: product name ("NVIDIA H200"); family: `names.GPU_FAMILIES` or "unknown".
        ecc_mode: "Enabled"/"Disabled" as reported.
        ecc_sbe_volatile, ecc_dbe_volatile, ecc_dbe_aggregate: ECC error counts (errors).
        retired_pages_pending: True when a page retirement waits for a reset (pre-Ampere).
        remapped_rows_pending, remapped_rows_failure: row remapper flags (Ampere and later).
        remapped_rows_uncorrectable: rows remapped for uncorrectable errors (rows).
        recovery_action: NVIDIA's GPU recovery action text ("None", "Reset", "Drain_and_Reset",
            "Reboot", "Drain_P2P").
        reset_required, drain_and_reset_recommended: nvidia-smi -q "GPU Reset Status" (`-q -x`
            `gpu_reset_status`, `--query-gpu` `reset_status.*`): the GPU needs a reset before it
            can be used again / NVIDIA recommends draining its work and resetting it.
        hw_thermal_slowdown, hw_slowdown: clocks event reasons active.
        sw_thermal_slowdown, sw_power_cap: the software clocks event reasons (the driver lowers
            clocks to hold a temperature target / the power limit): usable, but slower.
        temperature_c, slowdown_temperature_c: GPU temperature and its slowdown threshold (°C).
        power_draw_w: the board's power draw (W: the table's `Pwr:Usage`, -q's `Power Draw`).
        pcie_gen_current, pcie_gen_max, pcie_width_current, pcie_width_max: PCIe link
            generation and width (lanes).
        nvlink_states: NVLink link number -> True when up/active.
        nvlink_error_counts: NVLink link number -> {counter name: count}.
        fabric_state, fabric_status: nvidia-smi -q "Fabric" State/Status as reported.
        accessible: False when the driver lists the GPU but cannot query it.
        error: the error text the source gave for this GPU (NVML error, "Unknown Error").
        fabric_health: nvidia-smi -q "Fabric / Health / Summary" ("Healthy", "Unhealthy",
            "Limited Capacity"; NVML nvmlGpuFabricInfo_v3 health summary).
        memory_repair_pending: Blackwell-era "Channel Repair Pending" or "TPC Repair Pending".
        unrepairable_memory: Blackwell-era "Unrepairable Memory".
        utilization_gpu: GPU utilisation as a ratio (0-1, nvidia-smi `Utilization / Gpu`), None
            when not reported.
        clock_events: the NVML clocks event reasons that are active (`evidence.clock_events`
            names: hw_slowdown, sw_power_cap, idle, ...), () when none is, None when not reported.
        mig_uuids: UUIDs (`MIG-…`) of the MIG devices on this GPU, () when MIG is off or none is
            created (NVML nvmlDeviceGetMigDeviceHandleByIndex), None when not reported.
    """

    index: str | None = None
    uuid: str | None = None
    pci_bus_id: str | None = None
    model: str | None = None
    family: str | None = None
    ecc_mode: str | None = None
    ecc_sbe_volatile: int | None = None
    ecc_dbe_volatile: int | None = None
    ecc_dbe_aggregate: int | None = None
    retired_pages_pending: bool | None = None
    remapped_rows_pending: bool | None = None
    remapped_rows_failure: bool | None = None
    remapped_rows_uncorrectable: int | None = None
    recovery_action: str | None = None
    reset_required: bool | None = None
    drain_and_reset_recommended: bool | None = None
    hw_thermal_slowdown: bool | None = None
    hw_slowdown: bool | None = None
    sw_thermal_slowdown: bool | None = None
    sw_power_cap: bool | None = None
    temperature_c: float | None = None
    slowdown_temperature_c: float | None = None
    power_draw_w: float | None = None
    pcie_gen_current: int | None = None
    pcie_gen_max: int | None = None
    pcie_width_current: int | None = None
    pcie_width_max: int | None = None
    nvlink_states: dict[int, bool] | None = None
    nvlink_error_counts: dict[int, dict[str, int]] | None = None
    fabric_state: str | None = None
    fabric_status: str | None = None
    accessible: bool | None = None
    error: str | None = None
    fabric_health: str | None = None
    memory_repair_pending: bool | None = None
    unrepairable_memory: bool | None = None
    mig_uuids: tuple[str, ...] | None = None
    clock_events: tuple[str, ...] | None = None
    utilization_gpu: float | None = None


def gpu_key(status: GpuStatus) -> tuple | None:
    """The identity one GPU keeps from sample to sample: its UUID (any case; a MIG device's
    `MIG-…` is its own), else its PCI bus id (NVML's form, `nvidia_smi.values.pci_bus_id`: any
    domain width reads the same), else its index (None when the output names it by none of
    these)."""
    if status.uuid:
        return ("uuid", status.uuid.upper())
    if status.pci_bus_id:
        return ("pci", status.pci_bus_id)
    return ("index", status.index) if status.index is not None else None


def latest_per_gpu(items: Iterable[T], status_of: Callable[[T], GpuStatus]) -> tuple[T, ...]:
    """One item per GPU (`gpu_key` of `status_of(item)`), in first-seen order, the latest of
    each: items that repeat one GPU's identity are that GPU sampled over time (`nvidia-smi -l`
    repeats its query every N seconds, nvidia-smi(1)). An item with no identity is its own."""
    latest: dict = {}
    for number, item in enumerate(items):
        latest[gpu_key(status_of(item)) or ("row", number)] = item
    return tuple(latest.values())
