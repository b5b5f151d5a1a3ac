"""The serving figures of one report window (issue 29): `serving_week(frames, start, end, spec)`
→ a JSON-ready dict for `WeeklyResult.serving` (empty when the source has no replica).

Capacity from `gpuslo.slo.serving.serving_account` (GPU-hours per `names.SERVING_CATEGORIES`,
summing to the replicas' allocated GPU-hours; idle capacity apart from loss; `other` = the time
no readiness source describes, shown in the data-quality figures). Lost serving GPU-hours by
layer and by (layer, reason, category). Latency from the `replica_latency` frame (the engines'
own histograms): per objective of the spec's `serving` section (the defaults of
`gpuslo.serving_spec.ServingObjectives` when it has none), good = observations in the bucket
whose bound is the objective, total = all observations, per replica and fleet; an interval
counts in the window it starts in. A replica whose histogram has no bucket at the objective is
unknown on its own (never interpolated) and its observations count as not met in the fleet's
share, as in the serving rules' fleet ratio; a replica whose engine publishes no histogram has
no observation at all.
DistServe goodput (both objectives met by one request) needs request-level data: unknown here.

Keys: replicas, gpus (the most held at one time), allocated_gpu_hours, categories_gpu_hours,
lost_gpu_hours, lost_gpu_hours_by_layer, lost (rows: layer, reason, category, gpu_hours),
latency (per sli: objective_seconds, target, good, total, attainment or None, replicas_known,
replicas_unknown, why), replicas_most_hit (rows: replica, engine, node, gpus,
allocated_gpu_hours, lost_gpu_hours, layer, reason, ttft_attainment, itl_attainment; most lost
first, at most TOP), data_quality (other_gpu_hours, other_why, goodput_why,
replicas_without_histograms).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from gpuslo import names
from gpuslo.serving_spec import ServingObjectives
from gpuslo.slo.attribution import FleetSplit
from gpuslo.slo.frames import Frames, derive_faults
from gpuslo.slo.serving import ServingAccount, serving_account
from gpuslo.slo_spec import SloSpec

TOP = 10
SERVING_CATEGORY = "serving_replicas"  # the capacity category of replicas' allocated time
SLIS = {"ttft": ("ttft_seconds", "ttft_target", "requests whose first token came within"),
        "itl": ("itl_seconds", "itl_target", "output tokens (after the first) within")}
OTHER_WHY = ("allocated replica time that no readiness source (kube-state-metrics, the engine's "
             "own markers) describes")
GOODPUT_WHY = ("DistServe goodput (requests meeting both objectives at once) needs per-request "
               "data; the engines' histograms give each objective apart")


def split_off(split: FleetSplit, replicas: pd.DataFrame) -> FleetSplit:
    """The job side without the serving replicas: a replica's allocation is no training job (no
    journal: the split gave its time to `other`), so its allocated usable ticks move to the
    capacity category SERVING_CATEGORY (broken down by `serving_week`) and it leaves the jobs
    without a journal. `split` itself when no allocation is a replica's."""
    mine = split.job_ticks.index.isin(replicas["replica"].astype(str).unique())
    if not mine.any():
        return split
    kept = split.job_ticks[~mine]
    ticks = {category: int(kept[category].sum()) for category in split.job_ticks.columns}
    ticks[SERVING_CATEGORY] = int(split.job_ticks[mine].to_numpy().sum())
    moved = set(split.job_ticks.index[mine])
    return FleetSplit(ticks, kept, [j for j in split.jobs_without_journal if j not in moved])


def training_only(rows: pd.DataFrame, replicas: pd.DataFrame) -> pd.DataFrame:
    """`rows` (any frame with a `job` column) without the serving replicas' rows."""
    return rows[~rows["job"].isin(replicas["replica"].astype(str).unique())].reset_index(
        drop=True)


def serving_week(frames: Frames, start: pd.Timestamp, end: pd.Timestamp, spec: SloSpec) -> dict:
    """The serving figures of [start, end) (module docstring); {} without replicas."""
    replicas = frames.replicas
    live = replicas[(replicas["start"] < end) & (replicas["end"].fillna(end) > start)]
    if live.empty:
        return {}
    acc = serving_account(live, frames.replica_states, frames.replica_idle,
                          derive_faults(frames.verdicts), start, end)
    objectives = spec.serving or ServingObjectives()
    latency, per_replica = _latency(frames.replica_latency, live, objectives, start, end)
    hours = acc.fleet_hours()
    lost = acc.lost.assign(gpu_hours=acc.lost["gpu_seconds"] / 3600).drop(columns="gpu_seconds")
    lost = lost.sort_values(["gpu_hours", "layer", "reason"], ascending=[False, True, True])
    engines = live.groupby("replica", observed=True)["engine"].first()
    silent = sorted(set(live["replica"]) - set(frames.replica_latency["replica"]))
    return {
        "replicas": int(live["replica"].nunique()),
        "gpus": _peak_gpus(live, start, end),
        "allocated_gpu_hours": acc.allocated_ticks * acc.tick_ns / 3.6e12,
        "categories_gpu_hours": hours,
        "lost_gpu_hours": sum(hours[c] for c in names.SERVING_LOST),
        "lost_gpu_hours_by_layer": acc.lost_by_layer(),
        "lost": lost.to_dict("records"),
        "latency": latency,
        "replicas_most_hit": _most_hit(acc, live, per_replica),
        "data_quality": {
            "other_gpu_hours": hours["other"], "other_why": OTHER_WHY,
            "goodput_why": GOODPUT_WHY,
            "replicas_without_histograms": {
                "count": len(silent),
                "engines": sorted({str(engines.get(r, "")) or "unknown" for r in silent}),
            },
        },
    }


def _peak_gpus(live: pd.DataFrame, start: pd.Timestamp, end: pd.Timestamp) -> int:
    """The most GPUs the replicas held at one time in the window (ends before starts)."""
    s = live["start"].clip(lower=start).to_numpy("datetime64[ns]").astype(np.int64)
    e = live["end"].fillna(end).clip(upper=end).to_numpy("datetime64[ns]").astype(np.int64)
    gpus = live["gpus"].to_numpy(dtype=np.int64)
    order = np.lexsort((np.r_[np.ones(len(s)), np.zeros(len(e))], np.r_[s, e]))
    held = np.cumsum(np.r_[gpus, -gpus][order])
    return int(held.max()) if len(held) else 0


def _latency(rows: pd.DataFrame, live: pd.DataFrame, objectives: ServingObjectives,
             start: pd.Timestamp, end: pd.Timestamp) -> tuple[dict, pd.DataFrame]:
    """(fleet latency dict per sli, per-replica attainment frame: index replica, columns sli).
    As the serving rules' fleet ratio: good at the objective over every replica's total, so a
    replica without the bucket counts its observations as not met (fail closed; it is unknown
    on its own); no replica with the bucket → unknown."""
    rows = rows[(rows["start"] >= start) & (rows["start"] < end)
                & rows["replica"].isin(live["replica"])]
    out, per = {}, {}
    for sli, (seconds_field, target_field, what) in SLIS.items():
        objective = getattr(objectives, seconds_field)
        mine = rows[rows["sli"] == sli]
        at = mine[np.isclose(mine["le"].astype(float), objective, rtol=1e-9, atol=0.0)]
        good = at.groupby("replica", observed=True)["good"].sum().astype(float)
        known = at.groupby("replica", observed=True)["total"].sum().astype(float)
        whole = mine.drop_duplicates(["replica", "start", "end"])["total"].astype(float).sum()
        per[sli] = (good / known.where(known > 0)).clip(upper=1.0)
        unknown = sorted(set(mine["replica"]) - set(at["replica"]))
        fleet = float(whole) if len(at) and whole > 0 else 0.0
        out[sli] = {
            "objective_seconds": objective, "target": getattr(objectives, target_field),
            "what": what, "good": float(good.sum()), "total": float(whole),
            "attainment": min(float(good.sum()) / fleet, 1.0) if fleet else None,
            "replicas_known": int(len(known)), "replicas_unknown": len(unknown),
            "why": None if fleet else (
                "the objective is not a bucket bound of any histogram" if len(mine)
                else "no replica published this histogram in the window"),
        }
    return out, pd.DataFrame(per)


def _most_hit(acc: ServingAccount, live: pd.DataFrame, per_replica: pd.DataFrame) -> list[dict]:
    """Replicas by lost serving GPU-hours (most first, at most TOP), with their main cause."""
    seg = acc.segments[acc.segments["category"].isin(names.SERVING_LOST)]
    if seg.empty:
        return []
    by = seg.groupby(["replica", "layer", "reason"], observed=True, as_index=False)[
        "gpu_seconds"].sum()
    main = by.sort_values(["replica", "gpu_seconds", "layer", "reason"],
                          ascending=[True, False, True, True]).drop_duplicates("replica")
    lost = by.groupby("replica", observed=True)["gpu_seconds"].sum()
    first = live.groupby("replica", observed=True)[["engine", "node"]].first()
    rows = []
    for row in main.itertuples(index=False):
        def attained(sli: str, replica=row.replica):
            value = per_replica[sli].get(replica) if sli in per_replica else None
            return None if value is None or pd.isna(value) else float(value)
        rows.append({
            "replica": row.replica, "engine": str(first.loc[row.replica, "engine"]),
            "node": str(first.loc[row.replica, "node"]),
            "gpus": int(acc.by_replica.loc[row.replica, "gpus"]),
            "allocated_gpu_hours": float(acc.by_replica.loc[row.replica,
                                                            "allocated_gpu_seconds"]) / 3600,
            "lost_gpu_hours": float(lost[row.replica]) / 3600, "layer": row.layer,
            "reason": row.reason, "ttft_attainment": attained("ttft"),
            "itl_attainment": attained("itl"),
        })
    rows.sort(key=lambda r: (-r["lost_gpu_hours"], r["replica"]))
    return rows[:TOP]
