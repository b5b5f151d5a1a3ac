"""`report --prometheus` and the recording rules on a real Prometheus and a real VictoriaMetrics,
each loaded with the same simulated week (cordons, drains, faults with reasons, unknown stretches,
no-data gaps, jobs with interruptions): both agree with each other and with the pandas engine on
the simulator's own frames.

Prometheus: `promtool tsdb create-blocks-from openmetrics`, then the rules' first level
(per-evaluation counts) backfilled with `promtool tsdb create-blocks-from rules`, Prometheus
restarted over the blocks. VictoriaMetrics: `/api/v1/import/prometheus`, then `vmalert` in replay
mode over the same rules. The second level (`sum_over_time` over the week, as the SLI rules
write it) is queried from each. Samples every 300 s against the engine's exact intervals leave a
discretisation error (each interval edge moves by less than a step, unbiased), hence tolerances
of a few 1e-3 against the engine and tighter ones between report and rules.
"""

from __future__ import annotations

import pandas as pd
import pytest
import requests
import yaml
from conftest import (
    assert_same_frames,
    backfill,
    backfill_rules,
    import_openmetrics,
    require_binary,
    running_prometheus,
    running_victoria_metrics,
    vmalert_replay,
)

from gpuslo import names
from gpuslo.alerts import sli
from gpuslo.slo.engine import compute_week
from gpuslo.slo.frames import Frames
from gpuslo.slo.simulate import faults
from gpuslo.slo.simulate.fleet import simulate
from gpuslo.slo.simulate.openmetrics import write_openmetrics
from gpuslo.slo.sources.prometheus import load_prometheus
from gpuslo.slo_spec import SloSpec

pytestmark = pytest.mark.prometheus
STEP_S = 300
WEEK = "7d"


@pytest.fixture(scope="module")
def simulated(tmp_path_factory):
    """A week of 3 nodes × 4 GPUs (seed 3, 300 interruptions per 1000 GPU-days), ending at
    midnight before yesterday, as OpenMetrics and as the engine's result on its own frames."""
    root = tmp_path_factory.mktemp("week")
    start = pd.Timestamp.now(tz="UTC").floor("D") - pd.Timedelta(days=9)
    fleet = faults.Fleet(nodes=3, gpus_per_node=4, days=7, interruptions_per_1000_gpu_days=300)
    sim = simulate(fleet, seed=3, start=start)
    with open(root / "week.om", "w") as handle:
        write_openmetrics(sim, STEP_S, handle.write)
    rules = {"groups": sli.first_level_groups(SloSpec())}  # the first level: counts, locate
    (root / "level1.rules.yml").write_text(yaml.safe_dump(rules, sort_keys=False))
    return sim, root, compute_week(Frames(**sim.frames), sim.start, sim.end, SloSpec())


@pytest.fixture(scope="module", params=["prometheus", "victoriametrics"])
def engine(request, simulated, tmp_path_factory):
    """(name, base URL) of a server holding the week and the rules' first level."""
    sim, root, _ = simulated
    work = tmp_path_factory.mktemp(request.param)
    if request.param == "prometheus":
        binary, promtool = require_binary("prometheus"), require_binary("promtool")
        backfill(promtool, root / "week.om", work / "data", "--max-block-duration=24h")
        (work / "prometheus.yml").write_text("global: {}\n")
        flags = ("--storage.tsdb.retention.time=100y",)
        with running_prometheus(binary, work / "prometheus.yml", work / "data", *flags) as url:
            backfill_rules(promtool, url, root / "level1.rules.yml", work / "data", sim.start,
                           sim.end)
        with running_prometheus(binary, work / "prometheus.yml", work / "data", *flags) as url:
            yield request.param, url
    else:
        binary, vmalert = require_binary("victoria-metrics"), require_binary("vmalert")
        with running_victoria_metrics(binary, work / "data") as url:
            import_openmetrics(url, root / "week.om")
            vmalert_replay(vmalert, root / "level1.rules.yml", url, sim.start, sim.end)
            yield request.param, url


def _query(url: str, query: str, at: pd.Timestamp) -> list[dict]:
    body = requests.post(f"{url}/api/v1/query", timeout=60,
                         data={"query": query, "time": at.value / 1e9}).json()
    assert body["status"] == "success", body
    return body["data"]["result"]


@pytest.fixture(scope="module")
def reports(engine, simulated):
    sim, _, _ = simulated
    name, url = engine
    frames = load_prometheus(url, sim.start, sim.end, progress=False, max_samples=200_000)
    return name, url, frames, compute_week(frames, sim.start, sim.end, SloSpec())


def test_report_agrees_with_the_engine_cordons_and_reasons_included(reports, simulated):
    sim, _, direct = simulated
    name, _, frames, result = reports
    assert frames.source.endswith(f"(step {STEP_S} s)")
    assert result.gpus == direct.gpus == 12
    assert result.provisioned_gpu_hours == pytest.approx(direct.provisioned_gpu_hours)
    # the week lost real time to every kind of cause, so agreement means something
    assert direct.usable_ratio < 0.95 and direct.categories["unschedulable"] > 1
    assert result.usable_gpu_hours == pytest.approx(direct.usable_gpu_hours, rel=3e-3), name
    assert result.categories["unschedulable"] == pytest.approx(
        direct.categories["unschedulable"], rel=0.05), name
    for reason in ("check_timeout", "dependency_missing", "stale_data", "no_data"):
        want = direct.data_quality["blind_gpu_hours_by_reason"].get(reason, 0.0)
        got = result.data_quality["blind_gpu_hours_by_reason"].get(reason, 0.0)
        assert got == pytest.approx(want, rel=0.1, abs=0.3), (name, reason)
    # unusable capacity by reason (job badput re-attributed to faults needs the journals)
    def unusable(week) -> dict:
        by = week.accounting.by_layer_reason
        by = by[by["layer"] == names.LAYER_NODE]
        return dict(zip(by["reason"], by["seconds"] / 3600, strict=True))

    node = unusable(direct)
    assert len(node) >= 2
    for reason, hours in node.items():
        assert unusable(result)[reason] == pytest.approx(hours, rel=0.02), (name, reason)


def test_locating_first_reads_what_reading_every_gpu_reads(reports, simulated):
    """Located reads (instant queries per 6 h bucket, then per step only where something is)
    give the same frames as reading every GPU at every step, on both engines."""
    sim, _, _ = simulated
    name, url, frames, _ = reports
    assert_same_frames(frames, load_prometheus(url, sim.start, sim.end, progress=False,
                                               max_samples=200_000, locate=False))


def test_report_goodput_from_the_counters_agrees_with_the_engine(reports, simulated):
    _, _, direct = simulated
    name, _, _, result = reports
    assert result.goodput_ratio == pytest.approx(direct.goodput_ratio, abs=2e-3), name
    for category, hours in direct.job_gpu_hours_by_category.items():
        got = result.job_gpu_hours_by_category[category]
        assert got == pytest.approx(hours, rel=0.01, abs=1.0), (name, category)


def test_recording_rules_agree_with_the_report(reports, simulated):
    sim, _, direct = simulated
    name, url, _, result = reports
    at = sim.end - pd.Timedelta(milliseconds=1)
    span = f"{int((sim.end - sim.start).total_seconds() * 1000) - 1}ms"
    # the usable count's own rule over the fleet's 12 GPUs, provisioned all week (the recorded
    # provisioned inventory chains recording rules, which promtool cannot backfill in one pass)
    usable = _query(url, f"sum_over_time({sli.GPU_USABLE_COUNT}[{span}])"
                         f" / (12 * count_over_time({sli.GPU_USABLE_COUNT}[{span}]))", at)
    assert float(usable[0]["value"][1]) == pytest.approx(result.usable_ratio, abs=3e-3), name
    goodput = _query(url, sli.ratio_expr(names.SLO_JOB_GOODPUT, span), at)
    assert float(goodput[0]["value"][1]) == pytest.approx(result.goodput_ratio, abs=2e-3), name
    by = {s["metric"]["category"]: float(s["value"][1]) / 3600 for s in _query(
        url, f"sum by (category) (sum_over_time({sli.JOB_SECONDS_INCREASE}[{span}]))", at)}
    for category, hours in direct.job_gpu_hours_by_category.items():
        assert by.get(category, 0.0) == pytest.approx(hours, rel=0.01, abs=2.0), (name, category)
