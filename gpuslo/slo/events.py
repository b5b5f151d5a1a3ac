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
    """The EventIndex of a job_events frame (gpuslo.slo.frames). Pure.

    Journals read file by file arrive in (job, node, time) order already; then nothing is
    sorted or gathered (`order` is 0..n-1). status is coded on job_end rows, layer on job_end
    and restart rows, category on phase_start and phase_end rows — the only rows whose value
    the journal's rules read (`gpuslo.goodput.batch`, `gpuslo.slo.attribution`); every other
    row holds -1 there, so a column of millions of mostly empty strings is not hashed."""
    job, jobs = _sorted_codes(job_events["job"])
    node, nodes = _sorted_codes(job_events["node"])
    stamps = job_events["time"].to_numpy("int64")
    key = job.astype(np.int64) * (len(nodes) + 1) + node
    n = len(key)
    step_back = (key[1:] < key[:-1]) | ((key[1:] == key[:-1]) & (stamps[1:] < stamps[:-1]))
    in_order = None  # the rows' order when they are not in (job, node, time) order already
    if step_back.any():
        in_order = np.lexsort((stamps, node, job))
        job, node, key, stamps = job[in_order], node[in_order], key[in_order], stamps[in_order]
    order = np.arange(n) if in_order is None else in_order
    del step_back
    new = np.empty(n, dtype=bool)
    if n:
        new[0] = True
        np.not_equal(key[1:], key[:-1], out=new[1:])
    del key
    def arranged(values: np.ndarray) -> np.ndarray:
        return values if in_order is None else values[in_order]

    def coded(column: str, vocabulary: tuple[str, ...], rows: np.ndarray | None = None):
        # factorise the column itself (no copy to Python strings), then look each distinct
        # value up once, as codes_of does; `rows`: only those ordered rows, -1 elsewhere
        values = job_events[column].array
        if rows is None:
            found, uniques = pd.factorize(values, use_na_sentinel=True)
            found = arranged(found)
        else:
            found, uniques = pd.factorize(values[order[rows]], use_na_sentinel=True)
        lookup = np.array([codes_of(np.array([u], dtype=object), vocabulary)[0]
                           for u in uniques] + [-1], dtype=np.int8)
        if rows is None:
            return lookup[found]
        out = np.full(n, -1, dtype=np.int8)
        out[rows] = lookup[found]
        return out

    def number(column: str) -> np.ndarray:
        if column not in job_events:
            return np.full(n, np.nan)
        return arranged(job_events[column].to_numpy(dtype="float64", na_value=np.nan))

    event = coded("event", EVENTS)
    kinds = {name: EVENTS.index(name) for name in ("job_end", "restart", "phase_start",
                                                      "phase_end")}
    ends = event == kinds["job_end"]
    return EventIndex(
        job=job.astype(np.int32), node=node.astype(np.int32), jobs=jobs, nodes=nodes,
        group=np.cumsum(new, dtype=np.int32) - 1, first=np.flatnonzero(new), t_ns=stamps,
        event=event, status=coded("status", STATUSES, np.flatnonzero(ends)),
        category=coded("category", PHASES, np.flatnonzero(
            (event == kinds["phase_start"]) | (event == kinds["phase_end"]))),
        layer=coded("layer", names.LAYERS, np.flatnonzero(ends | (event == kinds["restart"]))),
        gpus=number("gpus"), step=number("step"), count=number("count"),
        step_time_s=number("step_time_s"), order=order)


def _sorted_codes(column: pd.Series) -> tuple[np.ndarray, np.ndarray]:
    """(codes, uniques as an object array) with the uniques in ascending order, as
    `pd.factorize(column, sort=True)` gives them: factorised by hashing, then the few uniques
    sorted and the codes renumbered (cheaper than pandas' sorting path on millions of rows)."""
    codes, uniques = pd.factorize(column)
    uniques = np.asarray(uniques, dtype=object)
    ranked = np.argsort(uniques, kind="stable")
    rank = np.empty(len(ranked) + 1, dtype=np.int32)
    rank[ranked] = np.arange(len(ranked), dtype=np.int32)
    rank[-1] = -1  # a missing value keeps pandas' -1
    return rank[codes], uniques[ranked]
