"""GPU allocations from dcgm-exporter's HPC job-mapping directory (`HpcJobAllocations`), one
implementation of the allocation contract (`jobs.contract.AllocationSource`; the other is
`jobs.allocations`). Slurm's prolog/epilog scripts (deploy/slurm/) write one file per GPU index
listing the jobs on it (`evidence.hpc_jobs`); each (GPU, job) becomes
`gpuslo_gpu_allocation{hpc_job}`.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from gpuslo.errors import InputError
from gpuslo.exporter.evidence.hpc_jobs import read_hpc_job_mapping
from gpuslo.exporter.jobs.contract import AllocationSource
from gpuslo.exporter.snapshot import GpuAllocation, GpuInfo


def hpc_job_allocations(mapping: dict[str, list[str]],
                        gpus: Iterable[GpuInfo]) -> list[GpuAllocation]:
    """One `GpuAllocation` per (GPU index, job) of `mapping` (index → job ids), the uuid from the
    inventory `gpus` ("" when it does not know the index). Pure."""
    uuids = {g.index: g.uuid for g in gpus}
    order = sorted(mapping, key=lambda gpu: (len(gpu), gpu))
    return [GpuAllocation(gpu, uuids.get(gpu, ""), hpc_job=job)
            for gpu in order for job in mapping[gpu]]


class HpcJobAllocations(AllocationSource):
    """`gpuslo_gpu_allocation{hpc_job}` from dcgm-exporter's HPC job-mapping directory.

    Args:
        directory: the mapping directory (`--hpc-job-mapping-dir`), None when not configured.
        gpus: returns the latest GPU inventory (index → uuid).
    """

    source = "hpc_job_mapping"

    def __init__(self, directory: str | Path | None,
                 gpus: Callable[[], Iterable[GpuInfo]] = tuple) -> None:
        super().__init__("no --hpc-job-mapping-dir")
        self.directory, self.gpus = directory, gpus

    def sample(self) -> None:
        """Read the directory now; a directory that cannot be listed is state unknown
        (tool_error) with no allocation. A missing directory is no job on any GPU (the prolog
        creates it with the first job)."""
        if self.directory is None:
            return
        try:
            mapping = read_hpc_job_mapping(self.directory)
        except InputError as error:
            self._fail("tool_error", str(error))
            return
        self._keep(hpc_job_allocations(mapping, tuple(self.gpus())))
