"""The usable-GPU recording rules and the pandas SLO engine agree on the same data (DESIGN.md §6).

`gpuslo simulate` writes a fleet (verdict and schedulability intervals) and the OpenMetrics the
exporters would have exposed; the test adds what kube-state-metrics and the exporters' node info
would have said (cordoned nodes), backfills both into a real Prometheus, evaluates the recording
rules' own expressions over the span with a subquery, and compares with `compute_week`.
Sampling every 30 min against exact intervals leaves a small discretisation error, hence the
tolerance of 0.01 (the figures on seed 0 agree to about 0.001).
"""

from __future__ import annotations

import time

import pandas as pd
import pytest
import requests

from gpuslo import cli
from gpuslo.alerts import sli
from gpuslo.slo.engine import compute_week
from gpuslo.slo.frames import Frames
from gpuslo.slo.simulate.files import read_simulation
from gpuslo.slo_spec import SloSpec
from tests.conftest import backfill, require_binary, running_prometheus

pytestmark = pytest.mark.prometheus
STEP_S, DAYS = 1800, 4


def _node_openmetrics(frames: dict, start: pd.Timestamp, end: pd.Timestamp) -> str:
    """gpuslo_node_info and kube_node_spec_unschedulable per node at every step (1 while any
    schedulability interval [start, end) covers the sample time)."""
    times = pd.date_range(start, end, freq=f"{STEP_S}s", inclusive="left")
    sched = frames["schedulability"]
    lines = ["# TYPE gpuslo_node_info gauge"]
    nodes = sorted(frames["inventory"]["node"].unique())
    for node in nodes:
        labels = f'instance="{node}",node="{node}",driver_version="570.124.06",cuda_version="12.8"'
        lines += [f"gpuslo_node_info{{{labels}}} 1 {int(t.timestamp())}" for t in times]
    lines.append("# TYPE kube_node_spec_unschedulable gauge")
    for node in nodes:
        mine = sched[sched["node"] == node]
        for t in times:
            cordoned = bool(((mine["start"] <= t) & (t < mine["end"])).any())
            lines.append(
                f'kube_node_spec_unschedulable{{node="{node}"}} {int(cordoned)} '
                f"{int(t.timestamp())}"
            )
    return "\n".join(lines) + "\n# EOF\n"


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
    (root / "nodes.om").write_text(_node_openmetrics(frames, start, end))
    for source in (root / "sim" / "metrics.om", root / "nodes.om"):
        backfill(promtool, source, root / "data")
    (root / "prometheus.yml").write_text("global: {}\n")
    with running_prometheus(binary, root / "prometheus.yml", root / "data") as url:
        result = compute_week(Frames(**frames), start, end, SloSpec())
        yield url, result.usable_gpu_hours / result.provisioned_gpu_hours, end


def test_usable_gpu_ratio_from_the_rules_matches_the_engine(simulated):
    url, engine_ratio, end = simulated
    rules = {rule["record"]: rule["expr"] for rule in sli.instant_rules()}
    usable, inventory = rules[sli.GPU_USABLE_COUNT], rules[sli.GPU_INVENTORY_COUNT]
    window = f"[{DAYS}d:{STEP_S}s]"
    query = f"sum_over_time(({usable}){window}) / sum_over_time(({inventory}){window})"
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
