"""Serving replicas for `gpuslo simulate --serving-nodes N` (issue 29): inference replicas on the
last N nodes, beside the training jobs on the others, in the frames the serving accounting reads
(`gpuslo.slo.frames`: replicas, replica_states, replica_idle, replica_latency).

Each serving node is cut into replica slots of 1–8 GPUs (powers of two), each slot running one
engine (vLLM, SGLang, TGI or Triton). A slot's pod goes through, in whole seconds from the start:

- `loading` 5–15 min at start and after every restart (weights, compile, warm-up);
- `ready`, with idle stretches (no request: `replica_idle`) at night, and a spare slot that
  takes no traffic at all;
- a node fault under it (the simulation's hardware faults on its node or on one of its GPUs):
  `not_ready` from the fault until the node is back (repair, then validation), reason "" so the
  accounting attributes it to the fault; then it reloads;
- its own crash loops (about one per two replica-days): `not_ready` 1–10 min, reason "" (the
  engine's, `engine_crash`) or `engine_oom`; an eviction (`replica_evicted`) now and then;
- a rollout every 1–3 days and unplanned maintenance of its node: `draining` 1–5 min, then the
  pod ends and a new one (next generation, `<engine>-<slot>-<gen>`) starts loading on the same
  GPUs (after maintenance, when the node is back);
- blind stretches (about one per replica-day, 10–30 min inside a ready stretch) that no state
  covers: the accounting's `other` (the sources cannot tell).

Events that fall inside a loading or not-ready stretch wait until it ends. Latency: for every
hour piece of ready, non-idle time, a request count (Poisson, the slot's rate) and cumulative
counts at vLLM's default histogram bounds (`TTFT_BOUNDS`, `ITL_BOUNDS`) from a log-normal
latency, slower in the first 15 min after loading (cold caches) — only the histograms the
engine publishes (`HISTOGRAMS`: none for TGI, no inter-token one for Triton). Durations and
rates are this simulator's assumptions, not measured data. Deterministic for the seed (its own
generator, so the training side is the same with or without serving nodes).
"""

from __future__ import annotations

import math

import numpy as np
import pandas as pd

from gpuslo.slo import frames as fr
from gpuslo.slo.simulate.faults import VALIDATION_S

HOUR, DAY = 3600, 86400
ENGINES = ("vllm", "sglang", "tgi", "triton")
# vLLM's default bounds (seconds) around usual objectives: tests/data/serving pages.
TTFT_BOUNDS = (0.1, 0.25, 0.5, 0.75, 1.0, 2.5, 5.0)
ITL_BOUNDS = (0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.5)
# What each engine's default /metrics gives (gpuslo.alerts.serving): TGI has no TTFT histogram
# and no inter-token one; Triton's first-response histogram (enabled here) has no inter-token.
HISTOGRAMS = {"vllm": ("ttft", "itl"), "sglang": ("ttft", "itl"), "triton": ("ttft",),
              "tgi": ()}
TTFT_MEDIAN_S, ITL_MEDIAN_S, SIGMA = 0.18, 0.03, 0.7
COLD_S, COLD_FACTOR = 900, 2.5
TOKENS_PER_REQUEST = 200
CRASH_PER_DAY, OOM_SHARE, EVICT_PER_DAY, BLIND_PER_DAY = 0.5, 0.3, 0.1, 1.0


def slots(nodes: range, gpus_per_node: int, rng: np.random.Generator) -> list[tuple]:
    """(slot index, node index, first GPU, GPU count, engine) packing each node's GPUs."""
    out = []
    for node in nodes:
        first = 0
        while first < gpus_per_node:
            sizes = [s for s in (8, 4, 2, 1) if s <= gpus_per_node - first]
            size = int(rng.choice(sizes))
            out.append((len(out), node, first, size, ENGINES[int(rng.integers(len(ENGINES)))]))
            first += size
    return out


def _disruptions(node: int, gpus: range, faults: pd.DataFrame, span: int,
                 rng: np.random.Generator) -> list[tuple[int, str, int, str]]:
    """Sorted (time, kind, back, reason) events of one slot: kind fault (node back at `back`),
    maintenance, crash, evict or rollout."""
    mine = faults[(faults["node"] == node) & ((faults["gpu"] < 0) | faults["gpu"].isin(gpus))]
    hw = mine[mine["scope"].isin(["gpu", "node"])]
    events = [(int(s), "fault", int(e) + VALIDATION_S, "") for s, e in zip(hw["start"], hw["end"],
                                                                          strict=True)]
    maint = mine[mine["scope"] == "maintenance"]
    events += [(int(s), "maintenance", int(e), "") for s, e in zip(maint["start"], maint["end"],
                                                                   strict=True)]
    days = span / DAY
    for kind, per_day in (("crash", CRASH_PER_DAY), ("evict", EVICT_PER_DAY)):
        for t in rng.integers(0, max(span, 1), size=int(rng.poisson(per_day * days))):
            reason = "replica_evicted" if kind == "evict" else (
                "engine_oom" if rng.random() < OOM_SHARE else "")
            events.append((int(t), kind, int(t + rng.integers(60, 600)), reason))
    t = int(rng.integers(DAY, 3 * DAY))
    while t < span:
        events.append((t, "rollout", t, ""))
        t += int(rng.integers(DAY, 3 * DAY))
    return sorted(events)


def slot_timeline(slot: tuple, faults: pd.DataFrame, span: int, rng: np.random.Generator):
    """(replica rows, state rows) of one slot, times in seconds from the start (module
    docstring). Replica rows: replica, node (index), gpus, engine, start, end, first GPU;
    state rows: replica, start, end, state, reason."""
    index, node, first, size, engine = slot
    pending = _disruptions(node, range(first, first + size), faults, span, rng)
    replicas, states = [], []
    gen, t, born = 0, int(rng.integers(0, max(span // 50, 1))), None
    while t < span:
        name = f"{engine}-{index:02d}-{gen}"
        born = t if born is None else born
        t = _state(states, name, t, t + int(rng.integers(300, 900)), "loading", "", span)
        when, kind, back, reason = pending.pop(0) if pending else (span, "end", span, "")
        when = max(when, t)
        _ready(states, name, t, min(when, span), rng)
        if when >= span:
            break
        if kind in ("rollout", "maintenance"):
            t = _state(states, name, when, when + int(rng.integers(60, 300)), "draining", "",
                       span)
            replicas.append((name, node, size, engine, born, t, first))
            t, gen, born = max(t, back), gen + 1, None
        else:
            t = _state(states, name, when, max(back, when + 60), "not_ready", reason, span)
        pending = [p for p in pending if p[0] >= t or p[1] == "rollout"]
    if born is not None:  # the pod still holds its GPUs at the end (serving or not ready)
        replicas.append((f"{engine}-{index:02d}-{gen}", node, size, engine, born, span, first))
    return replicas, states


def _state(states: list, name: str, start: int, end: int, state: str, reason: str,
           span: int) -> int:
    end = min(end, span)
    if end > start:
        states.append((name, start, end, state, reason))
    return max(end, start)


def _ready(states: list, name: str, start: int, end: int, rng: np.random.Generator) -> None:
    """Ready from start to end, with blind holes (no state: the sources cannot tell)."""
    t = start
    for hole in np.sort(rng.integers(start, max(end, start + 1),
                                     size=int(rng.poisson(BLIND_PER_DAY * (end - start) / DAY)))):
        hole = int(hole)
        if hole < t:
            continue
        _state(states, name, t, hole, "ready", "", end)
        t = min(hole + int(rng.integers(600, 1800)), end)
    _state(states, name, t, end, "ready", "", end)


def idle_windows(replicas: list[tuple], spare: set[str], span: int,
                 rng: np.random.Generator) -> list[tuple]:
    """(replica, start, end) with no request: the whole life of a spare slot's pods, and a
    night window (01:00–05:00 ± 1 h) with probability one half per day for the others."""
    out = []
    for name, _, _, _, born, died, _ in replicas:
        if name.rsplit("-", 1)[0] in spare:
            out.append((name, born, died))
            continue
        for day in range(0, span, DAY):
            if rng.random() < 0.5:
                s = day + HOUR + int(rng.integers(-HOUR, HOUR))
                e = s + int(rng.integers(2 * HOUR, 4 * HOUR))
                if min(e, died) > max(s, born):
                    out.append((name, max(s, born), min(e, died)))
    return out


def _subtract(start: int, end: int, holes: list[tuple[int, int]]) -> list[tuple[int, int]]:
    pieces, t = [], start
    for s, e in sorted(holes):
        if e <= t or s >= end:
            continue
        if s > t:
            pieces.append((t, s))
        t = max(t, e)
    if t < end:
        pieces.append((t, end))
    return pieces


def _cdf(bound: float, median: float) -> float:
    return 0.5 * (1 + math.erf(math.log(bound / median) / (SIGMA * math.sqrt(2))))


def latency_rows(states: list[tuple], idle: list[tuple], rates: dict[str, float],
                 rng: np.random.Generator) -> list[tuple]:
    """(replica, start, end, sli, le, good, total) per hour piece of ready, non-idle time."""
    holes: dict[str, list] = {}
    for name, s, e in idle:
        holes.setdefault(name, []).append((s, e))
    loaded = {}
    rows = []
    for name, start, end, state, _ in sorted(states, key=lambda r: (r[0], r[1])):
        if state == "loading":
            loaded[name] = end
        if state != "ready" or not rates.get(name.rsplit("-", 1)[0]):
            continue
        for s, e in _subtract(start, end, holes.get(name, [])):
            for h in range(s - s % HOUR, e, HOUR):
                a, b = max(s, h), min(e, h + HOUR)
                requests = int(rng.poisson(rates[name.rsplit("-", 1)[0]] * (b - a)))
                if requests:
                    cold = COLD_FACTOR if a - loaded.get(name, -COLD_S) < COLD_S else 1.0
                    slow = cold * float(rng.lognormal(0.0, 0.25))
                    rows += _buckets(name, a, b, requests, slow,
                                     HISTOGRAMS[name.split("-", 1)[0]])
    return rows


def _buckets(name: str, a: int, b: int, requests: int, slow: float,
             slis: tuple[str, ...]) -> list[tuple]:
    rows = []
    tokens = requests * (TOKENS_PER_REQUEST - 1)
    for sli, bounds, median, total in (("ttft", TTFT_BOUNDS, TTFT_MEDIAN_S, requests),
                                       ("itl", ITL_BOUNDS, ITL_MEDIAN_S, tokens)):
        for bound in bounds if sli in slis else ():
            good = float(round(total * _cdf(bound, median * slow)))
            rows.append((name, a, b, sli, bound, good, float(total)))
    return rows


def simulate_serving(nodes: range, gpus_per_node: int, faults: pd.DataFrame, span: int,
                     seed: int) -> dict[str, pd.DataFrame]:
    """Serving frames (times in int seconds from the start, node as an index) for `nodes`:
    replicas (replica, node, gpus, engine, start, end, first_gpu), replica_states, replica_idle,
    replica_latency (replica, start, end, sli, le, good, total); see the module docstring."""
    rng = np.random.default_rng([seed, 29])
    chosen = slots(nodes, gpus_per_node, rng)
    replicas, states = [], []
    for slot in chosen:
        r, s = slot_timeline(slot, faults, span, rng)
        replicas += r
        states += s
    keys = [f"{engine}-{index:02d}" for index, _, _, _, engine in chosen]
    spare = {keys[i] for i in range(len(keys)) if i % 5 == 4}
    rates = {k: (0.0 if k in spare else float(rng.uniform(0.5, 3.0))) for k in keys}
    idle = idle_windows(replicas, spare, span, rng)
    latency = latency_rows(states, idle, rates, rng)
    return {
        "replicas": pd.DataFrame(replicas, columns=["replica", "node", "gpus", "engine", "start",
                                                    "end", "first_gpu"]),
        "replica_states": pd.DataFrame(states, columns=["replica", "start", "end", "state",
                                                        "reason"]),
        "replica_idle": pd.DataFrame(idle, columns=["replica", "start", "end"]),
        "replica_latency": pd.DataFrame(latency, columns=["replica", "start", "end", "sli", "le",
                                                          "good", "total"]),
    }


def serving_frames(raw: dict[str, pd.DataFrame], node_names: np.ndarray, uuids: np.ndarray,
                   gpus_per_node: int, start: pd.Timestamp) -> dict[str, pd.DataFrame]:
    """`simulate_serving`'s output as `gpuslo.slo.frames` frames (node names, aware times), plus
    `replica_allocations`: one allocations row per GPU a replica held (job = the replica), for
    the caller to add to the fleet's allocations (a replica holds GPUs as a training job does:
    `gpuslo_gpu_allocation`)."""
    def at(seconds: pd.Series) -> pd.Series:
        return start + pd.to_timedelta(seconds.to_numpy(dtype=np.int64), unit="s")

    rep = raw["replicas"]
    replicas = rep.assign(node=node_names[rep["node"].to_numpy(dtype=np.int64)],
                          start=at(rep["start"]), end=at(rep["end"]))
    per_gpu = rep.loc[rep.index.repeat(rep["gpus"])].reset_index(drop=True)
    gpu = per_gpu["first_gpu"] + per_gpu.groupby("replica").cumcount()
    alloc = pd.DataFrame({
        "job": per_gpu["replica"], "node": node_names[per_gpu["node"].to_numpy(dtype=np.int64)],
        "uuid": uuids[per_gpu["node"].to_numpy(dtype=np.int64) * gpus_per_node + gpu],
        "start": at(per_gpu["start"]), "end": at(per_gpu["end"]),
    })
    out = {"replicas": fr.make_frame("replicas", replicas.drop(columns="first_gpu")),
           "replica_allocations": fr.make_frame("allocations", alloc)}
    for name in ("replica_states", "replica_idle", "replica_latency"):
        frame = raw[name]
        out[name] = fr.make_frame(name, frame.assign(start=at(frame["start"]),
                                                     end=at(frame["end"])))
    return out
