"""The job_events frame in (job, node, time) order as integer arrays, built once per report.

Sorting millions of string rows, grouping and deduplicating them is where a fleet-scale report
spends its time; `index_events(job_events)` factorises job and node once (sorted codes, so the
order is that of `sort_values(["job", "node", "time"], kind="stable")`) and codes event, status,
category and layer against the journal's vocabularies, so attribution works on integers.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from gpuslo import names
from gpuslo.goodput.calculator import EVENTS, PHASES, STATUSES, codes_of


@dataclass(frozen=True)
class EventIndex:
    """job_events rows in (job, node, time) order. Per ordered row: job and node (codes into
    the sorted `jobs`/`nodes` object arrays), group (one per job and node, from 0), t_ns (int64
    ns since the epoch), event, status, category, layer (int8 codes into calculator.EVENTS,
    STATUSES, PHASES and names.LAYERS; -1 when absent), gpus, step, count and step_time_s
    (float64, NaN when absent). `first`: the first row of each group; `order`: each ordered
    row's position in job_events."""

    job: np.ndarray
    node: np.ndarray
    jobs: np.ndarray
    nodes: np.ndarray
    group: np.ndarray
    first: np.ndarray
    t_ns: np.ndarray
    event: np.ndarray
    status: np.ndarray
    category: np.ndarray
    layer: np.ndarray
    gpus: np.ndarray
    step: np.ndarray
    count: np.ndarray
    step_time_s: np.ndarray
    order: np.ndarray

    def __len__(self) -> int:
        return len(self.t_ns)


def index_events(job_events: pd.DataFrame) -> EventIndex:
    """The EventIndex of a job_events frame (gpuslo.slo.frames). Pure."""
    job, jobs = pd.factorize(job_events["job"], sort=True)
    node, nodes = pd.factorize(job_events["node"], sort=True)
    stamps = job_events["time"].to_numpy("int64")
    order = np.lexsort((stamps, node, job))
    job, node = job[order].astype(np.int32), node[order].astype(np.int32)
    key = job.astype(np.int64) * (len(nodes) + 1) + node
    new = np.r_[True, key[1:] != key[:-1]] if len(key) else np.zeros(0, dtype=bool)
    del key

    def coded(column: str, vocabulary: tuple[str, ...]) -> np.ndarray:
        # factorise the column itself (no copy to Python strings), then look each distinct
        # value up once, as codes_of does
        found, uniques = pd.factorize(job_events[column], use_na_sentinel=True)
        lookup = np.array([codes_of(np.array([u], dtype=object), vocabulary)[0]
                           for u in uniques] + [-1], dtype=np.int8)
        return lookup[found[order]]

    def number(column: str) -> np.ndarray:
        if column not in job_events:
            return np.full(len(order), np.nan)
        return job_events[column].to_numpy(dtype="float64", na_value=np.nan)[order]

    return EventIndex(
        job=job, node=node, jobs=np.asarray(jobs, dtype=object),
        nodes=np.asarray(nodes, dtype=object), group=np.cumsum(new, dtype=np.int32) - 1,
        first=np.flatnonzero(new), t_ns=stamps[order], event=coded("event", EVENTS),
        status=coded("status", STATUSES), category=coded("category", PHASES),
        layer=coded("layer", names.LAYERS),
        gpus=number("gpus"), step=number("step"), count=number("count"),
        step_time_s=number("step_time_s"), order=order)
