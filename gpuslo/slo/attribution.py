"""Job goodput, ETTR and the attribution of job interruptions to faults (DESIGN.md §5).

- `job_goodput(job_events, start, end)` → one row per (job, node) with GPU-seconds per category
  in the window, from the one calculator `gpuslo.goodput.calculator.compute_goodput` (never
  re-implemented here): window amount = compute_goodput(until=end) −
  compute_goodput(until=start), the same `increase()` a Prometheus counter gives.
- `job_summary(per_node, job_events, start, end)` → per job: GPUs, wall seconds, productive and
  badput GPU-seconds, goodput ratio and ETTR.
- `find_interruptions(job_events, start, end)` → one row per job interruption.
- `attribute(interruptions, faults, job_nodes)` → each interruption with the layer and reason
  of the fault on one of the job's nodes that started within `BEFORE` before to `AFTER` after it
  (the nearest such fault; ties → the earlier), else `training` (reason `job_failure`).

ETTR (effective training time ratio) = productive time / wall time the job existed in the
window, as defined by Kokolis et al., "Revisiting Reliability in Large-Scale Machine Learning
Research Clusters" (Meta, arXiv:2410.21680, 2024).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from gpuslo import names
from gpuslo.goodput import journal
from gpuslo.goodput.calculator import compute_goodput
from gpuslo.goodput.slowdown import SlowdownRule
from gpuslo.slo.crawl import SLOWDOWN_COLUMNS, window_slowdowns

BEFORE = pd.Timedelta(minutes=10)
AFTER = pd.Timedelta(minutes=5)
# Interruptions of one job reported by several nodes within this span are one interruption.
SAME_INTERRUPTION = pd.Timedelta(minutes=5)
_CATEGORIES = list(names.JOB_CATEGORIES)


def _columns(ev: pd.DataFrame) -> dict[str, list]:
    """The job_events columns as Python lists (times in Unix seconds, <NA> → None)."""
    cols = {
        k: ev[k].to_numpy(dtype=object).tolist()
        for k in ("event", "job", "node", "category", "status", "layer")
    }
    cols["t"] = (ev["time"].to_numpy("int64") / 1e9).tolist()
    for key in ("step", "gpus", "count", "step_time_s", "compute_s"):
        if key in ev:
            cols[key] = ev[key].to_numpy(dtype=object, na_value=None).tolist()
        else:
            cols[key] = [None] * len(ev)
    return cols


def _event_dicts(cols: dict[str, list], a: int, b: int) -> list[dict]:
    """Rows a..b-1 as journal events (`gpuslo.goodput.journal.event`, schema v1), built per
    journal to bound memory."""
    out = []
    for i in range(a, b):
        kind, step, gpus = cols["event"][i], cols["step"][i], cols["gpus"][i]
        out.append(journal.event(
            kind, cols["t"][i], job=cols["job"][i], node=cols["node"][i],
            gpus=None if gpus is None else int(gpus),
            step=None if step is None else int(step),
            from_step=None if step is None else int(step),
            category=cols["category"][i], status=cols["status"][i], layer=cols["layer"][i],
            count=_int(cols["count"][i]), step_time_s=_float(cols["step_time_s"][i]),
            compute_s=_float(cols["compute_s"][i]),
        ))
    return out


def _int(value) -> int | None:
    return None if value is None else int(value)


def _float(value) -> float | None:
    return None if value is None else float(value)


def job_goodput(job_events: pd.DataFrame, start: pd.Timestamp, end: pd.Timestamp,
                rule: SlowdownRule | None = None) -> pd.DataFrame:
    """Per (job, node): GPU-seconds in [start, end) for every `names.JOB_CATEGORIES` (float64
    columns named after them), `gpus` (int64), `status` (string). Empty input → empty frame.
    One Python pass per event (the calculator is a fold), none per GPU or sample."""
    return goodput_and_slowdowns(job_events, start, end, rule)[0]


def goodput_and_slowdowns(
    job_events: pd.DataFrame, start: pd.Timestamp, end: pd.Timestamp,
    rule: SlowdownRule | None = None,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(`job_goodput`'s frame, slowdowns): one row per sustained slowdown of a (job, node) with
    GPU-seconds in the window — columns `SLOWDOWN_COLUMNS`: start/end of the slowdown (UTC),
    from_step/to_step, reference_s (seconds), ratio (mean step time / reference), gpus and
    gpu_seconds (what it put into `slowdown` within [start, end)), as `crawl.window_slowdowns`.
    `rule` is the SLO spec's sustained-slowdown rule (`SloSpec.slowdown_rule()`; default its
    defaults)."""
    ordered = job_events.sort_values(["job", "node", "time"], kind="stable").reset_index(drop=True)
    cols = _columns(ordered)
    key = (ordered["job"].astype(str) + "\0" + ordered["node"].astype(str)).to_numpy(dtype=object)
    bounds = np.flatnonzero(np.r_[True, key[1:] != key[:-1], True]) if len(key) else np.array([0])
    first_t = ordered["time"].to_numpy("int64")
    rows, slow = [], []
    for a, b in zip(bounds[:-1], bounds[1:], strict=True):
        group = _event_dicts(cols, a, b)
        upto = compute_goodput(group, until=end.value / 1e9, rule=rule)
        before = (
            compute_goodput(group, until=start.value / 1e9, rule=rule)
            if first_t[a] <= start.value else None
        )
        row = {
            c: upto.gpu_seconds[c] - (before.gpu_seconds[c] if before else 0.0) for c in _CATEGORIES
        }
        rows.append({"job": cols["job"][a], "node": cols["node"][a], "gpus": upto.gpus,
                     "status": upto.status, **row})
        slow += window_slowdowns(cols["job"][a], cols["node"][a], upto, before)
    columns = ["job", "node", "gpus", "status", *_CATEGORIES]
    frame = pd.DataFrame(rows, columns=columns)
    frame = frame.astype({"job": "string", "node": "string", "status": "string", "gpus": "int64"})
    slowdowns = pd.DataFrame(slow, columns=list(SLOWDOWN_COLUMNS))
    for col in ("start", "end"):
        slowdowns[col] = pd.to_datetime(slowdowns[col], unit="s", utc=True)
    return frame, slowdowns.astype(SLOWDOWN_COLUMNS)


def job_summary(
    per_node: pd.DataFrame, job_events: pd.DataFrame, start: pd.Timestamp, end: pd.Timestamp
) -> pd.DataFrame:
    """Per job (index job): gpus, wall_seconds (first event to last event, or to `end` while
    running; clipped to the window), one GPU-seconds column per category, allocated_gpu_seconds
    (their sum), goodput_ratio (productive / that sum) and ettr (productive GPU-seconds / gpus /
    wall_seconds), ratios 0–1 (NaN when undefined)."""
    if per_node.empty:
        return pd.DataFrame(columns=["gpus", "wall_seconds", *_CATEGORIES, "allocated_gpu_seconds",
                                     "goodput_ratio", "ettr"])
    jobs = per_node.groupby("job", observed=True)[["gpus", *_CATEGORIES]].sum()
    times = job_events.groupby("job", observed=True)["time"].agg(["min", "max"])
    finished = (
        job_events[job_events["event"] == "job_end"].groupby("job", observed=True)["time"].max()
    )
    last = times["max"].where(
        times.index.isin(finished.index) & (times["max"] >= finished.reindex(times.index)), end
    )
    status = per_node.groupby("job", observed=True)["status"].agg(
        lambda s: "running" if (s == "running").any() else s.iloc[0]
    )
    last = last.where(status.reindex(times.index) != "running", end)
    wall = (last.clip(upper=end) - times["min"].clip(lower=start)).dt.total_seconds().clip(lower=0)
    jobs["wall_seconds"] = wall.reindex(jobs.index)
    jobs["allocated_gpu_seconds"] = jobs[_CATEGORIES].sum(axis=1)
    jobs["goodput_ratio"] = jobs[names.CATEGORY_PRODUCTIVE] / jobs["allocated_gpu_seconds"].replace(
        0, np.nan
    )
    ettr = (
        jobs[names.CATEGORY_PRODUCTIVE]
        / jobs["gpus"].replace(0, np.nan)
        / jobs["wall_seconds"].replace(0, np.nan)
    )
    jobs["ettr"] = ettr.clip(upper=1.0)
    return jobs


def find_interruptions(
    job_events: pd.DataFrame, start: pd.Timestamp, end: pd.Timestamp
) -> pd.DataFrame:
    """One row per job interruption in [start, end): job (string), time (datetime64[ns, UTC]),
    declared_layer (string, "" when the job did not say). An interruption is a `job_end` with a
    status other than completed, or a `restart`/second `job_start` on a node whose previous event
    was not such a `job_end` (the journal just stopped: interrupted at its last event), as in
    `gpuslo.goodput`. Reports from several nodes within SAME_INTERRUPTION are merged."""
    ev = job_events.sort_values(["job", "node", "time"], kind="stable").reset_index(drop=True)
    job, node = ev["job"].to_numpy(dtype=object), ev["node"].to_numpy(dtype=object)
    event, status = ev["event"].to_numpy(dtype=object), ev["status"].to_numpy(dtype=object)
    same = np.zeros(len(ev), dtype=bool)
    same[1:] = (job[1:] == job[:-1]) & (node[1:] == node[:-1])
    failed_end = (event == "job_end") & (status != "completed")
    prev_end = np.zeros(len(ev), dtype=bool)
    prev_end[1:] = event[:-1] == "job_end"
    restart = same & np.isin(event, ["restart", "job_start"]) & ~prev_end
    prev_time = ev["time"].shift()
    found = pd.concat(
        [
            pd.DataFrame(
                {
                    "job": ev["job"][failed_end],
                    "time": ev["time"][failed_end],
                    "declared_layer": ev["layer"][failed_end],
                }
            ),
            pd.DataFrame(
                {
                    "job": ev["job"][restart],
                    "time": prev_time[restart],
                    "declared_layer": ev["layer"][restart],
                }
            ),
        ],
        ignore_index=True,
    )
    found = found[((found["time"] >= start) & (found["time"] < end)).to_numpy(dtype=bool)]
    found = found.sort_values(["job", "time"], kind="stable").reset_index(drop=True)
    fjob = found["job"].to_numpy(dtype=object)
    gap = found["time"].diff().to_numpy()
    new = np.ones(len(found), dtype=bool)
    new[1:] = (fjob[1:] != fjob[:-1]) | (gap[1:] > SAME_INTERRUPTION.to_timedelta64())
    first = found[new]
    return first.astype({"job": "string", "declared_layer": "string"}).reset_index(drop=True)


def job_nodes(job_events: pd.DataFrame, allocations: pd.DataFrame) -> pd.DataFrame:
    """Distinct (job, node) pairs from journals and allocations (string columns)."""
    pairs = pd.concat(
        [job_events[["job", "node"]], allocations[["job", "node"]]], ignore_index=True
    )
    return pairs[pairs["node"] != ""].drop_duplicates().reset_index(drop=True)


def attribute(
    interruptions: pd.DataFrame, faults: pd.DataFrame, nodes: pd.DataFrame
) -> pd.DataFrame:
    """`interruptions` plus layer, reason (string) and the fault it is attributed to: fault_node,
    fault_uuid (string, "" when none), fault_start (datetime64[ns, UTC], NaT when none).

    Window: fault start in [time − BEFORE, time + AFTER] inclusive, on a node of the job; a
    fault of a real layer is preferred over blind (observability) time, then the nearest, then
    the earlier. Without a fault: layer `training`, reason `job_failure`."""
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
    out["layer"] = out["layer"].fillna(names.LAYER_TRAINING)
    out["reason"] = out["reason"].fillna("job_failure")
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


@dataclass(frozen=True)
class FleetSplit:
    """Allocated usable time split into job categories, in integer ticks of the accounting.

    fleet_ticks: ticks per `names.JOB_CATEGORIES`; job_ticks: DataFrame (index job, one int64
    column per category); jobs_without_journal: allocated jobs with no journal events."""

    fleet_ticks: dict[str, int]
    job_ticks: pd.DataFrame
    jobs_without_journal: list[str]


def fleet_job_split(acc, jobs: pd.DataFrame) -> FleetSplit:
    """Split each job's allocated usable ticks (`acc`: gpuslo.slo.accounting.Accounting) by its
    goodput (`jobs`: job_summary): categories in `names.JOB_CATEGORIES` order, each capped at
    what is left; the rest is `other`, so every job's categories sum to its allocated ticks."""
    tick_ns = acc.tick_ns
    seg = acc.segments[acc.segments["job"] != ""]
    ticks = (seg["end"] - seg["start"]).to_numpy("int64") // tick_ns
    allocated = pd.Series(ticks, index=seg["job"].to_numpy()).groupby(level=0).sum()
    remaining = allocated.to_numpy(dtype=np.int64).copy()
    out = {}
    for category in _CATEGORIES:
        if category == "other":
            continue
        wanted = jobs[category].reindex(allocated.index).fillna(0.0) if category in jobs else 0.0
        want = np.floor(np.asarray(wanted, dtype=np.float64) * 1e9 / tick_ns).astype(np.int64)
        take = np.minimum(np.maximum(want, 0), remaining)
        out[category] = take
        remaining = remaining - take
    out["other"] = remaining
    job_ticks = pd.DataFrame(out, index=allocated.index)[_CATEGORIES]
    missing = sorted(set(allocated.index) - set(jobs.index))
    return FleetSplit({c: int(job_ticks[c].sum()) for c in _CATEGORIES}, job_ticks, missing)


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
