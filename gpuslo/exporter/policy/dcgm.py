"""Judging one dcgm-exporter GPU (pure): its last Xid by the Xid policy and its `GpuStatus` by
the shared GPU rules; used by `inspect` and by the live `dcgm` check alike."""

from __future__ import annotations

from gpuslo.exporter.evidence.dcgm.page import DcgmGpu, gpu_status
from gpuslo.exporter.policy.classify import xid_finding
from gpuslo.exporter.policy.gpu import evaluate_gpu
from gpuslo.exporter.policy.xid import XidPolicy
from gpuslo.verdict import Finding

KIND = "dcgm-metrics"


def gpu_findings(
    gpu: DcgmGpu, policy: XidPolicy, family: str | None = None, kind: str = KIND
) -> list[Finding]:
    """Findings for one page GPU: its last Xid (when non-zero) and windowed Xid codes, classed by
    `policy` for `family` (None: the family the page names), and every problem `evaluate_gpu`
    finds in its `GpuStatus`. Zero NVLink bandwidth counters are traffic figures, never link-down
    evidence (corpus case 019)."""
    where = {"gpu": gpu.index or None, "uuid": gpu.uuid, "pci": gpu.pci_bus_id or None}
    codes = sorted({gpu.last_xid or 0, *gpu.xid_active} - {0})
    family = family or gpu.family
    findings = [xid_finding(kind, code, policy, family=family, **where) for code in codes]
    findings += [problem.finding(kind, **where) for problem in evaluate_gpu(gpu_status(gpu))]
    return findings
