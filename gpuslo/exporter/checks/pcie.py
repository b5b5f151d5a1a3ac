"""`pcie`: PCIe link width below its maximum, or generation below its maximum under load.

Evidence: NVML `nvmlDeviceGetCurrPcieLinkWidth`/`MaxPcieLinkWidth`,
`nvmlDeviceGetCurrPcieLinkGeneration`/`MaxPcieLinkGeneration` and `nvmlDeviceGetUtilizationRates`.
Depends on nvidia-ml-py, libnvidia-ml.so.1 and the NVIDIA driver. Rules (nvidia-smi(1) "PCI / Link";
`gpu_health`): the generation drops at idle to save power, so a generation below max counts only
while the GPU is busy (utilisation ≥ `LOAD_RATIO`); a width below max is a degraded link
(`pcie_degraded`, check cabling/seating): `warn` at half its lanes or more (the job crawls instead
of crashing), `fail` below half (lanes lost; `policy.pcie_width`). No width reported → `unknown`.
"""

from __future__ import annotations

from gpuslo import names
from gpuslo.exporter.checks.base import CheckContext
from gpuslo.exporter.checks.gpu_inventory import NvmlCheck, gpu_result
from gpuslo.exporter.checks.gpu_memory import judge_problems
from gpuslo.exporter.evidence.gpu_status import GpuStatus
from gpuslo.exporter.evidence.nvml import NvmlNode
from gpuslo.verdict import CheckResult

LOAD_RATIO = 0.5  # GPU utilisation (0-1) above which the link should train to its top generation


class PcieCheck(NvmlCheck):
    """PCIe link per GPU (see the module docstring)."""

    name = "pcie"

    def evaluate(self, status: GpuStatus, node: NvmlNode, context: CheckContext) -> CheckResult:
        """Warn or fail on a narrow link, warn on a slow generation under load; unknown when not
        reported."""
        problem = judge_problems(self.name, status, ("pcie_degraded",))
        if problem is not None:
            return problem
        if status.pcie_width_current is None or status.pcie_width_max is None:
            return gpu_result(
                self.name,
                status,
                names.STATUS_UNKNOWN,
                "NVML reports no PCIe link width",
                reason="no_data",
            )
        gen, top = status.pcie_gen_current, status.pcie_gen_max
        load = node.utilization.get(status.index or "")
        link = f"x{status.pcie_width_current} of x{status.pcie_width_max}, gen {gen or '?'}"
        link += f" of {top}" if top else " (max not reported)"
        if gen and top and gen < top and load is not None and load >= LOAD_RATIO:
            return gpu_result(
                self.name,
                status,
                names.STATUS_WARN,
                f"PCIe generation {gen} below its maximum {top} at {load:.0%} utilisation",
                reason="pcie_degraded",
                action=names.ACTION_CHECK_CABLING,
            )
        return gpu_result(self.name, status, names.STATUS_OK, f"PCIe link {link}")
