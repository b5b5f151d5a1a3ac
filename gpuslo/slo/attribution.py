"""Job goodput, ETTR and the attribution of job interruptions to faults (DESIGN.md §5).

- `job_goodput(job_events, start, end)` / `goodput_and_slowdowns` (from
  `gpuslo.slo.journal_goodput`) → one row per (job, node) with GPU-seconds per category in the
  window, from the one calculator (never re-implemented here): window amount = total at `end` −
  total at `start`, the same increase the exporter's counters show.
- `job_summary(per_node, job_events, start, end)` → per job: GPUs, wall seconds, productive and
  badput GPU-seconds, goodput ratio and ETTR.
- `find_interruptions(job_events, start, end)` → one row per job interruption.
- `attribute(interruptions, faults, job_nodes)` → each interruption with the layer and reason
  of the fault on one of the job's nodes that started within `BEFORE` before to `AFTER` after it
  (the nearest such fault; ties → the earlier), else the layer of the job's own account
  (`goodput.calculator.interruption_layer`, the calculator's rule: the layer it declared, else
  `training` for a failure it reported, else `observability`), with its
  `names.OWN_ACCOUNT_REASON` (`job_failure` for training).

ETTR (effective training time ratio) = productive time / wall time the job existed in the
window, as defined by Kokolis et al., "Revisiting Reliability in Large-Scale Machine Learning
Research Clusters" (Meta, arXiv:2410.21680, 2024).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from gpuslo import names
from gpuslo.goodput.calculator import EVENTS, STATUSES, interruption_layer
from gpuslo.slo.events import EventIndex, index_events
from gpuslo.slo.journal_goodput import (
    UNCOMMITTED,
    counted_goodput,
    goodput_and_slowdowns,
    job_goodput,
)

__all__ = ["attribute", "counted_goodput", "find_interruptions", "fleet_job_split",
           "goodput_and_slowdowns", "job_goodput", "job_nodes", "job_summary", "lost_breakdown"]

BEFORE = pd.Timedelta(minutes=10)
AFTER = pd.Timedelta(minutes=5)
# Interruptions of one job reported by several nodes within this span are one interruption.
SAME_INTERRUPTION = pd.Timedelta(minutes=5)
_CATEGORIES = list(names.JOB_CATEGORIES)
_SPLIT = list(names.ALLOCATED_CATEGORIES)  # a job's allocated time: categories + uncommitted
_JOB_END, _COMPLETED = EVENTS.index("job_end"), STATUSES.index("completed")
_CHECKPOINT, _RESTART = EVENTS.index("checkpoint"), EVENTS.index("restart")


def job_summary(
    per_node: pd.DataFrame, job_events: pd.DataFrame, start: pd.Timestamp, end: pd.Timestamp,
    index: EventIndex | None = None, ends_at_last_event: bool = False,
) -> pd.DataFrame:
    """Per job (index job): gpus, wall_seconds (first event to last event, or to `end` while
    running; clipped to the window. `ends_at_last_event`: the events are finished training
    logs, whose last line is the job's last word, so no job runs on past its last event: its
    wall time is its own span, as `gpuslo goodput` gives it; a directory of logs spanning four
    years gave each job the whole window, ETTR 0.0000, newcomer4 finding 6), one GPU-seconds
    column per category, `uncommitted` (the change of the calculator's uncommitted progress in
    the window, 0 where the counters were read), allocated_gpu_seconds (their sum: the
    GPU-time the journals show, as `gpuslo goodput` and the calculator's `summary` account it),
    goodput_ratio (productive / that sum) and ettr (productive GPU-seconds / gpus /
    wall_seconds), ratios 0–1 (NaN when undefined, and when the job's journals hold no commit
    evidence: `committed`, bool — no checkpoint, no restart from a step — so which progress was
    committed cannot be known, as `gpuslo goodput` says of a log with none; its GPU-time stays
    allocated)."""
    if per_node.empty:
        return pd.DataFrame(columns=["gpus", "wall_seconds", *_CATEGORIES, UNCOMMITTED,
                                     "allocated_gpu_seconds", "goodput_ratio", "ettr",
                                     "committed"])
    if UNCOMMITTED not in per_node:
        per_node = per_node.assign(**{UNCOMMITTED: 0.0})
    jobs = per_node.groupby("job", observed=True)[["gpus", *_CATEGORIES, UNCOMMITTED]].sum()
    times, finished = _job_times(index if index is not None else index_events(job_events))
    last = times["max"]
    if not ends_at_last_event:
        last = last.where(
            times.index.isin(finished.index) & (times["max"] >= finished.reindex(times.index)),
            end)
        status = per_node.groupby("job", observed=True)["status"].agg(
            lambda s: "running" if (s == "running").any() else s.iloc[0]
        )
        last = last.where(status.reindex(times.index) != "running", end)
    wall = (last.clip(upper=end) - times["min"].clip(lower=start)).dt.total_seconds().clip(lower=0)
    jobs["wall_seconds"] = wall.reindex(jobs.index)
    jobs["allocated_gpu_seconds"] = jobs[[*_CATEGORIES, UNCOMMITTED]].sum(axis=1)
    jobs["goodput_ratio"] = jobs[names.CATEGORY_PRODUCTIVE] / jobs["allocated_gpu_seconds"].replace(
        0, np.nan
    )
    ettr = (
        jobs[names.CATEGORY_PRODUCTIVE]
        / jobs["gpus"].replace(0, np.nan)
        / jobs["wall_seconds"].replace(0, np.nan)
    )
    jobs["ettr"] = ettr.clip(upper=1.0)
    committed = _committed(index if index is not None else index_events(job_events))
    jobs["committed"] = committed.reindex(jobs.index, fill_value=True).astype(bool)
    jobs.loc[~jobs["committed"], ["goodput_ratio", "ettr"]] = np.nan
    return jobs


def _committed(idx: EventIndex) -> pd.Series:
    """Per job: whether its journals hold commit evidence (a checkpoint, or a restart from a
    step: a restore proves the commit of that step)."""
    if not len(idx):
        return pd.Series([], dtype=bool)
    rows = idx.job_starts()
    evidence = (idx.event == _CHECKPOINT) | ((idx.event == _RESTART) & ~np.isnan(idx.step))
    return pd.Series(np.maximum.reduceat(evidence.astype(np.int8), rows) > 0,
                     index=pd.Index(idx.jobs[idx.job[rows]], name="job"))


def _job_times(idx: EventIndex) -> tuple[pd.DataFrame, pd.Series]:
    """(first and last event time per job: columns min, max; the last job_end time per job)."""
    if not len(idx):
        stamp = pd.Series([], dtype="datetime64[ns, UTC]")
        return pd.DataFrame({"min": stamp, "max": stamp}), stamp
    rows = idx.job_starts()
    names_ = pd.Index(idx.jobs[idx.job[rows]], name="job")
    stamp = lambda ns: pd.to_datetime(ns, utc=True)  # noqa: E731
    times = pd.DataFrame({"min": stamp(np.minimum.reduceat(idx.t_ns, rows)),
                          "max": stamp(np.maximum.reduceat(idx.t_ns, rows))}, index=names_)
    ended = np.maximum.reduceat(np.where(idx.event == _JOB_END, idx.t_ns, np.iinfo(np.int64).min),
                                rows)
    has = ended > np.iinfo(np.int64).min
    return times, pd.Series(stamp(ended[has]), index=names_[has])


def find_interruptions(
    job_events: pd.DataFrame, start: pd.Timestamp, end: pd.Timestamp,
    index: EventIndex | None = None,
) -> pd.DataFrame:
    """One row per job interruption in (start, end] (the calculator's counters' window, as
    `job_goodput` sums it, so an interruption at the last event counts): job (string), time
    (datetime64[ns, UTC]), declared_layer (string, "" when the job did not say), reported (bool:
    a `job_end` the job wrote, not a journal that just stopped). An interruption is a `job_end`
    with a status other than completed, or a `restart`/second `job_start` on a node whose
    previous event was not such a `job_end` (the journal just stopped: interrupted at its last
    event), as in `gpuslo.goodput`. Reports from several nodes within SAME_INTERRUPTION are
    merged."""
    idx = index if index is not None else index_events(job_events)
    event = idx.event
    same = np.zeros(len(idx), dtype=bool)
    same[1:] = idx.group[1:] == idx.group[:-1]
    failed_end = (event == _JOB_END) & (idx.status != _COMPLETED)
    prev_end = np.zeros(len(idx), dtype=bool)
    prev_end[1:] = event[:-1] == _JOB_END
    restart = same & (event <= 1) & ~prev_end  # restart or job_start (EVENTS codes 0, 1)
    prev_time = np.r_[0, idx.t_ns[:-1]]
    job = np.r_[idx.job[failed_end], idx.job[restart]]
    t = np.r_[idx.t_ns[failed_end], prev_time[restart]]
    layer = np.r_[idx.layer[failed_end], idx.layer[restart]]
    reported = np.r_[np.ones(int(failed_end.sum()), bool), np.zeros(int(restart.sum()), bool)]
    keep = (t > start.value) & (t <= end.value)
    job, t, layer, reported = job[keep], t[keep], layer[keep], reported[keep]
    order = np.lexsort((t, job))  # jobs' codes follow their sorted names
    job, t, layer, reported = job[order], t[order], layer[order], reported[order]
    new = np.ones(len(t), dtype=bool)
    new[1:] = (job[1:] != job[:-1]) | (np.diff(t) > SAME_INTERRUPTION.value)
    layers = np.array([*names.LAYERS, ""], dtype=object)
    return pd.DataFrame({
        "job": pd.array(idx.jobs[job[new]], dtype="string"),
        "time": pd.to_datetime(t[new], utc=True),
        "declared_layer": pd.array(layers[layer[new]], dtype="string"),
        "reported": reported[new],
    })


def job_nodes(job_events: pd.DataFrame, allocations: pd.DataFrame,
              index: EventIndex | None = None) -> pd.DataFrame:
    """Distinct (job, node) pairs from journals and allocations (string columns)."""
    idx = index if index is not None else index_events(job_events)
    journals = pd.DataFrame({"job": pd.array(idx.jobs[idx.job[idx.first]], dtype="string"),
                             "node": pd.array(idx.nodes[idx.node[idx.first]], dtype="string")})
    pairs = pd.concat([journals, allocations[["job", "node"]].drop_duplicates()],
                      ignore_index=True)
    return pairs[pairs["node"] != ""].drop_duplicates().reset_index(drop=True)


def attribute(
    interruptions: pd.DataFrame, faults: pd.DataFrame, nodes: pd.DataFrame
) -> pd.DataFrame:
    """`interruptions` plus layer, reason (string) and the fault it is attributed to: fault_node,
    fault_uuid (string, "" when none), fault_start (datetime64[ns, UTC], NaT when none).

    Window: fault start in [time − BEFORE, time + AFTER] inclusive, on a node of the job; a
    fault of a real layer is preferred over blind (observability) time, then the nearest, then
    the earlier. Without a fault: the layer of the job's own account (`interruption_layer` of
    declared_layer and reported, as the calculator counts it; a frame without `reported` is
    read as failures the job reported) and its `names.OWN_ACCOUNT_REASON`."""
    base = interruptions.reset_index(drop=True).assign(key=lambda f: np.arange(len(f)))
    cand = base.merge(nodes, on="job").merge(
        faults.rename(columns={"uuid": "fault_uuid", "start": "fault_start"})[
            ["node", "fault_uuid", "fault_start", "reason", "layer"]
        ],
        on="node",
    )
    delta = cand["fault_start"] - cand["time"]
    cand = cand[(delta >= -BEFORE) & (delta <= AFTER)]
    cand = cand.assign(distance=delta.abs(), blind=cand["layer"] == names.LAYER_OBSERVABILITY)
    best = cand.sort_values(
        ["key", "blind", "distance", "fault_start"], kind="stable"
    ).drop_duplicates("key")
    out = base.merge(
        best[["key", "node", "fault_uuid", "fault_start", "reason", "layer"]], on="key", how="left"
    )
    out = out.rename(columns={"node": "fault_node"})
    own = _own_account(out)
    out["layer"] = out["layer"].fillna(own)
    out["reason"] = out["reason"].fillna(own.map(names.OWN_ACCOUNT_REASON))
    out[["fault_node", "fault_uuid"]] = out[["fault_node", "fault_uuid"]].fillna("")
    columns = [
        "job",
        "time",
        "declared_layer",
        "layer",
        "reason",
        "fault_node",
        "fault_uuid",
        "fault_start",
    ]
    return out[columns].astype(
        {c: "string" for c in ("layer", "reason", "fault_node", "fault_uuid")}
    )


def _own_account(interruptions: pd.DataFrame) -> pd.Series:
    """Each interruption's layer by the job's own account (`interruption_layer`)."""
    declared = interruptions["declared_layer"].fillna("").astype(str)
    reported = (interruptions["reported"] if "reported" in interruptions
                else pd.Series(True, index=interruptions.index))
    return pd.Series([interruption_layer(d, bool(r)) for d, r in zip(declared, reported,
                                                                      strict=True)],
                     index=interruptions.index, dtype=object)


@dataclass(frozen=True)
class FleetSplit:
    """Allocated usable time split into job categories, in integer ticks of the accounting.

    fleet_ticks: ticks per `names.ALLOCATED_CATEGORIES` (the job categories and the progress no
    checkpoint committed yet, `uncommitted`: they sum to the allocated ticks); job_ticks:
    DataFrame (index job, one int64 column per category); jobs_without_journal: allocated jobs
    with no journal events."""

    fleet_ticks: dict[str, int]
    job_ticks: pd.DataFrame
    jobs_without_journal: list[str]


def fleet_job_split(acc, jobs: pd.DataFrame) -> FleetSplit:
    """Split each job's allocated usable ticks (`acc`: gpuslo.slo.accounting.Accounting) by its
    goodput (`jobs`: job_summary): categories in `names.ALLOCATED_CATEGORIES` order (uncommitted
    progress after slowdown), each capped at what is left; the rest is `other`, so every job's
    categories sum to its allocated ticks."""
    tick_ns = acc.tick_ns
    seg = acc.segments[acc.segments["job"] != ""]
    ticks = (seg["end"] - seg["start"]).to_numpy("int64") // tick_ns
    allocated = pd.Series(ticks, index=seg["job"].to_numpy()).groupby(level=0).sum()
    remaining = allocated.to_numpy(dtype=np.int64).copy()
    out = {}
    for category in _SPLIT:
        if category == "other":
            continue
        wanted = jobs[category].reindex(allocated.index).fillna(0.0) if category in jobs else 0.0
        want = np.floor(np.asarray(wanted, dtype=np.float64) * 1e9 / tick_ns).astype(np.int64)
        take = np.minimum(np.maximum(want, 0), remaining)
        out[category] = take
        remaining = remaining - take
    out["other"] = remaining
    job_ticks = pd.DataFrame(out, index=allocated.index)[_SPLIT]
    missing = sorted(set(allocated.index) - set(jobs.index))
    return FleetSplit({c: int(job_ticks[c].sum()) for c in _SPLIT}, job_ticks, missing)


def journal_split(jobs: pd.DataFrame, tick_ns: int) -> FleetSplit:
    """The job side when there is no capacity accounting (journals or training logs alone):
    each job's GPU-time by category as its journals record it (`jobs`: job_summary, seconds),
    in ticks of `tick_ns`, so `lost_breakdown`, the crawl and the job losses read it as they
    read `fleet_job_split`'s capacity split — one model of the job side, whatever the source.
    Uncommitted progress is a category here as in `job_summary`'s allocated_gpu_seconds (zero
    where the engine keeps to the counters' figures), so each job's ticks sum to its allocated
    GPU-time (to within the floor of each category to a tick)."""
    columns = {c: (jobs[c] if c in jobs else pd.Series(0.0, index=jobs.index)).fillna(0.0)
               for c in _SPLIT}
    job_ticks = pd.DataFrame(
        {c: np.floor(v.to_numpy(dtype=np.float64) * 1e9 / tick_ns).astype(np.int64)
         for c, v in columns.items()}, index=jobs.index)[_SPLIT]
    return FleetSplit({c: int(job_ticks[c].sum()) for c in _SPLIT}, job_ticks, [])


def lost_breakdown(
    acc, split: FleetSplit, attributed: pd.DataFrame
) -> tuple[dict[str, float], dict[str, float]]:
    """(lost GPU-hours by layer — every names.LAYERS key, lost GPU-hours by reason) from
    capacity loss (acc.by_layer_reason) and badput (split); see gpuslo.slo.engine for rules.
    Slowdown is left out: `gpuslo.slo.crawl.slowdown_breakdown` attributes it."""
    hours = acc.tick_ns / 3.6e12
    by_layer = dict.fromkeys(names.LAYERS, 0.0)
    by_reason: dict[str, float] = {}
    for layer, reason, seconds in acc.by_layer_reason.itertuples(index=False):
        by_layer[layer] += seconds / 3600
        by_reason[reason] = by_reason.get(reason, 0.0) + seconds / 3600
    for category in names.BADPUT_CATEGORIES:
        if category not in ("wasted_progress", "recovery", names.CATEGORY_SLOWDOWN):
            by_layer[names.LAYER_TRAINING] += split.fleet_ticks[category] * hours
            by_reason[category] = by_reason.get(category, 0.0) + split.fleet_ticks[category] * hours
    lost = split.job_ticks[["wasted_progress", "recovery"]] * hours
    share = attributed.groupby("job", observed=True).size()
    hit = attributed.merge(lost, left_on="job", right_index=True)
    hit = hit.assign(w=hit["job"].map(share).astype("float64"))
    for category in ("wasted_progress", "recovery"):
        amounts = hit[category] / hit["w"]
        for (layer, reason), value in amounts.groupby([hit["layer"], hit["reason"]]).sum().items():
            by_layer[layer] += float(value)
            by_reason[reason] = by_reason.get(reason, 0.0) + float(value)
        rest = float(lost.loc[~lost.index.isin(share.index), category].sum())
        by_layer[names.LAYER_TRAINING] += rest
        if rest:
            by_reason[category] = by_reason.get(category, 0.0) + rest
    return by_layer, {k: v for k, v in sorted(by_reason.items()) if v}
