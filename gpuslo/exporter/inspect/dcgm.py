"""dcgm-exporter and DCGM findings for `gpuslo inspect`.

The entries registered in `gpuslo.exporter.inspect.kinds.KINDS`: `looks_like_metrics` /
`inspect_metrics` (dcgm-exporter `/metrics` pages), `looks_like_dcgmi` / `inspect_dcgmi`
(`dcgmi dmon` and `dcgmi health`) and `looks_like_exporter_log` / `inspect_exporter_log`. Parsing
is `gpuslo.exporter.evidence.dcgm` (page, dcgmi); one page GPU is judged by
`gpuslo.exporter.policy.dcgm.gpu_findings`, shared with the live `dcgm` check.
"""

from __future__ import annotations

from gpuslo import names
from gpuslo.exporter.evidence.dcgm.dcgmi import (
    HOST_ENGINE_GONE,
    looks_like_dcgmi,
    looks_like_exporter_log,
    parse_dmon,
    parse_health,
)
from gpuslo.exporter.evidence.dcgm.page import looks_like_dcgm_page, parse_dcgm_page
from gpuslo.exporter.inspect.options import InspectOptions
from gpuslo.exporter.policy.dcgm import gpu_findings
from gpuslo.exporter.policy.xid import xid_finding
from gpuslo.verdict import Finding

__all__ = [
    "inspect_dcgmi",
    "inspect_exporter_log",
    "inspect_metrics",
    "looks_like_dcgmi",
    "looks_like_exporter_log",
    "looks_like_metrics",
]

KIND = "dcgm-metrics"


def looks_like_metrics(text: str) -> bool:
    """True for a dcgm-exporter page (exposition lines of `DCGM_FI_*` fields)."""
    return looks_like_dcgm_page(text)


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
        findings += gpu_findings(gpu, options.policy, options.gpu_family)
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


def inspect_dcgmi(text: str, options: InspectOptions, source: str) -> list[Finding]:
    """`inspect` entry for `dcgmi dmon`/`dcgmi health` output: an Xid finding per GPU whose XIDER
    is non-zero, `gpus_seen` from the dmon rows, and the `health_report` finding."""
    findings = []
    rows = [row for row in parse_dmon(text) if row["entity"] == "GPU"]
    for row in rows:
        xid = row.get("XIDER", "")
        if xid.isascii() and xid.isdigit() and int(xid) > 0:
            findings.append(
                xid_finding(
                    "dcgmi", int(xid), options.policy, family=options.gpu_family, gpu=row["id"]
                )
            )
    if rows:
        seen = len({row["id"] for row in rows})
        findings.append(
            Finding(kind="dcgmi", class_=names.CLASS_OK, signal="gpus_seen", count=seen)
        )
        if options.expect_gpus is not None and seen < options.expect_gpus:
            findings.append(
                Finding(
                    kind="dcgmi",
                    class_=names.CLASS_FATAL,
                    signal="gpu_missing",
                    reason="gpu_missing",
                    action=names.ACTION_REBOOT_NODE,
                    count=options.expect_gpus - seen,
                    message=f"{seen} of {options.expect_gpus} expected GPUs seen",
                )
            )
    health = parse_health(text, source)
    if health is not None:
        findings.append(
            Finding(
                kind="dcgmi",
                class_=HEALTH_CLASS.get(health.lower(), names.CLASS_UNKNOWN),
                signal="health_report",
                message=f"dcgmi health overall: {health}",
            )
        )
    return findings


def inspect_exporter_log(text: str, options: InspectOptions, source: str) -> list[Finding]:
    """`inspect` entry for dcgm-exporter logs: one `source_stale` finding (unknown, layer
    observability, `events` = lines) when the log shows the host engine gone. A log that shows
    no such line gives no finding (a log alone cannot show the GPUs healthy)."""
    hits = [
        n for n, line in enumerate(text.splitlines(), 1) if HOST_ENGINE_GONE.search(line[:4096])
    ]
    if not hits:
        return []
    return [
        Finding(
            kind="dcgm-exporter-log",
            class_=names.CLASS_UNKNOWN,
            signal="source_stale",
            reason="stale_data",
            layer=names.LAYER_OBSERVABILITY,
            events=len(hits),
            line=hits[0],
            message="dcgm-exporter lost its DCGM host engine: its metrics are stale or absent",
        )
    ]


HEALTH_CLASS = {
    "healthy": names.CLASS_OK,
    "warning": names.CLASS_WARN,
    "failure": names.CLASS_FATAL,
}
