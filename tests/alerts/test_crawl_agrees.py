"""A simulated week with injected stragglers (gpuslo.slo.simulate.stragglers): the report's crawl
section, the exporter counters and the crawl recording rules agree on slowdown GPU-hours.

`gpuslo simulate --openmetrics` writes what the exporters would have exposed
(`gpuslo_job_gpu_seconds_total{category="slowdown"}` from the same calculator); the test
backfills it into a real Prometheus, evaluates the job GPU-seconds recording rules (the first
level's own expression every minute, summed over the span), sums the counters' last samples
from the OpenMetrics text, and runs the SLO engine and the report over the same
span. Counters are written in whole GPU-seconds, so the three agree to well within 1e-3 of the
total.
"""

from __future__ import annotations

import json
import time

import pandas as pd
import pytest
import requests

from gpuslo import cli
from gpuslo.alerts import sli
from gpuslo.slo.engine import compute_week
from gpuslo.slo.frames import Frames, make_frame
from gpuslo.slo.report.build import report_of
from gpuslo.slo.report.markdown import render_markdown
from gpuslo.slo.simulate.files import read_simulation
from gpuslo.slo.sources.prometheus import load_prometheus, read_gpus
from gpuslo.slo.sources.query_api import QueryApi
from gpuslo.slo.sources.sparse import read_degradations, read_slowdowns
from gpuslo.slo.sources.sparse_reader import Reader
from gpuslo.slo_spec import SloSpec
from tests.conftest import backfill, require_binary, running_prometheus

pytestmark = pytest.mark.prometheus
STEP_S, DAYS = 600, 7


@pytest.fixture(scope="module")
def week(tmp_path_factory):
    binary, promtool = require_binary("prometheus"), require_binary("promtool")
    root = tmp_path_factory.mktemp("crawl")
    start = pd.Timestamp.now(tz="UTC").floor("D") - pd.Timedelta(days=DAYS + 1)
    args = ["simulate", "--nodes", "6", "--days", str(DAYS), "--out", str(root / "sim"),
            "--openmetrics", "--metrics-step", str(STEP_S),
            "--start", start.strftime("%Y-%m-%dT%H:%M:%SZ")]
    assert cli.main(args) == 0
    frames, start, end = read_simulation(root / "sim")
    backfill(promtool, root / "sim" / "metrics.om", root / "data")
    (root / "prometheus.yml").write_text("global: {}\n")
    last = end - pd.Timedelta(seconds=STEP_S)  # the last sample of the OpenMetrics text
    with running_prometheus(binary, root / "prometheus.yml", root / "data") as url:
        yield url, frames, start, last, (root / "sim" / "metrics.om").read_text()


def _rules_hours(url: str, start: pd.Timestamp, at: pd.Timestamp) -> float:
    """Slowdown GPU-hours from the job GPU-seconds rules: their first level (the per-evaluation
    increase by category, its own expression) every minute over the span, summed — what
    `sum_over_time(gpuslo:job_gpu_seconds:increase1m[...])` reads once recorded. (The crawl's
    `gpuslo:job_slowdown_gpu_seconds:sum` sums the counters exposed now: a job that finished
    more than --job-expiry ago has left it.)"""
    span = int((at - start).total_seconds())
    query = f"sum_over_time(({sli.job_seconds_increase_expr()})[{span}s:{sli.GOODPUT_INTERVAL}])"
    deadline = time.monotonic() + 20
    while True:
        answer = requests.get(f"{url}/api/v1/query", timeout=60,
                              params={"query": query, "time": at.timestamp()}).json()
        result = answer.get("data", {}).get("result")
        if result or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert result, answer
    by = {s["metric"]["category"]: float(s["value"][1]) for s in result}
    return by["slowdown"] / 3600


def _counter_hours(text: str, at: pd.Timestamp) -> float:
    """The slowdown counters' last samples up to `at`, summed (lines `name{labels} value t`)."""
    last: dict[str, float] = {}
    for line in text.splitlines():
        if line.startswith("gpuslo_job_gpu_seconds_total{") and 'category="slowdown"' in line:
            series, value, stamp = line.rsplit(" ", 2)
            if float(stamp) <= at.timestamp():
                last[series] = float(value)
    return sum(last.values()) / 3600


def test_report_counters_and_rules_agree_on_slowdown_gpu_hours(week):
    url, frames, start, last, text = week
    result = compute_week(Frames(**frames), start, last, SloSpec())
    doc = result.to_json_dict()
    engine = doc["crawl"]["slowdown_gpu_hours"]
    counters, rules = _counter_hours(text, last), _rules_hours(url, start, last)
    assert engine > 10  # the stragglers cost real time: not a comparison of zeros
    assert counters == pytest.approx(engine, rel=1e-3)
    assert rules == pytest.approx(engine, rel=1e-3)
    # the section shows the same figure, by job and cause, with the slowest nodes named
    rows = doc["crawl"]["rows"]
    assert sum(r["gpu_hours"] for r in rows) == pytest.approx(engine, rel=1e-6)
    assert {r["layer"] for r in rows} == {"node", "training"}  # caused and uncaused stragglers
    markdown = render_markdown(report_of(doc, None, None))
    assert f"{engine:,.1f} GPU-hours lost to steps slower" in markdown
    slowest = doc["crawl"]["slowest_nodes"][0]
    assert min(slowest["score"], slowest["individual_score"]) < 0.95


def _causes(doc: dict) -> dict[tuple[str, str, str, str], float]:
    """Crawl GPU-hours per (job, layer, reason, cause node) of a report's JSON."""
    out: dict[tuple[str, str, str, str], float] = {}
    for r in doc["crawl"]["rows"]:
        key = (r["job"], r["layer"], r["reason"], r["cause_node"])
        out[key] = out.get(key, 0.0) + r["gpu_hours"]
    return out


def test_report_from_prometheus_attributes_the_crawl_as_the_engine_does(week, tmp_path):
    """`report --prometheus` reads the injected degradations (gpuslo_node_degradation) and the
    slowdown counters' episodes from the same backfill: every job's slowdown goes to the same
    layer, reason and node as the engine's from the simulation's own frames, with the same
    GPU-hours (the counters hold whole GPU-seconds, sampled every STEP_S)."""
    url, frames, start, last, _ = week
    engine = _causes(compute_week(Frames(**frames), start, last, SloSpec()).to_json_dict())
    assert {layer for _, layer, _, _ in engine} == {"node", "training"}
    out = tmp_path / "report"
    window = [start.strftime("%Y-%m-%dT%H:%M:%SZ"), last.strftime("%Y-%m-%dT%H:%M:%SZ")]
    assert cli.main(["report", "--prometheus", url, "--start", window[0], "--end", window[1],
                     "--out", str(out), "--format", "json,md"]) == 0
    doc = json.loads((out / "report.json").read_text())
    prometheus = _causes(doc)
    assert sorted(prometheus) == sorted(engine)
    for key, hours in engine.items():
        assert prometheus[key] == pytest.approx(hours, rel=1e-3), key
    node = sum(h for (_, layer, _, _), h in engine.items() if layer == "node")
    assert doc["crawl"]["by_layer"]["node"] == pytest.approx(node, rel=1e-3)
    assert "—" in (out / "report.md").read_text()  # a counter cannot say a slowdown's ratio


def test_the_crawl_reads_stay_the_same_when_split_under_a_small_sample_budget(week):
    """Degradations and slowdown episodes are located and sharded like the other sparse reads:
    with a budget of 200 samples per query (many small pieces, split by instance and by time),
    located or not, the frames are those of the default read, and the degradations are the
    simulation's, to the step."""
    url, frames, start, last, _ = week
    whole = load_prometheus(url, start, last)
    api = QueryApi(url, max_samples=200)
    gpus = read_gpus(api, start, last)
    for locate in (True, False):  # located cells, or every instance at every step
        reader = Reader(api, *gpus, start, last, STEP_S, locate)
        for name, read in (("degradations", read_degradations), ("slowdowns", read_slowdowns)):
            assert len(getattr(whole, name)), name
            pd.testing.assert_frame_equal(make_frame(name, read(reader)), getattr(whole, name))
    injected = frames["degradations"].sort_values(["node", "start"]).reset_index(drop=True)
    read = whole.degradations.sort_values(["node", "start"]).reset_index(drop=True)
    assert list(read["node"]) == list(injected["node"])
    assert list(read["reason"]) == list(injected["reason"])
    step = pd.Timedelta(seconds=STEP_S)
    assert ((read["start"] - injected["start"]).abs() < step).all()
    assert ((read["end"] - injected["end"]).abs() <= step).all()
