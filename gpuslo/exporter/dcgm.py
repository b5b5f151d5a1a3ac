"""dcgm-exporter and DCGM evidence for `gpuslo inspect` and the `dcgm` check.

The entries registered in `gpuslo.exporter.inspect.KINDS` live here: `looks_like_metrics` /
`inspect_metrics` (dcgm-exporter `/metrics` pages), `looks_like_dcgmi` / `inspect_dcgmi`
(`dcgmi dmon` and `dcgmi health`) and `looks_like_exporter_log` / `inspect_exporter_log`. The work
is done in `dcgm_page` (parsing, MIG folding, sentinels, `GpuStatus`), `dcgm_staleness` (frozen
counters across scrapes), `dcgmi` (the command-line tools and logs) and `dcgm_http`
(`read_dcgm_page`, the HTTP edge). Health rules are `gpuslo.exporter.gpu_health.evaluate_gpu`,
shared with every other GPU source.
"""

from __future__ import annotations

from gpuslo import names
from gpuslo.exporter.dcgm_http import read_dcgm_page
from gpuslo.exporter.dcgm_page import (
    DcgmGpu,
    DcgmPage,
    gpu_status,
    looks_like_dcgm_page,
    parse_dcgm_page,
)
from gpuslo.exporter.dcgm_staleness import EnergyMark, energy_counters, stale_gpus, track_energy
from gpuslo.exporter.dcgmi import (
    inspect_dcgmi,
    inspect_exporter_log,
    looks_like_dcgmi,
    looks_like_exporter_log,
    xid_finding,
)
from gpuslo.exporter.gpu_health import evaluate_gpu
from gpuslo.exporter.inspect import InspectOptions
from gpuslo.verdict import Finding

__all__ = [
    "DcgmGpu",
    "DcgmPage",
    "EnergyMark",
    "energy_counters",
    "gpu_findings",
    "gpu_status",
    "inspect_dcgmi",
    "inspect_exporter_log",
    "inspect_metrics",
    "looks_like_dcgmi",
    "looks_like_exporter_log",
    "looks_like_metrics",
    "parse_dcgm_page",
    "read_dcgm_page",
    "stale_gpus",
    "track_energy",
]

KIND = "dcgm-metrics"


def looks_like_metrics(text: str) -> bool:
    """True for a dcgm-exporter page (exposition lines of `DCGM_FI_*` fields)."""
    return looks_like_dcgm_page(text)


def gpu_findings(gpu: DcgmGpu, options: InspectOptions, kind: str = KIND) -> list[Finding]:
    """Findings for one page GPU: its last Xid (when non-zero) and windowed Xid codes, classed by
    the Xid policy, and every problem `evaluate_gpu` finds in its `GpuStatus`. Zero NVLink
    bandwidth counters are traffic figures, never link-down evidence (corpus case 019)."""
    where = {"gpu": gpu.index or None, "uuid": gpu.uuid, "pci": gpu.pci_bus_id or None}
    codes = sorted({gpu.last_xid or 0, *gpu.xid_active} - {0})
    findings = [xid_finding(kind, code, options, family=gpu.family, **where) for code in codes]
    for problem in evaluate_gpu(gpu_status(gpu)):
        findings.append(
            Finding(
                kind=kind,
                class_=problem.class_,
                signal=problem.signal,
                reason=problem.reason,
                action=problem.action,
                message=problem.message,
                count=problem.count,
                links=list(problem.links) if problem.links else None,
                **where,
            )
        )
    return findings


def inspect_metrics(text: str, options: InspectOptions, source: str) -> list[Finding]:
    """`inspect` entry for a dcgm-exporter page: `gpus_seen` (count of GPU UUIDs, MIG instances
    folded) and `gpu_findings` per GPU. A page judges only what it shows: a field it lacks is no
    finding here (the live `dcgm` check reports missing families as unknown). Raises ParseError
    for text that is not exposition format."""
    page = parse_dcgm_page(text, source)
    if not page.gpus:
        return []
    models = sorted({gpu.model for gpu in page.gpus.values() if gpu.model})
    findings = [
        Finding(
            kind=KIND,
            class_=names.CLASS_OK,
            signal="gpus_seen",
            count=len(page.gpus),
            message=", ".join(models) or "GPU model not reported",
        )
    ]
    findings += missing_gpus(KIND, len(page.gpus), options.expect_gpus)
    for gpu in page.gpus.values():
        findings += gpu_findings(gpu, options)
    return findings


def missing_gpus(kind: str, seen: int, expected: int | None) -> list[Finding]:
    """A fatal `gpu_missing` finding (count = GPUs missing, as the nvidia-smi findings count
    them) when fewer GPUs are seen than `--expect-gpus`."""
    if expected is None or seen >= expected:
        return []
    return [
        Finding(
            kind=kind,
            class_=names.CLASS_FATAL,
            signal="gpu_missing",
            reason="gpu_missing",
            action=names.ACTION_REBOOT_NODE,
            count=expected - seen,
            message=f"{seen} of {expected} expected GPUs seen",
        )
    ]
