"""The usable-GPU recording rules and the pandas SLO engine agree on the same data (DESIGN.md §6).

`gpuslo simulate` writes a fleet (verdict and schedulability intervals) and the OpenMetrics the
exporters would have exposed (gpuslo_node_info and gpuslo_gpu_expected too); the test adds what
kube-state-metrics would have said (cordoned nodes, GPU capacity), backfills both into a real
Prometheus, evaluates the recording rules' own expressions over the span with a subquery, and
compares with `compute_week`. One node's exporter is dead for a whole day (its series vanish,
`gpuslo_gpu_info` too, as in the simulator's own no-data stretches): a denominator built from
what answers would shrink there (the old `last_over_time(gpuslo_gpu_info[1h])` read 0.46
against the engine's 0.41 on this data) and disagree with the engine, whose inventory is what
is provisioned.
Sampling every 30 min against exact intervals leaves a small discretisation error, hence the
tolerance of 0.01 (the figures on seed 0 agree to about 0.001).
"""

from __future__ import annotations

import time
from pathlib import Path

import pandas as pd
import pytest
import requests

from gpuslo import cli
from gpuslo.alerts import inventory, sli
from gpuslo.slo.engine import compute_week
from gpuslo.slo.frames import Frames
from gpuslo.slo.simulate.files import read_simulation
from gpuslo.slo_spec import SloSpec
from tests.conftest import backfill, require_binary, running_prometheus

pytestmark = pytest.mark.prometheus
STEP_S, DAYS = 1800, 4


def _node_openmetrics(frames: dict, start: pd.Timestamp, end: pd.Timestamp) -> str:
    """What kube-state-metrics says per node at every step about its GPU capacity
    (kube_node_status_capacity{resource="nvidia_com_gpu"}; the simulator writes
    kube_node_spec_unschedulable itself). The exporters' series (the simulator's) have gaps
    where a node gave no data; these do not."""
    times = pd.date_range(start, end, freq=f"{STEP_S}s", inclusive="left")
    gpus = frames["inventory"].groupby("node")["uuid"].count()
    lines = ["# TYPE kube_node_status_capacity gauge"]
    nodes = sorted(frames["inventory"]["node"].unique())
    for node in nodes:
        labels = f'node="{node}",resource="nvidia_com_gpu",unit="integer"'
        lines += [
            f"kube_node_status_capacity{{{labels}}} {gpus[node]} {int(t.timestamp())}"
            for t in times
        ]
    return "\n".join(lines) + "\n# EOF\n"


def _exporter_dies(frames: dict, metrics: Path, node: str, dead: tuple) -> None:
    """Node `node`'s exporter is dead for [dead[0], dead[1]): its samples leave the simulator's
    OpenMetrics (in place) and its verdict intervals are cut there, so the engine sees no data
    (observability) and Prometheus sees the series vanish, as after a real exporter crash."""
    low, high = int(dead[0].timestamp()), int(dead[1].timestamp())
    mine = f'instance="{node}"'
    kept = [
        line
        for line in metrics.read_text().splitlines(keepends=True)
        if mine not in line or not low <= int(line.rsplit(" ", 1)[1]) < high
    ]
    metrics.write_text("".join(kept))
    v = frames["verdicts"]
    hit = (v["node"] == node) & (v["start"] < dead[1]) & (v["end"] > dead[0])
    before = v[hit].assign(end=v.loc[hit, "end"].clip(upper=dead[0]))
    after = v[hit].assign(start=v.loc[hit, "start"].clip(lower=dead[1]))
    pieces = pd.concat([before, after], ignore_index=True)
    pieces = pieces[pieces["end"] > pieces["start"]]
    frames["verdicts"] = pd.concat([v[~hit], pieces], ignore_index=True)


@pytest.fixture(scope="module")
def simulated(tmp_path_factory):
    """(Prometheus URL, engine usable ratio, end) for a simulated fleet."""
    binary, promtool = require_binary("prometheus"), require_binary("promtool")
    root = tmp_path_factory.mktemp("agreement")
    start = pd.Timestamp.now(tz="UTC").floor("D") - pd.Timedelta(days=DAYS + 1)
    args = [
        "simulate",
        "--nodes",
        "2",
        "--days",
        str(DAYS),
        "--out",
        str(root / "sim"),
        "--openmetrics",
        "--metrics-step",
        str(STEP_S),
        "--fault-rate",
        "300",
        "--start",
        start.strftime("%Y-%m-%dT%H:%M:%SZ"),
    ]
    assert cli.main(args) == 0
    frames, start, end = read_simulation(root / "sim")
    node = sorted(frames["inventory"]["node"].unique())[0]
    dead = (start + pd.Timedelta(days=1), start + pd.Timedelta(days=2))
    _exporter_dies(frames, root / "sim" / "metrics.om", node, dead)
    (root / "nodes.om").write_text(_node_openmetrics(frames, start, end))
    for source in (root / "sim" / "metrics.om", root / "nodes.om"):
        backfill(promtool, source, root / "data")
    (root / "prometheus.yml").write_text("global: {}\n")
    with running_prometheus(binary, root / "prometheus.yml", root / "data") as url:
        result = compute_week(Frames(**frames), start, end, SloSpec())
        yield url, result.usable_gpu_hours / result.provisioned_gpu_hours, end


def test_usable_gpu_ratio_from_the_rules_matches_the_engine(simulated):
    url, engine_ratio, end = simulated
    rules = {rule["record"]: rule["expr"] for rule in sli.instant_rules(SloSpec())}
    # The provisioned count per node, inlined: its sources (the exporters' expected count and
    # GPUs seen, kube-state-metrics' capacity) without the carried value, which a subquery
    # over backfilled data cannot have (the promtool tests cover the carry).
    seen = f"({rules[inventory.NODE_SEEN]})"
    sources = {**inventory.PROVISIONED_SOURCES, "seen": seen}
    provisioned = "sum(" + inventory.union("max by (node)", list(sources.items())) + ")"
    usable = rules[sli.GPU_USABLE_COUNT]
    window = f"[{DAYS}d:{STEP_S}s]"
    query = f"sum_over_time(({usable}){window}) / sum_over_time(({provisioned}){window})"
    deadline = time.monotonic() + 20
    while True:
        answer = requests.get(
            f"{url}/api/v1/query", timeout=30, params={"query": query, "time": end.timestamp() - 1}
        ).json()
        result = answer.get("data", {}).get("result")
        if result or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert result, answer
    rules_ratio = float(result[0]["value"][1])
    # The fleet lost real time to faults and cordons: the comparison is not between two ones.
    assert 0.3 < engine_ratio < 0.95
    assert rules_ratio == pytest.approx(engine_ratio, abs=0.01)
