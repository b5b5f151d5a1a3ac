"""The Prometheus source against a real Prometheus over backfilled simulated data: the usable
ratio from PromQL and from the engine agree within 0.1 % for the same window."""

from __future__ import annotations

import pandas as pd
import pytest
import requests
from conftest import backfill, free_port, require_binary, running_prometheus

from gpuslo.errors import InputError
from gpuslo.slo.engine import compute_week
from gpuslo.slo.frames import Frames
from gpuslo.slo.simulate import faults, openmetrics
from gpuslo.slo.simulate.fleet import simulate
from gpuslo.slo.sources.prometheus import load_prometheus, samples_to_intervals
from gpuslo.slo_spec import SloSpec

START = pd.Timestamp("2026-11-23", tz="UTC")
STEP_S = 30


def test_samples_merge_into_intervals():
    t = [START + pd.Timedelta(seconds=s) for s in (0, 30, 60, 120, 150)]
    samples = pd.DataFrame({"uuid": ["a", "a", "a", "a", "b"], "time": t})
    out = samples_to_intervals(samples, ["uuid"], STEP_S)
    # a: 0–90 s and 120–150 s; b: 150–180 s (each sample stands for one step)
    assert [
        (r.uuid, (r.start - START).seconds, (r.end - START).seconds) for r in out.itertuples()
    ] == [("a", 0, 90), ("a", 120, 150), ("b", 150, 180)]


def test_unreachable_api_is_an_input_error():
    port = free_port()
    with pytest.raises(InputError, match="failed"):
        load_prometheus(f"http://127.0.0.1:{port}", START, START + pd.Timedelta(hours=1))


@pytest.fixture(scope="module")
def backfilled(tmp_path_factory):
    """A simulated fleet (3 nodes × 4 GPUs, 1 day, faults at 300 per 1000 GPU-days so the day has
    unhealthy, unknown and no-data time; seed 8) backfilled into a Prometheus on loopback."""
    promtool, prometheus = require_binary("promtool"), require_binary("prometheus")
    root = tmp_path_factory.mktemp("prom")
    fleet = faults.Fleet(nodes=3, gpus_per_node=4, days=1, interruptions_per_1000_gpu_days=300)
    sim = simulate(fleet, seed=8, start=START)
    text = openmetrics.openmetrics_text(sim, STEP_S)
    (root / "fleet.om").write_text(text.removesuffix("# EOF\n") + _problem_family(sim) + "# EOF\n")
    backfill(promtool, root / "fleet.om", root / "data")
    (root / "prometheus.yml").write_text("global: {}\n")
    with running_prometheus(
        prometheus,
        root / "prometheus.yml",
        root / "data",
        "--storage.tsdb.retention.time=100y",
        "--query.lookback-delta=40s",
    ) as url:
        yield sim, url


def _problem_family(sim) -> str:
    """`gpuslo_gpu_problem` samples (value 1) for every non-healthy verdict interval, as the
    exporter would expose them — the simulator's text leaves this family out."""
    inv = sim.frames["inventory"]
    rows = openmetrics.per_gpu(sim.frames["verdicts"], inv)
    rows = rows[rows["verdict"] != "healthy"].merge(inv[["uuid", "gpu"]], on="uuid")
    lines = []
    for r in rows.sort_values(["node", "uuid", "reason", "start"]).itertuples():
        first = -(-int((r.start - START).total_seconds()) // STEP_S) * STEP_S
        stop = int((r.end - START).total_seconds())
        labels = (
            f'instance="{r.node}",gpu="{r.gpu}",uuid="{r.uuid}",check="sim",reason="{r.reason}",'
            f'layer="{r.layer}",action="{r.action}"'
        )
        lines += [
            f"gpuslo_gpu_problem{{{labels}}} 1 {int(START.timestamp()) + t}\n"
            for t in range(first, stop, STEP_S)
        ]
    return "# TYPE gpuslo_gpu_problem gauge\n" + "".join(lines)


def _promql_usable_ratio(url: str, end: pd.Timestamp, span_s: int) -> float:
    # usable samples over the samples every GPU in the inventory should have had (no-data
    # stretches count as not usable, as in the engine)
    query = (f"sum(sum_over_time(gpuslo_gpu_usable[{span_s}s])) / "
             f"(count(last_over_time(gpuslo_gpu_info[{span_s}s])) * {span_s // STEP_S})")
    body = requests.get(
        f"{url}/api/v1/query", params={"query": query, "time": (end.value / 1e9) - 1}, timeout=30
    ).json()
    return float(body["data"]["result"][0]["value"][1])


def test_engine_agrees_with_promql(backfilled):
    sim, url = backfilled
    span_s = int((sim.end - sim.start).total_seconds())
    promql = _promql_usable_ratio(url, sim.end, span_s)
    frames = load_prometheus(url, sim.start, sim.end, step_s=STEP_S, progress=False)
    from_prometheus = compute_week(frames, sim.start, sim.end, SloSpec())
    direct = compute_week(
        Frames(inventory=sim.frames["inventory"], verdicts=sim.frames["verdicts"]),
        sim.start,
        sim.end,
        SloSpec(),
    )
    assert from_prometheus.gpus == direct.gpus == 12
    assert (
        direct.lost_gpu_hours_by_layer["node"] > 1 and direct.data_quality["no_data_gpu_hours"] > 0
    )
    assert from_prometheus.usable_ratio == pytest.approx(promql, rel=1e-3)
    assert direct.usable_ratio == pytest.approx(promql, rel=1e-3)
    # reasons travel through gpuslo_gpu_problem: lost hours by reason agree to sampling error
    # (each interval edge is rounded to the 30 s grid: at most 30 s per edge per GPU)
    direct_reasons, prom_reasons = (
        direct.lost_gpu_hours_by_reason,
        from_prometheus.lost_gpu_hours_by_reason,
    )
    assert set(prom_reasons) == set(direct_reasons)
    for reason, hours in direct_reasons.items():
        assert prom_reasons[reason] == pytest.approx(hours, rel=0.02, abs=0.1), reason
