"""OpenMetrics text of a simulated fleet, for `promtool tsdb create-blocks-from openmetrics`.

The series are what the exporter (DESIGN.md §4) would have exposed, sampled every `step` seconds
(30 s or coarser) over the simulated span, with the target label Prometheus would have added on
scrape: `instance` = the node name. Families (names from `gpuslo.names.METRICS`):

- `gpuslo_node_info` (gauge, 1) with node, driver_version, cuda_version and
  `gpuslo_gpu_expected` (gauge, the node's GPU count) while the node's exporter answers (any of
  its GPUs has data);
- `gpuslo_gpu_info` (gauge, 1) with gpu, uuid, pci_bus_id, model, family while the GPU has data;
- `gpuslo_gpu_usable` (gauge) 1 iff the GPU's verdict is healthy, 0 when unhealthy or unknown;
- `gpuslo_gpu_verdict` (gauge stateset) healthy/unhealthy/unknown, exactly one is 1;
- `gpuslo_job_gpu_seconds_total` (counter) by job and category, from the pure goodput
  calculator (`gpuslo.goodput.calculator.GoodputState`) over each job's journal events.

No-data stretches have no samples at all (the exporter was not scraped: not even
`gpuslo_gpu_info`), so a query sees a gap, never a healthy GPU, and a denominator built from
what answered would shrink (the rules' provisioned inventory must not). Schedulability is not an
exporter metric and is not written. A sample at time t shows the state at t (intervals are
half-open). The text ends with `# EOF`.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from gpuslo import names
from gpuslo.goodput.calculator import GoodputState
from gpuslo.slo.simulate.fleet import Simulation, journal_events

_CODES = {names.VERDICT_HEALTHY: 1, names.VERDICT_UNHEALTHY: 2, names.VERDICT_UNKNOWN: 3}


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
    code = verdicts["verdict"].map(_CODES).to_numpy(np.int8)
    big = int(times_s.max(initial=0)) + int(finish.max(initial=0)) + 1
    order = np.lexsort((begin, gpu))
    keys = gpu[order] * big + begin[order]
    cells = (np.arange(len(uuids), dtype=np.int64)[:, None] * big + times_s[None, :]).ravel()
    pos = np.searchsorted(keys, cells, side="right") - 1
    safe = np.clip(pos, 0, max(len(keys) - 1, 0))
    cell_gpu = np.repeat(np.arange(len(uuids)), len(times_s))
    ok = (
        (pos >= 0)
        & (gpu[order][safe] == cell_gpu)
        & (finish[order][safe] > np.tile(times_s, len(uuids)))
    )
    out = np.where(ok, code[order][safe] if len(keys) else 0, 0)
    return out.reshape(len(uuids), len(times_s)).astype(np.int8)


def _series(prefix: str, values: np.ndarray, stamps: np.ndarray, present: np.ndarray) -> str:
    """Lines `prefix value timestamp` for the present samples (C-speed join, no per-sample loop)."""
    suffixes = np.char.add(np.char.add(" ", values.astype(str)), stamps)[present]
    return prefix.join(["", *suffixes.tolist()])


def _labels(**labels: str) -> str:
    inner = ",".join(f'{key}="{value}"' for key, value in labels.items())
    return "{" + inner + "}"


def _gpu_families(sim: Simulation, times_s: np.ndarray, stamps: np.ndarray) -> list[str]:
    inventory = sim.frames["inventory"]
    uuids = pd.Index(inventory["uuid"].astype(str))
    codes = state_matrix(per_gpu(sim.frames["verdicts"], inventory), uuids, sim.start, times_s)
    info, usable, verdict = [], [], []
    for i, row in enumerate(inventory.itertuples(index=False)):
        ids = {"instance": row.node, "gpu": row.gpu, "uuid": row.uuid}
        bus = f"00000000:{(int(row.gpu) * 16 + 24) % 256:02X}:00.0"
        present = codes[i] > 0
        info.append(
            _series(
                "gpuslo_gpu_info"
                + _labels(**ids, pci_bus_id=bus, model=row.model, family=row.family),
                np.ones(len(times_s), int),
                stamps,
                present,
            )
        )
        usable.append(
            _series(
                "gpuslo_gpu_usable" + _labels(**ids), (codes[i] == 1).astype(int), stamps, present
            )
        )
        for state, code in _CODES.items():
            verdict.append(_series("gpuslo_gpu_verdict" + _labels(**ids, verdict=state),
                                   (codes[i] == code).astype(int), stamps, present))
    return [
        *_node_families(inventory, codes, stamps),
        _family("gpuslo_gpu_info", "gauge", info),
        _family("gpuslo_gpu_usable", "gauge", usable),
        _family("gpuslo_gpu_verdict", "gauge", verdict),
    ]


def _node_families(inventory: pd.DataFrame, codes: np.ndarray, stamps: np.ndarray) -> list[str]:
    """gpuslo_node_info and gpuslo_gpu_expected per node, present while any of its GPUs (rows
    of `codes`, in inventory order) has data."""
    info, expected = [], []
    nodes = inventory["node"].astype(str).to_numpy()
    for node in sorted(set(nodes)):
        mine = nodes == node
        present = (codes[mine] > 0).any(axis=0)
        labels = _labels(instance=node, node=node, driver_version="570.124.06", cuda_version="12.8")
        ones = np.ones(len(stamps), int)
        info.append(_series("gpuslo_node_info" + labels, ones, stamps, present))
        count = np.full(len(stamps), int(mine.sum()))
        name = "gpuslo_gpu_expected" + _labels(instance=node)
        expected.append(_series(name, count, stamps, present))
    return [
        _family("gpuslo_node_info", "gauge", info),
        _family("gpuslo_gpu_expected", "gauge", expected),
    ]


def _family(name: str, kind: str, body: list[str]) -> str:
    family = name.removesuffix("_total") if kind == "counter" else name
    head = f"# TYPE {family} {kind}\n# HELP {family} {names.METRICS[name][2]}\n"
    return head + "".join(body)


def _job_family(sim: Simulation, times_s: np.ndarray, stamps: np.ndarray) -> str:
    body = []
    events = sim.frames["job_events"]
    for (job, node), group in events.groupby(["job", "node"], sort=True):
        frame = pd.DataFrame(
            {
                "t": ((group["time"] - sim.start).dt.total_seconds()).astype(np.int64),
                "event": group["event"],
                "job": job,
                "node": node,
                "gpus": group["gpus"],
                "step": group["step"],
                "category": group["category"],
                "status": group["status"],
                "layer": group["layer"],
                "count": group["count"],
                "step_time_s": group["step_time_s"],
                "compute_s": group["compute_s"],
            }
        )
        state, at, totals = GoodputState(), [], []
        for event in journal_events(frame):
            state.apply(event)
            at.append(event["t"])
            totals.append([state.result.gpu_seconds[c] for c in names.JOB_CATEGORIES])
        index = np.searchsorted(np.array(at), times_s, side="right") - 1
        present = index >= 0
        table = np.array(totals)[np.clip(index, 0, None)]
        for c, category in enumerate(names.JOB_CATEGORIES):
            if table[-1, c] > 0:
                prefix = "gpuslo_job_gpu_seconds_total" + _labels(
                    instance=node, job=job, category=category
                )
                body.append(
                    _series(prefix, np.round(table[:, c]).astype(np.int64), stamps, present)
                )
    return _family("gpuslo_job_gpu_seconds_total", "counter", body)


def openmetrics_text(sim: Simulation, step: int) -> str:
    """The whole OpenMetrics exposition (str) of `sim` (a gpuslo.slo.simulate.fleet.Simulation),
    one sample per series every `step` seconds from the simulation start; ends with `# EOF`.
    Deterministic: series sorted by node, GPU and label; timestamps whole Unix seconds."""
    span = int((sim.end - sim.start).total_seconds())
    times_s = np.arange(0, span, step, dtype=np.int64)
    stamps = np.char.add(" ", (times_s + int(sim.start.timestamp())).astype(str))
    stamps = np.char.add(stamps, "\n")
    parts = [*_gpu_families(sim, times_s, stamps), _job_family(sim, times_s, stamps)]
    return "".join(parts) + "# EOF\n"
