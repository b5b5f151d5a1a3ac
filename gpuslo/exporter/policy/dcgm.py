"""Judging one dcgm-exporter GPU (pure): its last Xid by the Xid policy and its `GpuStatus` by
the shared GPU rules; used by `inspect` and by the live `dcgm` check alike."""

from __future__ import annotations

from gpuslo.exporter.evidence.dcgm.page import XID_LAST, DcgmGpu, gpu_status
from gpuslo.exporter.policy.classify import xid_finding
from gpuslo.exporter.policy.gpu import evaluate_gpu
from gpuslo.exporter.policy.xid import XidPolicy
from gpuslo.verdict import Finding

KIND = "dcgm-metrics"
# The families a page must carry for "no fault" to mean anything: DCGM_FI_DEV_XID_ERRORS, the
# last Xid, is the one field through which every GPU fault the driver reports shows (an
# uncorrectable ECC error is Xid 48/94/95, a row-remap event Xid 63/64, a GPU off the bus Xid 79;
# NVIDIA Xid catalogue), and it is in dcgm-exporter's default counters. ECC and row-remap
# counters are not in every default set, so they are judged where shown, not required.
REQUIRED_FAMILIES = (XID_LAST,)


def missing_families(
    shown: frozenset[str],
    required: tuple[str, ...] = REQUIRED_FAMILIES,
    previous: frozenset[str] = frozenset(),
) -> list[str]:
    """The families (upper case, sorted) that `required`, or an earlier page of the same source
    (`previous`), had and this page (`shown`, `DcgmPage.families`) lacks: a family missing from a
    page is unknown, never zero. One rule for the live `dcgm` check (node unknown, no_data) and
    `inspect` (which says so of a captured page)."""
    return sorted((set(required) | set(previous)) - set(shown))


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
