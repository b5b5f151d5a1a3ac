"""The crawl: GPU-hours lost to slow steps, the degradations that explain them, and per-node
performance scores that name the stragglers (DESIGN.md §4, the `slowdown` category).

- `node_scores(job_events, start, end)` → per (job, node) with compute times: compute_s (median
  of the `steps` events' `compute_s` in the window, seconds), score (interval by interval at the
  same step, the job's fastest node's compute time / this node's — 1 = the fastest, 0.5 = twice
  as slow — and the node's lowest in the window: a straggler for a few hours of a week is still
  named) and
  individual_score (the node's own best compute time / its worst), the relative and individual
  performance scores of NVIDIA's nvidia-resiliency-ext straggler detection, per node. The
  recording rules `gpuslo:job_node_performance:score` compute the relative one from
  `gpuslo_job_step_compute_seconds`.
- `degradation_causes(verdicts, degradations)` → node, uuid, start, end, reason: every interval
  with a reason of `names.DEGRADATION_REASONS`, whether its verdict was fail (network devices
  below expected, HW slowdown) or warn (the `degradations` frame: SW power capping, port error
  rates, link flaps).
- `attribute_slowdowns(slowdowns, causes, job_nodes)` → each slowdown
  (`attribution.goodput_and_slowdowns`) with layer, reason and cause_node: a degradation active
  on one of the job's nodes during the slowdown (the one overlapping it longest, then the earlier,
  then the node name) makes it `node` with that reason and node; else `training`, reason
  `slowdown` (the job's own: a data pipeline, a regression, or a straggler no check explains).
- `counted_slowdowns(slowdowns)` → the `slowdowns` frame (episodes the Prometheus source read
  from the counters) in SLOWDOWN_COLUMNS, where the journals' episodes are not available.
- `crawl_table(attributed, slowdown_hours, scores)` → the report's rows.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from gpuslo import names
from gpuslo.goodput.calculator import EVENTS
from gpuslo.slo.events import EventIndex, batch_rows, batches, index_events
from gpuslo.slo.frames import derive_faults

SLOWDOWN_COLUMNS = {
    "job": "string", "node": "string", "start": "datetime64[ns, UTC]",
    "end": "datetime64[ns, UTC]", "from_step": "int64", "to_step": "int64",
    "reference_s": "float64", "ratio": "float64", "gpus": "int64", "gpu_seconds": "float64",
}
SCORE_COLUMNS = ["job", "node", "compute_s", "intervals", "score", "individual_score"]
_STEPS = EVENTS.index("steps")


def window_slowdowns(job: str, node: str, upto, before) -> list[dict]:
    """Slowdown rows (SLOWDOWN_COLUMNS, times in Unix seconds) of one (job, node): the episodes
    of `upto` (a `JobGoodput` at the window end) less what `before` (at the window start, or
    None) already counted of the same episode (same start)."""
    counted = {e.start_t: e.gpu_seconds for e in before.slowdowns} if before else {}
    out = []
    for e in upto.slowdowns:
        seconds = e.gpu_seconds - counted.get(e.start_t, 0.0)
        if seconds > 0:
            out.append({"job": job, "node": node, "start": e.start_t, "end": e.end_t,
                        "from_step": e.from_step, "to_step": e.to_step,
                        "reference_s": e.reference_s, "ratio": e.ratio, "gpus": upto.gpus,
                        "gpu_seconds": seconds})
    return out


def counted_slowdowns(slowdowns: pd.DataFrame) -> pd.DataFrame:
    """The `slowdowns` frame (job, node, start, end, gpu_seconds) as SLOWDOWN_COLUMNS rows: what
    a counter cannot say — the steps, reference, ratio and GPUs — is -1, NaN or 0."""
    return pd.DataFrame({
        "job": slowdowns["job"], "node": slowdowns["node"], "start": slowdowns["start"],
        "end": slowdowns["end"], "from_step": -1, "to_step": -1, "reference_s": np.nan,
        "ratio": np.nan, "gpus": 0, "gpu_seconds": slowdowns["gpu_seconds"],
    }).astype(SLOWDOWN_COLUMNS).reset_index(drop=True)


def node_scores(job_events: pd.DataFrame, start: pd.Timestamp, end: pd.Timestamp,
                index: EventIndex | None = None) -> pd.DataFrame:
    """Per (job, node) that reported compute times in [start, end): columns SCORE_COLUMNS
    (compute_s seconds, intervals int64, scores ratios 0–1), lowest score first (then lowest
    individual score: a one-node job is its own fastest node, only its own best tells).
    `index` is `index_events(job_events)` when the caller has it: the events are grouped by its
    integer codes, not by their names, a batch of whole jobs at a time (every score compares
    the nodes of one job)."""
    if "compute_s" not in job_events or job_events.empty:
        return pd.DataFrame(columns=SCORE_COLUMNS)
    idx = index if index is not None else index_events(job_events)
    compute = job_events["compute_s"].array
    job_first = idx.job_starts()
    parts = []
    for j0, j1 in batches(job_first, len(idx)):
        a, b = batch_rows(job_first, len(idx), j0, j1)
        rows = a + np.flatnonzero((idx.event[a:b] == _STEPS) & (idx.t_ns[a:b] >= start.value)
                                  & (idx.t_ns[a:b] < end.value))
        compute_s = compute[idx.order[rows]].to_numpy(dtype="float64", na_value=np.nan)
        kept = compute_s > 0  # NaN (not reported) is not
        if kept.any():
            parts.append(_scores(idx.job[rows[kept]], idx.node[rows[kept]],
                                 idx.step[rows[kept]], compute_s[kept]))
    if not parts:
        return pd.DataFrame(columns=SCORE_COLUMNS)
    out = pd.concat(parts, ignore_index=True)
    # job and node codes sort as their names do (index_events numbers them in sorted order)
    order = ["score", "individual_score", "job", "node"]
    out = out.sort_values(order, kind="stable").reset_index(drop=True)
    out["job"], out["node"] = idx.jobs[out["job"]], idx.nodes[out["node"]]
    return out[SCORE_COLUMNS].astype({"job": "string", "node": "string", "intervals": "int64"})


def _scores(job: np.ndarray, node: np.ndarray, step: np.ndarray,
            compute_s: np.ndarray) -> pd.DataFrame:
    """node_scores' columns per (job, node code) from the steps events of whole jobs."""
    ev = pd.DataFrame({"job": job, "node": node, "step": step, "compute_s": compute_s})
    # Nodes of a gang log the same steps: compare them interval by interval at the same step;
    # where no step is logged by two nodes (time-based windows), compare their medians.
    at_step = ev.groupby(["job", "step"])["compute_s"]
    fastest = at_step.transform("min")
    aligned = at_step.transform("size").groupby(ev["job"]).transform("max") > 1
    median = ev.groupby(["job", "node"])["compute_s"].transform("median")
    fastest_median = median.groupby(ev["job"]).transform("min")
    ev = ev.assign(score=(fastest / ev["compute_s"]).where(aligned, fastest_median / median))
    out = ev.groupby(["job", "node"]).agg(
        compute_s=("compute_s", "median"), best=("compute_s", "min"),
        worst=("compute_s", "max"), intervals=("compute_s", "size"),
        score=("score", "min")).reset_index()
    out["individual_score"] = out["best"] / out["worst"]
    return out


def degradation_causes(verdicts: pd.DataFrame, degradations: pd.DataFrame) -> pd.DataFrame:
    """Degradation intervals (node, uuid, start, end, reason) from fail/unknown verdicts with a
    degradation reason and from the warn-level `degradations` frame."""
    faults = derive_faults(verdicts)
    faults = faults[faults["reason"].isin(names.DEGRADATION_REASONS)]
    columns = ["node", "uuid", "start", "end", "reason"]
    return pd.concat([faults[columns], degradations[columns]], ignore_index=True)


def attribute_slowdowns(
    slowdowns: pd.DataFrame, causes: pd.DataFrame, job_nodes: pd.DataFrame
) -> pd.DataFrame:
    """`slowdowns` plus layer, reason and cause_node (string) as the module docstring says."""
    base = slowdowns.reset_index(drop=True).assign(key=lambda f: np.arange(len(f)))
    cand = base[["key", "job", "start", "end"]].merge(job_nodes, on="job").merge(
        causes.rename(columns={"start": "c_start", "end": "c_end", "node": "cause_node"}),
        left_on="node", right_on="cause_node",
    )
    overlap = (cand[["end", "c_end"]].min(axis=1) - cand[["start", "c_start"]].max(axis=1))
    cand = cand.assign(overlap=overlap)[overlap > pd.Timedelta(0)]
    cand = cand.assign(rank=-cand["overlap"].dt.total_seconds())
    best = cand.sort_values(["key", "rank", "c_start", "cause_node"], kind="stable")
    best = best.drop_duplicates("key")[["key", "cause_node", "reason"]]
    out = base.merge(best, on="key", how="left").drop(columns="key")
    found = out["reason"].notna()
    out["layer"] = np.where(found, names.LAYER_NODE, names.LAYER_TRAINING)
    out["reason"] = out["reason"].fillna(names.CATEGORY_SLOWDOWN)
    out["cause_node"] = out["cause_node"].fillna("")
    return out.astype({"layer": "string", "reason": "string", "cause_node": "string"})


def scaled_hours(attributed: pd.DataFrame, job_hours: pd.Series) -> pd.Series:
    """GPU-hours per slowdown row, scaled so each job's rows sum to `job_hours[job]` (the
    slowdown GPU-hours the fleet accounting kept for the job: capped by its allocated usable
    time); a job with slowdown hours but no row keeps them unexplained (not listed)."""
    seconds = attributed["gpu_seconds"].astype("float64")
    per_job = seconds.groupby(attributed["job"]).transform("sum")
    wanted = attributed["job"].map(job_hours).astype("float64").fillna(0.0)
    return (seconds / per_job.replace(0, np.nan) * wanted).fillna(0.0)


def slowdown_breakdown(attributed: pd.DataFrame, job_hours: pd.Series,
                       by_layer: dict[str, float], by_reason: dict[str, float]) -> None:
    """Add the slowdown GPU-hours to `by_layer`/`by_reason` (in place): each job's
    `job_hours[job]` split over its slowdowns' layers and reasons (`attributed` with
    capacity_gpu_hours from `scaled_hours`); hours of a job without slowdown rows go to
    training/slowdown."""
    explained = attributed.groupby(["layer", "reason"], observed=True)["capacity_gpu_hours"].sum()
    for (layer, reason), value in explained.items():
        by_layer[layer] += float(value)
        by_reason[reason] = by_reason.get(reason, 0.0) + float(value)
    rest = float(job_hours[~job_hours.index.isin(attributed["job"])].sum())
    by_layer[names.LAYER_TRAINING] += rest
    by_reason[names.CATEGORY_SLOWDOWN] = by_reason.get(names.CATEGORY_SLOWDOWN, 0.0) + rest


def crawl_table(attributed: pd.DataFrame, scores: pd.DataFrame) -> pd.DataFrame:
    """Per (job, layer, reason, cause_node): gpu_hours, slowdowns, ratio (the worst), and the
    job's slowest node and its score ("" / NaN without compute times); most hours first."""
    if attributed.empty:
        return pd.DataFrame(columns=["job", "layer", "reason", "cause_node", "gpu_hours",
                                     "slowdowns", "ratio", "slowest_node", "slowest_score"])
    keys = ["job", "layer", "reason", "cause_node"]
    table = attributed.groupby(keys, observed=True).agg(
        gpu_hours=("gpu_hours", "sum"), slowdowns=("start", "nunique"), ratio=("ratio", "max")
    ).reset_index()
    slowest = scores.drop_duplicates("job").set_index("job")
    table["slowest_node"] = table["job"].map(slowest["node"]).astype("string").fillna("")
    table["slowest_score"] = table["job"].map(slowest["score"]).astype("float64")
    return table.sort_values(["gpu_hours", "job"], ascending=[False, True],
                             kind="stable").reset_index(drop=True)
