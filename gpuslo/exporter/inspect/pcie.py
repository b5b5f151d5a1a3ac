"""`lspci -vv` findings for `gpuslo inspect`: parsed by `gpuslo.exporter.evidence.lspci`, judged
by `gpuslo.exporter.policy.pcie`."""

from __future__ import annotations

from gpuslo.exporter.evidence.lspci import looks_like_lspci, parse_lspci
from gpuslo.exporter.inspect.options import InspectOptions
from gpuslo.exporter.policy.pcie import lspci_findings
from gpuslo.verdict import Finding

__all__ = ["inspect_lspci", "looks_like_lspci"]


def inspect_lspci(text: str, options: InspectOptions, source: str) -> list[Finding]:
    """`inspect` entry for `lspci -vv` output (whole, one device, or an excerpt of one). Empty
    when it shows no NVIDIA device and no headerless excerpt (nothing recognised)."""
    return lspci_findings("lspci", parse_lspci(text, source), source)
