"""Gang training jobs for `gpuslo simulate`: placement, checkpoints, interruptions, restarts.

Jobs take whole nodes (8 to 1024 GPUs, powers of two in nodes), are packed onto the fleet until
about 90 % of the nodes are taken (the rest stay idle), and each runs one timeline written as
journal events (schema v1, `gpuslo.goodput.journal`): `job_start`, `phase_start`/`phase_end`
(initialization, checkpoint_restore, checkpoint_save), coalesced `steps`, `checkpoint`,
`restart`, `job_end`. Every node of a job writes the same events with its own `node` and `gpus`.

A job is interrupted when a hardware fault, a drain or unplanned maintenance starts on one of its
nodes (the journal just stops: the node was lost, the job never saw why — the SLO engine finds the
cause by correlating with verdicts), or by its own crash (`job_end failed`, layer `training`).
It restarts from its last checkpoint after a recovery of 10–30 min, on the same node set: there is
no spare pool, so after a hardware fault or unplanned maintenance it waits until the node is back
(repair, then 30 min validation) — the whole gang's wait is recovery badput, which is what blast
radius measures. Each block of nodes runs jobs back to back with queue gaps (idle time). Durations
are assumptions of this simulator, not measured data.

Times are int64 seconds from the simulation start.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from gpuslo import names
from gpuslo.slo.simulate.faults import VALIDATION_S
from gpuslo.slo.simulate.stragglers import COMPUTE_SHARE, Straggler, pieces

INIT_S, RESTORE_S, SAVE_S = 300, 180, 90
CHECKPOINT_INTERVALS_S = (1800, 3600, 7200)
NODE_SIZES = (1, 2, 4, 8, 16, 32, 64, 128)
BUSY_SHARE = 0.9


@dataclass(frozen=True)
class Job:
    """One job: name, first node index, node count, start/end seconds, whether it completes,
    step time and checkpoint interval (seconds)."""

    name: str
    first_node: int
    nodes: int
    start: int
    end: int
    completes: bool
    step_s: int
    checkpoint_s: int


def place_jobs(nodes: int, gpus_per_node: int, span_s: int, rng: np.random.Generator) -> list[Job]:
    """Cut the fleet into blocks of consecutive nodes until BUSY_SHARE of it is taken (the rest
    is idle capacity), and run jobs back to back on each block: a job lasts 1–5 days (or until
    the span ends, still running), the next one starts after a 0–6 h queue gap. One loop per job,
    not per GPU. Sizes: 8–1024 GPUs; smaller jobs are more frequent."""
    cap = max(1, min(1024 // gpus_per_node, nodes))
    sizes = np.array([s for s in NODE_SIZES if s <= cap] or [1])
    weights = 1.0 / np.sqrt(sizes)
    jobs: list[Job] = []
    taken = 0
    while taken < BUSY_SHARE * nodes:
        size = int(min(rng.choice(sizes, p=weights / weights.sum()), nodes - taken))
        t = int(rng.integers(0, max(span_s // 20, 1)))
        while t < span_s:
            end = t + int(rng.integers(86400, 5 * 86400))
            jobs.append(Job(f"job-{len(jobs):04d}", taken, size, t, min(end, span_s), end <= span_s,
                            int(rng.integers(2, 21)), int(rng.choice(CHECKPOINT_INTERVALS_S))))
            t = end + int(rng.integers(0, 6 * 3600))
        taken += size
    return jobs


def interruptions_for(job: Job, faults: pd.DataFrame) -> list[tuple[int, str | None, int]]:
    """(time, layer the job itself knows or None, earliest restart) for every fault that
    interrupts `job`, sorted. Hardware and maintenance faults: layer None (the journal stops) and
    the job waits for its node to be back (repair, then validation for hardware) — the simulator
    has no spare pool; software faults: layer training, restart as soon as recovered."""
    node, start = faults["node"].to_numpy(), faults["start"].to_numpy()
    mine = faults[(node >= job.first_node) & (node < job.first_node + job.nodes)
                  & (start > job.start) & (start < job.end)]
    software = (mine["scope"] == "job").to_numpy()
    known = np.where(software, names.LAYER_TRAINING, None)
    hardware = mine["scope"].isin(["gpu", "node"]).to_numpy()
    back = np.where(software, mine["start"], mine["end"] + np.where(hardware, VALIDATION_S, 0))
    rows = zip(
        mine["start"].astype(int).tolist(), known.tolist(), back.astype(int).tolist(), strict=True
    )
    return sorted(rows, key=lambda row: row[0])


def job_timeline(
    job: Job, gpus: int, interruptions: list[tuple[int, str | None, int]], rng: np.random.Generator,
    straggler: Straggler | None = None,
) -> list[dict]:
    """Journal events for one node of `job` (dicts with t, event and the event's fields).
    After an interruption the job restarts 10–30 min later (uniform), or when its node is back
    if that is later; interruptions while it waits are absorbed. With a `straggler` the job
    logs every `stragglers.LOG_S` with step and compute times (steps events get `count`,
    `step_time_s`, `compute_s` and `slow`, the last for the caller to raise the straggler
    node's compute time)."""
    walker = _Walker(job, gpus, straggler)
    walker.emit(job.start, "job_start", job=job.name, gpus=gpus)
    t, first, reached_end = job.start, True, False
    pending = [i for i in interruptions if i[0] > job.start]
    while t < job.end:
        stop, layer, back = pending.pop(0) if pending else (job.end, None, job.end)
        if not first:
            walker.emit(t, "restart", from_step=walker.committed)
        t = walker.run(t, min(stop, job.end), INIT_S if first else RESTORE_S, first)
        first = False
        if stop >= job.end:
            reached_end = True
            break
        if layer is not None:
            walker.emit(stop, "job_end", status="failed", layer=layer)
        t = max(stop + int(rng.integers(600, 1800)), back)
        pending = [i for i in pending if i[0] > t]
    if job.completes and reached_end:
        walker.emit(job.end, "job_end", status="completed")
    return walker.events


class _Walker:
    """Writes one run's events: a start phase, then progress and checkpoint saves until `stop`."""

    def __init__(self, job: Job, gpus: int, straggler: Straggler | None = None) -> None:
        self.job, self.gpus, self.events, self.straggler = job, gpus, [], straggler
        self.step = self.committed = 0

    def emit(self, t: int, event: str, **fields) -> None:
        self.events.append({"t": int(t), "event": event, **fields})

    def run(self, t: int, stop: int, start_phase_s: int, first: bool) -> int:
        """Run from `t` until `stop`; returns `stop`. Events cut at `stop` (the journal stops)."""
        self.step = self.committed
        phase = "initialization" if first else "checkpoint_restore"
        if not self._phase(t, stop, phase, start_phase_s):
            return stop
        t += start_phase_s
        while t < stop:
            progress_end = min(t + self.job.checkpoint_s, stop)
            self._progress(t, progress_end)
            if progress_end >= stop:
                return stop
            if not self._phase(progress_end, stop, "checkpoint_save", SAVE_S):
                return stop
            t = progress_end + SAVE_S
            self.emit(t, "checkpoint", step=self.step)
            self.committed = self.step
        return stop

    def _progress(self, t: int, end: int) -> None:
        """Steps events for the progress stretch [t, end)."""
        if self.straggler is None:
            self.step += max((end - t) // self.job.step_s, 0)
            self.emit(end, "steps", step=self.step)
            return
        compute = round(COMPUTE_SHARE * self.job.step_s, 6)
        for at, count, step_time, slow in pieces(t, end, self.job.step_s, self.straggler):
            self.step += count
            self.emit(at, "steps", step=self.step, count=count, step_time_s=step_time,
                      compute_s=compute, slow=slow)

    def _phase(self, t: int, stop: int, category: str, seconds: int) -> bool:
        """Emit a phase; False when `stop` falls inside it (phase_end never written)."""
        self.emit(t, "phase_start", category=category)
        if t + seconds > stop:
            return False
        self.emit(t + seconds, "phase_end", category=category)
        return True


def allocations(jobs: list[Job], gpus_per_node: int) -> pd.DataFrame:
    """Allocation rows, one per GPU of each job: job, node (int64), gpu (int64), start, end."""
    node_counts = np.array([j.nodes for j in jobs], dtype=np.int64)
    rows = node_counts * gpus_per_node
    first = np.repeat([j.first_node for j in jobs], rows)
    within = np.concatenate([np.arange(r) for r in rows]) if len(jobs) else np.zeros(0, np.int64)
    return pd.DataFrame({
        "job": np.repeat([j.name for j in jobs], rows),
        "node": first + within // gpus_per_node,
        "gpu": within % gpus_per_node,
        "start": np.repeat([j.start for j in jobs], rows),
        "end": np.repeat([j.end for j in jobs], rows),
    })
