"""`gpuslo inspect`: triage captured evidence and print findings and a verdict. Its arguments are
`gpuslo.cli.inspect_args` (imported alone for `--help`).

Exit 0 when healthy, 1 when unhealthy or unknown; usage and input errors raise (exit 2).
"""

from __future__ import annotations

import argparse
import json
import shutil
import sys
import textwrap

from gpuslo import names
from gpuslo.errors import UsageError
from gpuslo.exporter.evidence.nvidia_smi.csv_columns import check_columns
from gpuslo.exporter.inspect.kinds import inspect_files
from gpuslo.exporter.inspect.options import InspectOptions
from gpuslo.exporter.policy.xid import load_policy


def options_from_args(args: argparse.Namespace) -> InspectOptions:
    """Build InspectOptions from parsed arguments; raises UsageError on contradictions."""
    for name in ("expect_gpus", "expect_efa_devices"):
        value = getattr(args, name)
        if value is not None and value < 0:
            raise UsageError(f"--{name.replace('_', '-')} must be 0 or more")
    columns = None
    if args.csv_columns is not None:
        columns = check_columns([c for c in args.csv_columns.split(",") if c.strip()])
    return InspectOptions(
        gpu_family=args.gpu_family,
        expect_gpus=args.expect_gpus,
        expect_network_devices=args.expect_network_devices,
        expect_efa_devices=args.expect_efa_devices,
        csv_columns=columns,
        policy=load_policy(args.policy),  # a broken overlay is an error here, at the start
    )


_TEXT_COLUMNS = ("class", "kind", "what", "where", "events", "action", "message")


def _what(finding: dict) -> str:
    if "xid" in finding:
        return f"Xid {finding['xid']}" + (
            f" (after Xid {finding['caused_by']})" if "caused_by" in finding else ""
        )
    if "sxid" in finding:
        return f"SXid {finding['sxid']}"
    if "message_id" in finding and finding["message_id"] != finding.get("signal"):
        return f"{finding.get('signal', '')} ({finding['message_id']})"
    if "test" in finding:
        return f"{finding.get('signal', '')} ({finding['test']})"
    return finding.get("signal", "")


def _where(finding: dict) -> str:
    keys = ("host", "gpu", "pci", "device", "uuid")
    parts = [finding.get(key) for key in keys if finding.get(key) is not None]
    if finding.get("links"):
        parts.append("links " + ",".join(str(link) for link in finding["links"]))
    return " ".join(str(part) for part in parts)


def render_text(report: dict, width: int | None = None) -> str:
    """A short table a person reads in five seconds: the verdict, then one row per finding,
    problems first. The message, last, is never cut (it is the line that justifies the
    verdict): whole on one line, or, given the terminal's `width` in columns, wrapped under its
    own column (at least `_MIN_MESSAGE` columns wide)."""
    order = {
        c: i
        for i, c in enumerate(
            ("fatal", "unknown", "warn", "contained", "secondary", "application", "noise", "ok")
        )
    }
    rows = []
    for f in sorted(report["findings"], key=lambda f: order.get(f.get("class"), 99)):
        count = f.get("events", f.get("count", ""))
        message = str(f.get("message", "")).replace("\n", " ")
        rows.append(
            (
                f.get("class", ""),
                f.get("kind", ""),
                _what(f),
                _where(f),
                str(count),
                f.get("action", ""),
                message,
            )
        )
    widths = [
        max(len(str(r[i])) for r in [_TEXT_COLUMNS, *rows]) for i in range(len(_TEXT_COLUMNS) - 1)
    ]
    lines = [
        f"verdict: {report['verdict']}  ({len(report['files'])} file(s), {len(rows)} finding(s))"
    ]
    gpus = report.get("gpus", [])
    if gpus:
        hosts = {gpu["host"] for gpu in gpus if gpu.get("host")}
        on = f" on {len(hosts)} hosts ({', '.join(sorted(hosts))})" if len(hosts) > 1 else ""
        lines.append(f"GPUs seen: {len(gpus)}{on}{_unjudged(report['findings'], len(gpus))}")
        for gpu in gpus:
            model = gpu.get("model", "model not shown")
            family = gpu.get("family", "family unknown")
            where = " ".join(str(gpu[k]) for k in ("pci", "uuid", "host") if k in gpu)
            lines.append(f"  GPU {gpu.get('gpu', '?')}: {model} ({family}) {where}")
    lines.append("")
    indent = sum(widths) + 2 * len(widths)
    for row in [_TEXT_COLUMNS, *rows]:
        head = "".join(str(cell).ljust(w) + "  " for cell, w in zip(row, widths, strict=False))
        lines += _wrapped(head, str(row[-1]), indent, width)
    return "\n".join(lines)


def _unjudged(findings: list[dict], seen: int) -> str:
    """' (of N attached: ...)' when a `gpus_not_shown` finding says the output shows fewer GPUs
    than it counts, so the headline never reads as the node's verdict; else ''."""
    hidden = sum(f.get("count", 0) for f in findings if f.get("signal") == "gpus_not_shown")
    if not hidden:
        return ""
    return f" of {seen + hidden} attached (the verdict covers only the GPUs shown)"


_MIN_MESSAGE = 40


def _wrapped(head: str, message: str, indent: int, width: int | None) -> list[str]:
    """One table row: `head` (the padded cells) then the message, whole or wrapped to `width`
    with its continuation lines under the message column."""
    if width is None or not message or len(head) + len(message) <= width:
        return [(head + message).rstrip()]
    parts = textwrap.wrap(message, max(width - indent, _MIN_MESSAGE), break_on_hyphens=False)
    return [(head + parts[0]).rstrip()] + [" " * indent + part for part in parts[1:]]


def run(args: argparse.Namespace) -> int:
    """Exit 0 when healthy, 1 when unhealthy or unknown (usage/input errors raise → 2)."""
    options = options_from_args(args)
    report = inspect_files(args.files, options, args.kind)
    if args.format == "json":
        print(json.dumps(report, indent=2, sort_keys=True))
    else:
        width = shutil.get_terminal_size().columns if sys.stdout.isatty() else None
        print(render_text(report, width))
    return 0 if report["verdict"] == names.VERDICT_HEALTHY else 1
