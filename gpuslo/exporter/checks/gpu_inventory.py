"""`gpu_inventory`: the GPUs present against the expected count; a missing or inaccessible GPU
fails.

Evidence: NVML (`nvmlDeviceGetCount`, a handle, UUID and PCI bus id per GPU), else
`nvidia-smi -q -x` ("Attached GPUs" and the GPU blocks). Depends on nvidia-ml-py and
libnvidia-ml.so.1, or nvidia-smi, and the NVIDIA driver. The expected count comes from
`--expect-gpus` / the node config; without one, the count seen at the first run where every GPU
was readable is persisted in `<state_dir>/gpu_inventory.json` (atomic write) and used from then
on, so a GPU that falls off the bus later is caught. Fewer GPUs than expected → `fail`
`gpu_missing` (reboot the node: a GPU off the bus does not come back otherwise); more → `warn`;
a GPU NVML lists but cannot read → `fail` `gpu_inaccessible`. Also hands the inventory, driver and
CUDA versions to the snapshot (`CheckOutput.facts`, an `InventoryFacts`).

The PCI bus is read too (`evidence.pci.read_pci_gpus` under `--path.sysfs`): an NVIDIA GPU there
that NVML does not list has no handle and no UUID (the driver could not initialise it:
`RmInitAdapter failed`), yet it is there: it joins the inventory keyed by its PCI address (scope
and `uuid` label `pci:<bus id>`) with a `fail` `gpu_init_failed` result, so it gets
`gpuslo_gpu_info`, a verdict and `gpuslo_gpu_usable 0`. When neither NVML nor nvidia-smi answers
but the bus shows GPUs, they are listed with the node `unknown` (dependency_missing/tool_error).

It also holds what the per-GPU checks share (`NvmlCheck`, `gpu_result`): they read the same
evidence and leave a GPU they cannot read to this check to fail.
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
from typing import Any

from gpuslo import names
from gpuslo.errors import DependencyMissing, ParseError, ToolError
from gpuslo.exporter.checks.base import (
    DEFAULT_INTERVAL_S,
    CheckContext,
    CheckOutput,
    InventoryFacts,
)
from gpuslo.exporter.evidence.gpu_status import GpuStatus
from gpuslo.exporter.evidence.nvml import SOURCE, NvmlNode, read_gpus
from gpuslo.exporter.evidence.pci import PciGpu, read_pci_gpus
from gpuslo.exporter.policy.gpu import evaluate_gpu
from gpuslo.exporter.snapshot import GpuInfo
from gpuslo.exporter.state import read_json_state, write_json_atomic
from gpuslo.verdict import NODE_SCOPE, CheckResult

STATE_FILE = "gpu_inventory.json"


def gpu_scope(status: GpuStatus) -> str:
    """Result scope of a GPU: its UUID, else `pci:<bus id>` (the key the kernel-log results of
    that GPU carry too), else `gpu<index>`."""
    if status.uuid:
        return status.uuid
    return f"pci:{status.pci_bus_id}" if status.pci_bus_id else f"gpu{status.index}"


def bus_only_gpu(gpu: PciGpu) -> GpuInfo:
    """The inventory entry of a GPU only the PCI bus shows (no index, no UUID)."""
    model = f"NVIDIA {gpu.device_id}"
    return GpuInfo("", f"pci:{gpu.pci_bus_id}", gpu.pci_bus_id, model, "unknown")


def uninitialised_result(gpu: PciGpu) -> CheckResult:
    """`fail` `gpu_init_failed` for a GPU on the bus that NVML does not list."""
    return CheckResult(
        check="gpu_inventory",
        scope=f"pci:{gpu.pci_bus_id}",
        status=names.STATUS_FAIL,
        reason="gpu_init_failed",
        action=names.ACTION_RESET_GPU,
        message=f"NVIDIA GPU {gpu.device_id} at {gpu.pci_bus_id} is on the PCI bus (sysfs) but "
        "not in NVML's inventory: the driver did not initialise it",
        source="sysfs",
    )


def gpu_result(check: str, status: GpuStatus, state: str, message: str, **kw: Any) -> CheckResult:
    """A CheckResult about one GPU (source NVML; `NvmlCheck.run` names nvidia-smi when used)."""
    return CheckResult(
        check=check,
        scope=gpu_scope(status),
        status=state,
        message=message,
        source=SOURCE,
        gpu=status.index or "",
        **kw,
    )


def unreadable(check: str, status: GpuStatus) -> CheckResult:
    """`unknown`/`tool_error` for a GPU the source lists but cannot read (this check fails it)."""
    return gpu_result(
        check,
        status,
        names.STATUS_UNKNOWN,
        f"GPU not readable: {status.error}",
        reason="tool_error",
    )


class NvmlCheck:
    """Base of the per-GPU checks (gpu_memory, thermal, nvlink, pcie): `run` reads the GPUs
    (`nvml_source.read_gpus`: NVML, else nvidia-smi) and calls `evaluate(status, node, context)`
    per readable GPU; a GPU that cannot be read is `unknown` there (the inventory fails it)."""

    name = ""
    interval_s = DEFAULT_INTERVAL_S
    dependencies: tuple[str, ...] = (
        "nvidia-ml-py (pynvml) and libnvidia-ml.so.1, or nvidia-smi",
        "NVIDIA driver",
    )

    def run(self, context: CheckContext) -> list[CheckResult]:
        """Read the GPUs and judge each readable one; see `evaluate`."""
        node = read_gpus(context.timeout_s * 0.8)
        if not node.gpus:
            return [
                CheckResult(
                    check=self.name,
                    scope=NODE_SCOPE,
                    status=names.STATUS_UNKNOWN,
                    reason="no_data",
                    message=f"{node.source} lists no GPU",
                    source=node.source,
                )
            ]
        results = [
            self.evaluate(status, node, context)
            if status.accessible
            else unreadable(self.name, status)
            for status in node.gpus
        ]
        return [replace(r, source=node.source) for r in results]

    def evaluate(self, status: GpuStatus, node: NvmlNode, context: CheckContext) -> CheckResult:
        """Judge one readable GPU (pure); each check overrides it."""
        raise NotImplementedError


def load_expected(context: CheckContext) -> tuple[int | None, str]:
    """The expected GPU count and where it came from; (None, "") when nobody knows yet.

    Raises ParseError naming the state file when it exists but holds no positive integer
    `expected_gpus` (not JSON, not UTF-8, another shape), ToolError when it cannot be read: the
    count is then unknown, and never learned again from a node that may have lost a GPU since.
    """
    if context.expect_gpus is not None:
        return context.expect_gpus, "configured"
    path = Path(context.state_dir) / STATE_FILE
    try:
        data = read_json_state(path, None)
    except OSError as error:
        raise ToolError(f"{path}: cannot read the expected GPU count ({error})") from None
    if data is None:
        return None, ""
    expected = data.get("expected_gpus") if isinstance(data, dict) else None
    if isinstance(expected, bool) or not isinstance(expected, int) or expected < 1:
        raise ParseError(str(path), "no positive integer 'expected_gpus' in the state file")
    return expected, "first healthy run"


def count_result(node: NvmlNode, expected: int | None, origin: str) -> CheckResult:
    """The node-scoped result (pure): GPUs seen against `expected` (None: not known, which is
    `fail` `gpu_missing` unless the caller learns the count first, see `learn_expected`)."""
    seen = node.device_count

    def result(state: str, message: str, **kw: Any) -> CheckResult:
        return CheckResult(
            check="gpu_inventory",
            scope=NODE_SCOPE,
            status=state,
            message=message,
            source=node.source,
            **kw,
        )

    if expected is None or seen < expected:
        said = (f"{seen} GPUs seen, {expected} expected ({origin})" if expected is not None
                else unconfigured_count(node))
        return result(names.STATUS_FAIL, said, reason="gpu_missing",
                      action=names.ACTION_REBOOT_NODE)
    if seen > expected:
        return result(
            names.STATUS_WARN, f"{seen} GPUs seen, more than {expected} expected ({origin})"
        )
    return result(names.STATUS_OK, f"{seen} GPUs seen, {expected} expected ({origin})")


EXPECT_HOW = "set --expect-gpus N or expect_gpus: N in the node config (--config)"


def unconfigured_count(node: NvmlNode) -> str:
    """Why a node with no expected GPU count fails (pure): none is configured, and this run
    cannot learn one (it is learned only from a run where every GPU seen is readable, so a
    node that lost a GPU never teaches the smaller count), and what to do."""
    seen = node.device_count
    unreadable = seen - sum(1 for g in node.gpus if g.accessible)
    why = ("no GPU seen to learn it from" if not seen else
           f"not learned while {unreadable} of them cannot be read" if unreadable else
           "not learned yet")
    return f"{seen} GPUs seen; the expected GPU count is not configured ({why}): {EXPECT_HOW}"


def learn_expected(node: NvmlNode, context: CheckContext) -> tuple[int | None, str]:
    """Record the count of a node whose every GPU is readable as its expected count, at the first
    run without one (atomic write; an unwritable state dir is said in the origin, not raised).
    Returns (expected, origin); (None, "") when the node cannot teach a count."""
    seen, readable = node.device_count, sum(1 for g in node.gpus if g.accessible)
    if not seen or readable != seen:
        return None, ""
    try:
        write_json_atomic(Path(context.state_dir) / STATE_FILE, {"expected_gpus": seen})
        return seen, f"recorded as expected in {context.state_dir}"
    except OSError as error:
        return seen, f"could not record as expected: {error.strerror}"


def state_problem_result(node: NvmlNode, error: Exception) -> CheckResult:
    """`unknown` for the count when the persisted expected count cannot be read or trusted."""
    reason = "parse_error" if isinstance(error, ParseError) else "tool_error"
    return CheckResult(
        check="gpu_inventory",
        scope=NODE_SCOPE,
        status=names.STATUS_UNKNOWN,
        reason=reason,
        message=f"{node.device_count} GPUs seen; expected count unknown: {error} (not learned "
        f"again: fix or remove the file, or {EXPECT_HOW})",
        source=node.source,
    )


class GpuInventoryCheck:
    """GPU count and per-GPU accessibility (see the module docstring)."""

    name = "gpu_inventory"
    interval_s = DEFAULT_INTERVAL_S
    dependencies = ("nvidia-ml-py (pynvml)", "libnvidia-ml.so.1", "NVIDIA driver")

    def run(self, context: CheckContext) -> CheckOutput:
        """Read NVML and the PCI bus; one node result for the count and one result per GPU."""
        on_bus = read_pci_gpus(context.sysfs)
        try:
            node = read_gpus(context.timeout_s * 0.8)
        except (DependencyMissing, ToolError) as error:
            if not on_bus:
                raise
            return bus_only(on_bus, error)
        try:
            expected, origin = load_expected(context)
        except (ParseError, ToolError) as error:
            results = [state_problem_result(node, error)]
        else:
            if expected is None:
                expected, origin = learn_expected(node, context)
            results = [count_result(node, expected, origin)]
        for status in node.gpus:
            if status.accessible:
                where = f"{status.model} at {status.pci_bus_id}"
                results.append(gpu_result(self.name, status, names.STATUS_OK, where))
            else:
                problem = evaluate_gpu(status)[0]
                results.append(
                    gpu_result(
                        self.name,
                        status,
                        names.STATUS_FAIL,
                        problem.message,
                        reason=problem.reason,
                        action=problem.action,
                    )
                )
        gpus = tuple(
            GpuInfo(
                g.index or "",
                gpu_scope(g),
                g.pci_bus_id or "",
                g.model or "",
                g.family or "unknown",
                g.mig_uuids or (),
            )
            for g in node.gpus
        )
        known = {g.pci_bus_id for g in node.gpus if g.pci_bus_id}
        uninitialised = [gpu for gpu in on_bus if gpu.pci_bus_id not in known]
        results += [uninitialised_result(gpu) for gpu in uninitialised]
        gpus += tuple(bus_only_gpu(gpu) for gpu in uninitialised)
        facts = InventoryFacts(gpus, node.driver_version, node.cuda_version)
        results = [r if r.source == "sysfs" else replace(r, source=node.source) for r in results]
        return CheckOutput(results, facts)


def bus_only(on_bus: list[PciGpu], error: Exception) -> CheckOutput:
    """Neither NVML nor nvidia-smi answered, but the bus shows GPUs: list them, node unknown."""
    reason = "dependency_missing" if isinstance(error, DependencyMissing) else "tool_error"
    result = CheckResult(
        check="gpu_inventory",
        scope=NODE_SCOPE,
        status=names.STATUS_UNKNOWN,
        reason=reason,
        message=f"{len(on_bus)} NVIDIA GPUs on the PCI bus, none readable: {error}"[:500],
        source="sysfs",
    )
    return CheckOutput([result], InventoryFacts(tuple(bus_only_gpu(gpu) for gpu in on_bus),
                                                driver_version=None, cuda_version=None))
