"""`gpu_inventory`: the GPUs present against the expected count; a missing or inaccessible GPU
fails.

Evidence: NVML (`nvmlDeviceGetCount`, a handle, UUID and PCI bus id per GPU). Depends on
nvidia-ml-py, libnvidia-ml.so.1 and the NVIDIA driver. The expected count comes from
`--expect-gpus` / the node config; without one, the count seen at the first run where every GPU
was readable is persisted in `<state_dir>/gpu_inventory.json` (atomic write) and used from then
on, so a GPU that falls off the bus later is caught. Fewer GPUs than expected → `fail`
`gpu_missing` (reboot the node: a GPU off the bus does not come back otherwise); more → `warn`;
a GPU NVML lists but cannot read → `fail` `gpu_inaccessible`. Also hands the inventory, driver and
CUDA versions to the snapshot (`CheckOutput.facts`).
"""

from __future__ import annotations

import json
import os
import tempfile
from pathlib import Path
from typing import Any

from gpuslo import names
from gpuslo.exporter.checks.base import DEFAULT_INTERVAL_S, CheckContext
from gpuslo.exporter.gpu_health import evaluate_gpu
from gpuslo.exporter.nvml_source import SOURCE, NvmlNode, gpu_result, read_node
from gpuslo.exporter.runner import CheckOutput
from gpuslo.exporter.snapshot import GpuInfo
from gpuslo.verdict import NODE_SCOPE, CheckResult

STATE_FILE = "gpu_inventory.json"


def write_json_atomic(path: Path, data: Any) -> None:
    """Write `data` as sorted JSON to `path` atomically (`write_text_atomic`)."""
    write_text_atomic(path, json.dumps(data, sort_keys=True, indent=1) + "\n")


def write_text_atomic(path: Path, text: str) -> None:
    """Write `text` to `path` via a temp file in the same directory, fsync and rename, so a
    reader sees the old file or the new one, never half of one."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, tmp = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.")
    try:
        with os.fdopen(fd, "w") as handle:
            handle.write(text)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        Path(tmp).unlink(missing_ok=True)
        raise


def expected_count(context: CheckContext) -> tuple[int | None, str]:
    """The expected GPU count and where it came from; (None, "") when nobody knows yet."""
    if context.expect_gpus is not None:
        return context.expect_gpus, "configured"
    try:
        data = json.loads((Path(context.state_dir) / STATE_FILE).read_text())
        return int(data["expected_gpus"]), "first healthy run"
    except (OSError, ValueError, KeyError, TypeError):
        return None, ""


def count_result(node: NvmlNode, context: CheckContext) -> CheckResult:
    """The node-scoped result: GPUs seen against the expected count (persisting a first count)."""
    seen, readable = node.device_count, sum(1 for g in node.gpus if g.accessible)
    expected, origin = expected_count(context)
    if expected is None and seen and readable == seen:
        try:
            write_json_atomic(Path(context.state_dir) / STATE_FILE, {"expected_gpus": seen})
            origin = f"recorded as expected in {context.state_dir}"
        except OSError as error:
            origin = f"could not record as expected: {error.strerror}"
        expected = seen
    def result(state: str, message: str, **kw: Any) -> CheckResult:
        return CheckResult(check="gpu_inventory", scope=NODE_SCOPE, status=state,
                           message=message, source=SOURCE, **kw)  # fmt: skip
    if expected is None or seen < expected:
        wanted = "no expected count yet" if expected is None else f"{expected} expected ({origin})"
        return result(names.STATUS_FAIL, f"{seen} GPUs seen, {wanted}", reason="gpu_missing",
                      action=names.ACTION_REBOOT_NODE)  # fmt: skip
    if seen > expected:
        return result(names.STATUS_WARN, f"{seen} GPUs seen, more than {expected} expected ({origin})")
    return result(names.STATUS_OK, f"{seen} GPUs seen, {expected} expected ({origin})")


class GpuInventoryCheck:
    """GPU count and per-GPU accessibility (see the module docstring)."""

    name = "gpu_inventory"
    interval_s = DEFAULT_INTERVAL_S
    dependencies = ("nvidia-ml-py (pynvml)", "libnvidia-ml.so.1", "NVIDIA driver")

    def run(self, context: CheckContext) -> CheckOutput:
        """Read NVML; one node result for the count and one result per GPU."""
        node = read_node()
        results = [count_result(node, context)]
        for status in node.gpus:
            if status.accessible:
                where = f"{status.model} at {status.pci_bus_id}"
                results.append(gpu_result(self.name, status, names.STATUS_OK, where))
            else:
                problem = evaluate_gpu(status)[0]
                results.append(gpu_result(self.name, status, names.STATUS_FAIL, problem.message,
                                          reason=problem.reason, action=problem.action))  # fmt: skip
        gpus = tuple(
            GpuInfo(g.index or "", g.uuid or "", g.pci_bus_id or "", g.model or "", g.family or "unknown")
            for g in node.gpus if g.accessible
        )  # fmt: skip
        facts = {"gpus": gpus, "driver_version": node.driver_version, "cuda_version": node.cuda_version}
        return CheckOutput(results, facts)
