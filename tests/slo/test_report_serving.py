"""The report's "Inference serving" section (issue 29): golden files on a simulated fleet with a
serving node, the engine's serving block by hand, and training-only reports left unchanged.

Regenerate the golden files (after a deliberate change to the simulator, the engine or the
report):

    UPDATE_GOLDEN=1 python -m pytest -q tests/slo/test_report_serving.py

which runs, in a temporary directory (relative paths, so the source line is stable):

    gpuslo simulate --nodes 4 --gpus-per-node 8 --days 14 --seed 5 --fault-rate 40 \
        --serving-nodes 1 --out sim
    gpuslo report --data sim --week 2026-W49 --price-per-gpu-hour 2.5 --out report
"""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET

import pytest
from conftest import REPO

from gpuslo import names
from gpuslo.cli import main
from gpuslo.slo.engine import compute_week
from gpuslo.slo.frames import Frames, make_frame
from gpuslo.slo.report.build import report_of
from gpuslo.slo.sources.clusters import prefixed
from gpuslo.slo_spec import SloSpec, spec_from_mapping
from tests.slo.test_serving import at, timeline

GOLDEN = REPO / "tests" / "golden" / "report-serving"
FILES = ("report.md", "report.html", "report.json")


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    work = tmp_path_factory.mktemp("golden-serving")
    cwd = os.getcwd()
    os.chdir(work)
    try:
        assert main(["simulate", "--nodes", "4", "--gpus-per-node", "8", "--days", "14",
                     "--seed", "5", "--fault-rate", "40", "--serving-nodes", "1",
                     "--out", "sim"]) == 0
        assert main(["report", "--data", "sim", "--week", "2026-W49", "--price-per-gpu-hour",
                     "2.5", "--out", "report"]) == 0
    finally:
        os.chdir(cwd)
    return work / "report"


@pytest.mark.parametrize("name", FILES)
def test_serving_report_matches_golden(generated, name):
    produced = (generated / name).read_bytes()
    if os.environ.get("UPDATE_GOLDEN") == "1":
        GOLDEN.mkdir(parents=True, exist_ok=True)
        (GOLDEN / name).write_bytes(produced)
    assert produced == (GOLDEN / name).read_bytes(), f"{name} differs; see this module's docstring"


def test_serving_block_sums_and_section_in_every_format(generated):
    doc = json.loads((generated / "report.json").read_text())
    block = doc["serving"]
    cats = block["categories_gpu_hours"]
    assert set(cats) == set(names.SERVING_CATEGORIES)
    assert sum(cats.values()) == pytest.approx(block["allocated_gpu_hours"], abs=1e-3)
    assert block["allocated_gpu_hours"] == 8 * 7 * 24  # one serving node, the whole week
    assert block["lost_gpu_hours"] == pytest.approx(
        sum(cats[c] for c in names.SERVING_LOST), abs=1e-3)
    assert sum(block["lost_gpu_hours_by_layer"].values()) == pytest.approx(
        block["lost_gpu_hours"], abs=1e-3)
    assert cats["idle_capacity"] > 0 and block["lost_gpu_hours_by_layer"]["node"] > 0
    assert block["data_quality"]["other_gpu_hours"] == cats["other"]
    # replicas are no training job: their usable allocated time is one capacity category, the
    # rest of their allocation was unusable (faults under them, drains of their node)
    capacity = doc["categories_gpu_hours"]
    assert 0 < capacity["serving_replicas"] <= block["allocated_gpu_hours"]
    replicas = {r["replica"] for r in block["replicas_most_hit"]}
    assert not replicas & {j["job"] for j in doc["jobs_hit"]}
    assert all(j["job"].startswith("job-") for j in doc["jobs_hit"])
    assert doc["data_quality"]["jobs_without_journal"] == []
    badput = sum(doc["badput_gpu_hours_by_category"].values())
    assert doc["allocated_gpu_hours"] == pytest.approx(
        doc["productive_gpu_hours"] + badput, abs=1e-3)  # the waterfall closes
    md = (generated / "report.md").read_text()
    assert "## Inference serving" in md and md.index("## Inference serving") > md.index(
        "## Jobs most hit")
    assert "Serving replicas:" in md.split("## Data quality")[1]
    html = (generated / "report.html").read_text()
    assert '<section id="serving"><h2>Inference serving</h2>' in html
    ET.fromstring(html.split("\n", 2)[2])


def test_training_only_report_has_no_serving_section():
    doc = {"start": "2026-11-30T00:00:00Z", "end": "2026-12-07T00:00:00Z"}
    assert "serving" not in [s.key for s in report_of(doc, None, None).sections]


def _issue_frames(latency=()):
    replicas, states, idle, _ = timeline()
    verdicts = make_frame("verdicts", [
        {"node": "n1", "uuid": "GPU-a", "start": at(60), "end": at(200), "verdict": "unhealthy",
         "reason": "xid_fatal", "layer": "node", "action": "reset_gpu"}])
    inventory = make_frame("inventory", [
        {"node": n, "uuid": f"GPU-{n}-{i}", "gpu": str(i), "provisioned_start": at(0)}
        for n, count in (("n1", 8), ("n2", 2)) for i in range(count)])
    return Frames(inventory=inventory, verdicts=verdicts, replicas=replicas,
                  replica_states=states, replica_idle=idle,
                  replica_latency=make_frame("replica_latency", list(latency)))


def test_issue_timeline_through_the_engine_by_hand():
    """vllm-0 (8 GPUs, 2 h): loads 10 min, serves, crash-loops 5 min after n1's fatal Xid,
    reloads 3 min, serves (10 min idle), drains 2 min; tgi-0 (2 GPUs, 30 min, 10 undescribed)."""
    latency = [  # vLLM buckets at 0.5 s (TTFT) and 0.1 s (ITL); a 0.25 s bound is not asked
        {"replica": "vllm-0", "start": at(10), "end": at(60), "sli": "ttft", "le": 0.5,
         "good": 90, "total": 100},
        {"replica": "vllm-0", "start": at(10), "end": at(60), "sli": "ttft", "le": 0.25,
         "good": 50, "total": 100},
        {"replica": "vllm-0", "start": at(68), "end": at(118), "sli": "ttft", "le": 0.5,
         "good": 100, "total": 100},
        {"replica": "vllm-0", "start": at(10), "end": at(60), "sli": "itl", "le": 0.1,
         "good": 1900, "total": 2000},
        {"replica": "tgi-0", "start": at(0), "end": at(20), "sli": "ttft", "le": 0.4,
         "good": 5, "total": 10},  # no bucket at the objective: unknown, not interpolated
    ]
    result = compute_week(_issue_frames(latency), at(0), at(120), SloSpec())
    block = result.to_json_dict()["serving"]
    cats = block["categories_gpu_hours"]
    assert cats["serving"] == pytest.approx((90 * 8 + 20 * 2) / 60, abs=1e-6)
    assert cats["idle_capacity"] == pytest.approx(10 * 8 / 60, abs=1e-6)
    assert cats["other"] == pytest.approx(10 * 2 / 60, abs=1e-6)
    assert block["allocated_gpu_hours"] == pytest.approx((120 * 8 + 30 * 2) / 60, abs=1e-6)
    assert block["gpus"] == 10 and block["replicas"] == 2
    by_layer = block["lost_gpu_hours_by_layer"]
    assert by_layer["node"] == pytest.approx((5 + 3) * 8 / 60, abs=1e-6)
    assert by_layer["platform"] == pytest.approx(2 * 8 / 60, abs=1e-6)
    ttft, itl = block["latency"]["ttft"], block["latency"]["itl"]
    # tgi-0's 10 requests have no bucket at 0.5 s: not met in the fleet share, as in the rules
    assert (ttft["good"], ttft["total"]) == (190, 210)
    assert ttft["attainment"] == pytest.approx(190 / 210, abs=1e-6)
    assert (ttft["replicas_known"], ttft["replicas_unknown"]) == (1, 1)
    assert itl["attainment"] == 0.95
    top = block["replicas_most_hit"][0]
    assert top["replica"] == "vllm-0" and (top["layer"], top["reason"]) == ("training",
                                                                           "model_loading")
    assert top["lost_gpu_hours"] == pytest.approx((10 + 5 + 3 + 2) * 8 / 60, abs=1e-6)
    tgi = next(r for r in block["replicas_most_hit"] if r["replica"] == "tgi-0")
    assert tgi["ttft_attainment"] is None


def test_spec_objective_that_is_no_bucket_is_unknown_with_why():
    latency = [{"replica": "vllm-0", "start": at(10), "end": at(60), "sli": "ttft", "le": 0.5,
                "good": 9, "total": 10}]
    spec = spec_from_mapping({"serving": {"ttft_seconds": 0.3}})
    block = compute_week(_issue_frames(latency), at(0), at(120), spec).to_json_dict()["serving"]
    assert block["latency"]["ttft"]["attainment"] is None
    assert "not a bucket bound" in block["latency"]["ttft"]["why"]
    assert block["latency"]["itl"]["why"] == "no replica published this histogram in the window"
    doc = compute_week(_issue_frames(latency), at(0), at(120), spec).to_json_dict()
    sections = report_of(doc, None, None).sections
    serving = next(s for s in sections if s.key == "serving")
    assert serving.tables[1].rows[0][2] == "—"


def test_window_clips_replicas_outside_it():
    frames = _issue_frames()
    block = compute_week(frames, at(40), at(120), SloSpec()).to_json_dict()["serving"]
    assert block["replicas"] == 1  # tgi-0 ended at minute 30
    assert block["allocated_gpu_hours"] == pytest.approx(80 * 8 / 60, abs=1e-6)
    none = compute_week(Frames(inventory=frames.inventory, verdicts=frames.verdicts),
                        at(0), at(120), SloSpec()).to_json_dict()
    assert "serving" not in none


def test_a_global_stores_clusters_prefix_replicas_as_their_jobs():
    """In a global store's union a replica keeps matching its allocation's job name."""
    frames = _issue_frames()
    frames.allocations = make_frame("allocations", [
        {"job": "vllm-0", "node": "n1", "uuid": "GPU-n1-0", "start": at(0), "end": at(120)}])
    out = prefixed(frames, "east")
    assert set(out["replicas"]["replica"]) == {"east/vllm-0", "east/tgi-0"}
    assert set(out["replica_states"]["replica"]) == {"east/vllm-0", "east/tgi-0"}
    assert set(out["allocations"]["job"]) == {"east/vllm-0"}
    assert set(out["replicas"]["node"]) == {"east/n1", "east/n2"}
