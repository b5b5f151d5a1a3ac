"""nvidia-smi, NVML and /proc/driver/nvidia findings for `gpuslo inspect`: the detectors and
inspectors registered in `inspect.registry.KINDS` (the detectors that combine parsers
live in `inspect.detectors`, so that detection loads no inspector; they are re-exported here).

The parsers live in `gpuslo.exporter.evidence.nvidia_smi`: `query` (`-q` text and `-q -x` XML),
`csv_output` (`--query-gpu`), `table` (the default table), `nvlink` (`nvlink -s`/`-e`) and `proc`
(/proc/driver/nvidia and NVML error messages). Each yields `GpuStatus` records that
`gpuslo.exporter.policy.gpu.evaluate_gpu` judges; `nvidia_smi_findings` turns them into findings.
Every inspector is pure: text, options and the source name in, findings out.
"""

from __future__ import annotations

import re

from gpuslo import names
from gpuslo.errors import ParseError
from gpuslo.exporter.evidence.nvidia_smi.csv_output import looks_like_csv, parse_csv
from gpuslo.exporter.evidence.nvidia_smi.listing import list_shape, parse_gpu_list
from gpuslo.exporter.evidence.nvidia_smi.nvlink import headerless_links, parse_nvlink
from gpuslo.exporter.evidence.nvidia_smi.proc import (
    looks_like_proc_driver,
    parse_nvml_errors,
    parse_proc_driver,
)
from gpuslo.exporter.evidence.nvidia_smi.query import parse_query, parse_xml
from gpuslo.exporter.evidence.nvidia_smi.table import looks_like_table, parse_table
from gpuslo.exporter.evidence.nvidia_smi.values import SmiReading
from gpuslo.exporter.inspect.detectors import (
    is_nvml_error_line,
    looks_like_nvlink_errors,
    looks_like_nvlink_status,
    looks_like_nvml_error,
    looks_like_query,
    looks_like_xml,
)
from gpuslo.exporter.inspect.nvidia_smi_findings import (
    findings_from_reading,
    gpu_findings,
    identity,
)
from gpuslo.verdict import Finding

__all__ = [
    "inspect_csv",
    "inspect_gpu_list",
    "inspect_nvlink_errors",
    "inspect_nvlink_status",
    "inspect_nvml_error",
    "inspect_proc_driver",
    "inspect_query",
    "inspect_table",
    "inspect_xml",
    "looks_like_csv",
    "looks_like_nvlink_errors",
    "looks_like_nvlink_status",
    "looks_like_nvml_error",
    "looks_like_proc_driver",
    "looks_like_query",
    "looks_like_table",
    "looks_like_xml",
    "parse_csv",
    "parse_nvlink",
    "parse_nvml_errors",
    "parse_proc_driver",
    "parse_query",
    "parse_table",
    "parse_xml",
]


def _inspect(kind: str, reading: SmiReading, options) -> list[Finding]:
    return findings_from_reading(kind, reading, options.expect_gpus)


def inspect_query(text: str, options, source: str) -> list[Finding]:
    """Findings for `nvidia-smi -q` text (see `nvidia_smi_query.parse_query`)."""
    return _inspect("nvidia-smi-q", parse_query(text, source), options)


def inspect_xml(text: str, options, source: str) -> list[Finding]:
    """Findings for `nvidia-smi -q -x` XML (see `nvidia_smi_query.parse_xml`)."""
    return _inspect("nvidia-smi-xml", parse_xml(text, source), options)


def inspect_csv(text: str, options, source: str) -> list[Finding]:
    """Findings for `--query-gpu` CSV; `options.csv_columns` names headerless columns."""
    return _inspect("smi-csv", parse_csv(text, source, options.csv_columns), options)


def inspect_table(text: str, options, source: str) -> list[Finding]:
    """Findings for the default nvidia-smi table, with `gpu_missing` against `expect_gpus`."""
    return _inspect("nvidia-smi-table", parse_table(text, source), options)


def _nvlink_findings(kind: str, reading: SmiReading) -> list[Finding]:
    out = []
    for gpu in reading.gpus:
        states = gpu.status.nvlink_states
        if states is None:
            continue
        up = sorted(link for link, active in states.items() if active)
        where = identity(gpu.status)
        if up:
            out.append(
                Finding(
                    kind=kind,
                    class_=names.CLASS_OK,
                    signal="nvlink_active",
                    links=up,
                    count=len(up),
                    message=f"{len(up)} NVLink links up",
                    line=gpu.line,
                    **where,
                )
            )
        elif not states:
            out.append(
                Finding(
                    kind=kind,
                    class_=names.CLASS_WARN,
                    signal="nvlink_inactive",
                    reason="nvlink_down",
                    message="no NVLink link active (none fitted, or all down)",
                    line=gpu.line,
                    **where,
                )
            )
    return out


def inspect_nvlink_status(text: str, options, source: str) -> list[Finding]:
    """Findings for `nvidia-smi nvlink -s`: `nvlink_inactive` (fatal, with the links) per GPU
    with a link down, `nvlink_active` inventory per GPU with links up."""
    reading = parse_nvlink(text, source)
    if headerless_links(text):
        # Link lines with no GPU header: one GPU's links, of a node whose GPUs the excerpt does
        # not show (no count against --expect-gpus, no inventory of an unnamed GPU).
        judged = [f for g in reading.gpus for f in gpu_findings("nvlink-status", g)]
        return judged + _nvlink_findings("nvlink-status", reading)
    return _inspect("nvlink-status", reading, options) + _nvlink_findings("nvlink-status", reading)


def inspect_nvlink_errors(text: str, options, source: str) -> list[Finding]:
    """Findings for `nvidia-smi nvlink -e`: `nvlink_errors` (warn, with the links) per GPU whose
    error counters are non-zero."""
    return _inspect("nvlink-errors", parse_nvlink(text, source), options)


def inspect_proc_driver(text: str, options, source: str) -> list[Finding]:
    """Findings for /proc/driver/nvidia/version (`driver_version`) and gpus/*/information
    (`gpus_seen`); `expect_gpus` applies only to the information files."""
    reading = parse_proc_driver(text, source)
    expect = options.expect_gpus if reading.gpus else None  # the version file lists no GPUs
    return driver_finding(reading) + findings_from_reading("proc-driver", reading, expect)


def inspect_gpu_list(text: str, options, source: str, kind: str = "nvml-error") -> list[Finding]:
    """Findings for `nvidia-smi -L`: `gpus_seen` per model, `gpu_inaccessible` for a GPU named in
    a device-handle error, `gpu_missing` against `expect_gpus` (the GPUs listed plus the ones
    that could not be opened are the GPUs present), and each other NVML error line. Raises
    ParseError naming the line of a line that is none of these."""
    reading = parse_gpu_list(text, source)
    findings = findings_from_reading(kind, SmiReading(gpus=reading.gpus), options.expect_gpus)
    for line, other in reading.errors:
        try:
            findings += _nvml_findings(kind, other, source, options, line - 1)
        except ParseError as error:
            raise ParseError(source, error.detail, line) from None
    return findings


def inspect_nvml_error(text: str, options, source: str) -> list[Finding]:
    """Findings for NVML error output. "Unable to determine the device handle" lines become
    `gpu_inaccessible` with the GPU's PCI address; `nvidia-smi -L` lines around them are read as
    `inspect_gpu_list` reads them."""
    if list_shape(text, is_nvml_error_line)[0]:
        return inspect_gpu_list(text, options, source)
    return _nvml_findings("nvml-error", text, source, options)


def _nvml_findings(kind: str, text: str, source: str, options, offset: int = 0) -> list[Finding]:
    version = re.search(r"NVML library version:\s*(\S+)", text)
    extra = {"nvml_version": version.group(1)} if version else {}
    out = []
    for error in parse_nvml_errors(text, source):
        count = options.expect_gpus if error.signal == "gpu_missing" else None
        out.append(
            Finding(
                kind=kind,
                class_=error.class_,
                signal=error.signal,
                reason=error.reason,
                action=error.action,
                message=error.text[:200],
                line=error.line + offset,
                count=count,
                pci=error.pci,
                gpu=error.gpu,
                extra=dict(extra),
            )
        )
    return out


def driver_finding(reading: SmiReading) -> list[Finding]:
    """The `driver_version` inventory finding (class ok) when the version is known."""
    if not reading.driver_version:
        return []
    return [
        Finding(
            kind="proc-driver",
            class_=names.CLASS_OK,
            signal="driver_version",
            message=f"NVIDIA driver {reading.driver_version}",
            extra={"driver_version": reading.driver_version},
        )
    ]
