"""The detectors of `gpuslo inspect`'s kinds that are not their parser's own (pure): each
`looks_like_*(text) -> bool` here combines parsers of `gpuslo.exporter.evidence`.

They live apart from their inspectors (`inspect.dcgm`, `inspect.nvidia_smi`,
`inspect.schedulers`, which re-export them) so that detection (`inspect.registry.detect_kinds`,
every detector on every file) imports the parsers only, never the policies and findings the
inspectors need: the inspector of the kind detected is imported when it runs (issue 30, the
start-up of `gpuslo inspect` on a kernel log).
"""

from __future__ import annotations

from gpuslo.errors import ParseError
from gpuslo.exporter.evidence.dcgm import dcgmi
from gpuslo.exporter.evidence.dcgm.diag import looks_like_diag
from gpuslo.exporter.evidence.dcgm.discovery import looks_like_discovery
from gpuslo.exporter.evidence.dcgm.links import looks_like_link_errors, looks_like_link_status
from gpuslo.exporter.evidence.dcgm.modules import looks_like_modules
from gpuslo.exporter.evidence.dcgm.page import looks_like_dcgm_page
from gpuslo.exporter.evidence.nvidia_smi import proc
from gpuslo.exporter.evidence.nvidia_smi.csv_output import looks_like_csv
from gpuslo.exporter.evidence.nvidia_smi.listing import has_listing, list_shape
from gpuslo.exporter.evidence.nvidia_smi.nvlink import looks_like_nvlink
from gpuslo.exporter.evidence.nvidia_smi.proc import parse_nvml_errors
from gpuslo.exporter.evidence.nvidia_smi.query import parse_query
from gpuslo.exporter.evidence.nvidia_smi.table import looks_like_table
from gpuslo.exporter.evidence.slurm import GRES_SHORTFALL, looks_like_scontrol_node
from gpuslo.exporter.inspect.split import without_prompt

__all__ = [
    "is_nvml_error_line",
    "looks_like_dcgmi",
    "looks_like_metrics",
    "looks_like_nvlink_errors",
    "looks_like_nvlink_status",
    "looks_like_nvml_error",
    "looks_like_query",
    "looks_like_slurm_node",
    "looks_like_xml",
]


def looks_like_metrics(text: str) -> bool:
    """True for a dcgm-exporter page (exposition lines of `DCGM_FI_*` fields)."""
    return looks_like_dcgm_page(text)


def looks_like_dcgmi(text: str) -> bool:
    """True for the outputs of `dcgmi dmon`, `health -c`, `diag`, `nvlink -s` / `-e`,
    `modules -l` and `discovery -l`."""
    return (
        dcgmi.looks_like_dcgmi(text)
        or looks_like_discovery(text)
        or looks_like_modules(text)
        or looks_like_diag(text)
        or looks_like_link_status(text)
        or looks_like_link_errors(text)
    )


def looks_like_xml(text: str) -> bool:
    """An `nvidia-smi -q -x` document: `<nvidia_smi_log>` near the start."""
    return "<nvidia_smi_log" in text[:4096]


def looks_like_query(text: str) -> bool:
    """`nvidia-smi -q` text, whole or partial: the NVSMI LOG banner, a device-handle error, or
    at least one field of a section only `-q` prints (ECC Errors, Remapped Rows, Fabric, ...);
    not `nvidia-smi -L`'s GPU list with such an error in it."""
    head = text[:65536]
    if "==NVSMI LOG==" in head:
        return True
    if has_listing(head):
        return False
    try:
        reading = parse_query(head, "<detect>")
    except ParseError:
        return True  # a known -q field with a bad value: -q text; its inspector names the line
    if reading.gpus and all(g.status.accessible is False for g in reading.gpus):
        # only device-handle errors: every nvidia-smi output prints them in place of a GPU,
        # so inside a table or CSV they are that output's, not a -q of their own
        return not (looks_like_csv(head) or looks_like_table(head))
    return bool(reading.gpus)


def looks_like_nvlink_status(text: str) -> bool:
    """`nvidia-smi nvlink -s`: GPU headers and `Link N: <speed>` / `<inactive>` lines."""
    return looks_like_nvlink(text)[0]


def looks_like_nvlink_errors(text: str) -> bool:
    """`nvidia-smi nvlink -e`: GPU headers and per-link error counters."""
    return looks_like_nvlink(text)[1]


def is_nvml_error_line(line: str) -> bool:
    """True when `line` is an NVML error message (`proc.parse_nvml_errors` reads it)."""
    try:
        return bool(parse_nvml_errors(line, "<detect>"))
    except ParseError:
        return False


def looks_like_nvml_error(text: str) -> bool:
    """What NVML itself prints: error messages (every line an NVML error, and not only
    device-handle errors, which alone are `nvidia-smi -q`'s output for that GPU), or the GPU
    list of `nvidia-smi -L` with or without error lines among its GPU lines; also below the
    command that printed them (`split.without_prompt`: `nvidia-smi` pasted above its one-line
    failure, fresh16 case 1804), which the reader skips the same way."""
    if list_shape(text, is_nvml_error_line)[0] or proc.looks_like_nvml_error(text):
        return True
    bare = without_prompt(text[:65536]) if len(text) <= 65536 else None
    return bare is not None and proc.looks_like_nvml_error(bare)


def looks_like_slurm_node(text: str) -> bool:
    """`scontrol show node` text, or any text holding Slurm's GRES shortfall reason for GPUs
    (`sinfo -R`, a slurmctld log)."""
    if looks_like_scontrol_node(text):
        return True
    return any(match.group(1) == "gpu" for match in GRES_SHORTFALL.finditer(text[:200_000]))
