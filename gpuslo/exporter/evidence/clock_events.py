"""NVML's clocks event (throttle) reasons as names, from a bit mask or from nvidia-smi's field
names (evidence: the encoding, no judging; `policy.clocks` judges).

Bits from nvml.h (`nvmlClocksEventReason*`, formerly `nvmlClocksThrottleReason*`), the same in
DCGM (`DCGM_CLOCKS_EVENT_REASON_*`, field 112) and in `nvidia-smi --query-gpu
clocks_event_reasons.active`:

    0x001 GpuIdle                  idle           0x020 SwThermalSlowdown   sw_thermal
    0x002 ApplicationsClocksSetting app_clocks    0x040 HwThermalSlowdown   hw_thermal
    0x004 SwPowerCap               sw_power_cap   0x080 HwPowerBrakeSlowdown hw_power_brake
    0x008 HwSlowdown               hw_slowdown    0x100 DisplayClockSetting display_clocks
    0x010 SyncBoost                sync_boost

nvidia-smi -q prints one line per reason under "Clocks Event Reasons" ("Clocks Throttle
Reasons" before r535): `Idle`, `Applications Clocks Setting`, `SW Power Cap`, `HW Slowdown`
(with `HW Thermal Slowdown` and `HW Power Brake Slowdown` indented under it), `Sync Boost`, `SW
Thermal Slowdown`, `Display Clock Setting`; the XML and CSV spell them `clocks_event_reason_…` /
`clocks_event_reasons.…`.

Only the mask and the per-reason Active/Not Active fields say what holds the clocks now (NVML
nvmlDeviceGetCurrentClocksEventReasons: "current clocks event reasons"). The
`clocks_event_reasons_counters.*` columns (`nvidia-smi --help-query-gpu`, r550+: time in µs each
reason has held the clocks, accumulated since the driver loaded; NVML's violation-time counters)
are history, not a current reason: `reason_of_key` names no reason for them.
"""

from __future__ import annotations

BITS: dict[int, str] = {
    0x001: "idle",
    0x002: "app_clocks",
    0x004: "sw_power_cap",
    0x008: "hw_slowdown",
    0x010: "sync_boost",
    0x020: "sw_thermal",
    0x040: "hw_thermal",
    0x080: "hw_power_brake",
    0x100: "display_clocks",
}
REASONS = tuple(BITS.values())
# Field leaf names (normalised by nvidia_smi.values.key_of, prefixes stripped) -> reason.
FIELDS: dict[str, str] = {
    "idle": "idle",
    "gpu_idle": "idle",
    "applications_clocks_setting": "app_clocks",
    "application_clocks_setting": "app_clocks",
    "applications_clocks": "app_clocks",
    "sw_power_cap": "sw_power_cap",
    "hw_slowdown": "hw_slowdown",
    "hw_thermal_slowdown": "hw_thermal",
    "hw_power_brake_slowdown": "hw_power_brake",
    "sync_boost": "sync_boost",
    "sw_thermal_slowdown": "sw_thermal",
    "display_clock_setting": "display_clocks",
    "display_clocks_setting": "display_clocks",
}
SECTIONS = ("clocks_event_reasons", "clocks_throttle_reasons")


def reasons_of_mask(mask: int) -> tuple[str, ...]:
    """The active reasons of an NVML/DCGM bit mask, in bit order (unknown bits ignored)."""
    return tuple(name for bit, name in BITS.items() if mask & bit)


def reason_of_key(key: str) -> str | None:
    """The reason an nvidia-smi field key names (`clocks_throttle_reasons/hw_slowdown`,
    `clocks_event_reasons/clocks_event_reason_sw_power_cap`, `clocks_event_reasons.idle`),
    None for any other key."""
    for section in SECTIONS:
        for sep in ("/", "."):
            if key.startswith(section + sep):
                leaf = key.rsplit("/", 1)[-1].rsplit(".", 1)[-1]
                for prefix in ("clocks_event_reason_", "clocks_throttle_reason_"):
                    leaf = leaf.removeprefix(prefix)
                return FIELDS.get(leaf)
    return None
