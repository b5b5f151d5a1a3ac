"""A synthetic, deterministic GPU fleet for the demo, the report and the benchmarks: the
`Simulation` behind `gpuslo simulate` (DESIGN.md §6).

`simulate(fleet, seed, start)` returns the frames of `gpuslo.slo.frames` (inventory, verdicts,
schedulability, allocations, job_events) and the journals of the first JOURNAL_JOBS jobs (the
same events are in `job_events` for every job), as journal events of
`gpuslo.goodput.journal` (schema v1). `gpuslo.slo.simulate.files` writes and reads them back,
`gpuslo.slo.simulate.openmetrics` turns them into OpenMetrics text.

Faults, drains and unknown stretches: `gpuslo.slo.simulate.faults` (Llama 3 interruption mix);
jobs: `gpuslo.slo.simulate.jobs`. The default start is Monday 2026-11-23 00:00 UTC (ISO week
2026-W48) so a 7-day run is exactly one report week; no wall clock is read.
"""

from __future__ import annotations

import uuid
from dataclasses import dataclass

import numpy as np
import pandas as pd

from gpuslo import names
from gpuslo.goodput import journal
from gpuslo.slo import frames as fr
from gpuslo.slo.simulate import faults as sf
from gpuslo.slo.simulate import jobs as sj
from gpuslo.slo.simulate import stragglers as ss
from gpuslo.slo.simulate.serving import serving_frames, simulate_serving

DEFAULT_START = "2026-11-23T00:00:00Z"
JOURNAL_JOBS = 4
MODEL, FAMILY = "NVIDIA H200", "hopper"


@dataclass(frozen=True)
class Simulation:
    """A simulated fleet: `frames` (name → frame as in gpuslo.slo.frames), `journals`
    ((job, node) → list of journal events, `t` in Unix seconds), and the span [start, end)."""

    frames: dict[str, pd.DataFrame]
    journals: dict[tuple[str, str], list[dict]]
    start: pd.Timestamp
    end: pd.Timestamp
    fleet: sf.Fleet
    seed: int


def simulate(fleet: sf.Fleet, seed: int, start: pd.Timestamp) -> Simulation:
    """Simulate `fleet` from `start` (aware UTC) for its days; deterministic for `seed`.
    Vectorised except one loop per job (and per interruption of a job)."""
    rng = np.random.default_rng(seed)
    span = fleet.span_s
    node_names = _node_names(fleet.nodes)
    faults = sf.draw_faults(fleet, rng)
    bad = sf.disjoint(sf.draw_bad_intervals(fleet, faults, rng), "gpu_index", span)
    verdicts = sf.fill_healthy(bad, fleet.gpus, span)
    sched = sf.disjoint(sf.draw_schedulability(fleet, faults, rng), "node", span)
    inventory = _inventory(fleet, node_names, rng, start)
    uuids = inventory["uuid"].to_numpy()
    training_nodes = fleet.nodes - fleet.serving_nodes
    jobs = sj.place_jobs(training_nodes, fleet.gpus_per_node, span, rng) if training_nodes else []
    stragglers = ss.draw_stragglers(jobs, seed)
    events = _job_events(jobs, fleet, faults, node_names, rng, stragglers)
    degraded = ss.degradation_rows(jobs, stragglers)
    alloc = sj.allocations(jobs, fleet.gpus_per_node)
    base = int(start.timestamp())
    frames = {
        "inventory": inventory,
        "verdicts": fr.make_frame(
            "verdicts", _verdict_records(verdicts, fleet, node_names, uuids, start)
        ),
        "schedulability": fr.make_frame(
            "schedulability",
            sched.assign(
                node=node_names[sched["node"].to_numpy()],
                start=_ts(start, sched["start"]),
                end=_ts(start, sched["end"]),
            ),
        ),
        "allocations": fr.make_frame(
            "allocations",
            alloc.assign(
                node=node_names[alloc["node"].to_numpy(dtype=np.int64)],
                uuid=uuids[
                    alloc["node"].to_numpy(dtype=np.int64) * fleet.gpus_per_node
                    + alloc["gpu"].to_numpy(dtype=np.int64)
                ],
                start=_ts(start, alloc["start"]),
                end=_ts(start, alloc["end"]),
            ),
        ),
        "job_events": fr.make_frame("job_events", events.assign(time=_ts(start, events["t"]))),
        "degradations": fr.make_frame("degradations", degraded.assign(
            node=node_names[degraded["node"].to_numpy(dtype=np.int64)], uuid="",
            start=_ts(start, degraded["start"]), end=_ts(start, degraded["end"]),
        )),
    }
    if fleet.serving_nodes:
        frames.update(serving_frames(
            simulate_serving(range(training_nodes, fleet.nodes), fleet.gpus_per_node, faults,
                             span, seed), node_names, uuids, fleet.gpus_per_node, start))
        frames["allocations"] = fr.make_frame("allocations", pd.concat(
            [frames["allocations"], frames.pop("replica_allocations")], ignore_index=True))
    sample = {j.name for j in jobs[:JOURNAL_JOBS]}
    journals = {
        (job, node): [{**e, "t": e["t"] + base} for e in journal_events(group)]
        for (job, node), group in events[events["job"].isin(sample)].groupby(
            ["job", "node"], sort=True
        )
    }
    end = start + pd.Timedelta(seconds=span)
    return Simulation(frames, journals, start, end, fleet, seed)


def _node_names(nodes: int) -> np.ndarray:
    width = max(4, len(str(nodes - 1)))
    return np.array([f"node-{i:0{width}d}" for i in range(nodes)], dtype=object)


def _ts(start: pd.Timestamp, seconds: pd.Series | np.ndarray) -> pd.Series:
    return start + pd.to_timedelta(np.asarray(seconds, dtype=np.int64), unit="s")


def _inventory(fleet: sf.Fleet, node_names: np.ndarray, rng, start) -> pd.DataFrame:
    raw = rng.integers(0, 2**63, size=(fleet.gpus, 2), dtype=np.int64)
    uuids = [f"GPU-{uuid.UUID(int=(int(a) << 64) | int(b))}" for a, b in raw]
    g = fleet.gpus_per_node
    return fr.make_frame("inventory", pd.DataFrame({
        "node": np.repeat(node_names, g), "uuid": uuids,
        "gpu": np.tile(np.arange(g), fleet.nodes).astype(str), "model": MODEL, "family": FAMILY,
        "provisioned_start": start, "provisioned_end": pd.NaT,
    }))


def _verdict_records(verdicts, fleet, node_names, uuids, start) -> pd.DataFrame:
    """Verdict frame rows. A non-healthy interval that covers every GPU of its node identically
    (a node-level event: network, host, a node check timing out) becomes one node-wide row with
    uuid "" (frames contract), so it counts as one fault, not one per GPU."""
    g = fleet.gpus_per_node
    v = verdicts.assign(node_index=verdicts["gpu_index"].to_numpy() // g)
    keys = ["node_index", "start", "end", "verdict", "reason", "action"]
    width = v.groupby(keys, sort=False)["gpu_index"].transform("size").to_numpy()
    wide = (v["verdict"] != names.VERDICT_HEALTHY).to_numpy() & (width == g)
    rows = pd.concat([v[~wide].assign(uuid=uuids[v.loc[~wide, "gpu_index"].to_numpy()]),
                      v[wide].drop_duplicates(keys).assign(uuid="")], ignore_index=True)
    rows = rows.sort_values(["node_index", "uuid", "start"], kind="stable")
    reason = rows["reason"].astype(str)
    return pd.DataFrame({
        "node": node_names[rows["node_index"].to_numpy()], "uuid": rows["uuid"].to_numpy(),
        "start": _ts(start, rows["start"]), "end": _ts(start, rows["end"]),
        "verdict": rows["verdict"].to_numpy(), "reason": reason.to_numpy(),
        "layer": reason.map(names.REASON_LAYER).fillna("").to_numpy(),
        "action": rows["action"].to_numpy(),
    })


def _job_events(jobs, fleet, faults, node_names, rng, stragglers) -> pd.DataFrame:
    """Events of every job on every node: one timeline per job, repeated per node (vectorised);
    a straggler node's compute time is `ratio` times the others' while it is slow."""
    parts = []
    for job in jobs:
        straggler = stragglers.get(job.name)
        timeline = pd.DataFrame(sj.job_timeline(job, fleet.gpus_per_node,
                                                sj.interruptions_for(job, faults), rng, straggler))
        nodes = node_names[job.first_node: job.first_node + job.nodes]
        rows = timeline.loc[np.tile(timeline.index, len(nodes))].reset_index(drop=True)
        rows["node"] = np.repeat(nodes, len(timeline))
        rows["job"] = job.name
        if straggler is not None:
            slow = (rows["node"] == nodes[straggler.node]) & rows["slow"].eq(True)
            rows.loc[slow, "compute_s"] = (rows.loc[slow, "compute_s"] * straggler.ratio).round(6)
            rows = rows.drop(columns="slow")
        parts.append(rows)
    events = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(
        {"t": pd.Series([], dtype=np.int64), "event": [], "job": [], "node": []})
    for col in ("step", "from_step", "gpus", "count", "step_time_s", "compute_s"):
        if col not in events:
            events[col] = np.nan
    events["step"] = events["step"].fillna(events["from_step"])
    for col in ("category", "status", "layer"):
        events[col] = events[col].fillna("") if col in events else ""
    return events.drop(columns=["from_step"])


def journal_events(group: pd.DataFrame) -> list[dict]:
    """Journal events (`gpuslo.goodput.journal.event`, schema v1) of one (job, node), in order,
    from rows with columns t (int seconds), event, job, node, gpus, step, category, status and
    layer (the job_events columns), and count, step_time_s and compute_s when present."""
    out = []
    for row in group.itertuples(index=False):
        step = None if pd.isna(row.step) else int(row.step)
        gpus = None if pd.isna(row.gpus) else int(row.gpus)
        extra = {k: getattr(row, k, None) for k in ("count", "step_time_s", "compute_s")}
        extra = {k: None if v is None or pd.isna(v) else v for k, v in extra.items()}
        out.append(journal.event(
            row.event, int(row.t), job=row.job, node=row.node, gpus=gpus, step=step,
            from_step=step, category=row.category, status=row.status, layer=row.layer,
            count=None if extra["count"] is None else int(extra["count"]),
            step_time_s=_seconds(extra["step_time_s"]), compute_s=_seconds(extra["compute_s"]),
        ))
    return out


def _seconds(value) -> float | None:
    return None if value is None else float(value)
