"""The crawl in the SLO engine: slowdown GPU-hours by job, node and cause, and the slowest nodes.

The fleet: 2 nodes × 8 GPUs for 10 h, one job on both from 0 h. It logs one interval every
10 min of 60 steps, each committed by a checkpoint at once; each node logs the same step times
(a gang moves in lock step) and its own compute time. The reference is 10 s a step (600 s an
interval); from 5 h to 7 h the steps take 15 s (an interval then covers 40 steps). Lost per node:
12 intervals × 40 steps × 5 s × 8 GPUs = 19 200 GPU-s = 5.333 GPU-h, 10.667 GPU-h for the job.
Node n1 computes 14 s of each 15 s step (its GPUs run slow), n0 9 s: n0 waits on n1.
"""

from __future__ import annotations

import pandas as pd
import pytest

from gpuslo import names
from gpuslo.slo import frames
from gpuslo.slo.engine import compute_week
from gpuslo.slo.report.build import report_of
from gpuslo.slo.report.markdown import render_markdown
from gpuslo.slo_spec import SloSpec

T0 = pd.Timestamp("2026-11-23", tz="UTC")
NODES = ("n0", "n1")
LOST_H = 2 * 12 * 40 * 5 * 8 / 3600


def at(hours: float) -> pd.Timestamp:
    return T0 + pd.Timedelta(hours=hours)


def _events() -> list[dict]:
    rows = []
    for node in NODES:
        rows.append({"job": "llm", "node": node, "time": at(0), "event": "job_start", "gpus": 8})
        step, t = 0, 0.0
        for _ in range(60):
            slow = 5 <= t / 3600 < 7
            step_s = 15.0 if slow else 10.0
            count = int(600 / step_s)
            step, t = step + count, t + 600
            compute = (14.0 if node == "n1" else 9.0) if slow else (9.5 if node == "n1" else 9.0)
            rows.append({"job": "llm", "node": node, "time": at(t / 3600), "event": "steps",
                         "step": step, "count": count, "step_time_s": step_s,
                         "compute_s": compute})
            rows.append({"job": "llm", "node": node, "time": at(t / 3600), "event": "checkpoint",
                         "step": step})
        rows.append({"job": "llm", "node": node, "time": at(10), "event": "job_end",
                     "status": "completed"})
    return rows


def _fleet(degradations: list[dict] | None = None, verdicts: list[dict] | None = None):
    inventory = frames.make_frame("inventory", [
        {"node": n, "uuid": f"GPU-{n}-{g}", "gpu": str(g), "provisioned_start": T0}
        for n in NODES for g in range(8)
    ])
    rows = [{"node": n, "uuid": "", "start": at(0), "end": at(10), "verdict": "healthy"}
            for n in NODES] + (verdicts or [])
    return frames.Frames(
        inventory=inventory,
        verdicts=frames.make_frame("verdicts", rows),
        allocations=frames.make_frame("allocations", [
            {"job": "llm", "node": n, "uuid": "", "start": at(0), "end": at(10)} for n in NODES
        ]),
        job_events=frames.make_frame("job_events", _events()),
        degradations=frames.make_frame("degradations", degradations or []),
    )


def test_a_slowdown_without_a_degradation_is_training_with_the_slowest_node_named():
    result = compute_week(_fleet(), at(0), at(10), SloSpec())
    assert result.badput_gpu_hours_by_category["slowdown"] == pytest.approx(LOST_H)
    assert result.lost_gpu_hours_by_reason["slowdown"] == pytest.approx(LOST_H)
    doc = result.to_json_dict()["crawl"]
    assert doc["slowdown_gpu_hours"] == pytest.approx(LOST_H, abs=1e-6)
    assert doc["by_layer"]["training"] == pytest.approx(LOST_H, abs=1e-6)
    (row,) = doc["rows"]
    assert (row["job"], row["layer"], row["reason"], row["cause_node"]) == (
        "llm", "training", "slowdown", "")
    assert row["ratio"] == pytest.approx(1.5)
    assert row["slowest_node"] == "n1"
    slowest = doc["slowest_nodes"][0]
    # its worst interval: n0's 9 s against its 14 s; its own best 9.5 s against that 14 s
    assert slowest["node"] == "n1" and slowest["score"] == pytest.approx(9.0 / 14.0)
    assert slowest["individual_score"] == pytest.approx(9.5 / 14.0)
    assert doc["slowest_nodes"][1]["score"] == 1.0
    # productive + slowdown = the job's allocated GPU-time (2 × 8 GPUs × 10 h)
    assert result.productive_gpu_hours + LOST_H == pytest.approx(160)


def test_a_degradation_on_one_of_the_jobs_nodes_during_the_slowdown_is_the_node_layer():
    sw_power = [{"node": "n1", "uuid": "GPU-n1-3", "start": at(4.5), "end": at(6),
                 "reason": "clocks_sw_power_cap"}]
    result = compute_week(_fleet(degradations=sw_power), at(0), at(10), SloSpec())
    doc = result.to_json_dict()
    (row,) = doc["crawl"]["rows"]
    assert (row["layer"], row["reason"], row["cause_node"]) == ("node", "clocks_sw_power_cap",
                                                               "n1")
    assert doc["lost_gpu_hours_by_reason"]["clocks_sw_power_cap"] == pytest.approx(LOST_H, 1e-6)
    assert "slowdown" not in doc["lost_gpu_hours_by_reason"]
    # usable all along: the warn-level degradation costs no capacity, only the crawl
    assert doc["usable_gpu_hours"] == pytest.approx(160)


def test_a_fail_verdict_with_a_degradation_reason_is_a_cause_too_and_one_outside_is_not():
    fail = [{"node": "n0", "uuid": "", "start": at(6.5), "end": at(6.6), "verdict": "unhealthy",
             "reason": "network_devices_missing"}]
    later = [{"node": "n0", "uuid": "", "start": at(8), "end": at(9), "reason":
              "network_port_errors"}]
    result = compute_week(_fleet(degradations=later, verdicts=fail), at(0), at(10), SloSpec())
    rows = result.to_json_dict()["crawl"]["rows"]
    assert [(r["reason"], r["cause_node"]) for r in rows] == [("network_devices_missing", "n0")]


def test_a_stricter_spec_threshold_sees_no_crawl():
    spec = SloSpec(slowdown_threshold=1.6)
    result = compute_week(_fleet(), at(0), at(10), spec)
    assert result.badput_gpu_hours_by_category[names.CATEGORY_SLOWDOWN] == 0
    assert result.to_json_dict()["crawl"]["rows"] == []


def test_a_window_starting_inside_the_slowdown_counts_only_its_part():
    result = compute_week(_fleet(), at(6), at(10), SloSpec())
    assert result.badput_gpu_hours_by_category["slowdown"] == pytest.approx(LOST_H / 2)


def test_the_report_section_names_the_job_the_cause_and_the_slowest_node():
    sw_power = [{"node": "n1", "uuid": "GPU-n1-3", "start": at(4.5), "end": at(6),
                 "reason": "clocks_sw_power_cap"}]
    doc = compute_week(_fleet(degradations=sw_power), at(0), at(10), SloSpec()).to_json_dict()
    text = render_markdown(report_of(doc, None, None))
    section = text[text.index("The crawl"):]
    section = section[: section.index("\n## ", 5)]
    assert "10.7 GPU-hours lost to steps slower" in section
    assert "| llm | node | clocks_sw_power_cap | n1 | 10.7 | 1 | 1.500× | n1 (0.6429) |" in section
    assert "| llm | n1 | 9.500 | 0.6429 | 0.6786 |" in section
