"""The provisioned inventory for the Prometheus source: what should exist, never only what
answered (DESIGN.md §6).

`provisioned_counts(client, end, window, node_of)` asks, with one instant query each at `end`,
for the largest GPU count per node over the window from the recorded
`gpuslo:node_gpus_provisioned:max` (the rules' inventory: it holds nodes that went silent
before the window), kube-state-metrics' `kube_node_status_capacity{resource="nvidia_com_gpu"}`
and the exporters' `gpuslo_gpu_expected`. `with_unseen(seen, counts)` adds one placeholder row
per provisioned GPU the exporters never listed. `client` is anything with
`instant(query, at) -> [{"metric": {...}, "value": [t, "v"]}]` (the Prometheus source's
PromClient).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

CAPACITY = 'kube_node_status_capacity{{resource="nvidia_com_gpu"}}'
# (query, the label naming the node: `node`, or an exporter's `instance`); one count per node.
PROVISIONED_QUERIES = (
    ("max by (node) (max_over_time(gpuslo:node_gpus_provisioned:max[{w}]))", "node"),
    (f"max by (node) (max_over_time({CAPACITY}[{{w}}]))", "node"),
    ("max by (instance) (max_over_time(gpuslo_gpu_expected[{w}]))", "instance"),
)
UNSEEN_PREFIX = "unseen"
# The same inventory series as (metric, its own matcher, the label naming the node), for
# `gpuslo.slo.sources.listed.first_listed`: when each node was first listed in the window.
INVENTORY_SERIES = (
    ("gpuslo:node_gpus_provisioned:max", "", "node"),
    ("kube_node_status_capacity", 'resource="nvidia_com_gpu"', "node"),
    ("gpuslo_gpu_expected", "", "instance"),
)


def provisioned_counts(client, end: pd.Timestamp, window: str, node_of: dict) -> pd.Series:
    """GPUs each node should have (int, index node): the largest of PROVISIONED_QUERIES over
    the window; an exporter's instance is mapped to its node through `node_of`."""
    counts: dict[str, int] = {}
    for query, key in PROVISIONED_QUERIES:
        for series in client.instant(query.format(w=window), end):
            name = series["metric"].get(key, "")
            node = (node_of.get(name) or name) if key == "instance" else name
            value = float(series["value"][1])
            if node and np.isfinite(value):
                counts[node] = max(counts.get(node, 0), int(value))
    return pd.Series(counts, dtype="int64")


def with_unseen(seen: pd.DataFrame, provisioned: pd.Series) -> pd.DataFrame:
    """`seen` (inventory rows: node, uuid, ...) plus one placeholder row per provisioned GPU
    not seen (uuid `unseen:<node>:<n>`, n from 0; instance "", gpu/model/family ""). Pure."""
    have = seen.groupby("node")["uuid"].nunique()
    short = (provisioned - have.reindex(provisioned.index, fill_value=0)).clip(lower=0)
    short = short[short > 0]
    node = np.repeat(short.index.to_numpy(dtype=object), short.to_numpy())
    number = np.concatenate([np.arange(n) for n in short.to_numpy()]) if len(short) else []
    rows = pd.DataFrame({"node": node, "n": number}, columns=["node", "n"])
    names = rows["node"].astype(str)
    unseen = pd.DataFrame(
        {"instance": "", "node": names, "uuid": UNSEEN_PREFIX + ":" + names + ":"}
    )
    unseen["uuid"] += rows["n"].astype(str)
    unseen[["gpu", "model", "family"]] = ""
    return pd.concat([seen, unseen], ignore_index=True)
