"""Reliability figures from fault intervals and job interruptions: MTBF and MTTR per reason,
interruptions per 1000 GPU-days, lemon nodes and blast radius.

Definitions (units: hours, GPU-hours, ratios):
- A *fault* is one non-healthy interval of a GPU (or of a whole node, uuid ""), from
  `gpuslo.slo.frames.derive_faults`; touching or overlapping intervals with the same node, uuid
  and reason are one fault (`merge_faults`). Its *GPU count* is 1, or the node's GPUs when
  node-wide.
- MTBF per reason = provisioned GPU-hours / GPU-faults of that reason starting in the window
  (GPU-hours between failures per GPU; NaN when none). MTTR per reason = mean duration (hours)
  of the faults that started and ended in the window; faults still open at the end are counted
  in `open`, not in MTTR. Both follow the usual reliability-engineering definitions as applied
  to GPU fleets by Kokolis et al., arXiv:2410.21680.
- Interruptions per 1000 GPU-days = job interruptions / allocated GPU-days × 1000 when the data
  has jobs, else GPU-faults / provisioned GPU-days × 1000 (a trace without jobs); `basis` says
  which.
- Lemon node: a node with at least `LEMON_MIN_FAULTS` (3) node-layer faults starting in the
  window (drains, maintenance and blind time do not count) — the
  repeat-offender rule of Meta's lemon-node detection (arXiv:2410.21680, §5), which flags nodes
  whose repeated failures keep interrupting jobs.
- Blast radius of an attributed interruption = GPU-hours the job lost to it (its
  wasted_progress + recovery, shared equally among the job's interruptions in the window) per
  GPU-hour of the faulty device (the fault's duration in the window × its GPU count).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from gpuslo import names

LEMON_MIN_FAULTS = 3


def merge_faults(faults: pd.DataFrame) -> pd.DataFrame:
    """Merge touching/overlapping intervals with equal (node, uuid, reason); columns as input."""
    if faults.empty:
        return faults.copy()
    f = faults.sort_values(["node", "uuid", "reason", "start"], kind="stable").reset_index(
        drop=True
    )
    key = f[["node", "uuid", "reason"]].astype(str).agg("\0".join, axis=1)
    running_end = f.groupby(key, sort=False)["end"].cummax()
    new = (key != key.shift()) | (f["start"] > running_end.groupby(key, sort=False).shift())
    group = new.cumsum()
    merged = f.groupby(group).agg(
        node=("node", "first"),
        uuid=("uuid", "first"),
        start=("start", "min"),
        end=("end", "max"),
        reason=("reason", "first"),
        layer=("layer", "first"),
    )
    return merged.reset_index(drop=True).astype(faults.dtypes.to_dict())


def fault_gpus(faults: pd.DataFrame, inventory: pd.DataFrame) -> pd.Series:
    """GPU count of each fault (1, or the node's GPUs for uuid ""), int64, aligned to `faults`."""
    per_node = inventory.groupby("node", observed=True).size()
    count = faults["node"].map(per_node).fillna(0).astype("int64")
    return count.where(faults["uuid"] == "", 1).astype("int64")


def mtbf_mttr(faults: pd.DataFrame, inventory: pd.DataFrame, provisioned_gpu_hours: float,
              start: pd.Timestamp, end: pd.Timestamp) -> pd.DataFrame:
    """Per reason (index): layer, faults, gpu_faults, open, mtbf_gpu_hours, mttr_hours."""
    columns = ["layer", "faults", "gpu_faults", "open", "mtbf_gpu_hours", "mttr_hours"]
    f = faults[(faults["start"] >= start) & (faults["start"] < end)]
    if f.empty:
        return pd.DataFrame(columns=columns)
    f = f.assign(gpus=fault_gpus(f, inventory), closed=f["end"] < end,
                 hours=(f["end"] - f["start"]).dt.total_seconds() / 3600)
    out = f.groupby("reason", observed=True).agg(
        layer=("layer", "first"), faults=("node", "size"), gpu_faults=("gpus", "sum"),
        open=("closed", lambda c: int((~c).sum())))
    out["mtbf_gpu_hours"] = provisioned_gpu_hours / out["gpu_faults"].replace(0, np.nan)
    out["mttr_hours"] = (
        f[f["closed"]].groupby("reason", observed=True)["hours"].mean().reindex(out.index)
    )
    return out[columns].sort_index()


def interruption_rate(job_interruptions: int, allocated_gpu_hours: float, gpu_faults: int,
                      provisioned_gpu_hours: float) -> tuple[float | None, str]:
    """(interruptions per 1000 GPU-days, basis "jobs" | "faults"); None when nothing is
    provisioned."""
    if allocated_gpu_hours > 0:
        return job_interruptions / (allocated_gpu_hours / 24) * 1000, "jobs"
    if provisioned_gpu_hours > 0:
        return gpu_faults / (provisioned_gpu_hours / 24) * 1000, "faults"
    return None, "none"


def lemon_nodes(faults: pd.DataFrame, start: pd.Timestamp, end: pd.Timestamp,
                min_faults: int = LEMON_MIN_FAULTS) -> pd.DataFrame:
    """Nodes with ≥ `min_faults` node-layer faults starting in the window: node, faults (int64),
    faulty_hours (float64, summed durations clipped to the window), reasons (comma-separated,
    sorted); most faults first, then node name."""
    f = faults[(faults["start"] >= start) & (faults["start"] < end) & (faults["layer"] == "node")]
    hours = (f["end"].clip(upper=end) - f["start"]).dt.total_seconds() / 3600
    per = f.assign(hours=hours).groupby("node", observed=True).agg(
        faults=("reason", "size"), faulty_hours=("hours", "sum"),
        reasons=("reason", lambda r: ",".join(sorted(set(r)))))
    per = per[per["faults"] >= min_faults].reset_index()
    return per.sort_values(["faults", "node"], ascending=[False, True], kind="stable").reset_index(
        drop=True
    )


def blast_radius(attributed: pd.DataFrame, jobs: pd.DataFrame, faults: pd.DataFrame,
                 inventory: pd.DataFrame, end: pd.Timestamp) -> pd.DataFrame:
    """Per attributed interruption (those with a fault): job, time, fault_node, fault_uuid,
    reason, layer, job_lost_gpu_hours, fault_gpu_hours, blast_radius (ratio, float64)."""
    hit = attributed[attributed["fault_node"] != ""].copy()
    columns = ["job", "time", "fault_node", "fault_uuid", "reason", "layer", "job_lost_gpu_hours",
               "fault_gpu_hours", "blast_radius"]
    if hit.empty or jobs.empty:
        return pd.DataFrame(columns=columns)
    per_job = attributed.groupby("job", observed=True).size()
    lost = (jobs["wasted_progress"] + jobs["recovery"]) / 3600
    hit["job_lost_gpu_hours"] = (
        hit["job"].map(lost / per_job.reindex(lost.index)).fillna(0.0).to_numpy()
    )
    keyed = faults.assign(gpus=fault_gpus(faults, inventory))
    keyed = keyed.rename(
        columns={"node": "fault_node", "uuid": "fault_uuid", "start": "fault_start"}
    )
    hit = hit.merge(keyed[["fault_node", "fault_uuid", "fault_start", "reason", "end", "gpus"]],
                    on=["fault_node", "fault_uuid", "fault_start", "reason"], how="left")
    duration = (hit["end"].clip(upper=end) - hit["fault_start"]).dt.total_seconds() / 3600
    hit["fault_gpu_hours"] = duration * hit["gpus"]
    hit["blast_radius"] = hit["job_lost_gpu_hours"] / hit["fault_gpu_hours"].replace(0, np.nan)
    return hit.drop_duplicates(["job", "time"])[columns].reset_index(drop=True)



def as_reported(value) -> float:
    """`value` as the JSON twin writes it (6 decimals; NaN → 0), so a figure summed from a
    table's rows equals what a reader re-adding the report's rows gets."""
    value = float(value)
    return round(value, 6) if np.isfinite(value) else 0.0


def fleet_ettr(jobs: pd.DataFrame) -> float | None:
    """Fleet ETTR (effective training time ratio) = Σ productive GPU-seconds / Σ (GPUs × wall
    seconds) over the jobs (`attribution.job_summary` rows): Kokolis et al., arXiv:2410.21680,
    define ETTR per job as productive time / wall time; this weights each job by its GPUs. None
    without job wall time."""
    rows = zip(jobs["wall_seconds"], jobs["gpus"], jobs[names.CATEGORY_PRODUCTIVE], strict=True)
    wall = productive = 0.0
    for seconds, gpus, good in rows:
        wall += as_reported(seconds) * as_reported(gpus)
        productive += as_reported(good)
    return productive / wall if wall else None


def mtti_hours(jobs: pd.DataFrame, interruptions: int) -> float | None:
    """Mean time to interruption (hours) = Σ job wall hours / job interruptions in the window;
    None without jobs or interruptions."""
    if not len(jobs) or not interruptions:
        return None
    return sum(as_reported(seconds) for seconds in jobs["wall_seconds"]) / 3600 / interruptions


def mean_repair(table: pd.DataFrame) -> tuple[float | None, dict[str, dict]]:
    """(MTTR in hours over every reason, {layer: {"mttr_hours", "faults"}}) from `mtbf_mttr`'s
    table: the mean duration of the faults that ended in the window, each reason's MTTR weighted
    by its closed faults (faults − open). Per layer, so a layer of short monitoring blips and a
    layer of week-long hardware repairs each get their own figure; a layer without closed
    faults is left out. (None, {}) when no fault closed."""
    closed = [(as_reported(hours), int(faults - still), str(layer))
              for hours, faults, still, layer in zip(
                  table["mttr_hours"], table["faults"], table["open"], table["layer"], strict=True)
              if pd.notna(hours) and faults > still]
    by_layer = {}
    for layer in names.LAYERS:
        mine = [(hours, count) for hours, count, of in closed if of == layer]
        if mine:
            count = sum(n for _, n in mine)
            by_layer[layer] = {"mttr_hours": sum(h * n for h, n in mine) / count, "faults": count}
    weight = sum(n for _, n, _ in closed)
    return (sum(h * n for h, n, _ in closed) / weight if weight else None), by_layer


def return_to_service(verdicts: pd.DataFrame, by_layer_reason: pd.DataFrame,
                      start: pd.Timestamp, end: pd.Timestamp) -> dict[str, float | int]:
    """The return-to-service gate over [start, end): GPU-hours validating (platform layer,
    reason `validation`) and unhealthy after a failed gate (node layer, `validation_failed`),
    from the accounting's unusable seconds by (layer, reason) — an unknown blink inside a
    validation is observability time, not validation; and how many validations and gate failures
    began in the window. Per GPU, in time order over its unhealthy and validating intervals
    (healthy and unknown ones left out: an unknown blink inside a validation is no new one), a
    validation begins where a validating interval follows something else, a gate failure where
    a `validation_failed` interval does. Pure."""
    rows = verdicts[verdicts["verdict"].isin([names.VERDICT_UNHEALTHY, names.VERDICT_VALIDATING])]
    rows = rows.sort_values(["node", "uuid", "start"], kind="stable")
    kind = rows["verdict"].astype(str).where(rows["verdict"] == names.VERDICT_VALIDATING,
                                             rows["reason"].astype(str))
    gpu = rows["node"].astype(str) + "\0" + rows["uuid"].astype(str)
    begins = (kind != kind.shift()) | (gpu != gpu.shift())
    inside = (rows["start"] >= start) & (rows["start"] < end) & begins
    def hours(layer: str, reason: str) -> float:
        own = (by_layer_reason["layer"] == layer) & (by_layer_reason["reason"] == reason)
        return float(by_layer_reason.loc[own, "seconds"].sum()) / 3600

    return {
        "validating_gpu_hours": hours(names.LAYER_PLATFORM, names.REASON_VALIDATION),
        "failed_gate_gpu_hours": hours(names.LAYER_NODE, "validation_failed"),
        "validations": int((inside & (kind == names.VERDICT_VALIDATING)).sum()),
        "gates_failed": int((inside & (kind == "validation_failed")).sum()),
    }
