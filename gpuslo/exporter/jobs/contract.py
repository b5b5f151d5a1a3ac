"""The allocation contract: what the exporter needs of a source saying which workload holds which
GPU, exported as `gpuslo_gpu_allocation` (one series per physical GPU and workload) with each
source's state as `gpuslo_gpu_allocation_source` (`collector.add_allocations`).

One contract, its implementations side by side (dcgm-exporter's `internal/pkg/transformation`:
the pod, HPC-job and DRA mappers behind one `Transform` interface):
| source | implementation | labels |
|---|---|---|
| `kubelet` (pod-resources API) | `allocations.KubeletAllocations` | namespace, pod, container |
| `hpc_job_mapping` (dcgm-exporter) | `hpc.HpcJobAllocations` | hpc_job |

A source has `source` (a `names.ALLOCATION_SOURCES` word), `sample()` (the I/O, in the exporter's
loop; never raises for the source's own failure: it becomes state `unknown` with the reason and
no allocation, since a stale list would attribute a GPU to a workload that may have left it),
`allocations()` and `state()` (the latest, no I/O). A source that is not configured says
`not_configured` and reads nothing.
"""

from __future__ import annotations

from abc import ABC, abstractmethod

from gpuslo import names
from gpuslo.exporter.snapshot import AllocationSourceState, GpuAllocation


class AllocationSource(ABC):
    """The contract (see the module docstring). Subclasses set `source` and implement
    `sample()`, recording its outcome with `_keep` or `_fail`.

    Args:
        not_configured: the message of the `not_configured` state (names the missing flag).
    """

    source: str = ""

    def __init__(self, not_configured: str) -> None:
        self._allocations: list[GpuAllocation] = []
        self._state = AllocationSourceState(self.source, "not_configured", message=not_configured)

    @abstractmethod
    def sample(self) -> None:
        """Read the source now and keep its allocations and state; never raises for the
        source's own failure."""

    def allocations(self) -> list[GpuAllocation]:
        """The allocations of the last successful `sample()` ([] after a failed one)."""
        return list(self._allocations)

    def state(self) -> AllocationSourceState:
        """How the last `sample()` went."""
        return self._state

    def _keep(self, allocations: list[GpuAllocation]) -> None:
        """Record a successful sample."""
        self._allocations = allocations
        self._state = AllocationSourceState(self.source, names.STATUS_OK)

    def _fail(self, reason: str, message: str) -> None:
        """Record a failed sample: state unknown with `reason`, and no allocation."""
        self._allocations = []
        self._state = AllocationSourceState(self.source, names.STATUS_UNKNOWN, reason, message)
