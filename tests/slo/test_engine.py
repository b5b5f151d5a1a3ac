"""compute_week end to end: JSON keys, reliability figures, journals as a source, windows."""

from __future__ import annotations

import json

import pandas as pd
import pytest

from gpuslo.errors import InputError
from gpuslo.goodput import Recorder
from gpuslo.slo import frames
from gpuslo.slo.engine import compute_week
from gpuslo.slo.sources.journals import load_journals
from gpuslo.slo_spec import SloSpec

T0 = pd.Timestamp("2026-11-23", tz="UTC")
ISSUE_KEYS = {
    "start",
    "end",
    "provisioned_gpu_hours",
    "usable_gpu_hours",
    "usable_ratio",
    "productive_gpu_hours",
    "goodput_ratio",
    "lost_gpu_hours_by_layer",
    "lost_gpu_hours_by_reason",
    "interruptions_per_1000_gpu_days",
    "slos",
    "data_quality",
}


def at(hours: float) -> pd.Timestamp:
    return T0 + pd.Timedelta(hours=hours)


def faulty_fleet() -> frames.Frames:
    """2 nodes × 1 GPU over a 168 h week, healthy except:
    n0: ecc_uncorrectable 10–12 h, 20–21 h and 30–33 h (3 faults → a lemon node), and
        xid_fatal from 160 h, still open at the end;
    n1: nvlink_down 50–54 h; drained 100–102 h (platform, not a node fault)."""
    inv = frames.make_frame(
        "inventory",
        [
            {"node": n, "uuid": f"GPU-{n}", "gpu": "0", "provisioned_start": T0}
            for n in ("n0", "n1")
        ],
    )
    bad = [
        ("n0", 10, 12, "ecc_uncorrectable"),
        ("n0", 20, 21, "ecc_uncorrectable"),
        ("n0", 30, 33, "ecc_uncorrectable"),
        ("n0", 160, 168, "xid_fatal"),
        ("n1", 50, 54, "nvlink_down"),
    ]
    rows = [
        {"node": n, "uuid": "", "start": at(0), "end": at(168), "verdict": "healthy"}
        for n in ("n0", "n1")
    ]
    rows += [
        {
            "node": n,
            "uuid": f"GPU-{n}",
            "start": at(a),
            "end": at(b),
            "verdict": "unhealthy",
            "reason": r,
        }
        for n, a, b, r in bad
    ]
    sched = frames.make_frame(
        "schedulability", [{"node": "n1", "start": at(100), "end": at(102), "state": "drained"}]
    )
    return frames.Frames(
        inventory=inv, verdicts=frames.make_frame("verdicts", rows), schedulability=sched
    )


def test_reliability_figures_of_a_hand_made_week():
    result = compute_week(faulty_fleet(), at(0), at(168), SloSpec(period_days=28))
    assert result.provisioned_gpu_hours == 2 * 168
    assert result.lost_gpu_hours_by_reason == {
        "ecc_uncorrectable": 2 + 1 + 3,
        "xid_fatal": 8,
        "nvlink_down": 4,
        "drained": 2,
    }
    assert result.lost_gpu_hours_by_layer == {
        "node": 6 + 8 + 4,
        "platform": 2,
        "training": 0,
        "observability": 0,
    }
    rel = result.reliability
    assert rel.loc["ecc_uncorrectable", "mtbf_gpu_hours"] == 336 / 3
    assert rel.loc["ecc_uncorrectable", "mttr_hours"] == (2 + 1 + 3) / 3
    assert rel.loc["xid_fatal", "open"] == 1 and pd.isna(rel.loc["xid_fatal", "mttr_hours"])
    assert list(result.lemon_nodes["node"]) == ["n0"]
    assert result.lemon_nodes.loc[0, "faults"] == 4
    # no jobs: interruptions per 1000 GPU-days count GPU-faults over provisioned GPU-days
    assert result.interruption_basis == "faults"
    assert result.interruptions_per_1000_gpu_days == pytest.approx(
        5 / (336 / 24) * 1000
    )  # 3 + 1 + 1
    usable = 336 - 20
    slo = result.slos["usable_gpu"]
    assert slo.sli == pytest.approx(usable / 336)
    assert slo.error_budget_remaining == pytest.approx(1 - (20 / 336) / 0.02 * 7 / 28)
    assert result.usable_gpu_hours == usable


def test_json_twin_has_the_issue_keys_and_is_deterministic():
    result = compute_week(faulty_fleet(), None, None, SloSpec())
    data = result.to_json_dict()
    assert set(data) >= ISSUE_KEYS
    assert set(data["lost_gpu_hours_by_layer"]) == {"node", "platform", "training", "observability"}
    assert set(data["slos"]["usable_gpu"]) >= {"objective", "sli", "error_budget_remaining"}
    assert data["start"] == "2026-11-23T00:00:00Z" and data["end"] == "2026-11-30T00:00:00Z"
    text = json.dumps(data, sort_keys=True)
    assert text == json.dumps(
        compute_week(faulty_fleet(), None, None, SloSpec()).to_json_dict(), sort_keys=True
    )
    assert "NaN" not in text


def test_no_time_span_is_an_input_error():
    with pytest.raises(InputError, match="no timestamps"):
        compute_week(frames.Frames(), None, None, SloSpec())
    with pytest.raises(InputError, match="not after start"):
        compute_week(faulty_fleet(), at(5), at(5), SloSpec())


def test_journals_as_a_source(tmp_path):
    # One job on node n0, 8 GPUs, the issue's worked example written by the real Recorder.
    now = [T0.timestamp()]
    recorder = Recorder(tmp_path / "n0", "llm-7b", node="n0", clock=lambda: now[0])
    recorder.job_start(8)
    for step in range(1, 101):
        now[0] += 60
        recorder.step(step)
        if step == 80:
            recorder.checkpoint(80)
    recorder.job_end("failed")
    now[0] += 600
    recorder = Recorder(tmp_path / "n0", "llm-7b", node="n0", clock=lambda: now[0])
    recorder.restart(80)
    for step in range(81, 91):
        now[0] += 60
        recorder.step(step)
    recorder.job_end("completed")
    (tmp_path / "n0" / "broken.jsonl").write_text('{"v": 1, "t": 1, "event": "job_start"}\n')
    loaded = load_journals(tmp_path)
    assert "journal_problems" in loaded.cannot_fill
    inv = frames.make_frame(
        "inventory", [{"node": "n0", "uuid": f"GPU-{g}", "provisioned_start": T0} for g in range(8)]
    )
    verdicts = frames.make_frame(
        "verdicts", [{"node": "n0", "start": T0, "end": at(24), "verdict": "healthy"}]
    )
    fleet = frames.Frames(
        inventory=inv,
        verdicts=verdicts,
        allocations=loaded.allocations,
        job_events=loaded.job_events,
    )
    result = compute_week(fleet, T0, at(24), SloSpec())
    assert result.badput_gpu_hours_by_category["wasted_progress"] == pytest.approx(8 * 1200 / 3600)
    # the recovery gap (600 s) is not allocated in the journals' runs, so the fleet split has
    # none of it; the job's own goodput keeps it
    assert result.jobs.loc["llm-7b", "recovery"] == 8 * 600
    assert result.productive_gpu_hours == pytest.approx(8 * (80 + 10) * 60 / 3600)
    assert result.allocated_gpu_hours == pytest.approx(8 * (6000 + 600) / 3600)
