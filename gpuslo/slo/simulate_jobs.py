"""Gang training jobs for `gpuslo simulate`: placement, checkpoints, interruptions, restarts.

Jobs take whole nodes (8 to 1024 GPUs, powers of two in nodes), are packed onto the fleet until
about 90 % of the nodes are taken (the rest stay idle), and each runs one timeline written as
Recorder journal events (schema v1, `gpuslo.goodput_model`): `job_start`, `phase_start`/`phase_end`
(initialization, checkpoint_restore, checkpoint_save), coalesced `steps`, `checkpoint`,
`restart`, `job_end`. Every node of a job writes the same events with its own `node` and `gpus`.

A job is interrupted when a hardware fault, a drain or unplanned maintenance starts on one of its
nodes (the journal just stops: the node was lost, the job never saw why — the SLO engine finds the
cause by correlating with verdicts), or by its own crash (`job_end failed`, layer `training`).
It restarts after a recovery of 10–30 min from its last checkpoint, on the same node set (the
simulator models spare capacity by keeping the allocation; the accounting still charges the faulty
node's time to its layer first). Durations are assumptions of this simulator, not measured data.

Times are int64 seconds from the simulation start.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from gpuslo import names

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
    """Pack gang jobs onto consecutive nodes until BUSY_SHARE of the fleet is taken (one loop per
    job, not per GPU). Sizes: 8–1024 GPUs; smaller jobs are more frequent."""
    cap = max(1, min(1024 // gpus_per_node, nodes))
    sizes = np.array([s for s in NODE_SIZES if s <= cap] or [1])
    weights = 1.0 / np.sqrt(sizes)
    jobs: list[Job] = []
    taken = 0
    while taken < BUSY_SHARE * nodes:
        size = int(min(rng.choice(sizes, p=weights / weights.sum()), nodes - taken))
        start = int(rng.integers(0, max(span_s // 20, 1)))
        completes = bool(rng.random() < 0.3)
        end = int(rng.integers((start + span_s) // 2, span_s)) if completes else span_s
        jobs.append(Job(f"job-{len(jobs):04d}", taken, size, start, max(end, start + 1), completes,
                        int(rng.integers(2, 21)), int(rng.choice(CHECKPOINT_INTERVALS_S))))
        taken += size
    return jobs


def interruptions_for(job: Job, faults: pd.DataFrame) -> list[tuple[int, str | None]]:
    """(time, layer the job itself knows or None) for every fault that interrupts `job`, sorted.
    Hardware and maintenance faults: layer None (the journal stops); software faults: training."""
    mine = faults[(faults["node"] >= job.first_node) & (faults["node"] < job.first_node + job.nodes)
                  & (faults["start"] > job.start) & (faults["start"] < job.end)]
    known = np.where(mine["scope"] == "job", names.LAYER_TRAINING, None)
    return sorted(zip(mine["start"].astype(int).tolist(), known.tolist(), strict=True))


def job_timeline(
    job: Job, gpus: int, interruptions: list[tuple[int, str | None]], rng: np.random.Generator
) -> list[dict]:
    """Recorder events for one node of `job` (dicts with t, event and the event's fields).
    Each interruption costs a recovery drawn uniformly from 10–30 min before the restart."""
    walker = _Walker(job, gpus)
    walker.emit(job.start, "job_start", job=job.name, gpus=gpus)
    t, first, reached_end = job.start, True, False
    pending = [i for i in interruptions if i[0] > job.start]
    while t < job.end:
        stop, layer = pending.pop(0) if pending else (job.end, None)
        if not first:
            walker.emit(t, "restart", from_step=walker.committed)
        t = walker.run(t, min(stop, job.end), INIT_S if first else RESTORE_S, first)
        first = False
        if stop >= job.end:
            reached_end = True
            break
        if layer is not None:
            walker.emit(stop, "job_end", status="failed", layer=layer)
        t = stop + int(rng.integers(600, 1800))
        pending = [i for i in pending if i[0] > t]
    if job.completes and reached_end:
        walker.emit(job.end, "job_end", status="completed")
    return walker.events


class _Walker:
    """Writes one run's events: a start phase, then progress and checkpoint saves until `stop`."""

    def __init__(self, job: Job, gpus: int) -> None:
        self.job, self.gpus, self.events = job, gpus, []
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
            self.step += max((progress_end - t) // self.job.step_s, 0)
            self.emit(progress_end, "steps", step=self.step)
            if progress_end >= stop:
                return stop
            if not self._phase(progress_end, stop, "checkpoint_save", SAVE_S):
                return stop
            t = progress_end + SAVE_S
            self.emit(t, "checkpoint", step=self.step)
            self.committed = self.step
        return stop

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
