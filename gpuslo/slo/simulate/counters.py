"""The job series a simulated exporter exposes: `gpuslo_job_gpu_seconds_total` by category,
`gpuslo_job_step`, `gpuslo_job_last_progress_timestamp_seconds`,
`gpuslo_job_step_compute_seconds` and `gpuslo_job_interruptions_total` by layer, per job and
node.

Values come from the calculator (`gpuslo.goodput.calculator.goodput_table`: the batch form, the
fold for a journal that may hold a slowdown) over every job event at once: the exporter's
counters are the same fold over the same journals, so a
sample at t holds the totals after the last event at or before t. A job is exposed from its first
event until `JOB_EXPIRY_S` after a `job_end` that finished it (completed or cancelled; a failed
job may restart), the exporter's default `--job-expiry`; every category from 0, as the exporter
initialises them. Nothing is written while the node has no data.
"""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import pandas as pd

from gpuslo import names
from gpuslo.goodput.calculator import goodput_table
from gpuslo.goodput.journal import FINISHED_HOLD_S, FINISHED_STATUSES
from gpuslo.slo.simulate.fleet import Simulation
from gpuslo.slo.simulate.sampling import Block, Fleet, Grid, labels, lines

JOB_EXPIRY_S = FINISHED_HOLD_S
FINISHED = FINISHED_STATUSES


def _number(events, column: str) -> np.ndarray:
    if column not in events:
        return np.full(len(events), np.nan)
    return events[column].to_numpy(dtype="float64", na_value=np.nan)


class JobTable:
    """Every (job, node) journal of `sim` with its running totals (`table`) and the rows of
    each node's journals (`by_node`: node → list of (job, first row, end row))."""

    def __init__(self, sim: Simulation, grid: Grid) -> None:
        events = sim.frames["job_events"].sort_values(["node", "job", "time"], kind="stable")
        events = events.reset_index(drop=True)
        job = events["job"].to_numpy(dtype=object)
        node = events["node"].to_numpy(dtype=object)
        new = np.r_[True, (job[1:] != job[:-1]) | (node[1:] != node[:-1])] if len(job) else []
        self.t = (events["time"] - sim.start).dt.total_seconds().to_numpy(np.int64)
        self.table = goodput_table(
            np.cumsum(new) - 1, self.t.astype(np.float64),
            events["event"].to_numpy(dtype=object), events["category"].to_numpy(dtype=object),
            events["gpus"].to_numpy(dtype="float64", na_value=np.nan),
            events["status"].to_numpy(dtype=object),
            events["step"].to_numpy(dtype="float64", na_value=np.nan),
            events["layer"].to_numpy(dtype=object),
            *(_number(events, c) for c in ("count", "step_time_s", "compute_s")),
        )
        compute = pd.Series(np.where(events["event"].to_numpy(dtype=object) == "steps",
                                     _number(events, "compute_s"), np.nan))
        self.compute_s = compute.groupby(np.cumsum(new) - 1).ffill().to_numpy()
        self.base = grid.base
        bounds = np.r_[np.flatnonzero(new), len(job)] if len(job) else np.array([0])
        self.by_node: dict[str, list[tuple[str, int, int]]] = {}
        for a, b in zip(bounds[:-1], bounds[1:], strict=True):
            self.by_node.setdefault(node[a], []).append((job[a], int(a), int(b)))

    def samples(self, grid: Grid, a: int, b: int) -> tuple[np.ndarray, np.ndarray]:
        """(row of the totals each sample shows, whether the job is exposed then) for the
        journal in rows [a, b)."""
        row = a + np.searchsorted(self.t[a:b], grid.times_s, side="right") - 1
        seen = row >= a
        status = self.table.status[np.maximum(row, a)]
        done_at = self.t[np.maximum(row, a)]
        expired = np.isin(status, FINISHED) & (grid.times_s >= done_at + JOB_EXPIRY_S)
        return np.maximum(row, a), seen & ~expired


def _job_family(table: JobTable, metric: str, series) -> Callable[[Fleet, Block], str]:
    """A family writer for `metric`: `series(table, rows)` yields (label pairs, values, extra
    mask) per series of one job on one node."""
    def family(fleet: Fleet, block: Block) -> str:
        out = []
        for n, node in enumerate(block.nodes):
            for job, a, b in table.by_node.get(node, []):
                rows, exposed = table.samples(fleet.grid, a, b)
                for pairs, values, mask in series(table, rows):
                    out.append(lines(metric + labels(instance=node, job=job, **pairs),
                                     values, fleet.grid, exposed & block.present[n] & mask))
        return "".join(out)
    return family


def _seconds(table: JobTable, rows):
    for category in names.JOB_CATEGORIES:
        values = np.rint(table.table.gpu_seconds[category][rows]).astype(np.int64)
        yield {"category": category}, values, True


def _step(table: JobTable, rows):
    step = table.table.committed_step[rows]
    yield {}, step, step >= 0


def _progress(table: JobTable, rows):
    """The last progress time, only while the job runs (the exporter's stall alert input)."""
    progress = table.table.last_progress_t[rows]
    running = table.table.status[rows] == "running"
    yield {}, np.rint(progress).astype(np.int64) + table.base, running & (progress > 0)


def _compute(table: JobTable, rows):
    """This node's compute seconds per step, while the job runs (the straggler score input)."""
    compute = table.compute_s[rows]
    running = table.table.status[rows] == "running"
    yield {}, np.char.mod("%.6g", np.nan_to_num(compute)).astype(object), running & ~np.isnan(
        compute)


def _interruptions(table: JobTable, rows):
    for layer in names.LAYERS:
        yield {"layer": layer}, table.table.interruptions[layer][rows], True


_SERIES = (
    ("gpuslo_job_gpu_seconds_total", "counter", _seconds),
    ("gpuslo_job_step", "gauge", _step),
    ("gpuslo_job_last_progress_timestamp_seconds", "gauge", _progress),
    ("gpuslo_job_step_compute_seconds", "gauge", _compute),
    ("gpuslo_job_interruptions_total", "counter", _interruptions),
)


def families(table: JobTable) -> tuple[tuple[str, str, Callable[[Fleet, Block], str]], ...]:
    """The job families over `table`, in exposition order."""
    return tuple((metric, kind, _job_family(table, metric, series))
                 for metric, kind, series in _SERIES)
