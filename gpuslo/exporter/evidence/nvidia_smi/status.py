"""Build a `GpuStatus` from one GPU's nvidia-smi fields, whichever output they came from.

`fields` maps a normalised key (`nvidia_smi_values.key_of`) to (raw value, 1-based line or None).
Each `GpuStatus` field lists the keys that carry it in the `-q` text, the `-q -x` XML and the
`--query-gpu` CSV forms (names from nvidia-smi(1) and `nvidia-smi --help-query-gpu`).
"""

from __future__ import annotations

from collections.abc import Mapping

from gpuslo.exporter.evidence.clock_events import reason_of_key, reasons_of_mask
from gpuslo.exporter.evidence.families import family_of
from gpuslo.exporter.evidence.gpu_status import GpuStatus
from gpuslo.exporter.evidence.nvidia_smi.unread import unread_faults
from gpuslo.exporter.evidence.nvidia_smi.values import (
    GpuReading,
    clean,
    is_error,
    pci_bus_id,
    shows_faults,
    to_bool,
    to_int,
    to_number,
)

Fields = Mapping[str, tuple[str, int | None]]

_TEXT_KEYS = {
    "index": ("index",),
    "model": ("product_name", "name", "gpu_name"),
    "uuid": ("gpu_uuid", "uuid"),
    "ecc_mode": ("ecc_mode/current", "ecc_mode/current_ecc", "ecc.mode.current"),
    "recovery_action": ("gpu_recovery_action",),
    "fabric_state": ("fabric/state", "fabric.state"),
    "fabric_status": ("fabric/status", "fabric.status"),
    "fabric_health": ("fabric/health/summary", "fabric.health.summary"),
}
_CT, _ET = "clocks_throttle_reasons", "clocks_event_reasons"


def _clock_reason_keys(reason: str) -> tuple[str, ...]:
    """The keys of one clocks event reason in every form: the old (`clocks_throttle_reasons`)
    and new (`clocks_event_reasons`) section names, `/` (text, XML) or `.` (CSV), with or without
    the section's singular as a prefix (`clocks_event_reason_sw_power_cap`)."""
    return tuple(
        f"{s}{sep}{p}{reason}" for s in (_ET, _CT) for sep in "/." for p in ("", f"{s[:-1]}_")
    )


_BOOL_KEYS = {
    "remapped_rows_pending": (
        "remapped_rows/pending",
        "remapped_rows/remapped_row_pending",
        "remapped_rows.pending",
    ),
    "remapped_rows_failure": (
        "remapped_rows/remapping_failure_occurred",
        "remapped_rows/remapped_row_failure",
        "remapped_rows.failure",
    ),
    "retired_pages_pending": (
        "retired_pages/pending_page_blacklist",
        "retired_pages/pending_page_retirement",
        "retired_pages/pending_retirement",
        "retired_pages/pending_blacklist",
        "retired_pages/pending",
        "retired_pages.pending",
    ),
    "unrepairable_memory": ("ecc_errors/unrepairable_memory",),
    "reset_required": ("gpu_reset_status/reset_required", "reset_status.reset_required"),
    "drain_and_reset_recommended": (
        "gpu_reset_status/drain_and_reset_recommended",
        "reset_status.drain_and_reset_recommended",
    ),
    **{
        reason: _clock_reason_keys(reason)
        for reason in ("hw_thermal_slowdown", "hw_slowdown", "sw_thermal_slowdown", "sw_power_cap")
    },
}
_INT_KEYS = {
    "remapped_rows_uncorrectable": (
        "remapped_rows/uncorrectable_error",
        "remapped_rows/remapped_row_unc",
        "remapped_rows.uncorrectable",
        "remapped_rows.dbe",
    ),
    "pcie_gen_current": (
        "pci/gpu_link_info/pcie_generation/current",
        "pci/pci_gpu_link_info/pcie_gen/current_link_gen",
        "pcie.link.gen.gpucurrent",
        "pcie.link.gen.current",
    ),
    "pcie_gen_max": (
        "pci/gpu_link_info/pcie_generation/max",
        "pci/pci_gpu_link_info/pcie_gen/max_link_gen",
        "pcie.link.gen.gpumax",
        "pcie.link.gen.max",
    ),
    "pcie_width_current": (
        "pci/gpu_link_info/link_width/current",
        "pci/pci_gpu_link_info/link_widths/current_link_width",
        "pcie.link.width.current",
    ),
    "pcie_width_max": (
        "pci/gpu_link_info/link_width/max",
        "pci/pci_gpu_link_info/link_widths/max_link_width",
        "pcie.link.width.max",
    ),
    "ecc_sbe_volatile": (
        "ecc.errors.corrected.volatile.total",
        "ecc_errors/volatile/single_bit/total",
    ),
    "ecc_dbe_volatile": (
        "ecc.errors.uncorrected.volatile.total",
        "ecc_errors/volatile/double_bit/total",
    ),
    "ecc_dbe_aggregate": (
        "ecc.errors.uncorrected.aggregate.total",
        "ecc_errors/aggregate/double_bit/total",
    ),
}
_FLOAT_KEYS = {
    "temperature_c": ("temperature/gpu_current_temp", "temperature/gpu_temp", "temperature.gpu"),
    "utilization_percent": ("utilization/gpu", "utilization/gpu_util", "utilization.gpu"),
    "slowdown_temperature_c": (
        "temperature/gpu_slowdown_temp",
        "temperature/gpu_temp_slow_threshold",
    ),
    "power_draw_w": (
        "power_readings/power_draw",
        "gpu_power_readings/power_draw",
        "gpu_power_readings/instantaneous_power_draw",
        "gpu_power_readings/average_power_draw",
        "power.draw",
    ),
}
_PCI_KEYS = ("pci/bus_id", "pci/pci_bus_id", "pci.bus_id", "gpu_bus_id")
_REPAIR_KEYS = ("ecc_errors/channel_repair_pending", "ecc_errors/tpc_repair_pending")
_LINK_SUFFIXES = (
    ("pcie_width_current", "link_width/current"),
    ("pcie_width_max", "link_width/max"),
    ("pcie_gen_current", "pcie_generation/current"),
    ("pcie_gen_max", "pcie_generation/max"),
)
_ACTIVE_MASK_KEYS = (f"{_ET}.active", f"{_CT}.active")
# NVML clocks event reason bits (nvml.h: nvmlClocksEventReasonHwSlowdown 0x8,
# nvmlClocksEventReasonHwThermalSlowdown 0x40).
HW_SLOWDOWN_BIT, HW_THERMAL_SLOWDOWN_BIT = 0x8, 0x40
SW_POWER_CAP_BIT, SW_THERMAL_SLOWDOWN_BIT = 0x4, 0x20


def _first(fields: Fields, keys: tuple[str, ...]) -> tuple[str, str, int | None] | None:
    for key in keys:
        if key in fields:
            return (key, *fields[key])
    return None


def _ecc_sum(fields: Fields, section: str, uncorrectable: bool, source: str) -> int | None:
    """Sum an ECC section's counters when no total is printed (`DRAM Uncorrectable`, `SRAM
    Uncorrectable Parity`, ... in the Ampere-and-later layouts; `Double Bit/<location>` before)."""
    old = f"ecc_errors/{section}/{'double_bit' if uncorrectable else 'single_bit'}/"
    total, seen = 0, False
    for key, (value, line) in fields.items():
        if not key.startswith(f"ecc_errors/{section}/"):
            continue
        leaf = key.rsplit("/", 1)[-1]
        wanted = key.startswith(old) or (
            "uncorrectable" in leaf
            if uncorrectable
            else "correctable" in leaf and "uncorrectable" not in leaf
        )
        number = to_int(value, source, line, key) if wanted else None
        if number is not None:
            total, seen = total + number, True
    return total if seen else None


def _typed(fields: Fields, source: str) -> dict:
    out: dict = {}
    for table, convert in ((_BOOL_KEYS, to_bool), (_INT_KEYS, to_int)):
        for name, keys in table.items():
            found = _first(fields, keys)
            if found:
                out[name] = convert(found[1], source, found[2], found[0])
    for name, keys in _FLOAT_KEYS.items():
        found = _first(fields, keys)
        if found:
            out[name] = to_number(found[1], source, found[2], found[0])
    for name, keys in _TEXT_KEYS.items():
        found = _first(fields, keys)
        if found and not is_error(found[1]):
            out[name] = clean(found[1])
    return out


def _derived(fields: Fields, out: dict, source: str) -> None:
    for name, section, unc in (
        ("ecc_dbe_volatile", "volatile", True),
        ("ecc_sbe_volatile", "volatile", False),
        ("ecc_dbe_aggregate", "aggregate", True),
    ):
        if out.get(name) is None:
            out[name] = _ecc_sum(fields, section, unc, source)
        if out.get(name) is None:  # CSV columns per location (ecc.errors.uncorrected.volatile.dram)
            prefix = f"ecc.errors.{'uncorrected' if unc else 'corrected'}.{section}."
            counts = [
                to_int(v, source, n, k) for k, (v, n) in fields.items() if k.startswith(prefix)
            ]
            known = [c for c in counts if c is not None]
            out[name] = sum(known) if known else None
    repairs = [to_bool(fields[k][0], source, fields[k][1], k) for k in _REPAIR_KEYS if k in fields]
    if any(r is not None for r in repairs):
        out["memory_repair_pending"] = any(repairs)
    mask = _first(fields, _ACTIVE_MASK_KEYS)
    bits = to_int(mask[1], source, mask[2], mask[0]) if mask else None
    out["clock_events"] = _clock_events(fields, bits, source)
    percent = out.pop("utilization_percent", None)
    out["utilization_gpu"] = None if percent is None else percent / 100
    for name, suffix in _LINK_SUFFIXES:  # an excerpt cut below its `PCI / GPU Link Info` header
        if out.get(name) is None:
            found = next(((k, *v) for k, v in fields.items() if k.endswith(suffix)), None)
            out[name] = to_int(found[1], source, found[2], found[0]) if found else None
    if bits is not None:
        out.setdefault("hw_slowdown", bool(bits & HW_SLOWDOWN_BIT))
        out.setdefault("hw_thermal_slowdown", bool(bits & HW_THERMAL_SLOWDOWN_BIT))
        out.setdefault("sw_thermal_slowdown", bool(bits & SW_THERMAL_SLOWDOWN_BIT))
        out.setdefault("sw_power_cap", bool(bits & SW_POWER_CAP_BIT))


def _clock_events(fields: Fields, bits: int | None, source: str) -> tuple[str, ...] | None:
    """The active clocks event reasons: from the bit mask when printed, else from the per-reason
    fields (`Active` / `Not Active`); None when the output shows neither."""
    if bits is not None:
        return reasons_of_mask(bits)
    seen, active = False, []
    for key, (value, line) in fields.items():
        reason = reason_of_key(key)
        if reason is None:
            continue
        seen = True
        if to_bool(value, source, line, key) and reason not in active:
            active.append(reason)
    return tuple(active) if seen else None


def _field_errors(fields: Fields) -> tuple[tuple[str, str], ...]:
    names = {
        key: name
        for table in (_TEXT_KEYS, _BOOL_KEYS, _INT_KEYS, _FLOAT_KEYS)
        for name, keys in table.items()
        for key in keys
    }
    return tuple(
        (names.get(key, key), value.strip())
        for key, (value, _) in fields.items()
        if is_error(value)
    )


def _bare(value: str) -> str:
    return value.strip().strip("[]").strip().lower()


def reading_from_fields(
    fields: Fields,
    source: str,
    pci: str | None = None,
    index: str | None = None,
    line: int | None = None,
) -> GpuReading:
    """One GPU's `GpuReading` from its fields. `pci` (a block header's address) and `index` are
    used when the fields do not carry them. Raises ParseError naming the key and line of a value
    that has the wrong shape (a count that is not a number).

    NVML's answers in a field's place speak for the whole GPU (NVML API reference, return
    codes): `GPU is lost` (NVML_ERROR_GPU_IS_LOST: fallen off the bus or otherwise inaccessible)
    makes it inaccessible, as nvidia-smi's "Unable to determine the device handle ...: GPU is
    lost" does; `GPU requires reset` (NVML_ERROR_RESET_REQUIRED) is a required reset."""
    out = _typed(fields, source)
    _derived(fields, out, source)
    found = _first(fields, _PCI_KEYS)
    out["pci_bus_id"] = pci_bus_id(found[1]) if found else None
    out["pci_bus_id"] = out["pci_bus_id"] or pci_bus_id(pci)
    out["index"] = out.get("index") or index
    architecture = _first(fields, ("product_architecture",))
    arch = clean(architecture[1]) if architecture else None
    if out.get("model") or arch:
        out["family"] = family_of(out.get("model") or "", arch)
    errors = _field_errors(fields)
    lost = [name for name, value in errors if _bare(value) == "gpu is lost"]
    if lost or (out.get("model") is None and any(n in ("model", "uuid") for n, _ in errors)):
        out["accessible"] = False
        out["error"] = "; ".join(f"{name}: {value}" for name, value in errors)[:200]
    if any(_bare(value) == "gpu requires reset" for _, value in errors):
        out.setdefault("reset_required", True)
    status = GpuStatus(**{k: v for k, v in out.items() if v is not None})
    return GpuReading(status=status, field_errors=errors, line=line, architecture=arch,
                      faults_shown=shows_faults(fields),
                      unread_faults=unread_faults(fields, out.get("model"), out.get("family")))
