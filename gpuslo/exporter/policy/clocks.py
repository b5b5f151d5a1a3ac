"""NVML clocks event reasons, judged with NVIDIA's semantics (pure).

Source: NVML API reference, "Clocks Event Reasons" (nvml.h `nvmlClocksEventReason*`) and
nvidia-smi(1) "Clocks Event Reasons":
- HW Slowdown (0x08: clocks cut by a factor of two or more — temperature too high, an external
  power brake asserted by the system's power supply, power draw over the fast-trigger limit),
  HW Thermal Slowdown (0x40) and HW Power Brake Slowdown (0x80) are the hardware holding the GPU
  below its clocks whatever the workload does: the GPU is not usable at speed, and a
  synchronous job runs at its slowest GPU's pace. Class fatal, reason the NVML name,
  action contact_support (cooling or power delivery must be looked at).
- SW Power Cap (0x04: the driver keeps the board within its power limit — normal under full
  load), SW Thermal Slowdown (0x20: the driver holds a temperature target), Idle (0x01: nothing
  running), Applications Clocks Setting (0x02), Sync Boost (0x10) and Display Clock Setting
  (0x100) are the workload's own (or its settings): never a node fault by themselves. SW power
  cap and SW thermal are recorded as warn with their reason (layer training, so a job's slowdown
  is not sent to the node layer by them alone); the others as inventory (ok).
"""

from __future__ import annotations

from gpuslo import names
from gpuslo.exporter.evidence.gpu_status import GpuStatus
from gpuslo.exporter.policy.gpu_problem import GpuProblem
from gpuslo.verdict import Finding

HARDWARE = ("hw_slowdown", "hw_thermal", "hw_power_brake")
SOFTWARE_WARN = ("sw_power_cap", "sw_thermal")
MEANING = {
    "hw_slowdown": "HW slowdown: the hardware cut the clocks (heat, power brake or over-power)",
    "hw_thermal": "HW thermal slowdown: the GPU is too hot, clocks cut",
    "hw_power_brake": "HW power brake slowdown: the system asserted the external power brake",
    "sw_power_cap": "SW power cap: the driver keeps the board within its power limit",
    "sw_thermal": "SW thermal slowdown: the driver holds a temperature target",
    "idle": "idle: nothing is running, clocks dropped",
    "app_clocks": "applications clocks setting: clocks set by the user",
    "sync_boost": "sync boost: clocks held to a group's pace",
    "display_clocks": "display clock setting",
}


def active_reasons(status: GpuStatus) -> tuple[str, ...]:
    """The active reasons of one GPU: its `clock_events`, else what its older boolean fields
    say (hardware and SW thermal slowdown, SW power cap); () when nothing is reported."""
    if status.clock_events is not None:
        return status.clock_events
    flags = (
        ("hw_slowdown", status.hw_slowdown),
        ("hw_thermal", status.hw_thermal_slowdown),
        ("sw_power_cap", status.sw_power_cap),
        ("sw_thermal", status.sw_thermal_slowdown),
    )
    return tuple(name for name, on in flags if on)


def clock_problems(status: GpuStatus) -> list[GpuProblem]:
    """A fatal `clock_event` problem per active hardware reason (see the module docstring),
    but HW thermal slowdown, which `policy.gpu`'s thermal rule reports as `thermal_slowdown`."""
    return [
        GpuProblem(
            signal="clock_event",
            class_=names.CLASS_FATAL,
            reason=reason,
            action=names.ACTION_CONTACT_SUPPORT,
            message=f"{MEANING[reason]}: not usable at speed",
        )
        for reason in active_reasons(status)
        if reason in HARDWARE and reason != "hw_thermal"
    ]


def workload_clock_findings(kind: str, status: GpuStatus, **where: object) -> list[Finding]:
    """The `clock_event` findings `clock_problems` does not give: HW thermal slowdown (fatal,
    beside the thermal rule's `thermal_slowdown`), and each reason that is the workload's own —
    warn for SW power cap and SW thermal (layer training), ok for the others."""
    out = []
    for reason in active_reasons(status):
        if reason not in MEANING or (reason in HARDWARE and reason != "hw_thermal"):
            continue
        class_ = names.CLASS_OK
        if reason == "hw_thermal":
            class_, why = names.CLASS_FATAL, "not usable at speed"
        else:
            why = "the workload's own, not a node fault"
            class_ = names.CLASS_WARN if reason in SOFTWARE_WARN else names.CLASS_OK
        out.append(
            Finding(
                kind=kind,
                class_=class_,
                signal="clock_event",
                reason=reason,
                action=names.ACTION_CONTACT_SUPPORT if class_ == names.CLASS_FATAL else None,
                message=f"{MEANING[reason]} ({why})",
                **where,
            )
        )
    return out
