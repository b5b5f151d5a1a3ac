"""Synthetic fleet health for `gpuslo simulate`: faults, drains, unknown stretches, no-data gaps.

Pure and deterministic for a `numpy.random.Generator`; all times are whole seconds from the
simulation start (int64), turned into frames by `gpuslo.slo.simulate.fleet`.

Fault causes and their mix come from Meta's Llama 3 405B pre-training interruptions ("The Llama 3
Herd of Models", arXiv 2407.21783, Table 5; shared/datasets/reference_tables): 419 unexpected
interruptions in 54 days on 16,384 H100 GPUs, i.e. 419 / (16,384 × 54) × 1000 = 0.4736
interruptions per 1000 GPU-days. `CAUSES` maps each Llama 3 component to our reason (hence layer,
names.REASON_LAYER), its scope and a median repair time. The repair times, the drain/validation
policy and the rates of unknown stretches, no-data gaps and cordons are this simulator's own
assumptions (the paper gives none), chosen to resemble an operated fleet:

| scope        | effect                                                                          |
|--------------|---------------------------------------------------------------------------------|
| gpu          | that GPU unhealthy for the repair time; its node `drained` meanwhile (collateral |
|              | drain of the healthy GPUs → platform), then `validation` for 30 min              |
| node         | every GPU of the node unhealthy for the repair time, then `validation` 30 min    |
| maintenance  | node in unplanned `maintenance` for the repair time (platform)                   |
| job          | no verdict change: the job crashes on its own (training)                         |
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from gpuslo import names

LLAMA3_INTERRUPTIONS_PER_1000_GPU_DAYS = 419 / (16384 * 54) * 1000
VALIDATION_S = 1800
HOUR = 3600

# (Llama 3 component, interruption count, our reason, scope, NVIDIA action, median repair hours)
CAUSES: tuple[tuple[str, int, str, str, str, float], ...] = (
    ("Faulty GPU", 148, "xid_fatal", "gpu", names.ACTION_DRAIN_AND_RESET, 8.0),
    ("GPU HBM3 Memory", 72, "ecc_uncorrectable", "gpu", names.ACTION_RESET_GPU, 4.0),
    ("Software Bug", 54, "job_failure", "job", names.ACTION_RESTART_APP, 0.0),
    ("Network Switch/Cable", 35, "network_port_down", "node", names.ACTION_CHECK_CABLING, 3.0),
    ("Host Maintenance", 32, "maintenance", "maintenance", names.ACTION_NONE, 4.0),
    ("GPU SRAM Memory", 19, "ecc_uncorrectable", "gpu", names.ACTION_RESET_GPU, 4.0),
    ("GPU System Processor", 17, "xid_fatal", "gpu", names.ACTION_RESET_GPU, 2.0),
    ("NIC", 7, "network_devices_missing", "node", names.ACTION_CONTACT_SUPPORT, 12.0),
    ("NCCL Watchdog Timeouts", 7, "job_failure", "job", names.ACTION_RESTART_APP, 0.0),
    ("Silent Data Corruption", 6, "probe_failed", "gpu", names.ACTION_CONTACT_SUPPORT, 24.0),
    (
        "GPU Thermal Interface + Sensor",
        6,
        "thermal_slowdown",
        "gpu",
        names.ACTION_CONTACT_SUPPORT,
        12.0,
    ),
    ("SSD", 3, "probe_failed", "node", names.ACTION_CONTACT_SUPPORT, 12.0),
    ("Power Supply", 3, "probe_failed", "node", names.ACTION_CONTACT_SUPPORT, 12.0),
    ("Server Chassis", 2, "probe_failed", "node", names.ACTION_CONTACT_SUPPORT, 24.0),
    ("IO Expansion Board", 2, "pcie_degraded", "node", names.ACTION_CONTACT_SUPPORT, 12.0),
    ("Dependency", 2, "job_failure", "job", names.ACTION_RESTART_APP, 0.0),
    ("CPU", 2, "probe_failed", "node", names.ACTION_CONTACT_SUPPORT, 24.0),
    ("System Memory", 2, "probe_failed", "node", names.ACTION_CONTACT_SUPPORT, 12.0),
)
# Observability and platform events per node-week (assumptions), with mean durations in seconds.
UNKNOWN_PER_NODE_WEEK, UNKNOWN_MEAN_S = 1.0, 900.0
UNKNOWN_REASONS = ("check_timeout", "stale_data", "dependency_missing")
NO_DATA_PER_NODE_WEEK, NO_DATA_MEAN_S = 0.3, 600.0
CORDON_PER_NODE_WEEK = 0.1


@dataclass(frozen=True)
class Fleet:
    """Size and span of a simulated fleet; rates are per 1000 GPU-days."""

    nodes: int
    gpus_per_node: int
    days: float
    interruptions_per_1000_gpu_days: float = LLAMA3_INTERRUPTIONS_PER_1000_GPU_DAYS
    serving_nodes: int = 0  # the last nodes run serving replicas, not training jobs

    @property
    def span_s(self) -> int:
        return int(round(self.days * 86400))

    @property
    def gpus(self) -> int:
        return self.nodes * self.gpus_per_node


def draw_faults(fleet: Fleet, rng: np.random.Generator) -> pd.DataFrame:
    """Draw fault events. Returns columns: node (int64 index), gpu (int64, -1 for node-wide),
    start, end (int64 seconds from the start), cause (str), reason, scope, action.
    Nodes get gamma-distributed weights so a few become lemons."""
    gpu_days = fleet.gpus * fleet.days
    count = int(rng.poisson(fleet.interruptions_per_1000_gpu_days * gpu_days / 1000))
    weights = np.array([cause[1] for cause in CAUSES], dtype=float)
    pick = rng.choice(len(CAUSES), size=count, p=weights / weights.sum())
    node_weight = rng.gamma(0.5, 2.0, size=fleet.nodes)
    node = rng.choice(fleet.nodes, size=count, p=node_weight / node_weight.sum())
    start = rng.integers(0, max(fleet.span_s, 1), size=count)
    median_h = np.array([CAUSES[i][5] for i in pick])
    repair = np.round(median_h * HOUR * rng.lognormal(0.0, 0.6, size=count)).astype(np.int64)
    scope = np.array([CAUSES[i][3] for i in pick], dtype=object)
    gpu = np.where(scope == "gpu", rng.integers(0, fleet.gpus_per_node, size=count), -1)
    return pd.DataFrame({
        "node": node.astype(np.int64), "gpu": gpu.astype(np.int64),
        "start": start.astype(np.int64), "end": (start + repair).astype(np.int64),
        "cause": [CAUSES[i][0] for i in pick], "reason": [CAUSES[i][2] for i in pick],
        "scope": scope.astype(str), "action": [CAUSES[i][4] for i in pick],
    })


def _per_node_events(fleet: Fleet, rng: np.random.Generator, per_week: float, mean_s: float):
    count = int(rng.poisson(per_week * fleet.nodes * fleet.days / 7))
    node = rng.integers(0, fleet.nodes, size=count).astype(np.int64)
    start = rng.integers(0, max(fleet.span_s, 1), size=count).astype(np.int64)
    length = np.maximum(np.round(rng.exponential(mean_s, size=count)), 30).astype(np.int64)
    return node, start, start + length


def draw_bad_intervals(
    fleet: Fleet, faults: pd.DataFrame, rng: np.random.Generator
) -> pd.DataFrame:
    """Non-healthy GPU intervals (possibly overlapping): columns gpu_index (global, node × G + gpu),
    start, end, verdict (unhealthy|unknown|no_data), reason, action. Node-wide events are expanded
    to every GPU of the node (vectorised)."""
    hw = faults[faults["scope"].isin(["gpu", "node"])]
    frames = [_expand(fleet, hw["node"], hw["gpu"], hw["start"], hw["end"],
                      names.VERDICT_UNHEALTHY, hw["reason"], hw["action"])]
    node, start, end = _per_node_events(fleet, rng, UNKNOWN_PER_NODE_WEEK, UNKNOWN_MEAN_S)
    reason = rng.choice(UNKNOWN_REASONS, size=len(node))
    frames.append(
        _expand(fleet, node, -1, start, end, names.VERDICT_UNKNOWN, reason, names.ACTION_NONE)
    )
    node, start, end = _per_node_events(fleet, rng, NO_DATA_PER_NODE_WEEK, NO_DATA_MEAN_S)
    frames.append(_expand(fleet, node, -1, start, end, "no_data", "no_data", names.ACTION_NONE))
    return pd.concat(frames, ignore_index=True)


def _expand(fleet, node, gpu, start, end, verdict, reason, action) -> pd.DataFrame:
    """One row per affected GPU; gpu −1 means every GPU of the node."""
    base = pd.DataFrame({"node": np.asarray(node, dtype=np.int64), "start": start, "end": end,
                         "verdict": verdict, "reason": reason, "action": action})
    base["gpu"] = np.broadcast_to(np.asarray(gpu, dtype=np.int64), len(base))
    wide = base[base["gpu"] < 0]
    g = fleet.gpus_per_node
    wide = wide.loc[wide.index.repeat(g)].assign(gpu=np.tile(np.arange(g), len(wide)))
    out = pd.concat([base[base["gpu"] >= 0], wide], ignore_index=True)
    out["gpu_index"] = out["node"] * g + out["gpu"]
    return out[["gpu_index", "start", "end", "verdict", "reason", "action"]]


def draw_schedulability(
    fleet: Fleet, faults: pd.DataFrame, rng: np.random.Generator
) -> pd.DataFrame:
    """Node schedulability intervals: columns node (int64), start, end, state, reason.
    GPU faults drain their node; hardware repairs are followed by validation; maintenance faults
    are unplanned maintenance; cordons arrive at CORDON_PER_NODE_WEEK for 1–4 h."""
    gpu = faults[faults["scope"] == "gpu"]
    hw = faults[faults["scope"].isin(["gpu", "node"])]
    maint = faults[faults["scope"] == "maintenance"]
    count = int(rng.poisson(CORDON_PER_NODE_WEEK * fleet.nodes * fleet.days / 7))
    cordon_node = rng.integers(0, fleet.nodes, size=count).astype(np.int64)
    cordon_start = rng.integers(0, max(fleet.span_s, 1), size=count).astype(np.int64)
    cordon_end = cordon_start + rng.integers(HOUR, 4 * HOUR, size=count)
    parts = [
        (gpu["node"], gpu["start"], gpu["end"], "drained", gpu["cause"]),
        (hw["node"], hw["end"], hw["end"] + VALIDATION_S, "validation", "post-repair validation"),
        (maint["node"], maint["start"], maint["end"], "maintenance", maint["cause"]),
        (cordon_node, cordon_start, cordon_end, "cordoned", "operator cordon"),
    ]
    frames = [
        pd.DataFrame(
            {
                "node": np.asarray(n, dtype=np.int64),
                "start": np.asarray(s),
                "end": np.asarray(e),
                "state": st,
                "reason": r,
            }
        )
        for n, s, e, st, r in parts
    ]
    return pd.concat(frames, ignore_index=True)


def disjoint(frame: pd.DataFrame, key: str, span_s: int) -> pd.DataFrame:
    """Clip intervals to [0, span_s) and trim overlaps within each `key`: an interval starting
    inside an earlier one of the same key keeps only its part after the earlier one ends (first
    come wins). Vectorised: sort, then a per-key running maximum of `end`."""
    out = frame.assign(start=frame["start"].clip(0, span_s), end=frame["end"].clip(0, span_s))
    out = out.sort_values([key, "start", "end"], kind="stable").reset_index(drop=True)
    prev_end = out.groupby(key, sort=False)["end"].cummax().groupby(out[key], sort=False).shift(1)
    out["start"] = np.maximum(
        out["start"].to_numpy(), prev_end.fillna(0).to_numpy().astype(np.int64)
    )
    return out[out["end"] > out["start"]].reset_index(drop=True)


def fill_healthy(bad: pd.DataFrame, gpus: int, span_s: int) -> pd.DataFrame:
    """Complete disjoint per-GPU bad intervals (sorted by gpu_index, start) with healthy
    intervals so every GPU's [0, span_s) is covered exactly once, then drop `no_data` rows
    (uncovered time is no data). Columns: gpu_index, start, end, verdict, reason, action."""
    idx = bad["gpu_index"].to_numpy()
    first = np.r_[True, idx[1:] != idx[:-1]] if len(idx) else np.zeros(0, bool)
    gap_start = np.where(first, 0, np.r_[0, bad["end"].to_numpy()[:-1]])
    last = np.r_[idx[1:] != idx[:-1], True] if len(idx) else np.zeros(0, bool)
    has_bad = np.zeros(gpus, bool)
    has_bad[idx] = True
    clean = np.flatnonzero(~has_bad)
    healthy = pd.DataFrame(
        {
            "gpu_index": np.r_[idx, idx[last], clean],
            "start": np.r_[gap_start, bad["end"].to_numpy()[last], np.zeros(len(clean), np.int64)],
            "end": np.r_[
                bad["start"].to_numpy(), np.full(last.sum(), span_s), np.full(len(clean), span_s)
            ],
        }
    ).assign(verdict=names.VERDICT_HEALTHY, reason="", action="")
    out = pd.concat([bad, healthy[healthy["end"] > healthy["start"]]], ignore_index=True)
    out = out[out["verdict"] != "no_data"]
    return out.sort_values(["gpu_index", "start"], kind="stable").reset_index(drop=True)
