"""`gpuslo report --training-log` and `gpuslo goodput` on the same log give the same goodput and
the same interruption count: one model (newcomer #2, finding 1: a one-hour hang ended by a
Slurm time limit, and a log cut after its last checkpoint, read as goodput 1.0000 with 0
interruptions by the report while `goodput` said 0.0499 and 0.4938)."""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuslo.goodput.logs import analyse_log, load_profiles
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
