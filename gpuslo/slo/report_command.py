"""`gpuslo report`: the weekly goodput / usable-GPU-hours report.

    gpuslo report [--week 2026-W48 | --start T --end T]
                  (--data DIR | --trace FILE --trace-format stepfun|titan | --journals DIR
                   | --prometheus URL [--journals DIR])
                  [--nodes N --gpus-per-node G] [--slo FILE] [--price-per-gpu-hour X]
                  [--out DIR] [--format md,html,json]

Without a window (`--week`, `--start/--end`, or `week` in the SLO spec) the report covers the
whole span of its data. The previous window of the same length is computed too when the data
covers it (week-over-week section). Writes `report.md`, `report.html` and `report.json` into
`--out` (default `gpuslo-report/`), all or none (each to a temp file first, renamed only when
every format was written), and prints the headline numbers.
Errors (missing or malformed input, a window with no data) are typed `gpuslo.errors` errors that
the CLI prints as one line, exit 2; no output file is written then.

Sources (each returns a `gpuslo.slo.frames.Frames`): `--data` is a `gpuslo simulate` directory
(`simulate_io.read_simulation`); `--trace` uses `gpuslo.slo.traces.load_trace`; `--journals`
`gpuslo.slo.journal_source.load_journals`; `--prometheus` `gpuslo.slo.prometheus_source
.load_prometheus`.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime as dt
import importlib
import json
import re
from pathlib import Path

import pandas as pd

from gpuslo.errors import InputError, UsageError
from gpuslo.slo_spec import load_spec

FORMATS = ("md", "html", "json")


def configure(parser: argparse.ArgumentParser) -> None:
    """Arguments of `gpuslo report`."""
    window = parser.add_argument_group("window (default: the whole span of the data)")
    window.add_argument("--week", help="ISO week, e.g. 2026-W48 (Monday 00:00 UTC, 7 days)")
    window.add_argument("--start", help="window start, ISO 8601 (UTC when no offset)")
    window.add_argument("--end", help="window end, ISO 8601 (exclusive)")
    source = parser.add_argument_group("source (exactly one)")
    source.add_argument("--data", help="a `gpuslo simulate` output directory")
    source.add_argument("--trace", help="a fault-interval trace file")
    source.add_argument("--trace-format", choices=("stepfun", "titan"), help="format of --trace")
    source.add_argument("--journals", help="a directory of Recorder journals")
    source.add_argument("--prometheus", help="Prometheus-compatible query API base URL")
    parser.add_argument("--nodes", type=int, help="nodes in the fleet (inventory a trace lacks)")
    parser.add_argument("--gpus-per-node", type=int, help="GPUs per node (inventory a trace lacks)")
    parser.add_argument("--slo", help="SLO spec YAML (default: built-in objectives)")
    parser.add_argument("--price-per-gpu-hour", type=float, help="price of one GPU-hour, for the cost section")
    parser.add_argument("--out", default="gpuslo-report", help="output directory (default gpuslo-report)")
    parser.add_argument("--format", default="md,html,json", help="comma-separated: md, html, json")


def parse_week(text: str) -> tuple[pd.Timestamp, pd.Timestamp]:
    """`YYYY-Www` → [Monday 00:00 UTC, next Monday). Raises UsageError."""
    match = re.fullmatch(r"(\d{4})-W(\d{2})", text or "")
    try:
        if not match:
            raise ValueError
        day = dt.date.fromisocalendar(int(match.group(1)), int(match.group(2)), 1)
    except ValueError:
        raise UsageError(f"--week: not an ISO week like 2026-W48: {text!r}") from None
    start = pd.Timestamp(day).tz_localize("UTC")
    return start, start + pd.Timedelta(days=7)


def _time(text: str, flag: str) -> pd.Timestamp:
    try:
        stamp = pd.Timestamp(text)
    except ValueError:
        raise UsageError(f"{flag}: not an ISO 8601 time: {text!r}") from None
    return stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")


def window(args: argparse.Namespace, spec_week: str | None) -> tuple[pd.Timestamp | None, pd.Timestamp | None]:
    """The report window from the flags (or the spec's week); (None, None) = the data's span."""
    if args.week and (args.start or args.end):
        raise UsageError("give either --week or --start/--end, not both")
    if args.week:
        return parse_week(args.week)
    if bool(args.start) != bool(args.end):
        raise UsageError("--start and --end go together")
    if args.start:
        start, end = _time(args.start, "--start"), _time(args.end, "--end")
        if end <= start:
            raise UsageError(f"--end {args.end} is not after --start {args.start}")
        return start, end
    return parse_week(spec_week) if spec_week else (None, None)


def formats(text: str) -> list[str]:
    """The requested formats, validated. Raises UsageError."""
    chosen = [f.strip() for f in text.split(",") if f.strip()]
    bad = [f for f in chosen if f not in FORMATS]
    if bad or not chosen:
        raise UsageError(f"--format: unknown {', '.join(bad) or '(empty)'}; choose from {', '.join(FORMATS)}")
    return chosen


def load_frames(args: argparse.Namespace, start, end):
    """The source's `Frames`: exactly one of --data, --trace, --journals, --prometheus, or
    --prometheus with --journals (verdicts from Prometheus, job goodput from the journals).
    Raises UsageError for any other combination."""
    given = [flag for flag in ("data", "trace", "journals", "prometheus") if getattr(args, flag)]
    if len(given) != 1 and sorted(given) != ["journals", "prometheus"]:
        raise UsageError("give one source: --data, --trace, --journals or --prometheus "
                         "(--prometheus may be combined with --journals)")
    if args.trace and not args.trace_format:
        raise UsageError("--trace needs --trace-format stepfun|titan")
    for flag, value in (("--nodes", args.nodes), ("--gpus-per-node", args.gpus_per_node)):
        if value is not None and value < 1:
            raise UsageError(f"{flag} must be 1 or more, got {value}")
    if args.data:
        from gpuslo.slo.frames import Frames
        from gpuslo.slo.simulate_io import read_simulation

        frames, _, _ = read_simulation(args.data)
        return Frames(**frames, source=f"gpuslo simulate output {args.data}")
    if args.trace:
        return _call("traces", "load_trace", args.trace, args.trace_format,
                     nodes=args.nodes, gpus_per_node=args.gpus_per_node)
    journals = _call("journal_source", "load_journals", args.journals) if args.journals else None
    if not args.prometheus:
        return journals
    if start is None:
        raise UsageError("--prometheus needs a window: --week or --start/--end")
    frames = _call("prometheus_source", "load_prometheus", args.prometheus, start, end)
    if journals is None:
        return frames
    return dataclasses.replace(
        frames, job_events=journals.job_events, allocations=journals.allocations,
        cannot_fill={k: v for k, v in frames.cannot_fill.items() if k != "goodput"},
        source=f"{frames.source} + journals {args.journals}")


def _call(module: str, function: str, *args, **kwargs):
    try:
        loader = getattr(importlib.import_module(f"gpuslo.slo.{module}"), function)
    except (ImportError, AttributeError):
        raise UsageError(f"this build has no gpuslo.slo.{module}.{function} source") from None
    return loader(*args, **kwargs)


def compute(frames, start, end, spec) -> tuple[dict, dict | None]:
    """(this window's JSON twin, the previous window's or None). Raises InputError when the data
    holds no time at all or none inside the window."""
    from gpuslo.slo.engine import compute_week

    source = frames.source or "input"
    span = frames.span()
    if span is None:
        raise InputError(source, "the data holds no timestamps (empty trace or directory)")
    if start is not None and (end <= span[0] or start >= span[1]):
        raise InputError(source, f"no data in {_iso(start)} .. {_iso(end)}; the data covers "
                                 f"{_iso(span[0])} .. {_iso(span[1])}")
    current = compute_week(frames, start, end, spec).to_json_dict()
    previous = None
    if start is not None and span[0] <= start - (end - start):
        previous = compute_week(frames, start - (end - start), start, spec).to_json_dict()
    return current, previous


def _iso(stamp: pd.Timestamp) -> str:
    return stamp.isoformat().replace("+00:00", "Z")


def render(report, chosen: list[str]) -> dict[str, str]:
    """File name → text for each chosen format (deterministic)."""
    out = {}
    if "md" in chosen:
        from gpuslo.slo.report_markdown import render_markdown

        out["report.md"] = render_markdown(report)
    if "html" in chosen:
        from gpuslo.slo.report_html import render_html

        out["report.html"] = render_html(report)
    if "json" in chosen:
        out["report.json"] = json.dumps(report.document, sort_keys=True, indent=2, allow_nan=False) + "\n"
    return out


def run(args: argparse.Namespace) -> int:
    """Run `gpuslo report`: compute, render, write atomically, print the headline. Returns 0."""
    from gpuslo.files import write_all_atomic
    from gpuslo.slo.report import build_report
    from gpuslo.slo.report_markdown import headline

    spec = load_spec(args.slo)
    chosen = formats(args.format)
    price = args.price_per_gpu_hour if args.price_per_gpu_hour is not None else spec.price_per_gpu_hour
    if price is not None and price < 0:
        raise UsageError(f"--price-per-gpu-hour must be 0 or more, got {price}")
    start, end = window(args, spec.week)
    frames = load_frames(args, start, end)
    current, previous = compute(frames, start, end, spec)
    report = build_report(current, previous, price)
    texts = render(report, chosen)
    out = Path(args.out)
    try:  # all formats or none: a failed report.json leaves no new report.md behind
        write_all_atomic({out / name: text.encode("utf-8") for name, text in texts.items()})
    except OSError as error:
        raise InputError(error.filename or str(out), f"cannot write: {error.strerror or error}") from None
    print(f"gpuslo report: {current['start']} .. {current['end']} ({frames.source})")
    for label, value in headline(report.document):
        print(f"  {label}: {value}")
    print(f"  wrote: {', '.join(str(out / name) for name in texts)}")
    return 0
