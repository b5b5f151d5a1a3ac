"""OpenMetrics text of a simulated fleet, streamed, for `promtool tsdb create-blocks-from
openmetrics` and VictoriaMetrics' `/api/v1/import/prometheus`.

The series are what the exporters (DESIGN.md §4) and kube-state-metrics would have exposed,
sampled every `step` seconds (30 s or coarser), with the target label Prometheus adds on scrape:
`instance` = the node name (kube-state-metrics' own series carry `instance="kube-state-metrics"`
and the Kubernetes `node` label). Families, in this order:

- per GPU: `gpuslo_gpu_info`, `gpuslo_gpu_usable`, `gpuslo_gpu_verdict` (stateset) and
  `gpuslo_gpu_problem` (1 per active problem: the check, reason, layer and action of the
  simulated fault or unknown stretch, only while it lasts) — this module;
- per node: `gpuslo_build_info`, `gpuslo_node_info`, `gpuslo_gpu_expected` (the node's GPU
  count), `gpuslo_node_usable`, `gpuslo_node_verdict`, `gpuslo_node_degradation` (1 while a
  row of the `degradations` frame — an injected degraded link or capped clock — lasts),
  `gpuslo_kernel_log_records_lost_total`, `gpuslo_network_devices(_expected)`, the check
  heartbeats `gpuslo_check_*` (`gpuslo.slo.simulate.heartbeats`) and
  `kube_node_spec_unschedulable` (1 while the node is drained, cordoned, in maintenance or
  validation);
- per job and node: `gpuslo_job_gpu_seconds_total` by category (every category from 0, as the
  exporter initialises them), `gpuslo_job_step`, `gpuslo_job_last_progress_timestamp_seconds`
  and `gpuslo_job_interruptions_total` by layer, from the calculator's batch form over the
  journal events (`gpuslo.slo.simulate.counters`), while the exporter would expose the job.

No-data stretches have no exporter samples at all (the exporter was not scraped), so a query
sees a gap, never a healthy GPU. A sample at time t shows the state at t (intervals are
half-open). The text ends with `# EOF`.

Memory is bounded whatever the fleet: `write_openmetrics` writes family by family, and within a
family block by block of nodes, each block's sample grid at most `CELLS` cells; it can write a
slice of the span (`first_s`, `end_s`), e.g. one file per day for a backfill.
"""

from __future__ import annotations

import io
from collections.abc import Callable, Iterator

import numpy as np
import pandas as pd

import gpuslo
from gpuslo import names
from gpuslo.slo.simulate import counters, heartbeats
from gpuslo.slo.simulate.fleet import Simulation
from gpuslo.slo.simulate.sampling import (
    CODES,
    Block,
    Fleet,
    labels,
    lines,
    make_grid,
    per_gpu,
    state_matrix,
)

__all__ = ["openmetrics_text", "per_gpu", "state_matrix", "write_openmetrics"]
KUBE_STATE_METRICS = "kube-state-metrics"
DRIVER_VERSION, CUDA_VERSION, NETWORK_DEVICES = "570.124.06", "12.8", 8

# --- GPU families ------------------------------------------------------------------------------


def _gpu_rows(block: Block) -> Iterator[tuple[int, object, int]]:
    """(row in the block's code matrix, inventory row, node index in the block) per GPU."""
    node_of = {node: n for n, node in enumerate(block.nodes)}
    for i, row in enumerate(block.inventory.itertuples(index=False)):
        yield i, row, node_of[row.node]


def pci_bus_id(gpu: str) -> str:
    """The simulated GPU's PCI bus id, NVML's form."""
    return f"00000000:{(int(gpu) * 16 + 24) % 256:02X}:00.0"


def gpu_info(fleet: Fleet, block: Block) -> str:
    out = []
    one = np.full(len(fleet.grid.times_s), "1", dtype=object)
    for _, row, n in _gpu_rows(block):
        prefix = "gpuslo_gpu_info" + labels(instance=row.node, gpu=row.gpu, uuid=row.uuid,
                                            pci_bus_id=pci_bus_id(row.gpu), model=row.model,
                                            family=row.family)
        out.append(lines(prefix, one, fleet.grid, block.present[n]))
    return "".join(out)


def gpu_usable(fleet: Fleet, block: Block) -> str:
    out = []
    for i, row, _ in _gpu_rows(block):
        prefix = "gpuslo_gpu_usable" + labels(instance=row.node, gpu=row.gpu, uuid=row.uuid)
        out.append(lines(prefix, (block.codes[i] == 1).astype(np.int8), fleet.grid,
                         block.codes[i] > 0))
    return "".join(out)


def gpu_verdict(fleet: Fleet, block: Block) -> str:
    out = []
    for i, row, _ in _gpu_rows(block):
        for state, code in CODES.items():
            prefix = "gpuslo_gpu_verdict" + labels(instance=row.node, gpu=row.gpu, uuid=row.uuid,
                                                   verdict=state)
            out.append(lines(prefix, (block.codes[i] == code).astype(np.int8), fleet.grid,
                             block.codes[i] > 0))
    return "".join(out)


def gpu_problem(fleet: Fleet, block: Block) -> str:
    """One series per (GPU, check, reason, layer, action), 1 while a non-healthy interval with
    those labels lasts; the check is the one that reports the reason (heartbeats.REASON_CHECK)."""
    bad = block.bad
    if bad.empty:
        return ""
    i0, i1 = fleet.offsets(bad["start"], bad["end"])
    gpu_of = dict(zip(block.inventory["uuid"], block.inventory["gpu"], strict=True))
    width = len(fleet.grid.times_s)
    series: dict[tuple, np.ndarray] = {}
    for row, a, b in zip(bad.itertuples(index=False), i0, i1, strict=True):
        if b <= a:
            continue
        key = (row.node, gpu_of[row.uuid], row.uuid, heartbeats.check_of(row.reason),
               row.reason, row.layer or names.REASON_LAYER[row.reason], row.action)
        mask = series.setdefault(key, np.zeros(width, dtype=bool))
        mask[a:b] = True
    one = np.full(width, "1", dtype=object)
    out = []
    for (node, gpu, uuid, check, reason, layer, action), mask in sorted(series.items()):
        prefix = "gpuslo_gpu_problem" + labels(instance=node, gpu=gpu, uuid=uuid, check=check,
                                               reason=reason, layer=layer, action=action)
        out.append(lines(prefix, one, fleet.grid, mask))
    return "".join(out)


# --- node families -----------------------------------------------------------------------------


def _constant(name: str, value: str, **extra: str) -> Callable[[Fleet, Block], str]:
    def family(fleet: Fleet, block: Block) -> str:
        values = np.full(len(fleet.grid.times_s), value, dtype=object)
        return "".join(lines(name + labels(instance=node, **extra), values, fleet.grid,
                             block.present[n]) for n, node in enumerate(block.nodes))
    return family


def build_info(fleet: Fleet, block: Block) -> str:
    """`gpuslo_build_info{version}`: the version looked up when written, not at import (its
    importlib.metadata costs `gpuslo report`, which imports this module, ~0.1 s at start-up)."""
    return _constant("gpuslo_build_info", "1", version=gpuslo.__version__)(fleet, block)


def node_info(fleet: Fleet, block: Block) -> str:
    one = np.full(len(fleet.grid.times_s), "1", dtype=object)
    return "".join(
        lines("gpuslo_node_info" + labels(instance=node, node=node, driver_version=DRIVER_VERSION,
                                          cuda_version=CUDA_VERSION), one, fleet.grid,
              block.present[n]) for n, node in enumerate(block.nodes))


def gpu_expected(fleet: Fleet, block: Block) -> str:
    """The GPUs each node should have (its inventory), while its exporter answers."""
    count = block.inventory.groupby("node", sort=False).size()
    width = len(fleet.grid.times_s)
    return "".join(lines("gpuslo_gpu_expected" + labels(instance=node),
                         np.full(width, str(int(count.get(node, 0))), dtype=object), fleet.grid,
                         block.present[n]) for n, node in enumerate(block.nodes))


def _node_codes(block: Block) -> np.ndarray:
    """Node verdict code per node and sample: any GPU unhealthy → 2, else any unknown → 3,
    else 1 (healthy), 0 without data."""
    node_of = pd.Index(block.nodes).get_indexer(block.inventory["node"])
    worst = np.zeros(block.present.shape, dtype=np.int8)
    rank = np.array([0, 1, 3, 2], dtype=np.int8)[block.codes]  # healthy < unknown < unhealthy
    np.maximum.at(worst, node_of, rank)
    return np.array([0, 1, 3, 2], dtype=np.int8)[worst]


def node_usable(fleet: Fleet, block: Block) -> str:
    codes = _node_codes(block)
    return "".join(lines("gpuslo_node_usable" + labels(instance=node),
                         (codes[n] == 1).astype(np.int8), fleet.grid, block.present[n])
                   for n, node in enumerate(block.nodes))


def node_verdict(fleet: Fleet, block: Block) -> str:
    codes = _node_codes(block)
    return "".join(
        lines("gpuslo_node_verdict" + labels(instance=node, verdict=state),
              (codes[n] == code).astype(np.int8), fleet.grid, block.present[n])
        for n, node in enumerate(block.nodes) for state, code in CODES.items())


def node_unschedulable(fleet: Fleet, block: Block) -> str:
    """kube-state-metrics' `kube_node_spec_unschedulable`: present at every sample (it is scraped
    apart from the exporters), 1 while a schedulability interval covers the node."""
    width = len(fleet.grid.times_s)
    flags = np.zeros((len(block.nodes), width), dtype=np.int8)
    sched = block.schedulability
    i0, i1 = fleet.offsets(sched["start"], sched["end"])
    for n, a, b in zip(sched["n"].to_numpy() - block.first, i0, i1, strict=True):
        flags[n, a:b] = 1
    always = np.ones(width, dtype=bool)
    return "".join(lines("kube_node_spec_unschedulable" + labels(
        instance=KUBE_STATE_METRICS, node=node), flags[n], fleet.grid, always)
        for n, node in enumerate(block.nodes))


def node_degradation(fleet: Fleet, block: Block) -> str:
    """`gpuslo_node_degradation`: one series per (node, GPU, check, reason) of the simulation's
    `degradations` frame, 1 while a row lasts and the node's exporter answers; a node-wide row
    (uuid "") has gpu, uuid and device empty, as the exporter's node-scoped result would."""
    frame = fleet.sim.frames.get("degradations")
    rows = frame[frame["node"].isin(block.nodes)] if frame is not None else None
    if rows is None or rows.empty:
        return ""
    i0, i1 = fleet.offsets(rows["start"], rows["end"])
    gpu_of = dict(zip(block.inventory["uuid"], block.inventory["gpu"], strict=True))
    node_of = {node: n for n, node in enumerate(block.nodes)}
    width = len(fleet.grid.times_s)
    series: dict[tuple, np.ndarray] = {}
    for row, a, b in zip(rows.itertuples(index=False), i0, i1, strict=True):
        if b > a:
            key = (row.node, gpu_of.get(row.uuid, ""), row.uuid, heartbeats.check_of(row.reason),
                   row.reason)
            series.setdefault(key, np.zeros(width, dtype=bool))[a:b] = True
    one = np.full(width, "1", dtype=object)
    return "".join(
        lines("gpuslo_node_degradation" + labels(instance=node, gpu=gpu, uuid=uuid, device="",
                                                 check=check, reason=reason),
              one, fleet.grid, mask & block.present[node_of[node]])
        for (node, gpu, uuid, check, reason), mask in sorted(series.items()))


Family = tuple[str, str, Callable[[Fleet, Block], str]]
FAMILIES: tuple[Family, ...] = (
    ("gpuslo_build_info", "gauge", build_info),
    ("gpuslo_node_info", "gauge", node_info),
    ("gpuslo_gpu_expected", "gauge", gpu_expected),
    ("gpuslo_gpu_info", "gauge", gpu_info),
    ("gpuslo_gpu_usable", "gauge", gpu_usable),
    ("gpuslo_gpu_verdict", "gauge", gpu_verdict),
    ("gpuslo_gpu_problem", "gauge", gpu_problem),
    ("gpuslo_node_usable", "gauge", node_usable),
    ("gpuslo_node_verdict", "gauge", node_verdict),
    ("gpuslo_node_degradation", "gauge", node_degradation),
    ("gpuslo_kernel_log_records_lost_total", "counter",
     _constant("gpuslo_kernel_log_records_lost_total", "0")),
    ("gpuslo_network_devices", "gauge",
     _constant("gpuslo_network_devices", str(NETWORK_DEVICES), kind="infiniband")),
    ("gpuslo_network_devices_expected", "gauge",
     _constant("gpuslo_network_devices_expected", str(NETWORK_DEVICES), kind="infiniband")),
    *heartbeats.FAMILIES,
    ("kube_node_spec_unschedulable", "gauge", node_unschedulable),
)
KSM_HELP = {"kube_node_spec_unschedulable": "Whether a node can schedule new pods."}


def _header(name: str, kind: str) -> str:
    family = name.removesuffix("_total") if kind == "counter" else name
    text = names.METRICS[name][2] if name in names.METRICS else KSM_HELP[name]
    return f"# TYPE {family} {kind}\n# HELP {family} {text}\n"


def write_openmetrics(sim: Simulation, step: int, write: Callable[[str], object],
                      first_s: int = 0, end_s: int | None = None) -> None:
    """Stream the OpenMetrics exposition of `sim` (a gpuslo.slo.simulate.fleet.Simulation)
    through `write` (called with text chunks): one sample per series every `step` seconds from
    the simulation start, those in [first_s, end_s) seconds from it; ends with `# EOF`.
    Deterministic: families in FAMILIES order, series by node, GPU and label; timestamps whole
    Unix seconds. Memory: one block of nodes at a time (module docstring)."""
    grid = make_grid(sim, step, first_s, end_s)
    fleet = Fleet(sim, grid)
    for name, kind, family in (*FAMILIES, *counters.families(counters.JobTable(sim, grid))):
        write(_header(name, kind))
        for block in fleet.blocks():
            write(family(fleet, block))
    write("# EOF\n")


def openmetrics_text(sim: Simulation, step: int) -> str:
    """The whole exposition as one string (small fleets and tests; `write_openmetrics` streams)."""
    out = io.StringIO()
    write_openmetrics(sim, step, out.write)
    return out.getvalue()
