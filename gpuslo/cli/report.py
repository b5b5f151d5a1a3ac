"""`gpuslo report`: the goodput / usable-GPU-hours report over a week or any window.

    gpuslo report [--week 2026-W48 | --start T --end T]
                  (--data DIR | --trace FILE --trace-format stepfun|titan | --journals DIR
                   | --prometheus URL [--journals DIR] [--max-samples-per-query N]
                     [--timeout SECONDS] [--step SECONDS]
                   | --training-log LOG|DIR --gpus N)
                  [--nodes N --gpus-per-node G] [--slo FILE] [--price-per-gpu-hour X]
                  [--out DIR] [--format md,html,json]

Without a window (`--week`, `--start/--end`, or `week` in the SLO spec) the report covers the
whole span of its data. The flags become one `ReportRequest` for the report pipeline
(`gpuslo.slo.report.pipeline.build_report`, every artefact in one call); this module only
builds the request, writes the files and prints the headline. Writes `report.md`, `report.html` and
`report.json` into `--out` (default `gpuslo-report/`), all or none (each to a temp file first,
renamed only when every format was written), and prints the headline numbers. Errors (missing
or malformed input, a window with no data) are typed `gpuslo.errors` errors that the CLI prints
as one line, exit 2; no output file is written then.
"""

from __future__ import annotations

import argparse
import math
from pathlib import Path

from gpuslo.cli.terminal import directory, number, stages, whole
from gpuslo.errors import InputError, UsageError
from gpuslo.files import write_all_atomic
from gpuslo.goodput.journal import MAX_GPUS
from gpuslo.slo.report import pipeline
from gpuslo.slo.report.inputs import Sources
from gpuslo.slo.report.markdown import headline
from gpuslo.slo.report.model import window_text
from gpuslo.slo.sources.limits import DEFAULT_MAX_SAMPLES, DEFAULT_TIMEOUT_S
from gpuslo.slo_spec import load_spec

MAX_PRICE = 1_000_000  # per GPU-hour, in the price's currency: far above any GPU's
STAGES = (*pipeline.STAGES, "writing")


def configure(parser: argparse.ArgumentParser) -> None:
    """Arguments of `gpuslo report`."""
    window = parser.add_argument_group("window (default: the whole span of the data)")
    window.add_argument("--week", help="ISO week, e.g. 2026-W48 (Monday 00:00 UTC, 7 days)")
    window.add_argument("--start", help="window start, ISO 8601 (UTC when no offset)")
    window.add_argument("--end", help="window end, ISO 8601 (exclusive)")
    source = parser.add_argument_group("source (exactly one)")
    sources = [source.add_argument("--data", help="a `gpuslo simulate` output directory"),
               source.add_argument("--trace", help="a fault-interval trace file (- for stdin)")]
    source.add_argument("--trace-format", choices=("stepfun", "titan"), help="format of --trace")
    sources.append(source.add_argument("--journals", help="a directory of Recorder journals"))
    sources.append(source.add_argument(
        "--prometheus", help="Prometheus-compatible query API base URL (Prometheus, Thanos "
        "Query, Mimir, VictoriaMetrics)"))
    sources.append(source.add_argument(
        "--training-log", action="append", metavar="LOG|DIR",
        help="training log(s) a job printed (repeatable; a directory of logs)"))
    # the source flags as this parser defines them, for the "no source" error (`request`)
    parser.set_defaults(source_flags=tuple((a.option_strings[0], a.dest) for a in sources))
    parser.add_argument("--gpus", type=whole(1, MAX_GPUS, "GPUs"),
                        help="GPUs the --training-log job used")
    api = parser.add_argument_group("--prometheus queries")
    api.add_argument("--max-samples-per-query", type=_positive_int, default=DEFAULT_MAX_SAMPLES,
                     metavar="N", help="samples one query may load (series x steps); queries "
                     f"are split to stay under it (default {DEFAULT_MAX_SAMPLES:,}, a fifth of "
                     "Prometheus' --query.max-samples default)")
    api.add_argument("--timeout", type=_positive_float, default=DEFAULT_TIMEOUT_S,
                     metavar="SECONDS", help="wall-clock deadline of one HTTP request, its "
                     "retries on connection errors and 5xx (with backoff) included "
                     f"(default {DEFAULT_TIMEOUT_S:g})")
    api.add_argument("--step", type=_positive_int, metavar="SECONDS",
                     help="sample spacing (default: measured from the data)")
    parser.add_argument("--nodes", type=int, help="nodes in the fleet (inventory a trace lacks)")
    parser.add_argument("--gpus-per-node", type=int,
                        help="GPUs per node (inventory a trace lacks)")
    parser.add_argument("--slo", help="SLO spec YAML (default: built-in objectives)")
    parser.add_argument("--price-per-gpu-hour", type=number(0, MAX_PRICE, "per GPU-hour"),
                        help=f"price of one GPU-hour, 0 to {MAX_PRICE:,}, for the cost section")
    parser.add_argument("--out", default="gpuslo-report",
                        help="output directory (default gpuslo-report)")
    parser.add_argument("--format", default="md,html,json",
                        help="comma-separated: md, html, json")


def _positive_int(text: str) -> int:
    try:
        value = int(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected a whole number, got {text!r}") from None
    if value < 1:
        raise argparse.ArgumentTypeError(f"expected 1 or more, got {value}")
    return value


def _positive_float(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"expected seconds, got {text!r}") from None
    if not math.isfinite(value) or value <= 0:
        raise argparse.ArgumentTypeError(f"expected a finite number of seconds > 0, got {text!r}")
    return value


def request(args: argparse.Namespace) -> pipeline.ReportRequest:
    """The pipeline's request from the parsed flags (reads the `--slo` spec). Raises
    UsageError naming every source flag of the parser when none is given."""
    flags = getattr(args, "source_flags", ())
    if flags and not any(getattr(args, dest) for _, dest in flags):
        *first, last = [flag for flag, _ in flags]
        raise UsageError(f"give one source: {', '.join(first)} or {last} (--prometheus may be "
                         "combined with --journals; --training-log needs --gpus)")
    sources = Sources(
        data=args.data, trace=args.trace, trace_format=args.trace_format,
        journals=args.journals, prometheus=args.prometheus,
        nodes=args.nodes, gpus_per_node=args.gpus_per_node,
        max_samples=args.max_samples_per_query, timeout_s=args.timeout, step_s=args.step,
        training_logs=tuple(args.training_log or ()), gpus=args.gpus,
    )
    return pipeline.ReportRequest(
        sources, load_spec(args.slo), week=args.week, start=args.start, end=args.end,
        formats=args.format, price_per_gpu_hour=args.price_per_gpu_hour)


def run(args: argparse.Namespace) -> int:
    """Run `gpuslo report`: build, write atomically, print the headline. Returns 0, or 1
    when training logs were read and none has a known goodput (`goodput_unknown`)."""
    wanted = request(args)
    out = directory(args.out, "--out")
    with stages(STAGES, "gpuslo report") as stage:  # progress on stderr, on a terminal only
        result = pipeline.build_report(wanted, progress=stage)
        stage(STAGES[-1])
        _write(out, result.files)
    print(f"gpuslo report: {window_text(result.report.document)} ({result.source})")
    for label, value in headline(result.report.document):
        print(f"  {label}: {value}")
    print(f"  wrote: {', '.join(str(out / name) for name in result.files)}")
    return 1 if goodput_unknown(result.report.document) else 0


def goodput_unknown(doc: dict) -> bool:
    """True when the report's training logs were read but none has a known goodput (each one's
    reason under data quality): the report is written, and its answer is unknown (exit 1, as
    `gpuslo goodput` exits for such a log)."""
    logs = (doc.get("data_quality") or {}).get("goodput_logs") or {}
    return bool(logs) and not logs.get("known")


def _write(out: Path, texts: dict[str, str]) -> None:
    """All formats or none: a failed report.json leaves no new report.md behind. Raises
    InputError naming what could not be written."""
    try:
        write_all_atomic({out / name: text.encode("utf-8") for name, text in texts.items()})
    except OSError as error:
        where = error.filename or str(out)
        raise InputError(where, f"cannot write: {error.strerror or error}") from None
