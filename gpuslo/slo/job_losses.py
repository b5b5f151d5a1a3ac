"""Per-job attribution: the GPU-hours each job lost, by layer and reason (issue 14).

`job_losses(acc, split, interruptions, slowdowns) -> DataFrame`, one row per (job, kind, layer,
reason, node), from the fleet accounting joined with the allocations — never a second model:

- kind `unusable`: the unusable time of the GPUs the job held (`Accounting.segments.held_by`):
  no data, unknown, unhealthy and unschedulable time inside its allocations, with the
  segment's layer, reason and node. Summed over jobs it equals the fleet's unusable time that
  fell inside allocations, so it never exceeds the fleet's unusable time;
- kind `badput`: the job's own badput as the fleet split kept it (`FleetSplit.job_ticks`: capped
  by its allocated usable time), attributed as `gpuslo.slo.attribution.lost_breakdown` and
  `gpuslo.slo.crawl.slowdown_breakdown` do for the fleet: wasted_progress and recovery shared
  equally by the job's attributed interruptions (their layer, reason and fault node; without
  one `training` and the category), slowdown by the crawl's capacity GPU-hours (layer, reason,
  cause node; unexplained `training`/`slowdown`), every other category `training` with the
  category as reason. Summed over jobs it equals the fleet's job badput by layer and reason.

Columns: job, kind, layer, reason, node (string; node "" when no node is named), gpu_hours
(float64), ticks (int64, the accounting's integer ticks: exact for `unusable`, rounded down for
`badput` shares). `jobs_hit(losses, acc, split)` is the per-job table the report lists.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from gpuslo import names

COLUMNS = ["job", "kind", "layer", "reason", "node", "gpu_hours", "ticks"]
HIT_COLUMNS = ["job", "held_gpu_hours", "lost_gpu_hours", "unusable_gpu_hours",
               "badput_gpu_hours", "layer", "reason", "layer_reason_gpu_hours", "nodes"]
UNUSABLE, BADPUT = "unusable", "badput"
_FAULT = ("wasted_progress", "recovery")


def job_losses(acc, split, interruptions: pd.DataFrame, slowdowns: pd.DataFrame) -> pd.DataFrame:
    """Rows as the module docstring says. `acc`: gpuslo.slo.accounting.Accounting; `split`:
    attribution.FleetSplit; `interruptions`: attribution.attribute; `slowdowns`: the engine's
    crawl rows (crawl.attribute_slowdowns plus capacity_gpu_hours)."""
    hours = acc.tick_ns / 3.6e12
    rows = pd.concat([_unusable(acc), _fault_badput(split, interruptions, hours),
                      _slowdown_badput(split, slowdowns, acc.tick_ns), _own_badput(split, hours)],
                     ignore_index=True)
    rows = rows.groupby(COLUMNS[:5], observed=True, as_index=False)[["ticks", "gpu_hours"]].sum()
    exact = rows["kind"] == UNUSABLE
    rows.loc[exact, "gpu_hours"] = rows.loc[exact, "ticks"] * hours
    rows = rows[rows["gpu_hours"] > 0]
    out = rows[COLUMNS].sort_values(["job", "kind", "gpu_hours"], ascending=[True, False, False],
                                    kind="stable").reset_index(drop=True)
    return out.astype({c: "string" for c in COLUMNS[:5]} | {"gpu_hours": "float64",
                                                             "ticks": "int64"})


def _frame(job, kind, layer, reason, node, ticks, hours) -> pd.DataFrame:
    return pd.DataFrame({"job": job, "kind": kind, "layer": layer, "reason": reason,
                         "node": node, "ticks": ticks, "gpu_hours": hours})


def _unusable(acc) -> pd.DataFrame:
    seg = acc.segments
    seg = seg[(seg["held_by"] != "") & (seg["layer"] != "")]
    ticks = (seg["end"] - seg["start"]).to_numpy("int64") // acc.tick_ns
    return _frame(seg["held_by"].to_numpy(), UNUSABLE, seg["layer"].to_numpy(),
                  seg["reason"].to_numpy(), seg["node"].to_numpy(), ticks, 0.0)


def _fault_badput(split, interruptions: pd.DataFrame, hours: float) -> pd.DataFrame:
    """wasted_progress and recovery: shared equally by the job's attributed interruptions."""
    lost = split.job_ticks[list(_FAULT)].sum(axis=1)
    lost = lost[lost > 0]
    hit = interruptions[interruptions["job"].isin(lost.index)]
    share = hit.groupby("job", observed=True)["job"].transform("size").astype("float64")
    amount = hit["job"].map(lost).astype("float64") / share
    alone = lost[~lost.index.isin(hit["job"])]
    # without an attributed interruption each category keeps its own name as the reason
    rest = split.job_ticks.loc[alone.index, list(_FAULT)].stack()
    rest = rest[rest > 0]
    return pd.concat([
        _frame(hit["job"].to_numpy(), BADPUT, hit["layer"].to_numpy(), hit["reason"].to_numpy(),
               hit["fault_node"].to_numpy(), np.floor(amount).astype("int64").to_numpy(),
               amount.to_numpy() * hours),
        _frame(rest.index.get_level_values(0), BADPUT, names.LAYER_TRAINING,
               rest.index.get_level_values(1), "", rest.to_numpy(), rest.to_numpy() * hours),
    ], ignore_index=True)


def _slowdown_badput(split, slowdowns: pd.DataFrame, tick_ns: int) -> pd.DataFrame:
    """slowdown: the crawl's capacity GPU-hours per (layer, reason, cause node)."""
    hours = tick_ns / 3.6e12
    kept = split.job_ticks[names.CATEGORY_SLOWDOWN]
    kept = kept[kept > 0]
    rows = slowdowns[slowdowns["job"].isin(kept.index) & (slowdowns["capacity_gpu_hours"] > 0)]
    alone = kept[~kept.index.isin(rows["job"])]
    per_tick = 3.6e12 / tick_ns
    return pd.concat([
        _frame(rows["job"].to_numpy(), BADPUT, rows["layer"].to_numpy(),
               rows["reason"].to_numpy(), rows["cause_node"].to_numpy(),
               np.floor(rows["capacity_gpu_hours"].to_numpy() * per_tick).astype("int64"),
               rows["capacity_gpu_hours"].to_numpy()),
        _frame(alone.index, BADPUT, names.LAYER_TRAINING, names.CATEGORY_SLOWDOWN, "",
               alone.to_numpy(), alone.to_numpy() * hours),
    ], ignore_index=True)


def _own_badput(split, hours: float) -> pd.DataFrame:
    """Badput the job spends on itself: training, the category as the reason."""
    own = [c for c in names.BADPUT_CATEGORIES if c not in (*_FAULT, names.CATEGORY_SLOWDOWN)]
    ticks = split.job_ticks[own].stack()
    ticks = ticks[ticks > 0]
    return _frame(ticks.index.get_level_values(0), BADPUT, names.LAYER_TRAINING,
                  ticks.index.get_level_values(1), "", ticks.to_numpy(), ticks.to_numpy() * hours)


def jobs_hit(losses: pd.DataFrame, acc, split) -> pd.DataFrame:
    """Per job that held GPUs or lost any time (columns HIT_COLUMNS), most lost GPU-hours first
    (ties by job): held_gpu_hours (its allocations' GPU-hours in the window, whatever their
    state; with no capacity accounting — journals or training logs alone — the GPU-time its
    journals account, `split.job_ticks` summed: the allocated GPU-hours of the report's job
    table, so what a job held is never less than what it lost; it was 0.0, newcomer4 finding
    6), lost_gpu_hours = unusable_gpu_hours + badput_gpu_hours, layer and reason of its largest
    (layer, reason) loss and layer_reason_gpu_hours (how much), nodes (the nodes its losses
    name, comma-separated; "" when none). `split`: the engine's job side (`FleetSplit`)."""
    if acc.provisioned_ticks:
        seg = acc.segments[acc.segments["held_by"] != ""]
        held = seg.groupby("held_by", observed=True)["seconds"].sum() / 3600
    else:
        held = split.job_ticks.sum(axis=1) * (acc.tick_ns / 3.6e12)
        held = held[held > 0]
    kinds = losses.pivot_table(index="job", columns="kind", values="gpu_hours", aggfunc="sum",
                               observed=True).reindex(columns=[UNUSABLE, BADPUT], fill_value=0.0)
    jobs = pd.Index(held.index).union(kinds.index).rename("job")
    out = pd.DataFrame(index=jobs)
    out["held_gpu_hours"] = held.reindex(jobs).fillna(0.0)
    out["unusable_gpu_hours"] = kinds[UNUSABLE].reindex(jobs).fillna(0.0)
    out["badput_gpu_hours"] = kinds[BADPUT].reindex(jobs).fillna(0.0)
    out["lost_gpu_hours"] = out["unusable_gpu_hours"] + out["badput_gpu_hours"]
    by = losses.groupby(["job", "layer", "reason"], observed=True,
                        as_index=False)["gpu_hours"].sum()
    main = by.sort_values(["job", "gpu_hours", "layer", "reason"],
                          ascending=[True, False, True, True], kind="stable").drop_duplicates("job")
    main = main.set_index("job").reindex(jobs)
    out["layer"] = main["layer"].fillna("")
    out["reason"] = main["reason"].fillna("")
    out["layer_reason_gpu_hours"] = main["gpu_hours"].fillna(0.0)
    named = losses[losses["node"] != ""].groupby("job", observed=True)["node"].agg(
        lambda s: ",".join(sorted(set(s))))
    out["nodes"] = named.reindex(jobs).fillna("")
    out = out.reset_index().sort_values(["lost_gpu_hours", "job"], ascending=[False, True],
                                        kind="stable")
    return out[HIT_COLUMNS].astype({"job": "string", "layer": "string", "reason": "string",
                                    "nodes": "string"}).reset_index(drop=True)
