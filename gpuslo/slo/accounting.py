"""Fleet accounting: every provisioned GPU-second of a window gets exactly one state.

`account(inventory, verdicts, schedulability, allocations, start, end) -> Accounting` runs one
vectorised sweep (numpy; no Python loop per GPU or per sample): it cuts each GPU's provisioned
time at every interval boundary (and at UTC midnights, for per-day figures), then paints each
elementary segment with the first state that applies, in DESIGN.md §6 order:

1. `no_data` — no verdict interval covers it (layer observability, reason `no_data`);
2. `unknown` — a verdict `unknown` covers it (layer observability, the interval's reason);
3. `unhealthy` — a verdict `unhealthy` covers it (the interval's layer, else its reason's);
4. `unschedulable` — healthy but the node is cordoned/drained/in maintenance/validation
   (layer platform, reason = the state);
5. `allocated` — healthy, schedulable and held by a job (split into productive and badput
   categories by `gpuslo.slo.engine` from the job's goodput);
6. `idle` — healthy, schedulable, unallocated.

Overlapping verdict intervals on one GPU resolve in that order (unknown over unhealthy over
healthy); within a state the first reason in `names.REASONS` wins. Usable = allocated + idle.

Time is counted in integer ticks (1 ns, or a coarser power of ten when GPUs × window would
overflow int64), so the states sum to the provisioned time exactly.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from gpuslo import names
from gpuslo.errors import InputError
from gpuslo.slo import sweep
from gpuslo.slo.frames import SCHEDULABILITY_STATES

STATES = (
    names.ACCOUNTING_NO_DATA,
    names.ACCOUNTING_UNKNOWN,
    names.ACCOUNTING_UNHEALTHY,
    names.ACCOUNTING_UNSCHEDULABLE,
    "allocated",
    names.ACCOUNTING_IDLE,
)
_STATE_CODE = {state: code for code, state in enumerate(STATES)}


@dataclass(frozen=True)
class Accounting:
    """Result of `account`. All durations are GPU-seconds (float64, summed from integer ticks).

    - `segments`: one row per painted segment — gpu (int64 index into `gpus`), node (string),
      start/end (datetime64[ns, UTC]), seconds (float64), state (string, STATES), reason, layer
      (string, "" when usable), job (string, "" unless allocated), held_by (string: the job
      whose allocation covers the segment whatever its state, "" when none — so a job is
      charged the unusable time of the GPUs it held, `gpuslo.slo.job_losses`).
    - `gpus`: the inventory rows that were provisioned in the window, index = gpu.
    - `by_state`: GPU-seconds per state (Series indexed by STATES, all present).
    - `by_layer_reason`: GPU-seconds not usable per (layer, reason) (DataFrame: layer, reason,
      seconds), from no_data, unknown, unhealthy and unschedulable time.
    - `job_seconds`: allocated usable GPU-seconds per job (Series, index job).
    - `provisioned_ticks`/`state_ticks`: the exact integer totals (ticks) behind the invariant.
    """

    segments: pd.DataFrame
    gpus: pd.DataFrame
    by_state: pd.Series
    by_layer_reason: pd.DataFrame
    job_seconds: pd.Series
    provisioned_ticks: int
    state_ticks: dict[str, int]
    tick_ns: int

    @property
    def tick_seconds(self) -> float:
        """Seconds per tick."""
        return self.tick_ns / 1e9

    @property
    def provisioned_seconds(self) -> float:
        """Provisioned GPU-seconds in the window."""
        return self.provisioned_ticks * self.tick_ns / 1e9

    @property
    def usable_seconds(self) -> float:
        """Healthy and schedulable GPU-seconds (allocated + idle)."""
        return float(self.by_state["allocated"] + self.by_state[names.ACCOUNTING_IDLE])


def account(
    inventory: pd.DataFrame,
    verdicts: pd.DataFrame,
    schedulability: pd.DataFrame,
    allocations: pd.DataFrame,
    start: pd.Timestamp,
    end: pd.Timestamp,
) -> Accounting:
    """Paint the window [start, end) (aware UTC timestamps) for every GPU in `inventory`.

    Frames as in `gpuslo.slo.frames` (verdicts may use uuid "" for the whole node). Raises
    InputError when two allocations hold the same GPU at the same time (the row is named).
    """
    start, end = pd.Timestamp(start), pd.Timestamp(end)
    gpus, prov = _provisioned(inventory, start, end)
    tick = sweep.tick_ns(len(gpus), end.value - start.value)
    span = (end.value - start.value) // tick

    def to_ticks(times: pd.Series) -> np.ndarray:
        values = times.astype("datetime64[ns, UTC]").to_numpy("int64", na_value=end.value)
        return np.clip((values - start.value) // tick, 0, span)

    prov_s, prov_e = to_ticks(prov["s"]), to_ticks(prov["e"])
    verdict_iv = _verdict_intervals(verdicts, gpus, to_ticks)
    sched_iv = _node_intervals(schedulability, gpus, to_ticks)
    alloc_iv = _allocation_intervals(allocations, gpus, to_ticks)
    days = _midnights(start, end, tick)
    seg = sweep.segments(prov["gpu"].to_numpy(), prov_s, prov_e,
                         [verdict_iv, sched_iv, alloc_iv], days)
    state, code, held = _paint(seg, verdict_iv, sched_iv, alloc_iv)
    return _summarise(seg, (state, code, held), gpus, verdict_iv, sched_iv, alloc_iv, start, tick)


def _provisioned(inventory: pd.DataFrame, start: pd.Timestamp, end: pd.Timestamp):
    gpus = inventory.reset_index(drop=True)
    s = gpus["provisioned_start"].clip(lower=start)
    e = gpus["provisioned_end"].fillna(end).clip(upper=end)
    keep = e > s
    prov = pd.DataFrame({"gpu": np.arange(len(gpus))[keep.to_numpy()], "s": s[keep], "e": e[keep]})
    return gpus, prov


def _gpu_index(frame: pd.DataFrame, gpus: pd.DataFrame) -> pd.DataFrame:
    """Rows of `frame` joined to GPU indexes: by (node, uuid), or by node when uuid is ""."""
    keys = pd.DataFrame({"node": gpus["node"], "uuid": gpus["uuid"], "gpu": np.arange(len(gpus))})
    frame = frame.assign(row=np.arange(len(frame)))
    if "uuid" not in frame.columns:
        return frame.merge(keys[["node", "gpu"]], on="node", how="inner")
    per_gpu = frame[frame["uuid"] != ""].merge(keys, on=["node", "uuid"], how="inner")
    node_wide = frame[frame["uuid"] == ""].drop(columns="uuid").merge(keys, on="node", how="inner")
    return pd.concat([per_gpu, node_wide], ignore_index=True)


def _verdict_intervals(verdicts: pd.DataFrame, gpus: pd.DataFrame, to_ticks) -> sweep.Intervals:
    joined = _gpu_index(verdicts, gpus)
    verdict = joined["verdict"].astype(str)
    default = verdict.map(
        {names.VERDICT_UNKNOWN: "stale_data", names.VERDICT_UNHEALTHY: "probe_failed",
         names.VERDICT_VALIDATING: names.REASON_VALIDATION}
    )
    reason = joined["reason"].astype(str).mask(joined["reason"] == "", default).fillna("")
    layer = joined["layer"].astype(str).mask(joined["layer"] == "", reason.map(names.REASON_LAYER))
    layer = layer.where(verdict != names.VERDICT_UNKNOWN, names.LAYER_OBSERVABILITY)
    rank = {
        v: i
        for i, v in enumerate(
            (names.VERDICT_UNKNOWN, names.VERDICT_UNHEALTHY, names.VERDICT_VALIDATING,
             names.VERDICT_HEALTHY)
        )
    }
    reason_rank = {r: i for i, r in enumerate(("", *names.REASONS))}
    layers = layer.fillna("").astype(str)
    labels = pd.DataFrame({"verdict": verdict, "reason": reason, "layer": layers})
    layer_rank = {lay: i for i, lay in enumerate(("", *names.LAYERS))}
    priority = (
        verdict.map(rank).to_numpy() * 100_000
        + reason.map(reason_rank).fillna(999).to_numpy() * 10
        + layers.map(layer_rank).fillna(9).to_numpy()
    )
    return sweep.Intervals.build(
        joined["gpu"], to_ticks(joined["start"]), to_ticks(joined["end"]), labels, priority
    )


def _node_intervals(schedulability: pd.DataFrame, gpus: pd.DataFrame, to_ticks) -> sweep.Intervals:
    joined = _gpu_index(schedulability, gpus)
    rank = {s: i for i, s in enumerate(SCHEDULABILITY_STATES)}
    labels = pd.DataFrame({"reason": joined["state"].astype(str)})
    priority = joined["state"].astype(str).map(rank).fillna(99).to_numpy()
    return sweep.Intervals.build(
        joined["gpu"], to_ticks(joined["start"]), to_ticks(joined["end"]), labels, priority
    )


def _allocation_intervals(allocations: pd.DataFrame, gpus: pd.DataFrame,
                          to_ticks) -> sweep.Intervals:
    joined = _gpu_index(allocations, gpus)
    iv = sweep.Intervals.build(
        joined["gpu"],
        to_ticks(joined["start"]),
        to_ticks(joined["end"]),
        pd.DataFrame({"job": joined["job"].astype(str), "row": joined["row"]}),
        np.zeros(len(joined)),
    )
    clash = sweep.first_overlap(iv)
    if clash is not None:
        row = int(iv.labels["row"].iloc[clash]) + 1
        raise InputError(
            "allocations",
            f"row {row}: job {iv.labels['job'].iloc[clash]!r} holds a GPU another allocation "
            "already holds",
        )
    return iv


def _midnights(start: pd.Timestamp, end: pd.Timestamp, tick: int) -> np.ndarray:
    """Ticks of the UTC midnights inside [start, end). In nanoseconds whatever the timestamps'
    resolution: a window from a date (`--week`) is in microseconds, and `asi8` follows it."""
    days = pd.date_range(start.ceil("D"), end, freq="D", inclusive="left").as_unit("ns")
    return (days.asi8 - start.value) // tick


def _paint(seg: sweep.Segments, verdict_iv, sched_iv, alloc_iv) -> tuple[np.ndarray, ...]:
    """State code per segment, the index of the interval that decided it (-1 for none) and the
    index of the allocation covering it whatever the state (-1 for none)."""
    v = sweep.winner(seg, verdict_iv)
    s = sweep.winner(seg, sched_iv)
    a = sweep.winner(seg, alloc_iv)
    verdict = _take(verdict_iv.labels["verdict"], v)
    state = np.full(len(seg.gpu), _STATE_CODE[names.ACCOUNTING_IDLE], dtype=np.int8)
    healthy = verdict == names.VERDICT_HEALTHY
    state[healthy & (a >= 0)] = _STATE_CODE["allocated"]
    state[healthy & (s >= 0)] = _STATE_CODE[names.ACCOUNTING_UNSCHEDULABLE]
    # validating (a cleared fault, the return-to-service gate not passed) is not usable like
    # unhealthy; its reason `validation` puts the time in the platform layer
    not_usable = (verdict == names.VERDICT_UNHEALTHY) | (verdict == names.VERDICT_VALIDATING)
    state[not_usable] = _STATE_CODE[names.ACCOUNTING_UNHEALTHY]
    state[verdict == names.VERDICT_UNKNOWN] = _STATE_CODE[names.ACCOUNTING_UNKNOWN]
    state[v < 0] = _STATE_CODE[names.ACCOUNTING_NO_DATA]
    code = np.where(
        state == _STATE_CODE[names.ACCOUNTING_UNSCHEDULABLE],
        s,
        np.where(state == _STATE_CODE["allocated"], a, v),
    )
    return state, np.where(state == _STATE_CODE[names.ACCOUNTING_NO_DATA], -1, code), a


def _summarise(seg, painted, gpus, verdict_iv, sched_iv, alloc_iv, start, tick) -> Accounting:
    state, code, held = painted
    state_name = np.asarray(STATES, dtype=object)[state]
    reason = np.full(len(state), "", dtype=object)
    layer = np.full(len(state), "", dtype=object)
    job = np.full(len(state), "", dtype=object)
    _fill(reason, layer, state, code, _STATE_CODE[names.ACCOUNTING_UNKNOWN], verdict_iv)
    _fill(reason, layer, state, code, _STATE_CODE[names.ACCOUNTING_UNHEALTHY], verdict_iv)
    pick = state == _STATE_CODE[names.ACCOUNTING_UNSCHEDULABLE]
    reason[pick] = sched_iv.labels["reason"].to_numpy(dtype=object)[code[pick]]
    layer[pick] = names.LAYER_PLATFORM
    pick = state == _STATE_CODE[names.ACCOUNTING_NO_DATA]
    reason[pick], layer[pick] = "no_data", names.LAYER_OBSERVABILITY
    pick = state == _STATE_CODE["allocated"]
    job[pick] = alloc_iv.labels["job"].to_numpy(dtype=object)[code[pick]]
    held_by = _take(alloc_iv.labels["job"], held)
    ticks = seg.end - seg.start
    seconds = ticks * (tick / 1e9)
    segments = pd.DataFrame(
        {
            "gpu": seg.gpu,
            "node": gpus["node"].to_numpy(dtype=object)[seg.gpu],
            "start": pd.to_datetime(start.value + seg.start * tick, utc=True),
            "end": pd.to_datetime(start.value + seg.end * tick, utc=True),
            "seconds": seconds,
            "state": state_name,
            "reason": reason,
            "layer": layer,
            "job": job,
            "held_by": held_by,
        }
    ).astype(
        {
            "node": "string",
            "state": "string",
            "reason": "string",
            "layer": "string",
            "job": "string",
            "held_by": "string",
        }
    )
    state_ticks = {name: int(ticks[state == c].sum()) for name, c in _STATE_CODE.items()}
    by_state = pd.Series({name: t * tick / 1e9 for name, t in state_ticks.items()}, dtype="float64")
    lost = segments[segments["layer"] != ""]
    by_layer_reason = (
        lost.groupby(["layer", "reason"], observed=True)["seconds"].sum().reset_index()
    )
    job_seconds = segments[segments["job"] != ""].groupby("job")["seconds"].sum()
    return Accounting(
        segments, gpus, by_state, by_layer_reason, job_seconds, int(ticks.sum()), state_ticks, tick
    )


def _take(labels: pd.Series, index: np.ndarray) -> np.ndarray:
    """labels[index] as an object array, "" where index is -1."""
    values = np.append(labels.to_numpy(dtype=object), "")
    return values[np.where(index >= 0, index, len(values) - 1)]


def _fill(reason, layer, state, code, which, iv) -> None:
    pick = state == which
    reason[pick] = iv.labels["reason"].to_numpy(dtype=object)[code[pick]]
    layer[pick] = iv.labels["layer"].to_numpy(dtype=object)[code[pick]]
