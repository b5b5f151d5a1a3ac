"""Judging one dcgm-exporter GPU (pure): its last Xid by the Xid policy and its `GpuStatus` by
the shared GPU rules; used by `inspect` and by the live `dcgm` check alike. And whether the page
the live check read is this node's at all (`on_this_node`)."""

from __future__ import annotations

from gpuslo import names
from gpuslo.exporter.evidence.dcgm.page import XID_LAST, DcgmGpu, gpu_status
from gpuslo.exporter.policy.classify import xid_finding
from gpuslo.exporter.policy.gpu import evaluate_gpu
from gpuslo.exporter.policy.xid import XidPolicy
from gpuslo.verdict import NODE_SCOPE, CheckResult, Finding

KIND = "dcgm-metrics"
CHECK = "dcgm"
SHOWN = 3  # foreign UUIDs named in a message
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
    return findings + unusable_findings(gpu, kind)


def unusable_findings(gpu: DcgmGpu, kind: str = KIND) -> list[Finding]:
    """One `health_field_unreadable` finding (class unknown, reason no_data) per fault-carrying
    field the page shows for `gpu` only with a value it cannot hold (`DcgmGpu.unusable`: a DCGM
    blank sentinel of dcgm_fields.h, NaN, +-Inf, a negative or fractional count). Such a field
    says nothing of the GPU: the faults it carries are unknown, never "no problem"."""
    where = {"gpu": gpu.index or None, "uuid": gpu.uuid, "pci": gpu.pci_bus_id or None}
    return [Finding(kind=kind, class_=names.CLASS_UNKNOWN, signal="health_field_unreadable",
                    reason="no_data", **where,
                    message=f"{name} is {why}: not a value the field can hold, so the faults it "
                    "carries are unknown for this GPU")
            for name, why in sorted(gpu.unusable.items())]


def on_this_node(results: list[CheckResult], local: set[str]) -> list[CheckResult]:
    """The `dcgm` check's results judged against this node's GPU UUIDs (NVML's inventory;
    pure). A `--dcgm-url` that points at another node's dcgm-exporter reads that node's GPUs:
    merged, they would pass for this node's (a healthy page hides a missing local GPU, an
    Xid 79 lands on no local GPU). So, where `local` is known and the page names GPUs by UUID:
    - none of them is local: a misconfigured source; every dcgm result is replaced by one node
      result `unknown` / `no_data` naming the page's UUIDs and hosts, and nothing is merged;
    - some are not local: only the local GPUs' results are kept, and a node `warn` says which
      were not judged.
    Otherwise (no inventory, a page without UUID labels, every GPU local) unchanged."""
    own = [r for r in results if r.check == CHECK and r.scope.startswith("GPU-")]
    foreign = sorted({r.scope for r in own if r.scope not in local})
    if not local or not foreign:
        return results
    others = [r for r in results if r.check != CHECK]
    named = ", ".join(foreign[:SHOWN]) + (f" and {len(foreign) - SHOWN} more"
                                          if len(foreign) > SHOWN else "")
    source = next((r.source for r in own if r.source), "")
    common = {"check": CHECK, "scope": NODE_SCOPE, "source": source,
              "observed_at": max(r.observed_at for r in own)}
    if len(foreign) == len({r.scope for r in own}):
        return [*others, CheckResult(
            status=names.STATUS_UNKNOWN, reason="no_data", **common,
            message=f"the dcgm-exporter page is not this node's: none of its {len(foreign)} "
                    f"GPUs ({named}) is one of this node's {len(local)} GPUs; not merged "
                    "(is --dcgm-url another node's dcgm-exporter?)")]
    kept = [r for r in results if r.check == CHECK and r.scope not in foreign]
    return [*others, *kept, CheckResult(
        status=names.STATUS_WARN, **common,
        message=f"{len(foreign)} GPUs of the dcgm-exporter page are not this node's ({named}): "
                f"not judged; only this node's {len({r.scope for r in own}) - len(foreign)} "
                "are")]
