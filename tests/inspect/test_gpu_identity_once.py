"""Inspect's GPU count (`nvidia_smi_findings.distinct_gpus`) and the temperature-peer note
(`policy.temperature_peers`) count a GPU sampled more than once (`nvidia-smi -l`) by one key,
`gpu_status.gpu_key`: UUID in any case, else NVML's PCI bus id, else index."""

from __future__ import annotations

from gpuslo.exporter.evidence.gpu_status import GpuStatus, gpu_key, latest_per_gpu
from gpuslo.exporter.policy.temperature_peers import temperature_outliers


def _gpu(index: str, temp: float, uuid: str | None = None, pci: str | None = None) -> GpuStatus:
    return GpuStatus(index=index, uuid=uuid, pci_bus_id=pci, model="H100", temperature_c=temp,
                     power_draw_w=300.0)


def test_one_gpu_in_two_spellings_is_one_peer_not_two():
    # GPU 0 sampled twice, its UUID once upper, once lower case (a hand-joined capture): one
    # GPU, one note, three peers. Keyed by the UUID as printed, it was two GPUs: two notes,
    # each sample counted among the other's peers.
    peers = [_gpu(str(i), 40.0, uuid=f"GPU-{i}aaa") for i in (1, 2, 3)]
    hot = [_gpu("0", 70.0, uuid="GPU-0ABC"), _gpu("0", 70.0, uuid="gpu-0abc")]
    statuses = [*hot, *peers]
    assert len(latest_per_gpu(statuses, lambda s: s)) == 4
    (note,) = temperature_outliers("k", statuses, lambda s: {"gpu": s.index})
    assert note.gpu == "0" and "3 H100" in note.message


def test_gpus_named_by_nothing_are_each_their_own():
    """The negative: rows with no UUID, PCI address or index are never merged."""
    rows = [GpuStatus(model="H100"), GpuStatus(model="H100")]
    assert gpu_key(rows[0]) is None and len(latest_per_gpu(rows, lambda s: s)) == 2
    assert gpu_key(_gpu("3", 40.0, pci="00000000:17:00.0")) == ("pci", "00000000:17:00.0")
