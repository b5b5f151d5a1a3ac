"""The exporter's platform samples: this node's Slurm state and reason, and the GPUs Slurm jobs
hold (dcgm-exporter's HPC job-mapping directory, an allocation source: `HpcJobAllocations`).

slurmctld keeps no state history without slurmdbd, so the exporter samples its own node's state
(`evidence.slurm.read_node`) every cycle and exports it as kube-state-metrics exports cordons;
Prometheus keeps the history and the SLO engine reads it as schedulability
(`gpuslo.slo.sources.slurm`). `node_state_labels(node)` is the pure mapping to bounded labels:

| Slurm | state | reason_layer | reason |
|---|---|---|---|
| drained/down, reason `gpuslo: <check> <reason> ...` | drained/down | its layer | <reason> |
| drained, someone else's reason | drained | platform | slurm_drain |
| DOWN, someone else's reason or none | down | platform | slurm_down |
| MAINT (maintenance reservation) | maintenance | platform | slurm_maintenance |
| IDLE/ALLOCATED/MIXED/... | up | "" | "" |
| scontrol failed | unknown | observability | check_timeout, dependency_missing, ... |
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from gpuslo import names
from gpuslo.errors import InputError
from gpuslo.exporter.evidence.hpc_jobs import read_hpc_job_mapping
from gpuslo.exporter.evidence.slurm import (
    DEFAULT_SCONTROL,
    Run,
    SlurmNode,
    SlurmUnavailable,
    read_node,
    run_command,
)
from gpuslo.exporter.slurm.drain import own_reason_word
from gpuslo.exporter.snapshot import AllocationSourceState, GpuAllocation, GpuInfo

Sample = tuple[str, tuple[str, ...], float]  # (metric name, label values in METRICS order, value)
SAMPLE_TIMEOUT_S = 5.0


def node_state_labels(node: SlurmNode) -> tuple[str, str, str]:
    """(state, reason_layer, reason) for `node`, as the table in the module docstring. Pure."""
    own = own_reason_word(node.reason)
    if node.down or node.drained:
        state = "down" if node.down else "drained"
        if own:
            return state, names.layer_of(own), own
        return state, names.LAYER_PLATFORM, "slurm_down" if node.down else "slurm_drain"
    if "MAINT" in node.flags:
        return "maintenance", names.LAYER_PLATFORM, "slurm_maintenance"
    return names.SLURM_STATE_UP, "", ""


def hpc_job_allocations(mapping: dict[str, list[str]],
                        gpus: Iterable[GpuInfo]) -> list[GpuAllocation]:
    """One `GpuAllocation` per (GPU index, job) of `mapping` (index → job ids), the uuid from the
    inventory `gpus` ("" when it does not know the index). Pure."""
    uuids = {g.index: g.uuid for g in gpus}
    order = sorted(mapping, key=lambda gpu: (len(gpu), gpu))
    return [GpuAllocation(gpu, uuids.get(gpu, ""), hpc_job=job)
            for gpu in order for job in mapping[gpu]]


class HpcJobAllocations:
    """`gpuslo_gpu_allocation{hpc_job}` from dcgm-exporter's HPC job-mapping directory, an
    allocation source (`gpuslo.exporter.allocations.AllocationSource`).

    Args:
        directory: the mapping directory (`--hpc-job-mapping-dir`), None when not configured.
        gpus: returns the latest GPU inventory (index → uuid).
    """

    source = "hpc_job_mapping"

    def __init__(self, directory: str | Path | None,
                 gpus: Callable[[], Iterable[GpuInfo]] = tuple) -> None:
        self.directory, self.gpus = directory, gpus
        self._allocations: list[GpuAllocation] = []
        self._state = AllocationSourceState(self.source, "not_configured",
                                            message="no --hpc-job-mapping-dir")

    def sample(self) -> None:
        """Read the directory now; a directory that cannot be listed is state unknown
        (tool_error) with no allocation. A missing directory is no job on any GPU (the prolog
        creates it with the first job)."""
        if self.directory is None:
            return
        try:
            mapping = read_hpc_job_mapping(self.directory)
        except InputError as error:
            self._allocations = []
            self._state = AllocationSourceState(self.source, names.STATUS_UNKNOWN,
                                                "tool_error", str(error))
            return
        self._allocations = hpc_job_allocations(mapping, tuple(self.gpus()))
        self._state = AllocationSourceState(self.source, names.STATUS_OK)

    def allocations(self) -> list[GpuAllocation]:
        """The allocations of the last `sample()`."""
        return list(self._allocations)

    def state(self) -> AllocationSourceState:
        """How the last `sample()` went."""
        return self._state


class PlatformSampler:
    """Samples this node's Slurm state; `samples()` returns the latest, without I/O. (The HPC
    job mapping is an allocation source of its own: `HpcJobAllocations`.)

    Args:
        node: Slurm NodeName to sample, or None not to sample Slurm.
        scontrol, run, timeout_s: how scontrol is run (injected; timeout per call).
    """

    def __init__(self, node: str | None, scontrol: str = DEFAULT_SCONTROL,
                 run: Run = run_command, timeout_s: float = SAMPLE_TIMEOUT_S) -> None:
        self.node = node
        self.scontrol, self.run, self.timeout_s = scontrol, run, timeout_s
        self._latest: list[Sample] = []

    def sample(self) -> list[Sample]:
        """Read Slurm now; keep and return the samples. Never raises for a Slurm failure (it
        becomes state unknown with the reason)."""
        out: list[Sample] = []
        if self.node:
            try:
                labels = node_state_labels(read_node(self.node, self.scontrol, self.run,
                                                     self.timeout_s))  # fmt: skip
            except SlurmUnavailable as error:
                labels = ("unknown", names.LAYER_OBSERVABILITY, error.reason)
            out.append(("gpuslo_slurm_node_state", labels, 1.0))
        self._latest = out
        return out

    def samples(self) -> list[Sample]:
        """The samples of the last `sample()` call."""
        return list(self._latest)
