"""The SLO engine's input frames: fixed columns and dtypes, constructors and validation.

This is the stable contract between the sources (Prometheus, journals, traces, `gpuslo simulate`)
and the engine (`gpuslo.slo.engine.compute_week`). Every timestamp column is
`datetime64[ns, UTC]`; every text column is pandas `string` dtype; counts are nullable `Int64`.
Intervals are half-open `[start, end)`; an `end` of NaT means "still open" (inventory only —
elsewhere it is closed at the report window's end by `close_open_ends`).

Frames (`FRAMES[name]` gives the columns and their kinds):

- `inventory` — one row per GPU: node, uuid, gpu (index as text), model, family,
  provisioned_start, provisioned_end (NaT = still provisioned).
- `verdicts` — GPU verdict intervals: node, uuid, start, end, verdict (healthy|unhealthy|unknown),
  reason (names.REASONS, "" for healthy), layer (names.LAYERS, "" for healthy), action
  (names.ACTIONS or ""). A node-wide interval uses uuid "" and covers every GPU of the node.
  Provisioned time that no interval covers is `no_data` (observability).
- `schedulability` — when a node is not offered work: node, start, end,
  state (cordoned|drained|maintenance|validation), reason (free text, e.g. the ticket).
- `allocations` — which GPUs a job held: job, node, uuid, start, end (uuid "" = every GPU of
  the node, as journals, which name a GPU count only, give it).
- `job_events` — Recorder journal events (gpuslo.goodput names): job, node, time, event, step,
  category, gpus, status, layer, and for `steps` events count (steps covered), step_time_s and
  compute_s (mean seconds per step; Float64, <NA> when the journal does not say).
- `degradations` — warn-level signals that keep a GPU or node usable but slow it (the reasons of
  `names.DEGRADATION_REASONS`: SW power capping, port error rates, link flaps...): node, uuid
  ("" = the whole node), start, end, reason. Fail verdicts with such a reason stay in `verdicts`;
  both explain a job's slowdown (`gpuslo.slo.crawl`).
- `faults` (derived by `derive_faults`) — non-healthy GPU intervals: node, uuid, start, end,
  reason, layer.
- `job_gpu_seconds` — job goodput already summed for the window (the Prometheus source reads it
  from the exporters' counters): job, node, category (names.JOB_CATEGORIES), gpu_seconds
  (float64). The engine uses it when there are no job_events.
- `slowdowns` — sustained-slowdown episodes where no job_events give them (the Prometheus source
  reads them from the steps over which the `slowdown` counter grew): job, node, start, end,
  gpu_seconds. The engine matches them with the degradations of the job's nodes.
- `replicas` — serving replicas (pods or Slurm jobs running vLLM, SGLang, TGI, Triton...) and
  the GPUs they held: replica, node, gpus (count), start, end (the allocation), engine (vllm,
  sglang, tgi, triton, or "" when unknown).
- `replica_states` — readiness intervals of a replica: replica, start, end, state
  (names.REPLICA_STATES: loading, ready, not_ready, draining), reason (names.REASONS or "": what
  the source said — replica_evicted, engine_oom...; "" lets `gpuslo.slo.serving` attribute it).
- `replica_idle` — intervals a replica was ready but had no request: replica, start, end.
- `replica_latency` — an engine's latency histogram over an interval: replica, start, end, sli
  (`ttft`: one observation per request, its time to first token; `itl`: one per output token
  after the first, its inter-token gap), le (a bucket bound, seconds; empty when the source has
  only the total: no bucket at the recorded objective), good (observations ≤ le in the
  interval; 0 without le), total (all observations in the interval; the `+Inf` bucket /
  `_count`).

`make_frame(name, data, source)` builds a frame from records or a DataFrame, coerces dtypes
(numbers in time columns are Unix seconds), fills absent optional columns ("" / NaT / <NA>) and
validates it; errors are `gpuslo.errors.ParseError(source, message, line=row + 1, field=column)`
naming the frame and the row. `empty(name)` gives a zero-row frame with the right dtypes.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field

import pandas as pd

from gpuslo import names
from gpuslo.errors import ParseError

TIME, TEXT, COUNT, SECONDS = "time", "text", "count", "seconds"
_DTYPES = {TIME: "datetime64[ns, UTC]", TEXT: "string", COUNT: "Int64", SECONDS: "Float64"}

FRAMES: dict[str, dict[str, str]] = {
    "inventory": {
        "node": TEXT,
        "uuid": TEXT,
        "gpu": TEXT,
        "model": TEXT,
        "family": TEXT,
        "provisioned_start": TIME,
        "provisioned_end": TIME,
    },
    "verdicts": {
        "node": TEXT,
        "uuid": TEXT,
        "start": TIME,
        "end": TIME,
        "verdict": TEXT,
        "reason": TEXT,
        "layer": TEXT,
        "action": TEXT,
    },
    "schedulability": {"node": TEXT, "start": TIME, "end": TIME, "state": TEXT, "reason": TEXT},
    "allocations": {"job": TEXT, "node": TEXT, "uuid": TEXT, "start": TIME, "end": TIME},
    "job_events": {
        "job": TEXT,
        "node": TEXT,
        "time": TIME,
        "event": TEXT,
        "step": COUNT,
        "category": TEXT,
        "gpus": COUNT,
        "status": TEXT,
        "layer": TEXT,
        "count": COUNT,
        "step_time_s": SECONDS,
        "compute_s": SECONDS,
    },
    "degradations": {"node": TEXT, "uuid": TEXT, "start": TIME, "end": TIME, "reason": TEXT},
    "faults": {
        "node": TEXT,
        "uuid": TEXT,
        "start": TIME,
        "end": TIME,
        "reason": TEXT,
        "layer": TEXT,
    },
    "job_gpu_seconds": {"job": TEXT, "node": TEXT, "category": TEXT, "gpu_seconds": SECONDS},
    "slowdowns": {"job": TEXT, "node": TEXT, "start": TIME, "end": TIME, "gpu_seconds": SECONDS},
    "replicas": {"replica": TEXT, "node": TEXT, "gpus": COUNT, "start": TIME, "end": TIME,
                 "engine": TEXT},
    "replica_states": {"replica": TEXT, "start": TIME, "end": TIME, "state": TEXT,
                       "reason": TEXT},
    "replica_idle": {"replica": TEXT, "start": TIME, "end": TIME},
    "replica_latency": {"replica": TEXT, "start": TIME, "end": TIME, "sli": TEXT, "le": SECONDS,
                        "good": SECONDS, "total": SECONDS},
}
SCHEDULABILITY_STATES = ("cordoned", "drained", "maintenance", "validation")
# Columns that may not be empty/NaT, per frame.
_REQUIRED = {
    "inventory": ("node", "uuid", "provisioned_start"),
    "verdicts": ("node", "start", "end", "verdict"),
    "schedulability": ("node", "start", "end", "state"),
    "allocations": ("job", "node", "start", "end"),
    "job_events": ("job", "time", "event"),
    "degradations": ("node", "start", "end", "reason"),
    "faults": ("node", "start", "end", "reason", "layer"),
    "job_gpu_seconds": ("job", "category", "gpu_seconds"),
    "slowdowns": ("job", "node", "start", "end", "gpu_seconds"),
    "replicas": ("replica", "node", "gpus", "start", "end"),
    "replica_states": ("replica", "start", "end", "state"),
    "replica_idle": ("replica", "start", "end"),
    "replica_latency": ("replica", "start", "end", "sli", "good", "total"),
}
# Columns whose non-empty values must come from a closed set.
_ALLOWED = {
    ("verdicts", "verdict"): names.VERDICTS,
    ("verdicts", "reason"): ("", *names.REASONS),
    ("verdicts", "layer"): ("", *names.LAYERS),
    ("verdicts", "action"): ("", *names.ACTIONS),
    ("schedulability", "state"): SCHEDULABILITY_STATES,
    ("faults", "reason"): names.REASONS,
    ("faults", "layer"): names.LAYERS,
    ("job_events", "layer"): ("", *names.LAYERS),
    ("degradations", "reason"): names.DEGRADATION_REASONS,
    ("job_gpu_seconds", "category"): names.JOB_CATEGORIES,
    ("replica_states", "state"): names.REPLICA_STATES,
    ("replica_states", "reason"): ("", *names.REASONS),
    ("replica_latency", "sli"): ("ttft", "itl"),
}
_INTERVALS = {
    "inventory": ("provisioned_start", "provisioned_end"),
    "verdicts": ("start", "end"),
    "schedulability": ("start", "end"),
    "allocations": ("start", "end"),
    "degradations": ("start", "end"),
    "faults": ("start", "end"),
    "slowdowns": ("start", "end"),
    "replicas": ("start", "end"),
    "replica_states": ("start", "end"),
    "replica_idle": ("start", "end"),
    "replica_latency": ("start", "end"),
}


def empty(name: str) -> pd.DataFrame:
    """A zero-row frame `name` with its columns and dtypes. Raises KeyError for an unknown name."""
    return pd.DataFrame(
        {col: pd.Series([], dtype=_DTYPES[kind]) for col, kind in FRAMES[name].items()}
    )


def make_frame(
    name: str, data: pd.DataFrame | Iterable[Mapping] | None, source: str | None = None
) -> pd.DataFrame:
    """Build frame `name` from a DataFrame or records: coerce dtypes, fill optional text columns
    with "", validate. Rows keep their order; the index is reset to 0..n-1.

    Raises ParseError(source or name, message, line=row + 1, field=column) for a missing column,
    an unparsable timestamp or count, an empty required field, a value outside its closed set
    (verdicts, reasons, layers, actions, states), or an interval whose end is before its start.
    """
    source = source or name
    frame = pd.DataFrame(data) if not isinstance(data, pd.DataFrame) else data
    if data is None or (frame.empty and len(frame.columns) == 0):
        return empty(name)
    columns = FRAMES[name]
    missing = [col for col in _REQUIRED[name] if col not in frame.columns]
    if missing:
        raise ParseError(
            source, f"{name} frame lacks column(s) {', '.join(missing)}", field=missing[0]
        )
    out = {col: _coerce(frame, col, kind, name, source) for col, kind in columns.items()}
    result = pd.DataFrame(out).reset_index(drop=True)
    validate(name, result, source)
    return result


def _coerce(frame: pd.DataFrame, col: str, kind: str, name: str, source: str) -> pd.Series:
    if col not in frame.columns:
        fill = {TEXT: "", TIME: pd.NaT, COUNT: pd.NA, SECONDS: pd.NA}[kind]
        return pd.Series([fill] * len(frame), dtype=_DTYPES[kind], index=frame.index)
    values = frame[col]
    try:
        if kind == TIME:
            if pd.api.types.is_numeric_dtype(values) and not pd.api.types.is_bool_dtype(values):
                return pd.to_datetime(values, unit="s", utc=True).astype(_DTYPES[TIME])
            return pd.to_datetime(values, utc=True, format="mixed").astype(_DTYPES[TIME])
        if kind == COUNT:
            return pd.to_numeric(values, errors="raise").astype("Int64")
        if kind == SECONDS:
            return pd.to_numeric(values, errors="raise").astype("Float64")
    except (ValueError, TypeError, OverflowError) as error:
        row = _first_bad_row(values, kind)
        raise ParseError(source, f"{name} frame: {error}", line=row, field=col) from None
    return values.astype("string").fillna("")


def _first_bad_row(values: pd.Series, kind: str) -> int | None:
    for position, value in enumerate(values.tolist()):
        try:
            if kind == TIME:
                pd.to_datetime([value], utc=True, format="mixed")
            else:
                pd.to_numeric([value], errors="raise")
        except (ValueError, TypeError, OverflowError):
            return position + 1
    return None


def validate(name: str, frame: pd.DataFrame, source: str | None = None) -> None:
    """Check an already-typed frame: required fields set, closed sets respected, end ≥ start.
    Raises ParseError naming the frame, the 1-based row and the column."""
    source = source or name
    for col in _REQUIRED[name]:
        bad = (
            frame[col].isna() | (frame[col] == "")
            if FRAMES[name][col] == TEXT
            else frame[col].isna()
        )
        _raise_first(bad, source, f"{name} frame: {col} is empty", col)
    for (frame_name, col), allowed in _ALLOWED.items():
        if frame_name == name:
            bad = ~frame[col].isin(allowed)
            if bad.any():
                value = frame.loc[bad.idxmax(), col]
                _raise_first(
                    bad, source, f"{name} frame: {col} {value!r} is not one of {list(allowed)}", col
                )
    if name in _INTERVALS:
        start, end = _INTERVALS[name]
        _raise_first(
            frame[end].notna() & (frame[end] < frame[start]),
            source,
            f"{name} frame: {end} before {start}",
            end,
        )


def _raise_first(bad: pd.Series, source: str, message: str, field: str) -> None:
    if bool(bad.any()):
        row = int(bad.to_numpy().argmax()) + 1
        raise ParseError(source, f"{message} (row {row})", line=row, field=field)


def close_open_ends(
    frame: pd.DataFrame, start_col: str, end_col: str, until: pd.Timestamp
) -> pd.DataFrame:
    """Copy of `frame` with NaT ends replaced by `until` (an aware UTC timestamp)."""
    out = frame.copy()
    out[end_col] = out[end_col].fillna(until)
    return out


def derive_faults(verdicts: pd.DataFrame) -> pd.DataFrame:
    """The `faults` frame: every unhealthy or unknown verdict interval, with its reason and
    layer. An unknown interval with no reason gets `stale_data` (observability), an unhealthy
    one `probe_failed` (node) — fail closed, never dropped; an empty layer comes from the reason.
    A validating interval is no fault: it is the return to service of the fault before it (its
    time is lost to the platform in the accounting; `reliability.return_to_service` counts it).
    Columns as FRAMES["faults"]; sorted by node, uuid, start."""
    bad = verdicts[~verdicts["verdict"].isin([names.VERDICT_HEALTHY, names.VERDICT_VALIDATING])]
    default = bad["verdict"].map(
        {names.VERDICT_UNKNOWN: "stale_data", names.VERDICT_UNHEALTHY: "probe_failed"}
    )
    reason = bad["reason"].mask(bad["reason"] == "", default).astype("string")
    layer = bad["layer"].mask(bad["layer"] == "", reason.map(names.REASON_LAYER)).astype("string")
    faults = pd.DataFrame({
        "node": bad["node"], "uuid": bad["uuid"], "start": bad["start"], "end": bad["end"],
        "reason": reason, "layer": layer,
    })
    return faults.sort_values(["node", "uuid", "start"], kind="stable").reset_index(drop=True)



def iso_utc(stamp: pd.Timestamp | float) -> str:
    """An instant (a Timestamp, or Unix seconds) as ISO 8601 UTC for display: `Z`, rounded to
    the microsecond (a float's noise below it, `20.729599953`, is not the log's), and printed
    to the precision it has: `...:20Z`, `...:20.730Z`, `...:20.729600Z`. The one formatter of
    the report's and the serving log's window stamps."""
    if not isinstance(stamp, pd.Timestamp):
        stamp = pd.Timestamp(round(float(stamp) * 1e6), unit="us", tz="UTC")
    stamp = stamp.tz_convert("UTC") if stamp.tzinfo else stamp.tz_localize("UTC")
    stamp = stamp.round("us")
    micro = stamp.microsecond
    spec = "seconds" if micro == 0 else "milliseconds" if micro % 1000 == 0 else "microseconds"
    return stamp.isoformat(timespec=spec).replace("+00:00", "Z")


# `Frames.jobs_from`: what the job events were read from, in the report's words
JOURNALS_BASIS, TRAINING_LOGS_BASIS = "journals", "training logs"


@dataclass
class Frames:
    """Everything one source hands the engine (`gpuslo.slo.engine.compute_week`).

    Frames as documented above (build each with `make_frame`); `cannot_fill` lists the report
    sections this source has no data for, each with why (e.g. `{"goodput": "the StepFun trace
    has no jobs"}`); `recorded` the SLIs a rules engine recorded for the window (the Prometheus
    source's cross-check, `{}` otherwise); `source` names where the data came from, for the
    report's header. `clusters` holds each cluster's own frames when the source is a global
    store (`gpuslo.slo.sources.clusters`: the frames above are then their union), else `{}`.
    `jobs_from` is what the job events were read from, in the report's words (`journals`, or
    `training logs` for `--training-log`): the job figures' basis without a capacity accounting.
    `goodput_unknown` names the jobs whose events count for their span, interruptions and
    restarts but whose goodput is unknown (a training log with no commit evidence): the engine
    leaves them out of the goodput figures; `goodput_logs` is (logs whose goodput is known,
    logs read) for `--training-log`, None for other sources.
    """

    inventory: pd.DataFrame = field(default_factory=lambda: empty("inventory"))
    verdicts: pd.DataFrame = field(default_factory=lambda: empty("verdicts"))
    schedulability: pd.DataFrame = field(default_factory=lambda: empty("schedulability"))
    allocations: pd.DataFrame = field(default_factory=lambda: empty("allocations"))
    job_events: pd.DataFrame = field(default_factory=lambda: empty("job_events"))
    degradations: pd.DataFrame = field(default_factory=lambda: empty("degradations"))
    job_gpu_seconds: pd.DataFrame = field(default_factory=lambda: empty("job_gpu_seconds"))
    slowdowns: pd.DataFrame = field(default_factory=lambda: empty("slowdowns"))
    replicas: pd.DataFrame = field(default_factory=lambda: empty("replicas"))
    replica_states: pd.DataFrame = field(default_factory=lambda: empty("replica_states"))
    replica_idle: pd.DataFrame = field(default_factory=lambda: empty("replica_idle"))
    replica_latency: pd.DataFrame = field(default_factory=lambda: empty("replica_latency"))
    cannot_fill: dict[str, str] = field(default_factory=dict)
    recorded: dict = field(default_factory=dict)
    source: str = ""
    clusters: dict[str, Frames] = field(default_factory=dict)
    jobs_from: str = JOURNALS_BASIS
    goodput_unknown: frozenset[str] = frozenset()
    goodput_logs: tuple[int, int] | None = None

    def span(self) -> tuple[pd.Timestamp, pd.Timestamp] | None:
        """(earliest, latest) timestamp across all frames, or None when they hold no time."""
        columns = [
            self.inventory["provisioned_start"], self.inventory["provisioned_end"],
            self.verdicts["start"], self.verdicts["end"], self.schedulability["start"],
            self.schedulability["end"], self.allocations["start"], self.allocations["end"],
            self.job_events["time"], self.degradations["start"], self.degradations["end"],
        ]
        lows = [c.min() for c in columns if c.notna().any()]
        highs = [c.max() for c in columns if c.notna().any()]
        return (min(lows), max(highs)) if lows else None
