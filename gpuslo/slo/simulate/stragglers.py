"""Stragglers and degraded links for `gpuslo simulate`, so the fleet report shows the crawl.

A share of the jobs (`STRAGGLER_SHARE`) gets one straggler: for 2–12 h one of its nodes computes
each step `ratio` (1.1–1.5) times slower, and because a gang moves in lock step every node of the
job logs the slower step time; only the straggler's own compute time per step (`compute_s`) is
higher, so its performance score is 1/ratio while the others wait. Half of the stragglers have a
cause the checks see: a warn-level degradation on that node (`network_port_errors`,
`clocks_sw_power_cap` or `network_link_flap`) from 10 min before to the end of the slowdown, in
the `degradations` frame; the others have none (the engine then attributes them to training).
While a job has a straggler it logs every `LOG_S` seconds (the Recorder's coalescing window)
with `count`, `step_time_s` and `compute_s`, so the slowdown is measured per logged interval;
other jobs keep one `steps` event per checkpoint interval. Drawn from their own random stream
(seeded from the simulation's seed), so adding stragglers leaves every other draw unchanged.
Durations and shares are assumptions of this simulator, not measured data.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

STRAGGLER_SHARE = 0.3
CAUSED_SHARE = 0.5
LOG_S = 600
COMPUTE_SHARE = 0.8  # compute time per step / step time on a healthy node (the rest is waiting)
CAUSES = ("network_port_errors", "clocks_sw_power_cap", "network_link_flap")
STREAM = 15  # second seed word of the stragglers' random stream


@dataclass(frozen=True)
class Straggler:
    """One straggler: `node` (index into the job's nodes), `start`/`end` (int seconds from the
    simulation start), `ratio` (step time / normal) and `cause` (a degradation reason or None)."""

    node: int
    start: int
    end: int
    ratio: float
    cause: str | None


def draw_stragglers(jobs: list, seed: int) -> dict[str, Straggler]:
    """{job name: Straggler} for the jobs that get one (see the module docstring). `jobs` are
    `gpuslo.slo.simulate.jobs.Job`s; one loop per job."""
    rng = np.random.default_rng([seed, STREAM])
    out = {}
    for job in jobs:
        hit, where, hours, ratio, node, caused, cause = rng.random(7)
        if hit >= STRAGGLER_SHARE or job.end - job.start < 4 * 3600:
            continue
        length = int((2 + 10 * hours) * 3600)
        start = job.start + int(where * max(job.end - job.start - length, 1))
        out[job.name] = Straggler(
            int(node * job.nodes), start, min(start + length, job.end),
            round(1.1 + 0.4 * ratio, 3),
            CAUSES[int(cause * len(CAUSES))] if caused < CAUSED_SHARE else None,
        )
    return out


def degradation_rows(jobs: list, stragglers: dict[str, Straggler]) -> pd.DataFrame:
    """The degradations of the caused stragglers: node (int64 index into the fleet), start, end
    (int seconds), reason."""
    rows = [
        {"node": job.first_node + s.node, "start": max(s.start - 600, 0), "end": s.end,
         "reason": s.cause}
        for job in jobs
        if (s := stragglers.get(job.name)) is not None and s.cause is not None
    ]
    return pd.DataFrame(rows, columns=["node", "start", "end", "reason"])


def pieces(t: int, stop: int, step_s: int, straggler: Straggler) -> list[tuple[int, int, float,
                                                                                 bool]]:
    """Logged intervals of a progress stretch [t, stop): (end, steps, step time in seconds,
    slow) every LOG_S seconds and at the straggler's edges; intervals shorter than one step are
    merged into the next."""
    cuts = sorted({*range(t + LOG_S, stop, LOG_S), stop,
                   *(x for x in (straggler.start, straggler.end) if t < x < stop)})
    out, begin = [], t
    for end in cuts:
        slow = straggler.start <= begin < straggler.end
        step_time = step_s * (straggler.ratio if slow else 1.0)
        count = int((end - begin) // step_time)
        if count >= 1:
            out.append((end, count, round(step_time, 6), slow))
            begin = end
    return out
