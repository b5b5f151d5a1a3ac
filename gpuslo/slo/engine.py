"""The SLO engine's one entry point: `compute_week(frames, start, end, spec) -> WeeklyResult`.

Stable API for `gpuslo report` and `gpuslo simulate` (and the benchmarks):

    from gpuslo.slo.engine import compute_week
    result = compute_week(frames, start, end, spec)   # frames: gpuslo.slo.frames.Frames
    result.to_json_dict()                             # the report's JSON twin (issue 5 keys)

`WeeklyResult` and its JSON twin live in `gpuslo.slo.result` (imported here, so this path keeps
working); this module computes it.

`start`/`end` are aware timestamps (None → the span of the data); `spec` a
`gpuslo.slo_spec.SloSpec`. Every figure is in hours, GPU-hours or ratios 0–1.

Capacity categories (`WeeklyResult.categories`, GPU-hours) give every provisioned GPU-second
exactly one of: no_data, unknown, unhealthy_<layer>, unschedulable, productive, each badput
category, uncommitted, idle — they sum to `provisioned_gpu_hours` exactly (in integer ticks,
`category_ticks`). A job's allocated usable time is split by its journal's goodput
(`gpuslo.goodput.compute_goodput`), filling categories in `names.ALLOCATED_CATEGORIES` order up
to the allocated time; what the journal does not explain (or a job without a journal) is `other`.
`uncommitted` is progress after a training log's last commit (`names.CATEGORY_UNCOMMITTED`):
neither productive nor badput, at risk; 0 for journals, whose counters book it once settled.
So allocated = productive + every badput category + uncommitted (`uncommitted_gpu_hours`).
Serving replicas' allocated usable time is `serving_replicas` (`serving_week.split_off`; present
only with replicas), broken down in `serving`; replicas are no job in the job figures.

Lost GPU-hours by layer: observability = no_data + unknown (+ unhealthy with an observability
reason); node/platform = unhealthy time by its layer, platform also unschedulable time;
wasted_progress and recovery go to the layers their job's interruptions were attributed to
(shared equally), every other badput to training. `lost_gpu_hours_by_reason` keys are fault
reasons (`names.REASONS`) plus badput categories, and sums to the same total.
Lost = unusable + job badput, split in the JSON twin as `unusable_gpu_hours_by_layer` (capacity
that was not usable: it sums to provisioned − usable, as do the daily `lost_<layer>` columns)
and `job_badput_gpu_hours_by_layer` (usable, allocated time the jobs did not turn into progress).

The job side (allocated, productive and badput GPU-hours, job badput by layer) has one model
whatever the source, named by `job_basis`: the capacity accounting's split of allocated usable
time (`CAPACITY_BASIS`), or, with no capacity data (journals or training logs alone), the
journals' own GPU-time per category (`Frames.jobs_from`: `frames.JOURNALS_BASIS`, or
`TRAINING_LOGS_BASIS` when the journal events were read from training logs;
`attribution.journal_split`), attributed
to layers by the same rules. The capacity categories stay capacity only (zero without it).
"""

from __future__ import annotations

import dataclasses

import pandas as pd

from gpuslo import names
from gpuslo.errors import InputError
from gpuslo.slo import (
    attribution,
    crawl,
    job_losses,
    objectives,
    recorded_check,
    reliability,
    serving_week,
)
from gpuslo.slo.accounting import Accounting, account
from gpuslo.slo.attribution import fleet_job_split, journal_split, lost_breakdown
from gpuslo.slo.events import EventIndex, index_events
from gpuslo.slo.frames import TRAINING_LOGS_BASIS, Frames, derive_faults
from gpuslo.slo.journal_goodput import UNCOMMITTED
from gpuslo.slo.result import CAPACITY_BASIS, WeeklyResult
from gpuslo.slo_spec import SloSpec


def _job_tick(jobs: pd.DataFrame, tick_ns: int) -> int:
    """The smallest power-of-ten multiple of `tick_ns` in which the jobs' GPU-time (`jobs`:
    job_summary, GPU-seconds per category) fits int64 with room to sum: 1 ns ticks wrapped a
    year-long log on 1,000,000 GPUs to negative allocated GPU-hours (newcomer8 F2's class, on
    the `report --training-log` path)."""
    columns = [c for c in names.ALLOCATED_CATEGORIES if c in jobs]
    total = float(jobs[columns].fillna(0.0).clip(lower=0.0).to_numpy().sum()) if columns else 0.0
    while total * 1e9 / tick_ns >= 2**62:
        tick_ns *= 10
    return tick_ns


def compute_week(frames: Frames, start: pd.Timestamp | None, end: pd.Timestamp | None,
                 spec: SloSpec) -> WeeklyResult:
    """Compute every figure for [start, end). Raises InputError when there is no time span."""
    start, end = _window(frames, start, end)
    acc = account(frames.inventory, frames.verdicts, frames.schedulability, frames.allocations,
                  start, end)
    events = index_events(frames.job_events)
    per_node, slowdowns = _per_node(frames, start, end, spec, events)
    jobs = attribution.job_summary(per_node, frames.job_events, start, end, events,
                                   ends_at_last_event=frames.jobs_from == TRAINING_LOGS_BASIS)
    jobs, known, unknown_h = _goodput_known(jobs, frames.goodput_unknown)
    faults = reliability.merge_faults(derive_faults(frames.verdicts))
    nodes = attribution.job_nodes(frames.job_events, frames.allocations, events)
    found = attribution.find_interruptions(frames.job_events, start, end, events)
    attributed = attribution.attribute(found, faults, nodes)
    split = serving_week.split_off(fleet_job_split(acc, known), frames.replicas)
    acc, side = _job_side(acc, split, known)
    by_layer, by_reason = lost_breakdown(acc, side, attributed)
    categories_ticks = {**_capacity_ticks(acc), **_job_ticks(split.fleet_ticks)}

    def hours(ticks: int) -> float:
        return ticks * acc.tick_ns / 3.6e12

    crawl_rows, scores = _crawl(frames, slowdowns, nodes, side, (start, end), hours(1),
                                (by_layer, by_reason), events)
    by_reason = {k: v for k, v in sorted(by_reason.items()) if v}
    losses = serving_week.training_only(job_losses.job_losses(acc, side, attributed, crawl_rows),
                                        frames.replicas)

    provisioned_h = hours(acc.provisioned_ticks)
    productive_h = hours(side.fleet_ticks[names.CATEGORY_PRODUCTIVE])
    allocated_h = (hours(acc.state_ticks["allocated"] - split.fleet_ticks.get(
        serving_week.SERVING_CATEGORY, 0)) if acc.provisioned_ticks
                   else hours(sum(side.fleet_ticks.values())))
    rate, basis, gpu_faults = _interruption_rate(frames, faults, len(attributed),
                                                 allocated_h + unknown_h, provisioned_h, start, end)
    job_h, job_productive_h = _held_hours(known), _held_hours(known, names.CATEGORY_PRODUCTIVE)
    slos = _slos(acc, job_productive_h, job_h, spec, (end - start).total_seconds())
    return WeeklyResult(
        start=start,
        end=end,
        gpus=len(acc.gpus),
        nodes=int(acc.gpus["node"].nunique()),
        provisioned_gpu_hours=provisioned_h,
        usable_gpu_hours=acc.usable_seconds / 3600,
        categories={k: hours(v) for k, v in categories_ticks.items()},
        category_ticks=categories_ticks,
        provisioned_ticks=acc.provisioned_ticks,
        lost_gpu_hours_by_layer=by_layer,
        lost_gpu_hours_by_reason=by_reason,
        badput_gpu_hours_by_category={
            c: hours(side.fleet_ticks[c]) for c in names.BADPUT_CATEGORIES
        },
        uncommitted_gpu_hours=hours(side.fleet_ticks[names.CATEGORY_UNCOMMITTED]),
        job_basis=CAPACITY_BASIS if acc.provisioned_ticks else frames.jobs_from,
        goodput_unknown=frames.goodput_unknown,
        productive_gpu_hours=productive_h,
        allocated_gpu_hours=allocated_h,
        job_gpu_hours=job_h,
        job_productive_gpu_hours=job_productive_h,
        slos=slos,
        burn_rates=objectives.burn_rates(acc.segments, end, spec),
        interruptions_per_1000_gpu_days=rate,
        interruption_basis=basis,
        gpu_fault_starts=gpu_faults,
        jobs=jobs,
        interruptions=attributed,
        **_reliability_fields(frames, faults, attributed, jobs, acc, provisioned_h, (start, end)),
        daily=objectives.per_day(acc.segments, spec),
        data_quality=_data_quality(acc, frames, jobs, split, start, end),
        crawl=crawl_rows,
        node_scores=scores,
        slowdown_rule=dataclasses.asdict(spec.slowdown_rule()),
        accounting=acc,
        job_losses=losses,
        jobs_hit=serving_week.training_only(job_losses.jobs_hit(losses, acc, side),
                                          frames.replicas),
        serving=serving_week.serving_week(frames, start, end, spec),
    )


def _job_side(acc, split, known: pd.DataFrame):
    """(accounting, job-side split): the capacity accounting's split, or without capacity ticks
    the journals' own, the job side then setting the tick (`_job_tick`)."""
    if acc.provisioned_ticks:
        return acc, split
    acc = dataclasses.replace(acc, tick_ns=_job_tick(known, acc.tick_ns))
    return acc, journal_split(known, acc.tick_ns)


def _per_node(frames: Frames, start: pd.Timestamp, end: pd.Timestamp, spec: SloSpec,
              events: EventIndex) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Per (job, node) goodput from the journals (or, without events, the exporters' counters),
    finished jobs only where the source says so, and the journals' slowdowns."""
    per_node, slowdowns = attribution.goodput_and_slowdowns(frames.job_events, start, end,
                                                            spec.slowdown_rule(), events)
    if per_node.empty and len(frames.job_gpu_seconds):
        per_node = attribution.counted_goodput(frames.job_gpu_seconds)
    return _finished_only(per_node, frames.jobs_from), slowdowns


def _reliability_fields(frames: Frames, faults: pd.DataFrame, attributed: pd.DataFrame,
                        jobs: pd.DataFrame, acc, provisioned_h: float, window: tuple) -> dict:
    """WeeklyResult's reliability figures: MTBF/MTTR, lemon nodes, blast radius and the
    return-to-service gate's validations over the window."""
    start, end = window
    return {
        "reliability": reliability.mtbf_mttr(faults, frames.inventory, provisioned_h, start, end),
        "lemon_nodes": reliability.lemon_nodes(faults, start, end),
        "blast_radius": reliability.blast_radius(attributed, jobs, faults, frames.inventory, end),
        "return_to_service": reliability.return_to_service(frames.verdicts, acc.by_layer_reason,
                                                           start, end),
    }


def _crawl(frames: Frames, slowdowns: pd.DataFrame, nodes: pd.DataFrame, split,
           window: tuple[pd.Timestamp, pd.Timestamp], hours_per_tick: float,
           lost: tuple[dict, dict], events: EventIndex) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(slowdowns attributed, with gpu_hours from the journals — what the counters say — and
    capacity_gpu_hours — the share of the capacity accounting's slowdown category, capped by
    the job's allocated usable time —, node scores); adds the capacity slowdown GPU-hours to the
    lost-by-layer and lost-by-reason dicts of `lost` in place."""
    causes = crawl.degradation_causes(frames.verdicts, frames.degradations)
    if slowdowns.empty and len(frames.slowdowns):  # no journals: the counters' episodes
        slowdowns = crawl.counted_slowdowns(frames.slowdowns)
        nodes = pd.concat([nodes, frames.job_gpu_seconds[["job", "node"]]],
                          ignore_index=True).drop_duplicates()
    attributed = crawl.attribute_slowdowns(slowdowns, causes, nodes)
    job_hours = split.job_ticks[names.CATEGORY_SLOWDOWN] * hours_per_tick
    attributed["gpu_hours"] = attributed["gpu_seconds"] / 3600
    attributed["capacity_gpu_hours"] = crawl.scaled_hours(attributed, job_hours)
    crawl.slowdown_breakdown(attributed, job_hours, *lost)
    return attributed, crawl.node_scores(frames.job_events, *window, events)


def _interruption_rate(
    frames: Frames,
    faults: pd.DataFrame,
    interruptions: int,
    allocated_h: float,
    provisioned_h: float,
    start: pd.Timestamp,
    end: pd.Timestamp,
) -> tuple[float | None, str, int]:
    """(rate per 1000 GPU-days, basis, GPU fault starts in the window: GPUs hit, summed)."""
    in_window = faults[(faults["start"] >= start) & (faults["start"] < end)]
    gpu_faults = int(reliability.fault_gpus(in_window, frames.inventory).sum())
    allocated = allocated_h if len(frames.job_events) else 0.0
    return (
        *reliability.interruption_rate(interruptions, allocated, gpu_faults, provisioned_h),
        gpu_faults,
    )


def _slos(acc: Accounting, productive_h: float, job_h: float, spec: SloSpec,
          window_s: float) -> dict[str, objectives.SloStatus]:
    """usable_gpu: usable / provisioned; check_liveness: observed (neither no data nor unknown) /
    provisioned; job_goodput: productive / all job GPU-time of the journals (`goodput_ratio`)."""
    provisioned = acc.provisioned_seconds
    observed = (
        provisioned
        - acc.by_state[names.ACCOUNTING_NO_DATA]
        - acc.by_state[names.ACCOUNTING_UNKNOWN]
    )
    status = objectives.slo_status
    return {
        names.SLO_USABLE_GPU: status(
            names.SLO_USABLE_GPU, acc.usable_seconds, provisioned, spec, window_s
        ),
        names.SLO_CHECK_LIVENESS: status(
            names.SLO_CHECK_LIVENESS, observed, provisioned, spec, window_s
        ),
        names.SLO_JOB_GOODPUT: status(names.SLO_JOB_GOODPUT, productive_h, job_h, spec, window_s),
    }


def _goodput_known(jobs: pd.DataFrame, unknown: frozenset[str]
                   ) -> tuple[pd.DataFrame, pd.DataFrame, float]:
    """(every job, with goodput_ratio and ettr NaN for the `unknown` ones; the jobs whose
    goodput is known; the GPU-hours the others held, for the interruption rate). A job of
    `Frames.goodput_unknown` (a training log with no commit evidence) counts for its span, wall
    time and interruptions but in no goodput figure: the calculator would book its progress as
    uncommitted, a made-up 0.0."""
    if not unknown or jobs.empty:
        return jobs, jobs, 0.0
    hidden = jobs.index.isin(list(unknown))
    jobs = jobs.copy()
    jobs.loc[hidden, ["goodput_ratio", "ettr"]] = float("nan")
    return jobs, jobs[~hidden], _held_hours(jobs[hidden])


def _held_hours(jobs: pd.DataFrame, column: str = "allocated_gpu_seconds") -> float:
    """Σ `column` of `jobs` (job_summary rows, GPU-seconds) in GPU-hours; 0.0 without jobs."""
    return float(jobs[column].sum()) / 3600 if len(jobs) else 0.0


def _finished_only(per_node: pd.DataFrame, jobs_from: str) -> pd.DataFrame:
    """`per_node` with its uncommitted progress kept only where the journals are finished logs
    (`TRAINING_LOGS_BASIS`): a log's end is the job's last word, so the progress after its last
    commit is GPU-time no checkpoint saved, and `gpuslo goodput` divides by it too. A journal
    may still be running: the exporters' counters book its progress when a checkpoint or a
    restart settles it, and the report from journals keeps to their figures (0 here)."""
    if jobs_from == TRAINING_LOGS_BASIS or UNCOMMITTED not in per_node:
        return per_node
    return per_node.assign(**{UNCOMMITTED: 0.0})


def _job_ticks(fleet_ticks: dict[str, int]) -> dict[str, int]:
    """The job side's capacity categories: every job category, and `uncommitted` only where
    some progress was left uncommitted (journals book none: `_finished_only`), so a capacity
    table does not show a 0 for what its basis cannot have."""
    return {c: v for c, v in fleet_ticks.items() if v or c != names.CATEGORY_UNCOMMITTED}


def _window(frames: Frames, start, end) -> tuple[pd.Timestamp, pd.Timestamp]:
    span = frames.span()
    if (start is None or end is None) and span is None:
        raise InputError(
            frames.source or "frames", "no timestamps in the data; give --start and --end"
        )
    start = pd.Timestamp(start if start is not None else span[0])
    end = pd.Timestamp(end if end is not None else span[1])
    start = start.tz_localize("UTC") if start.tzinfo is None else start.tz_convert("UTC")
    end = end.tz_localize("UTC") if end.tzinfo is None else end.tz_convert("UTC")
    start, end = start.as_unit("ns"), end.as_unit("ns")  # one resolution for every cut
    if end <= start:
        raise InputError(frames.source or "frames", f"window end {end} is not after start {start}")
    return start, end


def _capacity_ticks(acc: Accounting) -> dict[str, int]:
    seg = acc.segments
    ticks = (seg["end"] - seg["start"]).to_numpy("int64") // acc.tick_ns
    out = {names.ACCOUNTING_NO_DATA: acc.state_ticks[names.ACCOUNTING_NO_DATA],
           names.ACCOUNTING_UNKNOWN: acc.state_ticks[names.ACCOUNTING_UNKNOWN]}
    unhealthy = (seg["state"] == names.ACCOUNTING_UNHEALTHY).to_numpy()
    for layer in names.LAYERS:
        out[f"unhealthy_{layer}"] = int(ticks[unhealthy & (seg["layer"] == layer).to_numpy()].sum())
    out[names.ACCOUNTING_UNSCHEDULABLE] = acc.state_ticks[names.ACCOUNTING_UNSCHEDULABLE]
    out[names.ACCOUNTING_IDLE] = acc.state_ticks[names.ACCOUNTING_IDLE]
    return out


def covered(frames: Frames, start: pd.Timestamp, end: pd.Timestamp) -> dict:
    """The part of [start, end) that the data's span covers: {"start", "end", "partial"}
    (`partial` when the window reaches before or past the data; start = end when disjoint)."""
    span = frames.span()
    if span is None:
        return {"start": start, "end": start, "partial": True}
    lo, hi = max(start, span[0]), min(end, span[1])
    lo, hi = (lo, hi) if lo < hi else (start, start)
    return {"start": lo, "end": hi, "partial": bool(lo > start or hi < end)}


def _data_quality(acc: Accounting, frames: Frames, jobs: pd.DataFrame, split, start, end) -> dict:
    observability = acc.by_layer_reason[acc.by_layer_reason["layer"] == names.LAYER_OBSERVABILITY]
    provisioned = acc.provisioned_seconds
    window = covered(frames, start, end)
    return {
        "no_data_gpu_hours": acc.by_state[names.ACCOUNTING_NO_DATA] / 3600,
        "unknown_gpu_hours": acc.by_state[names.ACCOUNTING_UNKNOWN] / 3600,
        "blind_ratio": (
            (acc.by_state[names.ACCOUNTING_NO_DATA] + acc.by_state[names.ACCOUNTING_UNKNOWN])
            / provisioned
        )
        if provisioned
        else None,
        "blind_gpu_hours_by_reason": {
            r: s / 3600
            for r, s in zip(observability["reason"], observability["seconds"], strict=True)
        },
        "jobs_without_journal": sorted(split.jobs_without_journal),
        # only where the source has allocations at all: training logs, or journals alone, have
        # none to miss (every job would be listed)
        "journals_without_allocation": sorted(set(jobs.index) - set(acc.job_seconds.index))
        if len(acc.job_seconds) else [],
        "cannot_fill": dict(sorted(frames.cannot_fill.items())),
        **({"goodput_logs": dict(zip(("known", "logs"), frames.goodput_logs, strict=True))}
           if frames.goodput_logs is not None else {}),
        "recorded_slis": frames.recorded,
        "recorded_check": recorded_check.compare(
            frames.recorded, acc.usable_seconds / provisioned if provisioned else None, window
        ),
        "covered": window,
        "source": frames.source,
        "tick_ns": acc.tick_ns,
    }
