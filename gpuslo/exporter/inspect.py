"""`gpuslo inspect`: triage captured evidence as an on-call engineer pastes it.

Each evidence module registers the kinds it reads in `KINDS` below: a detector
(`looks_like(text) -> bool`, pure) and an inspector (`inspect(text, options, source) ->
list[Finding]`, pure). This module reads the files (the only I/O), detects the kind when `--kind`
is not given, and folds the findings of every file into one verdict (the worst).

One file may hold several kinds (an on-call engineer pastes dmesg and `nvidia-smi -q` together):
`inspect_parts.split_evidence` cuts it into parts; every kind whose detector accepts a part reads
it, and the findings of all parts are merged. A part nothing recognises is `unknown`.

Fail closed: a file that cannot be read, or whose text no parser recognises, yields an `unknown`
finding (`nothing_recognised`, layer observability), never `healthy`.
"""

from __future__ import annotations

import argparse
import importlib
import json
import sys
from collections.abc import Callable, Sequence
from dataclasses import dataclass, replace
from pathlib import Path

from gpuslo import names
from gpuslo.errors import InputError, ParseError, UsageError
from gpuslo.exporter.inspect_parts import split_evidence
from gpuslo.verdict import Finding, verdict_from_findings, worst_verdict

# Read at most this many bytes of one evidence file; more is reported, not silently cut.
MAX_INPUT_BYTES = 256 * 1024 * 1024


@dataclass(frozen=True)
class InspectOptions:
    """Facts a user passes along with the evidence.

    Attributes:
        gpu_family: GPU family for the Xid policy (`names.GPU_FAMILIES`), None to infer it.
        expect_gpus: GPUs the node should have, None when unknown.
        expect_network_devices: network devices expected: a count, or the device names.
        expect_efa_devices: EFA devices expected (fi_info rdm domains, sysfs devices).
        csv_columns: column names of headerless `nvidia-smi --query-gpu` CSV.
        policy_path: operator Xid policy overlay (YAML) on top of the packaged policy.
    """

    gpu_family: str | None = None
    expect_gpus: int | None = None
    expect_network_devices: int | tuple[str, ...] | None = None
    expect_efa_devices: int | None = None
    csv_columns: tuple[str, ...] | None = None
    policy_path: str | None = None


Inspector = Callable[[str, InspectOptions, str], list[Finding]]
Detector = Callable[[str], bool]

# kind -> (module, detector function, inspector function). Detection tries kinds in this order,
# most specific first; the kernel log is last because its detector is the loosest.
KINDS: dict[str, tuple[str, str, str]] = {
    "nvml-error": ("gpuslo.exporter.nvidia_smi", "looks_like_nvml_error", "inspect_nvml_error"),
    "dcgm-exporter-log": ("gpuslo.exporter.dcgm", "looks_like_exporter_log", "inspect_exporter_log"),
    "dcgm-metrics": ("gpuslo.exporter.dcgm", "looks_like_metrics", "inspect_metrics"),
    "dcgmi": ("gpuslo.exporter.dcgm", "looks_like_dcgmi", "inspect_dcgmi"),
    "nvidia-smi-xml": ("gpuslo.exporter.nvidia_smi", "looks_like_xml", "inspect_xml"),
    "nvidia-smi-q": ("gpuslo.exporter.nvidia_smi", "looks_like_query", "inspect_query"),
    "nvidia-smi-table": ("gpuslo.exporter.nvidia_smi", "looks_like_table", "inspect_table"),
    "nvlink-status": ("gpuslo.exporter.nvidia_smi", "looks_like_nvlink_status", "inspect_nvlink_status"),
    "nvlink-errors": ("gpuslo.exporter.nvidia_smi", "looks_like_nvlink_errors", "inspect_nvlink_errors"),
    "smi-csv": ("gpuslo.exporter.nvidia_smi", "looks_like_csv", "inspect_csv"),
    "proc-driver": ("gpuslo.exporter.nvidia_smi", "looks_like_proc_driver", "inspect_proc_driver"),
    "ibstat": ("gpuslo.exporter.fabric", "looks_like_ibstat", "inspect_ibstat"),
    "ibstatus": ("gpuslo.exporter.fabric", "looks_like_ibstatus", "inspect_ibstatus"),
    "fi-info": ("gpuslo.exporter.fabric", "looks_like_fi_info", "inspect_fi_info"),
    "ibdev2netdev": ("gpuslo.exporter.fabric", "looks_like_ibdev2netdev", "inspect_ibdev2netdev"),
    "kernel-log": ("gpuslo.exporter.kernel_log", "looks_like_kernel_log", "inspect_kernel_log"),
}


def _function(kind: str, index: int) -> Callable:
    module_name, *functions = KINDS[kind]
    return getattr(importlib.import_module(module_name), functions[index])


def detect_kind(text: str) -> str | None:
    """The first kind in `KINDS` whose detector accepts `text`, or None."""
    kinds = detect_kinds(text)
    return kinds[0] if kinds else None


def detect_kinds(text: str) -> tuple[str, ...]:
    """Every kind in `KINDS` whose detector accepts `text`, in `KINDS` order."""
    return tuple(kind for kind in KINDS if _function(kind, 0)(text))


def unknown_finding(kind: str, message: str, reason: str = "parse_error") -> Finding:
    """An `unknown` finding for evidence that could not be read or told apart."""
    return Finding(
        kind=kind, class_=names.CLASS_UNKNOWN, signal="nothing_recognised", reason=reason,
        message=message,
    )  # fmt: skip


def _in_file(finding: Finding, numbers: Sequence[int] | None) -> Finding:
    """`finding` with its part-relative `line` made the file line (`numbers[line - 1]`)."""
    if numbers is None or finding.line is None or not 0 < finding.line <= len(numbers):
        return finding
    return replace(finding, line=numbers[finding.line - 1])


def _parse_error(error: ParseError, source: str, numbers: Sequence[int] | None) -> str:
    """The error's message with its line made the file line."""
    if numbers is None or not error.line or error.line > len(numbers):
        return str(error)
    return str(ParseError(source, error.detail, numbers[error.line - 1], error.field))


def _read(kinds: Sequence[str], text: str, source: str, options: InspectOptions,
          numbers: Sequence[int] | None = None) -> list[Finding]:  # fmt: skip
    """Findings of every kind in `kinds` reading `text`; `numbers` maps the text's lines to the
    file's (None: the whole file). The first kind must find something (else nothing recognised,
    unknown); another kind that finds nothing adds nothing. A ParseError is an unknown finding
    naming the file line."""
    findings: list[Finding] = []
    for position, kind in enumerate(kinds):
        try:
            found = _function(kind, 1)(text, options, source)
        except ParseError as error:
            found = [unknown_finding(kind, _parse_error(error, source, numbers))]
        if not found and position == 0:
            found = [unknown_finding(kind, f"{source}: nothing recognisable as {kind}")]
        findings += [_in_file(finding, numbers) for finding in found]
    return findings


def inspect_text(text: str, source: str, options: InspectOptions, kind: str | None = None) -> list[Finding]:
    """Findings for one piece of evidence (pure). `kind` None means detect it: every kind whose
    detector accepts the text reads it, part by part when the text holds several kinds
    (`split_evidence`).

    Evidence (or a part of it) nothing recognises gives a `nothing_recognised` unknown finding
    naming its lines; a `ParseError` from a parser becomes an unknown finding naming the line.
    """
    if not text.strip():
        return [unknown_finding(kind or "unknown", f"{source}: empty input", reason="no_data")]
    if kind is not None:
        return _read((kind,), text, source, options)
    parts = split_evidence(text, detect_kinds)
    if len(parts) == 1:
        kinds = detect_kinds(text)
        if not kinds:
            return [unknown_finding("unknown", f"{source}: no parser recognises this evidence")]
        return _read(kinds, text, source, options)
    findings: list[Finding] = []
    for part in parts:
        if part.kinds:
            findings += _read(part.kinds, part.text, source, options, part.numbers)
        else:
            findings.append(unknown_finding("unknown", (
                f"{source}: lines {part.numbers[0]}-{part.numbers[-1]} ({len(part.lines)} lines): "
                "no parser recognises this part of the evidence"
            )))  # fmt: skip
    return findings


def read_evidence(path: str) -> str:
    """Read one evidence file as text (undecodable bytes replaced). `-` reads standard input.

    Raises InputError when the path is missing, a directory, unreadable or over
    `MAX_INPUT_BYTES`.
    """
    if path == "-":
        return sys.stdin.buffer.read(MAX_INPUT_BYTES + 1).decode("utf-8", errors="replace")
    file = Path(path)
    try:
        if file.is_dir():
            raise InputError(path, "is a directory, not an evidence file")
        with file.open("rb") as handle:
            data = handle.read(MAX_INPUT_BYTES + 1)
    except FileNotFoundError:
        raise InputError(path, "no such file") from None
    except PermissionError:
        raise InputError(path, "permission denied") from None
    except OSError as error:
        raise InputError(path, error.strerror or str(error)) from None
    if len(data) > MAX_INPUT_BYTES:
        raise InputError(path, f"larger than {MAX_INPUT_BYTES // (1024 * 1024)} MiB; split it")
    return data.decode("utf-8", errors="replace")


def inspect_files(paths: Sequence[str], options: InspectOptions, kind: str | None = None) -> dict:
    """Inspect every file; returns `{"verdict": ..., "findings": [dict, ...], "files": [...]}`.

    Each finding dict carries `file`. The verdict is the worst over the files. Raises
    UsageError when `-` (standard input, which can be read once) is named more than once.
    """
    if list(paths).count("-") > 1:
        raise UsageError("- (standard input) is named more than once; it can be read only once")
    results, verdicts, all_findings = [], [], []
    for path in paths:
        findings = inspect_text(read_evidence(path), path, options, kind)
        verdict = verdict_from_findings(findings)
        verdicts.append(verdict)
        kinds = "+".join(dict.fromkeys(f.kind for f in findings))  # a mixed file names each kind
        results.append({"file": path, "kind": kinds, "verdict": verdict})
        for finding in findings:
            all_findings.append({**finding.to_dict(), "file": path})
    return {
        "verdict": worst_verdict(verdicts),
        "files": results,
        "gpus": gpu_inventory(all_findings),
        "findings": all_findings,
    }


def _pci_key(pci: str) -> tuple[int, int, int] | str:
    """(domain, bus, device) of a PCI address in any width (`0000:b3:00`, `00000000:B3:00.0`)."""
    parts = pci.split(".")[0].split(":")
    try:
        domain, bus, device = (["0"] * (3 - len(parts)) + parts)[-3:]
        return (int(domain, 16), int(bus, 16), int(device, 16))
    except ValueError:
        return pci


def gpu_inventory(findings: Sequence[dict]) -> list[dict]:
    """The distinct GPUs the evidence shows, merged across files and kinds by PCI address (else
    UUID): each `{"pci", "uuid", "gpu", "model", "family"}` with what any file reported."""
    merged: dict[object, dict] = {}
    for finding in findings:
        if finding.get("signal") != "gpus_seen" or not (finding.get("pci") or finding.get("uuid")):
            continue
        key = _pci_key(finding["pci"]) if finding.get("pci") else finding["uuid"]
        entry = merged.setdefault(key, {})
        for field in ("pci", "uuid", "gpu", "model", "family"):
            if finding.get(field) not in (None, "", "unknown") and field not in entry:
                entry[field] = finding[field]
    return sorted(merged.values(), key=lambda gpu: (gpu.get("gpu", ""), gpu.get("pci", "")))


# ------------------------------------------------------------------------------------------------
# CLI
# ------------------------------------------------------------------------------------------------


def _network_devices(value: str) -> int | tuple[str, ...]:
    if value.isdigit():
        return int(value)
    devices = tuple(part.strip() for part in value.split(",") if part.strip())
    if not devices:
        raise argparse.ArgumentTypeError("give a count or device names separated by commas")
    return devices


def configure(parser: argparse.ArgumentParser) -> None:
    """Add `gpuslo inspect`'s arguments."""
    parser.add_argument("files", nargs="+", metavar="FILE", help="evidence files (- for stdin)")
    parser.add_argument("--kind", choices=sorted(KINDS), help="evidence kind (detected if omitted)")
    parser.add_argument("--gpu-family", choices=names.GPU_FAMILIES, help="GPU family for the Xid policy")
    parser.add_argument("--expect-gpus", type=int, metavar="N", help="GPUs the node should have")
    parser.add_argument(
        "--expect-network-devices", type=_network_devices, metavar="N|NAME,...",
        help="InfiniBand/EFA devices expected: a count or names",
    )  # fmt: skip
    parser.add_argument("--expect-efa-devices", type=int, metavar="N", help="EFA devices expected")
    parser.add_argument(
        "--csv-columns", metavar="NAME,...",
        help="columns of headerless nvidia-smi --query-gpu output",
    )  # fmt: skip
    parser.add_argument("--policy", metavar="FILE", help="operator Xid policy overlay (YAML)")
    parser.add_argument("--format", choices=("text", "json"), default="text")


def options_from_args(args: argparse.Namespace) -> InspectOptions:
    """Build InspectOptions from parsed arguments; raises UsageError on contradictions."""
    for name in ("expect_gpus", "expect_efa_devices"):
        value = getattr(args, name)
        if value is not None and value < 0:
            raise UsageError(f"--{name.replace('_', '-')} must be 0 or more")
    columns = None
    if args.csv_columns is not None:
        from gpuslo.exporter.nvidia_smi_csv import check_columns

        columns = check_columns([c for c in args.csv_columns.split(",") if c.strip()])
    if args.policy:
        from gpuslo.exporter.xid_policy import load_policy

        load_policy(args.policy)  # validate early: a broken overlay is a usage error
    return InspectOptions(
        gpu_family=args.gpu_family,
        expect_gpus=args.expect_gpus,
        expect_network_devices=args.expect_network_devices,
        expect_efa_devices=args.expect_efa_devices,
        csv_columns=columns,
        policy_path=args.policy,
    )


_TEXT_COLUMNS = ("class", "kind", "what", "where", "events", "action", "message")


def _what(finding: dict) -> str:
    if "xid" in finding:
        return f"Xid {finding['xid']}" + (f" (after Xid {finding['caused_by']})" if "caused_by" in finding else "")
    if "sxid" in finding:
        return f"SXid {finding['sxid']}"
    return finding.get("signal", "")


def _where(finding: dict) -> str:
    parts = [finding.get(key) for key in ("gpu", "pci", "device", "uuid") if finding.get(key) is not None]
    if finding.get("links"):
        parts.append("links " + ",".join(str(link) for link in finding["links"]))
    return " ".join(str(part) for part in parts)


def render_text(report: dict) -> str:
    """A short table a person reads in five seconds: the verdict, then one row per finding,
    problems first."""
    order = {c: i for i, c in enumerate(("fatal", "unknown", "warn", "contained", "secondary", "application", "noise", "ok"))}
    rows = []
    for f in sorted(report["findings"], key=lambda f: order.get(f.get("class"), 99)):
        count = f.get("events", f.get("count", ""))
        message = str(f.get("message", "")).replace("\n", " ")
        rows.append((f.get("class", ""), f.get("kind", ""), _what(f), _where(f), str(count), f.get("action", ""), message[:80]))
    widths = [max(len(str(r[i])) for r in [_TEXT_COLUMNS, *rows]) for i in range(len(_TEXT_COLUMNS))]
    lines = [f"verdict: {report['verdict']}  ({len(report['files'])} file(s), {len(rows)} finding(s))"]
    gpus = report.get("gpus", [])
    if gpus:
        lines.append(f"GPUs seen: {len(gpus)}")
        for gpu in gpus:
            model = gpu.get("model", "model not shown")
            family = gpu.get("family", "family unknown")
            where = " ".join(str(gpu[k]) for k in ("pci", "uuid") if k in gpu)
            lines.append(f"  GPU {gpu.get('gpu', '?')}: {model} ({family}) {where}")
    lines.append("")
    for row in [_TEXT_COLUMNS, *rows]:
        lines.append("  ".join(str(cell).ljust(width) for cell, width in zip(row, widths, strict=True)).rstrip())
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    """Exit 0 when healthy, 1 when unhealthy or unknown (usage/input errors raise → 2)."""
    options = options_from_args(args)
    report = inspect_files(args.files, options, args.kind)
    if args.format == "json":
        print(json.dumps(report, indent=2, sort_keys=True))
    else:
        print(render_text(report))
    return 0 if report["verdict"] == names.VERDICT_HEALTHY else 1
