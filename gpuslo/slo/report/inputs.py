"""The steps of the report pipeline (`gpuslo.slo.report.pipeline.build_report` calls them in
order), as plain functions: the window, the formats, the source's `Frames`, this window's and
the previous window's results, and the rendered files.

Without a window (a week, start/end, or `week` in the SLO spec) the report covers the whole
span of its data. The previous window of the same length is computed too when the data covers
it (week-over-week section). Errors (missing or malformed input, a window with no data) are
typed `gpuslo.errors` errors naming the flag or file; the CLI prints them as one line, exit 2.

Sources (each returns a `gpuslo.slo.frames.Frames`): a `gpuslo simulate` directory
(`gpuslo.slo.simulate.reading.read_simulation`), a fault trace (`gpuslo.slo.sources.traces`),
Recorder journals (`gpuslo.slo.sources.journals`), a Prometheus API
(`gpuslo.slo.sources.clusters.load_api`: one cluster's Prometheus,
`gpuslo.slo.sources.prometheus`, or a global store holding several clusters, told apart by
their `cluster` label, which gives the fleet and each cluster's frames, and `per_cluster` their
rows), Prometheus for verdicts with journals for job goodput, or the logs a
training job printed (`gpuslo.slo.sources.training_logs`, a source of its own). Each source's
loader is imported when that source is read (`LAZY_LOADERS`), and the HTML renderer (with
its charts) when HTML is asked for (`RENDERERS`): a report from files loads no HTTP client,
trace parser or training-log reader, and a Markdown or JSON report no chart code.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import importlib
import json
import re
from collections.abc import Callable

import pandas as pd

from gpuslo.errors import InputError, UsageError
from gpuslo.slo.engine import WeeklyResult, compute_week
from gpuslo.slo.frames import Frames, iso_utc
from gpuslo.slo.report.clusters import cluster_rows
from gpuslo.slo.report.markdown import render_markdown
from gpuslo.slo.report.model import Report
from gpuslo.slo.sources.limits import DEFAULT_MAX_SAMPLES, DEFAULT_TIMEOUT_S
from gpuslo.slo_spec import SloSpec

FORMATS = ("md", "html", "json")
# source (a `Sources` field) -> (module, function) reading it, imported only when it is read
LAZY_LOADERS: dict[str, tuple[str, str]] = {
    "data": ("gpuslo.slo.simulate.reading", "read_simulation"),
    "trace": ("gpuslo.slo.sources.traces", "load_trace"),
    "journals": ("gpuslo.slo.sources.journals", "load_journals"),
    "prometheus": ("gpuslo.slo.sources.clusters", "load_api"),
    "training_logs": ("gpuslo.slo.sources.training_logs", "load_training_logs"),
}
# format -> (module, function) rendering it, imported only when that format is asked for
RENDERERS: dict[str, tuple[str, str]] = {"html": ("gpuslo.slo.report.html", "render_html")}
Window = tuple[pd.Timestamp | None, pd.Timestamp | None]


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


def parse_time(text: str, flag: str) -> pd.Timestamp:
    """An ISO 8601 time as an aware UTC timestamp (naive means UTC). Raises UsageError naming
    `flag`."""
    try:
        stamp = pd.Timestamp(text)
    except ValueError:
        raise UsageError(f"{flag}: not an ISO 8601 time: {text!r}") from None
    return stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")


def window(week: str | None, start: str | None, end: str | None, spec_week: str | None) -> Window:
    """The report window from `week` or `start`/`end` (ISO text; else the spec's week);
    (None, None) = the data's span. Raises UsageError."""
    if week and (start or end):
        raise UsageError("give either --week or --start/--end, not both")
    if week:
        return parse_week(week)
    if bool(start) != bool(end):
        raise UsageError("--start and --end go together")
    if start:
        begin, finish = parse_time(start, "--start"), parse_time(end, "--end")
        if finish <= begin:
            raise UsageError(f"--end {end} is not after --start {start}")
        return begin, finish
    return parse_week(spec_week) if spec_week else (None, None)


def formats(text: str) -> list[str]:
    """The requested formats from comma-separated text, validated. Raises UsageError."""
    chosen = [f.strip() for f in text.split(",") if f.strip()]
    bad = [f for f in chosen if f not in FORMATS]
    if bad or not chosen:
        unknown = ", ".join(bad) or "(empty)"
        raise UsageError(f"--format: unknown {unknown}; choose from {', '.join(FORMATS)}")
    return chosen


@dataclasses.dataclass(frozen=True)
class Sources:
    """Where the report's data comes from (the `gpuslo report` source flags); None = not given.
    `nodes`, `gpus_per_node`: the inventory a trace lacks; `max_samples`, `timeout_s`, `step_s`:
    how the Prometheus source queries; `training_logs` (files or directories) with `gpus`: the
    logs one job printed and the GPUs it used."""

    data: str | None = None
    trace: str | None = None
    trace_format: str | None = None
    journals: str | None = None
    prometheus: str | None = None
    nodes: int | None = None
    gpus_per_node: int | None = None
    max_samples: int = DEFAULT_MAX_SAMPLES
    timeout_s: float = DEFAULT_TIMEOUT_S
    step_s: int | None = None
    training_logs: tuple[str, ...] = ()
    gpus: int | None = None


def load_frames(sources: Sources, start: pd.Timestamp | None, end: pd.Timestamp | None) -> Frames:
    """The source's `Frames`: exactly one of data, trace, journals, prometheus, prometheus
    with journals (verdicts from Prometheus, job goodput from the journals), or training logs.
    Raises UsageError for any other combination, the sources' InputError/ParseError for
    unreadable input."""
    if sources.training_logs:
        if sources.data or sources.trace or sources.journals or sources.prometheus:
            raise UsageError("--training-log is a source of its own: give it without "
                             "--data, --trace, --journals or --prometheus")
        return loader("training_logs")(list(sources.training_logs), sources.gpus)
    flags = ("data", "trace", "journals", "prometheus")
    given = [flag for flag in flags if getattr(sources, flag)]
    if len(given) != 1 and sorted(given) != ["journals", "prometheus"]:
        raise UsageError("give one source: --data, --trace, --journals, --prometheus or "
                         "--training-log (--prometheus may be combined with --journals)")
    if sources.trace and not sources.trace_format:
        raise UsageError("--trace needs --trace-format stepfun|titan")
    for flag, value in (("--nodes", sources.nodes), ("--gpus-per-node", sources.gpus_per_node)):
        if value is not None and value < 1:
            raise UsageError(f"{flag} must be 1 or more, got {value}")
    if sources.data:
        frames, _, _ = loader("data")(sources.data)
        return Frames(**frames, source=f"gpuslo simulate output {sources.data}")
    if sources.trace:
        return loader("trace")(sources.trace, sources.trace_format,
                               nodes=sources.nodes, gpus_per_node=sources.gpus_per_node)
    journals = loader("journals")(sources.journals) if sources.journals else None
    if not sources.prometheus:
        return journals
    if start is None:
        raise UsageError("--prometheus needs a window: --week or --start/--end")
    frames = loader("prometheus")(sources.prometheus, start, end, step_s=sources.step_s,
                                  timeout_s=sources.timeout_s, max_samples=sources.max_samples)
    if journals is None:
        return frames
    return dataclasses.replace(
        frames, job_events=journals.job_events, allocations=journals.allocations,
        job_gpu_seconds=journals.job_gpu_seconds,
        cannot_fill={k: v for k, v in frames.cannot_fill.items() if k != "goodput"},
        source=f"{frames.source} + journals {sources.journals}")


def loader(source: str) -> Callable:
    """The function reading `source` (a `LAZY_LOADERS` key); its module is imported now."""
    module, function = LAZY_LOADERS[source]
    return getattr(importlib.import_module(module), function)


def per_cluster(frames: Frames, start, end, spec: SloSpec) -> list[dict]:
    """The report's per-cluster rows (`gpuslo.slo.report.clusters.cluster_rows`) of a global
    store's frames: the engine on each cluster's frames alone; [] for any other source."""
    return cluster_rows({name: compute_week(f, start, end, spec).to_json_dict()
                         for name, f in frames.clusters.items()})


def compute(frames: Frames, start, end,
            spec: SloSpec) -> tuple[WeeklyResult, WeeklyResult | None]:
    """(this window's result, the previous window's or None). Raises InputError when the data
    holds no time at all or none inside the window."""
    source = frames.source or "input"
    span = frames.span()
    if span is None:
        raise InputError(source, "the data holds no timestamps (empty trace or directory)")
    if start is not None and (end <= span[0] or start >= span[1]):
        raise InputError(source, f"no data in {_iso(start)} .. {_iso(end)}; the data covers "
                                 f"{_iso(span[0])} .. {_iso(span[1])}")
    current = compute_week(frames, start, end, spec)
    previous = None
    if start is not None and span[0] <= start - (end - start):
        previous = compute_week(frames, start - (end - start), start, spec)
    return current, previous


def _iso(stamp: pd.Timestamp) -> str:
    return iso_utc(stamp)


def render(report: Report, chosen: list[str]) -> dict[str, str]:
    """File name → text for each chosen format (deterministic)."""
    out = {}
    if "md" in chosen:
        out["report.md"] = render_markdown(report)
    if "html" in chosen:
        module, function = RENDERERS["html"]
        out["report.html"] = getattr(importlib.import_module(module), function)(report)
    if "json" in chosen:
        text = json.dumps(report.document, sort_keys=True, indent=2, allow_nan=False)
        out["report.json"] = text + "\n"
    return out
