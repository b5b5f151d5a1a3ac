"""`thermal`: hardware thermal slowdown, or the GPU temperature at its slowdown threshold.

Evidence: NVML clocks event reasons (`nvmlDeviceGetCurrentClocksEventReasons`, bit
HW_THERMAL_SLOWDOWN 0x40, HW_SLOWDOWN 0x08), `nvmlDeviceGetTemperature` and
`nvmlDeviceGetTemperatureThreshold(SLOWDOWN)`. Depends on nvidia-ml-py, libnvidia-ml.so.1 and the
NVIDIA driver. Rule (nvidia-smi(1) "Clocks Event Reasons"; `gpu_health` classes it fatal): the
hardware halves clocks, so a synchronous job runs at the slowest GPU's pace → `fail`
`thermal_slowdown`; a temperature at or above the slowdown threshold is `warn` `thermal_slowdown`
(the shared rule: the hardware has not slowed down yet). Neither clocks reasons nor temperature
→ `unknown`.

Issue 24 (`policy.clocks`, NVML's semantics): HW slowdown (0x08) and HW power brake slowdown
(0x80) hold the GPU below its clocks whatever runs on it → `fail` (`clock_event`, reason
`hw_slowdown` / `hw_power_brake`), like HW thermal slowdown; SW power capping and SW thermal
slowdown are the workload's own (a GPU at its power limit under full load is normal) → `ok` with
a note, and only a node config that names them in `degradation_status` makes them `warn` or
`fail` with their degradation reason (so a job's slowdown is not sent to the node layer by them
alone).
"""

from __future__ import annotations

from gpuslo import names
from gpuslo.exporter.checks.base import CheckContext, degradation_status
from gpuslo.exporter.checks.gpu_inventory import NvmlCheck, gpu_result
from gpuslo.exporter.checks.gpu_memory import judge_problems
from gpuslo.exporter.evidence.gpu_status import GpuStatus
from gpuslo.exporter.evidence.nvml import NvmlNode
from gpuslo.verdict import CheckResult


class ThermalCheck(NvmlCheck):
    """Thermal state per GPU (see the module docstring)."""

    name = "thermal"

    def evaluate(self, status: GpuStatus, node: NvmlNode, context: CheckContext) -> CheckResult:
        """Fail on HW thermal slowdown, warn at the slowdown threshold (module docstring)."""
        problem = judge_problems(self.name, status, ("thermal_slowdown", "clock_event"))
        if problem is not None:
            return problem
        temp, limit = status.temperature_c, status.slowdown_temperature_c
        if status.hw_thermal_slowdown is None and temp is None:
            return gpu_result(
                self.name,
                status,
                names.STATUS_UNKNOWN,
                "NVML reports neither clocks event reasons nor temperature",
                reason="no_data",
            )
        where = "not reported" if temp is None else f"{temp:g} C"
        limit_text = "not reported" if limit is None else f"{limit:g} C"
        message = f"temperature {where}, slowdown threshold {limit_text}"
        if status.hw_slowdown:
            return gpu_result(
                self.name, status, names.STATUS_WARN, "hardware slowdown active; " + message
            )
        for active, reason, what in (
            (status.sw_thermal_slowdown, "clocks_sw_thermal", "SW thermal slowdown"),
            (status.sw_power_cap, "clocks_sw_power_cap", "SW power capping"),
        ):
            if active and reason not in (context.config.get("degradation_status") or {}):
                return gpu_result(self.name, status, names.STATUS_OK, f"{what} active: the "
                                  f"workload's own (policy.clocks); {message}")
            if active:
                state = degradation_status(context, reason)
                return gpu_result(self.name, status, state, f"{what} active: clocks lowered by "
                                  f"the driver; {message}", reason=reason)
        return gpu_result(self.name, status, names.STATUS_OK, "no thermal slowdown; " + message)
