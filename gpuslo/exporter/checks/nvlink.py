"""`nvlink`: NVLink links up (against the expected count), link error counters rising, and the
NVLink fabric state (NVSwitch systems), per GPU.

Evidence: NVML `nvmlDeviceGetNvLinkState`, `nvmlDeviceGetNvLinkErrorCounter` (DL replay,
recovery, CRC flit, CRC data) and `nvmlDeviceGetGpuFabricInfoV`. Depends on nvidia-ml-py,
libnvidia-ml.so.1 and the NVIDIA driver. Rules (`gpu_health`; `nvidia-smi nvlink -s`): an inactive
link is judged by `policy.nvlink_links` (fail `nvlink_down`, except the link slots a bridged PCIe
board leaves unconnected by design: none, or warn when whole bridges are absent), and fewer
active links than `expect_nvlinks` in the node config is `fail` `nvlink_down`; a
fabric state other than Completed/Success is `fail` `fabric_unhealthy`; error counters that rose
since the last run (baseline persisted in `<state_dir>/nvlink_errors.json`) are `warn`
`nvlink_errors`; a baseline that cannot be read or trusted makes the check `unknown` until it is
fixed or removed (it is never reset silently). A GPU on which NVML reports no NVLink at all is
`ok` with `applicable=False`, saying so (PCIe-only GPUs such as the recorded H200 of
shared/fixtures/h200-extra).
"""

from __future__ import annotations

import contextlib
from pathlib import Path
from typing import Any

from gpuslo import names
from gpuslo.errors import ParseError, ToolError
from gpuslo.exporter.checks.base import CheckContext
from gpuslo.exporter.checks.gpu_inventory import NvmlCheck, gpu_result, gpu_scope
from gpuslo.exporter.checks.gpu_memory import judge_problems
from gpuslo.exporter.evidence.gpu_status import GpuStatus
from gpuslo.exporter.evidence.nvml import NvmlNode
from gpuslo.exporter.state import read_json_state, write_json_atomic
from gpuslo.verdict import CheckResult

STATE_FILE = "nvlink_errors.json"


def rising_counters(before: dict[str, Any], now: dict[int, dict[str, int]]) -> list[str]:
    """Names `link N counter` whose count is above the baseline `before` (JSON keys are text)."""
    rising = []
    for link, counts in sorted(now.items()):
        for counter, value in sorted(counts.items()):
            old = before.get(str(link), {}).get(counter)
            if old is not None and value > old:
                rising.append(f"link {link} {counter} +{value - old}")
    return rising


def load_baseline(path: Path) -> dict[str, dict[str, dict[str, int]]]:
    """The persisted counters {GPU scope: {link: {counter: count}}}; {} before the first run.

    Raises ParseError naming the file when it is not such a mapping, ToolError when it cannot be
    read: a baseline silently reset would hide counters that rose meanwhile (fail closed)."""
    try:
        data = read_json_state(path, {})
    except OSError as error:
        raise ToolError(f"{path}: cannot read the NVLink counter baseline ({error})") from None
    valid = isinstance(data, dict) and all(
        isinstance(links, dict)
        and all(
            isinstance(counts, dict)
            and all(isinstance(v, int) and not isinstance(v, bool) for v in counts.values())
            for counts in links.values()
        )
        for links in data.values()
    )
    if not valid:
        raise ParseError(str(path), "not a {GPU: {link: {counter: count}}} mapping")
    return data


class NvlinkCheck(NvmlCheck):
    """NVLink and fabric state per GPU (see the module docstring)."""

    name = "nvlink"

    def run(self, context: CheckContext) -> list[CheckResult]:
        """Read NVML, judge each GPU against the persisted counters, then persist them."""
        path = Path(context.state_dir) / STATE_FILE
        self._baseline = load_baseline(path)
        self._seen: dict[str, Any] = {}
        results = super().run(context)
        # unwritable: the next run compares against the older baseline; rising stays visible
        with contextlib.suppress(OSError):
            write_json_atomic(path, {**self._baseline, **self._seen})
        return results

    def evaluate(self, status: GpuStatus, node: NvmlNode, context: CheckContext) -> CheckResult:
        """Fail on down links or fabric, warn on rising counters, not applicable without NVLink."""
        problem = judge_problems(self.name, status, ("nvlink_inactive", "fabric_unhealthy"))
        if problem is not None and problem.status == names.STATUS_FAIL:
            return problem
        states = status.nvlink_states
        if not states:
            return gpu_result(
                self.name,
                status,
                names.STATUS_OK,
                f"no NVLink on this GPU ({node.source} reports none)",
                applicable=False,
            )
        expected = int(context.config.get("expect_nvlinks") or 0)
        active = sum(states.values())
        if active < expected:
            return gpu_result(
                self.name,
                status,
                names.STATUS_FAIL,
                f"{active} NVLink links active, {expected} expected",
                reason="nvlink_down",
                action=names.ACTION_DRAIN_AND_RESET,
            )
        counts = status.nvlink_error_counts or {}
        self._seen[gpu_scope(status)] = {str(k): v for k, v in counts.items()}
        rising = rising_counters(self._baseline.get(gpu_scope(status), {}), counts)
        if rising:
            return gpu_result(
                self.name,
                status,
                names.STATUS_WARN,
                "NVLink error counters rising: " + ", ".join(rising[:4]),
                reason="nvlink_errors",
                action=names.ACTION_CHECK_CABLING,
            )
        if problem is not None:  # a warn: a bridged board short of bridges, a fabric slowed
            return problem
        fabric = f"; fabric {status.fabric_state}" if status.fabric_state else ""
        return gpu_result(
            self.name, status, names.STATUS_OK, f"{active} NVLink links active{fabric}"
        )
