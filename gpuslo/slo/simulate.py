"""`gpuslo simulate`: a synthetic, deterministic GPU fleet for the demo, the report and the benchmarks.

    gpuslo simulate --nodes 125 --gpus-per-node 8 --days 7 --seed 1 --out sim/ [--start T]
                    [--openmetrics [--metrics-step 300]]

Writes into `--out` (each file atomically: temp file, fsync, rename):

- `inventory.csv.gz`, `verdicts.csv.gz`, `schedulability.csv.gz`, `allocations.csv.gz`,
  `job_events.csv.gz` — the frames of `gpuslo.slo.frames` (same columns; timestamps as ISO 8601
  UTC text; gzip with a zero mtime so the bytes depend only on the seed). Always CSV.gz, so no
  Parquet engine is needed; `simulate_io.read_simulation(dir)` loads them back through `frames.make_frame`.
- `simulation.json` — the parameters and the covered span (start, end).
- `journals/<node>/<job>.jsonl` — Recorder journals (schema v1, `gpuslo.goodput_model`), written
  by driving `gpuslo.goodput.Recorder` with an injected clock, for every node of the first
  JOURNAL_JOBS jobs (the same events are in `job_events` for every job).
- `metrics.om` (with `--openmetrics`) — OpenMetrics text for `promtool tsdb
  create-blocks-from openmetrics` (see `gpuslo.slo.simulate_metrics`).

Faults, drains and unknown stretches: `gpuslo.slo.simulate_faults` (Llama 3 interruption mix);
jobs: `gpuslo.slo.simulate_jobs`. The default start is Monday 2026-11-23 00:00 UTC (ISO week
2026-W48) so a 7-day run is exactly one report week; no wall clock is read.
"""

from __future__ import annotations

import argparse
import uuid
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from gpuslo import names
from gpuslo.errors import InputError, UsageError
from gpuslo.slo import frames as fr
from gpuslo.slo import simulate_faults as sf
from gpuslo.slo import simulate_jobs as sj

DEFAULT_START = "2026-11-23T00:00:00Z"
JOURNAL_JOBS = 4
MODEL, FAMILY = "NVIDIA H200", "hopper"


@dataclass(frozen=True)
class Simulation:
    """A simulated fleet: `frames` (name → frame as in gpuslo.slo.frames), `journals`
    ((job, node) → list of Recorder events, `t` in Unix seconds), and the span [start, end)."""

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
    jobs = sj.place_jobs(fleet.nodes, fleet.gpus_per_node, span, rng)
    events = _job_events(jobs, fleet, faults, node_names, rng)
    alloc = sj.allocations(jobs, fleet.gpus_per_node)
    base = int(start.timestamp())
    frames = {
        "inventory": inventory,
        "verdicts": fr.make_frame("verdicts", _verdict_records(verdicts, fleet, node_names, uuids, start)),
        "schedulability": fr.make_frame("schedulability", sched.assign(
            node=node_names[sched["node"].to_numpy()], start=_ts(start, sched["start"]),
            end=_ts(start, sched["end"]))),
        "allocations": fr.make_frame("allocations", alloc.assign(
            node=node_names[alloc["node"].to_numpy()],
            uuid=uuids[alloc["node"].to_numpy() * fleet.gpus_per_node + alloc["gpu"].to_numpy()],
            start=_ts(start, alloc["start"]), end=_ts(start, alloc["end"]))),
        "job_events": fr.make_frame("job_events", events.assign(time=_ts(start, events["t"]))),
    }
    sample = {j.name for j in jobs[:JOURNAL_JOBS]}
    journals = {
        (job, node): [{**e, "t": e["t"] + base} for e in _records(group)]
        for (job, node), group in events[events["job"].isin(sample)].groupby(["job", "node"], sort=True)
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


def _job_events(jobs, fleet, faults, node_names, rng) -> pd.DataFrame:
    """Events of every job on every node: one timeline per job, repeated per node (vectorised)."""
    parts = []
    for job in jobs:
        timeline = pd.DataFrame(sj.job_timeline(job, fleet.gpus_per_node,
                                                sj.interruptions_for(job, faults), rng))
        nodes = node_names[job.first_node: job.first_node + job.nodes]
        rows = timeline.loc[np.tile(timeline.index, len(nodes))].reset_index(drop=True)
        rows["node"] = np.repeat(nodes, len(timeline))
        rows["job"] = job.name
        parts.append(rows)
    events = pd.concat(parts, ignore_index=True) if parts else pd.DataFrame(columns=["t", "event"])
    for col in ("step", "from_step", "gpus"):
        if col not in events:
            events[col] = np.nan
    events["step"] = events["step"].fillna(events["from_step"])
    for col in ("category", "status", "layer"):
        events[col] = events[col].fillna("") if col in events else ""
    return events.drop(columns=["from_step"])


def _records(group: pd.DataFrame) -> list[dict]:
    """Journal lines for one (job, node): the v1 fields of each event, in order."""
    out = []
    for row in group.itertuples(index=False):
        event = {"v": 1, "t": int(row.t), "event": row.event}
        if row.event == "job_start":
            event.update(job=row.job, node=row.node, gpus=int(row.gpus))
        elif row.event in ("steps", "checkpoint"):
            event["step"] = int(row.step)
        elif row.event == "restart":
            event["from_step"] = int(row.step)
        elif row.event.startswith("phase_"):
            event["category"] = row.category
        elif row.event == "job_end":
            event["status"] = row.status
            if row.layer:
                event["layer"] = row.layer
        out.append(event)
    return out


def configure(parser: argparse.ArgumentParser) -> None:
    """Arguments of `gpuslo simulate`."""
    parser.add_argument("--nodes", type=int, required=True, help="number of GPU nodes")
    parser.add_argument("--gpus-per-node", type=int, default=8, help="GPUs per node (default 8)")
    parser.add_argument("--days", type=float, default=7.0, help="days to simulate (default 7)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument("--out", required=True, help="output directory (created if missing)")
    parser.add_argument("--start", default=DEFAULT_START,
                        help=f"simulation start, ISO 8601 UTC (default {DEFAULT_START})")
    parser.add_argument("--fault-rate", type=float, default=sf.LLAMA3_INTERRUPTIONS_PER_1000_GPU_DAYS,
                        help="unexpected interruptions per 1000 GPU-days (default: Llama 3 405B, 0.47)")
    parser.add_argument("--openmetrics", action="store_true",
                        help="also write metrics.om for promtool tsdb create-blocks-from openmetrics")
    parser.add_argument("--metrics-step", type=int, default=300,
                        help="seconds between OpenMetrics samples (30 or more; default 300)")


def parse_start(text: str) -> pd.Timestamp:
    """An ISO 8601 time as an aware UTC timestamp (naive means UTC). Raises UsageError."""
    try:
        stamp = pd.Timestamp(text)
    except ValueError:
        raise UsageError(f"--start: not an ISO 8601 time: {text!r}") from None
    return stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")


# Size limits of the command line (the library takes any Fleet): memory grows with GPU-days
# (bench/slo_engine.py: 70,000 GPU-days peak at about 0.7 GB) and with OpenMetrics samples
# (1,000 GPUs x 7 days every 30 s is 20 M samples, 2.2 GB of text).
MAX_NODES = 100_000
MAX_GPUS_PER_NODE = 64
MAX_DAYS = 366
MAX_GPU_DAYS = 100_000
MAX_FAULT_RATE = 1000.0  # per 1000 GPU-days: one interruption per GPU per day
MAX_METRIC_SAMPLES = 10_000_000


def check_limits(args: argparse.Namespace) -> None:
    """Raise UsageError naming the first flag out of range (one flag per message)."""
    if not 1 <= args.nodes <= MAX_NODES:
        raise UsageError(f"--nodes must be 1..{MAX_NODES:,}, got {args.nodes}")
    if not 1 <= args.gpus_per_node <= MAX_GPUS_PER_NODE:
        raise UsageError(f"--gpus-per-node must be 1..{MAX_GPUS_PER_NODE}, got {args.gpus_per_node}")
    if not 0 < args.days <= MAX_DAYS:  # also rejects NaN
        raise UsageError(f"--days must be above 0 and at most {MAX_DAYS}, got {args.days:g}")
    if args.seed < 0:
        raise UsageError(f"--seed must be 0 or more, got {args.seed}")
    if not 0 <= args.fault_rate <= MAX_FAULT_RATE:  # also rejects NaN
        raise UsageError(f"--fault-rate must be 0..{MAX_FAULT_RATE:g} interruptions per 1000 GPU-days "
                         f"(at most one per GPU per day), got {args.fault_rate:g}")
    gpu_days = args.nodes * args.gpus_per_node * args.days
    if gpu_days > MAX_GPU_DAYS:
        raise UsageError(f"--days: {args.nodes:,} nodes x {args.gpus_per_node} GPUs x {args.days:g} days is "
                         f"{gpu_days:,.0f} GPU-days; at most {MAX_GPU_DAYS:,} (fewer --nodes or --days)")
    if args.metrics_step < 30:
        raise UsageError(f"--metrics-step must be 30 seconds or more, got {args.metrics_step}")
    samples = args.nodes * args.gpus_per_node * args.days * 86400 / args.metrics_step
    if args.openmetrics and samples > MAX_METRIC_SAMPLES:
        raise UsageError(f"--metrics-step: {args.metrics_step} s gives {samples:,.0f} OpenMetrics samples per "
                         f"series family; at most {MAX_METRIC_SAMPLES:,} (a longer --metrics-step)")


def run(args: argparse.Namespace) -> int:
    """Run `gpuslo simulate`; prints one summary line. Raises UsageError for impossible sizes."""
    from gpuslo.slo.simulate_io import write_simulation

    check_limits(args)
    fleet = sf.Fleet(args.nodes, args.gpus_per_node, args.days, args.fault_rate)
    sim = simulate(fleet, args.seed, parse_start(args.start))
    try:
        written = write_simulation(sim, Path(args.out), args.metrics_step if args.openmetrics else None)
    except OSError as error:
        raise InputError(args.out, f"cannot write: {error.strerror or error}") from None
    print(f"gpuslo simulate: {fleet.gpus} GPUs on {fleet.nodes} nodes, {args.days:g} days from "
          f"{sim.start.isoformat()}: wrote {len(written)} files to {args.out}")
    return 0
