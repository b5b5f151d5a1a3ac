"""Sampling a simulated fleet on a time grid, one block of nodes at a time: the primitives the
OpenMetrics writer (`gpuslo.slo.simulate.openmetrics`) and its family modules share.

`Fleet(sim, grid)` prepares the simulation (verdicts expanded per GPU, indexed by node) and
yields `Block`s of consecutive nodes whose sample grid holds at most `CELLS` GPU × sample cells,
so memory stays bounded whatever the fleet and span. `lines` turns one series into exposition
lines with C-speed joins (no Python loop per sample).
"""

from __future__ import annotations

from collections.abc import Iterator
from dataclasses import dataclass

import numpy as np
import pandas as pd

from gpuslo import names
from gpuslo.slo.simulate.fleet import Simulation

CELLS = 2_000_000  # GPU × sample cells per block of nodes
CODES = {names.VERDICT_HEALTHY: 1, names.VERDICT_UNHEALTHY: 2, names.VERDICT_UNKNOWN: 3}


def per_gpu(verdicts: pd.DataFrame, inventory: pd.DataFrame) -> pd.DataFrame:
    """Verdict rows with node-wide rows (uuid "") expanded to every GPU of the node."""
    wide = verdicts[verdicts["uuid"] == ""].drop(columns=["uuid"])
    expanded = wide.merge(inventory[["node", "uuid"]], on="node", how="inner")
    return pd.concat(
        [verdicts[verdicts["uuid"] != ""], expanded[verdicts.columns]], ignore_index=True
    )


def state_matrix(verdicts: pd.DataFrame, uuids: pd.Index, start: pd.Timestamp,
                 times_s: np.ndarray) -> np.ndarray:
    """Verdict code per GPU (rows, in `uuids` order) and sample time (columns, seconds from
    `start`): 0 no data, 1 healthy, 2 unhealthy, 3 unknown. Expects per-GPU disjoint intervals
    (as `gpuslo simulate` writes them). Vectorised with one searchsorted over (gpu, time) keys."""
    gpu = uuids.get_indexer(verdicts["uuid"]).astype(np.int64)
    begin = ((verdicts["start"] - start).dt.total_seconds()).to_numpy(np.int64)
    finish = ((verdicts["end"] - start).dt.total_seconds()).to_numpy(np.int64)
    code = verdicts["verdict"].map(CODES).to_numpy(np.int8)
    keep = gpu >= 0
    gpu, begin, finish, code = gpu[keep], begin[keep], finish[keep], code[keep]
    big = int(times_s.max(initial=0)) + int(finish.max(initial=0)) + 1
    order = np.lexsort((begin, gpu))
    keys = gpu[order] * big + begin[order]
    cells = (np.arange(len(uuids), dtype=np.int64)[:, None] * big + times_s[None, :]).ravel()
    pos = np.searchsorted(keys, cells, side="right") - 1
    safe = np.clip(pos, 0, max(len(keys) - 1, 0))
    cell_gpu = np.repeat(np.arange(len(uuids)), len(times_s))
    ok = (
        (pos >= 0)
        & (gpu[order][safe] == cell_gpu if len(keys) else False)
        & (finish[order][safe] > np.tile(times_s, len(uuids)) if len(keys) else False)
    )
    out = np.where(ok, code[order][safe] if len(keys) else 0, 0)
    return out.reshape(len(uuids), len(times_s)).astype(np.int8)


@dataclass(frozen=True)
class Grid:
    """Sample times: `times_s` (int64 seconds from the simulation start), `stamps` (" <unix>\\n"
    text per sample, the line ends), `base` (Unix seconds of the simulation start), `step`."""

    times_s: np.ndarray
    stamps: np.ndarray
    base: int
    step: int


def make_grid(sim: Simulation, step: int, first_s: int = 0, end_s: int | None = None) -> Grid:
    """Every `step` seconds from the simulation start, those in [first_s, end_s)."""
    span = int((sim.end - sim.start).total_seconds())
    times = np.arange(0, span, step, dtype=np.int64)
    times = times[(times >= first_s) & (times < (span if end_s is None else end_s))]
    base = int(sim.start.timestamp())
    stamps = np.array([f" {base + t}\n" for t in times.tolist()], dtype=object)
    return Grid(times, stamps, base, step)


def lines(prefix: str, values: np.ndarray, grid: Grid, present: np.ndarray) -> str:
    """`prefix value timestamp` lines for the present samples; values are text or integers."""
    if not present.any():
        return ""
    text = values[present] if values.dtype == object else values[present].astype(str)
    body = np.char.add(" ", text.astype(str)).astype(object) + grid.stamps[present]
    return prefix + prefix.join(body.tolist())


def labels(**pairs: str) -> str:
    """`{key="value",...}` in the given order."""
    return "{" + ",".join(f'{key}="{value}"' for key, value in pairs.items()) + "}"


@dataclass(frozen=True)
class Block:
    """A block of consecutive nodes and what every family needs about it: inventory rows, the
    verdict code matrix (GPU × sample), node presence (node × sample), the non-healthy verdict
    rows per GPU and the schedulability rows of its nodes."""

    first: int
    nodes: list[str]
    inventory: pd.DataFrame
    codes: np.ndarray
    present: np.ndarray
    bad: pd.DataFrame
    schedulability: pd.DataFrame


class Fleet:
    """The simulation prepared for streaming: verdicts expanded per GPU and indexed by node."""

    def __init__(self, sim: Simulation, grid: Grid) -> None:
        self.sim, self.grid = sim, grid
        inventory = sim.frames["inventory"].reset_index(drop=True)
        self.inventory = inventory
        self.node_names = list(dict.fromkeys(inventory["node"].tolist()))
        order = {node: i for i, node in enumerate(self.node_names)}
        verdicts = per_gpu(sim.frames["verdicts"], inventory)
        verdicts = verdicts.assign(n=verdicts["node"].map(order)).sort_values(
            ["n", "uuid", "start"], kind="stable")
        self.verdicts = verdicts.reset_index(drop=True)
        sched = sim.frames["schedulability"]
        self.schedulability = sched.assign(n=sched["node"].map(order)).sort_values(
            ["n", "start"], kind="stable").reset_index(drop=True)
        gpus = inventory.groupby("node", sort=False).size()
        per_node = int(gpus.max()) if len(gpus) else 1
        self.block_nodes = max(1, CELLS // max(per_node * max(len(grid.times_s), 1), 1))

    def blocks(self) -> Iterator[Block]:
        """Blocks of consecutive nodes, in node order."""
        for a in range(0, len(self.node_names), self.block_nodes):
            yield self.block(a, min(a + self.block_nodes, len(self.node_names)))

    def block(self, a: int, b: int) -> Block:
        nodes = self.node_names[a:b]
        inv = self.inventory[self.inventory["node"].isin(nodes)]
        n = self.verdicts["n"].to_numpy()
        verdicts = self.verdicts.iloc[np.searchsorted(n, a): np.searchsorted(n, b)]
        codes = state_matrix(verdicts, pd.Index(inv["uuid"]), self.sim.start, self.grid.times_s)
        node_of = pd.Index(nodes).get_indexer(inv["node"])
        present = np.zeros((len(nodes), len(self.grid.times_s)), dtype=bool)
        np.logical_or.at(present, node_of, codes > 0)
        s = self.schedulability["n"].to_numpy()
        sched = self.schedulability.iloc[np.searchsorted(s, a): np.searchsorted(s, b)]
        bad = verdicts[verdicts["verdict"] != names.VERDICT_HEALTHY]
        return Block(a, nodes, inv, codes, present, bad, sched)

    def offsets(self, start: pd.Series, end: pd.Series) -> tuple[np.ndarray, np.ndarray]:
        """Sample index ranges [i0, i1) of the samples inside each interval [start, end)."""
        s = (start - self.sim.start).dt.total_seconds().to_numpy(np.int64)
        e = (end - self.sim.start).dt.total_seconds().to_numpy(np.int64)
        times = self.grid.times_s
        return np.searchsorted(times, s, side="left"), np.searchsorted(times, e, side="left")
