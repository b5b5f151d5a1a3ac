"""`lspci` findings for `gpuslo inspect`: parsed by `gpuslo.exporter.evidence.lspci`, judged
by `gpuslo.exporter.policy.pcie`; the GPUs seen counted against `--expect-gpus`."""

from __future__ import annotations

from gpuslo import names
from gpuslo.exporter.evidence.lspci import looks_like_lspci, parse_lspci
from gpuslo.exporter.inspect.options import InspectOptions
from gpuslo.exporter.policy.gpu import gpus_missing
from gpuslo.exporter.policy.pcie import lspci_findings
from gpuslo.verdict import Finding

__all__ = ["inspect_lspci", "looks_like_lspci"]

KIND = "lspci"


def inspect_lspci(text: str, options: InspectOptions, source: str) -> list[Finding]:
    """`inspect` entry for `lspci -vv` output (whole, one device, or an excerpt of one) and
    `lspci [-nn]` listings: the policy's findings, one `gpus_seen` with the count of NVIDIA GPUs
    (and NVSwitches, in its message) and `gpu_missing` against `--expect-gpus`. Empty when it
    shows no NVIDIA device and no headerless excerpt (nothing recognised)."""
    devices = parse_lspci(text, source)
    findings = lspci_findings(KIND, devices, source)
    gpus = sum(d.is_gpu for d in devices)
    if not gpus:
        return findings
    switches = sum(d.is_nvswitch for d in devices)
    total = Finding(kind=KIND, class_=names.CLASS_OK, signal="gpus_seen", count=gpus,
                    message=f"lspci: {gpus} NVIDIA GPUs, {switches} NVSwitches on the PCI bus")
    problem = gpus_missing(gpus, options.expect_gpus)
    return [total, *([problem.finding(KIND)] if problem else []), *findings]
