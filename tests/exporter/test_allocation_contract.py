"""The allocation contract (gpuslo.exporter.jobs.contract): every source is one, says
`not_configured` until configured, and fails closed (unknown, no allocation)."""

import pytest

from gpuslo import names
from gpuslo.exporter.evidence.kubelet.pod_resources import KubeletUnavailable, PodDevice
from gpuslo.exporter.jobs.allocations import KubeletAllocations
from gpuslo.exporter.jobs.contract import AllocationSource
from gpuslo.exporter.jobs.hpc import HpcJobAllocations
from gpuslo.exporter.snapshot import GpuAllocation, GpuInfo

GPUS = (GpuInfo("0", "GPU-a", "00000000:00:06.0", "H100", "hopper"),)


def test_both_sources_implement_the_one_contract_with_known_names():
    sources = [KubeletAllocations(None), HpcJobAllocations(None)]
    assert all(isinstance(source, AllocationSource) for source in sources)
    assert {source.source for source in sources} <= set(names.ALLOCATION_SOURCES)
    for source in sources:
        source.sample()  # not configured: reads nothing
        assert source.state().status == "not_configured" and source.allocations() == []
    with pytest.raises(TypeError):
        AllocationSource("no flag")  # sample() is abstract


def test_a_failed_read_drops_the_last_allocations():
    outcomes = [[PodDevice("ml", "p", "c", "nvidia.com/gpu", "GPU-a")]]

    def read(socket, timeout):
        if outcomes:
            return outcomes.pop()
        raise KubeletUnavailable("tool_error", "socket gone")

    source = KubeletAllocations("/kubelet.sock", lambda: GPUS, read=read)
    source.sample()
    assert source.allocations() == [GpuAllocation("0", "GPU-a", "ml", "p", "c")]
    assert source.state().status == names.STATUS_OK
    source.sample()
    assert source.allocations() == []
    assert (source.state().status, source.state().reason) == (names.STATUS_UNKNOWN, "tool_error")
