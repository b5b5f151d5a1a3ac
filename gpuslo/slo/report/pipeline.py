"""The report as one call: `build_report(request) -> ReportResult`, from the parsed sources to
every artefact, in the manner of sloth's `Service.Generate(Request) → Response`. `gpuslo report`
only builds the `ReportRequest` from its flags and writes the files it gets back.

Steps (each in `gpuslo.slo.report.inputs`, errors typed `gpuslo.errors` naming the flag or file):
formats and price checked, window resolved (`--week`, `--start/--end`, else the spec's week,
else the data's span), the source's `Frames` loaded, the engine run on this window and the
previous one of the same length (`gpuslo.slo.engine.compute_week`), the report built from the
engine's result (`build.report_of`: every figure is the engine's) and rendered (Markdown, HTML,
JSON). `progress(stage)` is told each stage's name (`STAGES`) as it starts.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from gpuslo.errors import UsageError
from gpuslo.slo.report import inputs
from gpuslo.slo.report.build import report_of
from gpuslo.slo.report.model import Report
from gpuslo.slo_spec import SloSpec

STAGES = ("loading the data", "computing", "rendering")


@dataclass(frozen=True)
class ReportRequest:
    """What to report on: `sources` (the source flags), `spec` (the SLO spec), the window as
    given (`week` `YYYY-Www`, or `start`/`end` ISO 8601; none = the spec's week, else the data's
    span), `formats` (comma-separated md, html, json) and `price_per_gpu_hour` (None = the
    spec's; the cost section needs one)."""

    sources: inputs.Sources
    spec: SloSpec
    week: str | None = None
    start: str | None = None
    end: str | None = None
    formats: str = ",".join(inputs.FORMATS)
    price_per_gpu_hour: float | None = None


@dataclass(frozen=True)
class ReportResult:
    """Every artefact: `report` (the model: JSON document and sections), `files` (file name →
    text, one per requested format), `start`/`end` (the window computed, ISO 8601) and `source`
    (what the data was, in words)."""

    report: Report
    files: dict[str, str]
    start: str
    end: str
    source: str


def build_report(request: ReportRequest,
                 progress: Callable[[str], None] = lambda stage: None) -> ReportResult:
    """Run the pipeline (module docstring) for `request`. Raises UsageError, InputError or
    ParseError; returns only when every requested file was rendered."""
    chosen = inputs.formats(request.formats)
    price = request.price_per_gpu_hour
    if price is None:
        price = request.spec.price_per_gpu_hour
    if price is not None and price < 0:
        raise UsageError(f"--price-per-gpu-hour must be 0 or more, got {price}")
    start, end = inputs.window(request.week, request.start, request.end, request.spec.week)
    progress(STAGES[0])
    frames = inputs.load_frames(request.sources, start, end)
    progress(STAGES[1])
    current, previous = inputs.compute(frames, start, end, request.spec)
    progress(STAGES[2])
    document = current.to_json_dict()
    if frames.clusters:  # a global store: one row per cluster beside the fleet's figures
        document["clusters"] = inputs.per_cluster(frames, start, end, request.spec)
    report = report_of(document, previous.to_json_dict() if previous else None, price,
                       current.fleet_figures())
    files = inputs.render(report, chosen)
    return ReportResult(report, files, document["start"], document["end"], frames.source)
