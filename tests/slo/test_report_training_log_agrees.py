"""`gpuslo report --training-log` and `gpuslo goodput` on the same log give the same goodput and
the same interruption count: one model (newcomer #2, finding 1: a one-hour hang ended by a
Slurm time limit, and a log cut after its last checkpoint, read as goodput 1.0000 with 0
interruptions by the report while `goodput` said 0.0499 and 0.4938)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd
import pytest

from gpuslo.goodput.logs import analyse_log, load_profiles
from gpuslo.slo import attribution, frames
from gpuslo.slo.engine import compute_week
from gpuslo.slo.sources.training_logs import load_training_logs
from gpuslo.slo_spec import SloSpec

REPO = Path(__file__).resolve().parents[2]
CASES = REPO / "tests" / "data" / "training_logs" / "dev" / "cases"
LOGS = [
    REPO / "tests" / "goodput" / "data" / "hang_then_cancel.log",
    REPO / "tests" / "goodput" / "data" / "uncommitted_tail.log",
    REPO / "tests" / "goodput" / "data" / "torchtitan_crash_restart.log",
    *sorted(CASES.glob("B0[1-3]_*.log")),
    *sorted(CASES.glob("B24_*.log")),
    *sorted(CASES.glob("A15_*.log")),
]


@pytest.mark.parametrize("log", LOGS, ids=lambda p: p.name[:40])
def test_report_and_goodput_agree_on_one_log(log: Path) -> None:
    doc = analyse_log(log, load_profiles(), gpus=8).document
    if doc["status"] != "ok":
        pytest.skip(f"goodput {doc['status']}: the report lists it, adds nothing")
    result = compute_week(load_training_logs([str(log)], 8), None, None, SloSpec())
    assert result.goodput_ratio == pytest.approx(doc["goodput"]["goodput"], abs=2e-6)
    assert len(result.interruptions) == sum(doc["goodput"]["interruptions"].values())


def test_the_hang_and_the_tail_are_in_the_reports_denominator() -> None:
    hang = REPO / "tests" / "goodput" / "data" / "hang_then_cancel.log"
    result = compute_week(load_training_logs([str(hang)], 8), None, None, SloSpec())
    assert result.goodput_ratio == pytest.approx(1600 / (1600 + 28800 + 1640), abs=1e-6)
    assert len(result.interruptions) == 1
    assert result.job_gpu_hours == pytest.approx((1600 + 28800 + 1640) / 3600, abs=1e-6)


def _dated(text: str, day: str) -> str:
    return text.replace("2026-11-01", day)


def test_each_job_is_timed_by_its_own_log_in_a_directory(tmp_path: Path) -> None:
    """newcomer4 finding 6: logs a year apart in one `--training-log DIR` gave each job the whole
    window as its wall time (ETTR 0.0000 where `goodput` said 0.73) and "Jobs most hit" held
    0.0 GPU-hours while losing 0.2. Each job's wall time is its own span now, its ETTR and
    figures those of `gpuslo goodput` on the same log, and what it held is its GPU-time."""
    source = (REPO / "tests" / "fixtures" / "newcomer12" / "hf_crash_restart.log").read_text()
    (tmp_path / "early.log").write_text(_dated(source, "2025-03-01"))  # a year and more apart
    (tmp_path / "late.log").write_text(source)
    result = compute_week(load_training_logs([str(tmp_path)], 8), None, None, SloSpec())
    assert (result.end - result.start).days > 365  # the report's window spans both
    held = result.jobs_hit.set_index("job")
    for name in ("early", "late"):
        g = analyse_log(tmp_path / f"{name}.log", load_profiles(), gpus=8).document["goodput"]
        job = result.jobs.loc[name]
        assert job["wall_seconds"] == pytest.approx(g["accounted_gpu_s"] / 8, abs=1e-3)
        assert job["wall_seconds"] < 3600  # was the whole window: 3.9e7 s
        assert job["allocated_gpu_seconds"] == pytest.approx(g["accounted_gpu_s"], abs=1e-2)
        assert job["productive"] == pytest.approx(g["gpu_seconds"]["productive"], abs=1e-2)
        assert job["ettr"] == pytest.approx(g["goodput"], abs=2e-6)  # wall × GPUs = accounted
        assert held.loc[name, "held_gpu_hours"] == pytest.approx(g["accounted_gpu_s"] / 3600,
                                                                  abs=1e-4)
        assert held.loc[name, "held_gpu_hours"] >= held.loc[name, "lost_gpu_hours"] > 0


def test_a_journal_job_still_running_holds_its_gpus_to_the_window_end() -> None:
    """Negative: Recorder journals may still be running, so a job with no `job_end` is timed to
    the window's end there (`job_summary` without `ends_at_last_event`)."""
    t0 = pd.Timestamp("2026-11-23", tz="UTC")
    rows = [{"event": "job_start", "time": t0, "gpus": 1},
            {"event": "steps", "time": t0 + pd.Timedelta(seconds=600), "step": 10},
            {"event": "checkpoint", "time": t0 + pd.Timedelta(seconds=600), "step": 10}]
    events = frames.make_frame("job_events", [{"job": "j", "node": "n", **r} for r in rows])
    end = t0 + pd.Timedelta(seconds=3600)
    per_node = attribution.job_goodput(events, t0, end)
    running = attribution.job_summary(per_node, events, t0, end)
    finished = attribution.job_summary(per_node, events, t0, end, ends_at_last_event=True)
    assert running.loc["j", "wall_seconds"] == 3600
    assert finished.loc["j", "wall_seconds"] == 600
