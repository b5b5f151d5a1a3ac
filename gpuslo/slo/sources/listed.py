"""When the inventory first listed each node in the window, for the Prometheus source.

A node that joins the fleet mid-window is provisioned from when it first answered, unless the
inventory expected it earlier (DESIGN.md §6: what should exist, never only what answered): then
from the first time the recorded `gpuslo:node_gpus_provisioned:max`, kube-state-metrics'
`kube_node_status_capacity{resource="nvidia_com_gpu"}` or the exporter's `gpuslo_gpu_expected`
listed it (`provisioned.INVENTORY_SERIES`). That is what the recording rules count at each
evaluation, so the report and the rules agree on a node that is expected before it answers.

`first_listed(reader) -> pd.Series` (node → aware UTC time; nodes never listed are absent) is
located like the sparse reads (`gpuslo.slo.sources.sparse.Reader`): the nodes listed at the
window start are listed from it; for the others, an instant query per bucket finds the first
bucket that lists each, and only that bucket is read at every step. Raises InputError.
"""

from __future__ import annotations

import pandas as pd

from gpuslo.slo.sources.provisioned import INVENTORY_SERIES
from gpuslo.slo.sources.sparse_reader import AFTER, Cell, Reader, label_column, window_ms


def _selector(metric: str, own: str, matcher: str) -> str:
    return f"{metric}{{{', '.join(m for m in (own, matcher) if m)}}}"


def _first_of(reader: Reader, metric: str, own: str, key: str) -> pd.Series:
    """`key` value → the first step in the window at which `metric` has a sample for it."""
    values = reader.api.label_values(key, _selector(metric, own, ""), reader.start, reader.end)
    if not values:
        return pd.Series(dtype="datetime64[ns, UTC]")
    w = window_ms(reader.step)
    listed = lambda m: f"max by ({key}) (max_over_time({_selector(metric, own, m)}[{w}]))"  # noqa: E731
    at_start = reader.api.sharded_instant(listed, values, 1, 2, reader.start + AFTER,
                                          f"{metric} at start", label=key)
    first = dict.fromkeys(label_column(at_start, key), reader.start)
    rest = [v for v in values if v not in first]
    cells = reader.locate(
        lambda m, window, _: f"max by ({key}) (max_over_time({_selector(metric, own, m)}"
                             f"[{window}]))",
        f"locate {metric}", instances=rest, per_instance=1, label=key) if rest else []
    earliest: dict[str, Cell] = {}
    for cell in cells:  # in time order: keep each value's first bucket
        for value in cell.instances:
            earliest.setdefault(value, cell)
    by_bucket: dict[tuple, list[str]] = {}
    for value, cell in earliest.items():
        by_bucket.setdefault((cell.start, cell.end), []).append(value)
    read = [Cell(tuple(sorted(v)), a, b) for (a, b), v in sorted(by_bucket.items())]
    points = reader.read(listed, 1, f"first {metric}", read, per_instance=1, label=key)
    if len(points):
        seen = points.assign(key=label_column(points, key)).groupby("key")["time"].min()
        first.update(seen.to_dict())
    return pd.Series(first, dtype="datetime64[ns, UTC]")


def first_listed(reader: Reader) -> pd.Series:
    """Node → the first time in the window any inventory series listed it (see the module
    docstring)."""
    firsts = []
    for metric, own, key in INVENTORY_SERIES:
        first = _first_of(reader, metric, own, key)
        if key == "instance":
            first.index = [reader.node_of.get(i) or i for i in first.index]
        firsts.append(first)
    found = [f for f in firsts if len(f)]
    if not found:
        return pd.Series(dtype="datetime64[ns, UTC]")
    return pd.concat(found).groupby(level=0).min()
