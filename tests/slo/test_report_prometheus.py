"""`gpuslo report --prometheus` against a real Prometheus on loopback, loaded with the simulator's
OpenMetrics backfill (promtool tsdb create-blocks-from openmetrics)."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from conftest import backfill, require_binary, running_prometheus
from slo.test_report_days import check_days

from gpuslo import names
from gpuslo.cli import main
from gpuslo.slo.engine import compute_week
from gpuslo.slo.frames import Frames
from gpuslo.slo.report.inputs import Sources, load_frames, parse_week
from gpuslo.slo.simulate import faults as sf
from gpuslo.slo.simulate import fleet as sim_mod
from gpuslo.slo.simulate.openmetrics import openmetrics_text, per_gpu
from gpuslo.slo_spec import SloSpec

START = pd.Timestamp("2026-01-05T00:00:00Z")


@pytest.fixture(scope="module")
def backfilled(tmp_path_factory):
    promtool, prometheus = require_binary("promtool"), require_binary("prometheus")
    work = tmp_path_factory.mktemp("prom")
    sim = sim_mod.simulate(sf.Fleet(2, 4, 1.0, interruptions_per_1000_gpu_days=400), 11, START)
    (work / "metrics.om").write_text(openmetrics_text(sim, 60).replace(
        "gpuslo_job_", "other_job_"))  # no job counters: goodput then needs --journals
    backfill(promtool, work / "metrics.om", work / "data")
    (work / "prometheus.yml").write_text("global: {}\n")
    with running_prometheus(prometheus, work / "prometheus.yml", work / "data",
                            "--storage.tsdb.retention.time=100y") as url:
        yield sim, url


def test_report_from_prometheus_agrees_with_the_simulated_verdicts(backfilled, tmp_path):
    sim, url = backfilled
    out = tmp_path / "report"
    assert main(["report", "--prometheus", url, "--start", "2026-01-05T00:00:00Z",
                 "--end", "2026-01-06T00:00:00Z", "--out", str(out), "--format", "json,md"]) == 0
    doc = json.loads((out / "report.json").read_text())
    assert doc["gpus"] == 8 and doc["provisioned_gpu_hours"] == pytest.approx(8 * 24, rel=1e-6)
    verdicts = per_gpu(sim.frames["verdicts"], sim.frames["inventory"])
    healthy = verdicts[verdicts["verdict"] == names.VERDICT_HEALTHY]
    expected = compute_week(Frames(**sim.frames), START, START + pd.Timedelta(days=1),
                            SloSpec()).usable_ratio
    # the fleet had faults and drains (the report reads kube_node_spec_unschedulable)
    assert expected < (healthy["end"] - healthy["start"]).dt.total_seconds().sum() / 691200 < 1
    # Prometheus sees 60 s samples against exact intervals
    assert doc["usable_ratio"] == pytest.approx(expected, abs=0.002)
    assert "Not available:" in (out / "report.md").read_text()  # goodput needs --journals


@pytest.mark.parametrize(
    "window",
    [("2026-01-05T00:00:00Z", "2026-01-06T00:00:00Z"), ("2026-01-05T03:17:00Z",
     "2026-01-05T20:41:00Z"), ("2026-W02", None)],
)
def test_prometheus_days_hold_the_gpus_present_times_their_hours(backfilled, window):
    _, url = backfilled
    first, second = window
    if second is None:
        start, end = parse_week(first)
    else:
        start, end = pd.Timestamp(first), pd.Timestamp(second)
    check_days(load_frames(Sources(prometheus=url), start, end), start, end)
@pytest.mark.parametrize("flag, value", [("--max-samples-per-query", "0"), ("--timeout", "nan"),
                                         ("--step", "-5")])
def test_bad_query_flags_are_usage_errors(flag, value, capsys):
    with pytest.raises(SystemExit) as stop:
        main(["report", "--prometheus", "http://127.0.0.1:1", "--week", "2026-W48", flag, value])
    assert stop.value.code == 2 and flag in capsys.readouterr().err
