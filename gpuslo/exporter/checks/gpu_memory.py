"""`gpu_memory`: uncorrectable ECC errors, row remapping pending/failure and NVIDIA's GPU recovery
action, per GPU.

Evidence: NVML (`nvmlDeviceGetTotalEccErrors`, `nvmlDeviceGetRemappedRows`, field value
`NVML_FI_DEV_GET_GPU_RECOVERY_ACTION`), read in the runner's child. The recovery action is polled
directly because DCGM health can say Healthy while NVML says Reset. Rules: `gpu_health.evaluate_gpu`
(sources in its docstring). Depends on nvidia-ml-py, libnvidia-ml.so.1 and the NVIDIA driver.
A GPU that reports none of ECC, row remapping or recovery action is `unknown`/`no_data`, not ok;
ECC disabled is `warn` (uncorrectable errors would go unseen).
"""

from __future__ import annotations

from gpuslo import names
from gpuslo.exporter.checks.base import CheckContext
from gpuslo.exporter.checks.gpu_inventory import NvmlCheck, gpu_result
from gpuslo.exporter.evidence.gpu_status import GpuStatus
from gpuslo.exporter.evidence.nvml import NvmlNode
from gpuslo.exporter.policy.gpu import evaluate_gpu
from gpuslo.verdict import CheckResult

SIGNALS = ("ecc_uncorrectable", "row_remap_pending", "row_remap_failure", "recovery_action")


def judge_problems(check: str, status: GpuStatus, signals: tuple[str, ...]) -> CheckResult | None:
    """A fail/warn result from `evaluate_gpu`'s problems with these signals, None when none.
    The first problem gives the reason; the most severe action of all of them is the action."""
    problems = [p for p in evaluate_gpu(status) if p.signal in signals]
    if not problems:
        return None
    worst = max((p.action for p in problems), key=names.ACTION_SEVERITY.__getitem__)
    fatal = any(p.class_ == names.CLASS_FATAL for p in problems)
    state = names.STATUS_FAIL if fatal else names.STATUS_WARN
    first = next(p for p in problems if p.class_ == names.CLASS_FATAL) if fatal else problems[0]
    message = "; ".join(p.message for p in problems)
    return gpu_result(check, status, state, message, reason=first.reason, action=worst)


class GpuMemoryCheck(NvmlCheck):
    """ECC, row remapping and recovery action per GPU (see the module docstring)."""

    name = "gpu_memory"

    def evaluate(self, status: GpuStatus, node: NvmlNode, context: CheckContext) -> CheckResult:
        """Fail on a problem, unknown when nothing memory-related is reported, else ok/warn."""
        problem = judge_problems(self.name, status, SIGNALS)
        if problem is not None:
            return problem
        reported = (status.ecc_dbe_volatile, status.remapped_rows_pending, status.recovery_action)
        if all(value is None for value in reported):
            return gpu_result(
                self.name,
                status,
                names.STATUS_UNKNOWN,
                "NVML reports neither ECC, row remapping nor recovery action",
                reason="no_data",
            )
        message = (
            f"ECC uncorrectable volatile {_text(status.ecc_dbe_volatile)}, aggregate "
            f"{_text(status.ecc_dbe_aggregate)}; "
            f"rows pending {_text(status.remapped_rows_pending)}, "
            f"failure {_text(status.remapped_rows_failure)}; recovery action "
            f"{_text(status.recovery_action)}"
        )
        if status.ecc_mode == "Disabled":
            return gpu_result(self.name, status, names.STATUS_WARN, "ECC disabled; " + message)
        return gpu_result(self.name, status, names.STATUS_OK, message)


def _text(value: object) -> str:
    if value is None:
        return "not reported"
    if isinstance(value, bool):
        return "yes" if value else "no"
    return str(value)
