"""Progress after a training log's last commit is its own category of the report's allocated
GPU-hours (`names.CATEGORY_UNCOMMITTED`): allocated = productive + every badput category +
uncommitted, per job, for the fleet, in the waterfall and in the JSON twin; and it is the figure
`gpuslo goodput` gives (`uncommitted_gpu_s`). Before, the job table counted it and the waterfall
did not (uncommitted_tail.log: 0.9 allocated GPU-hours in the job row, 0.4 in the waterfall, whose
"productive share of allocated" read 1.0000 beside a goodput of 0.4938).

Real logs: the H200 Lightning run that crashed and resumed, a nanoGPT log and a
LLaMA2-Accessory log that go on after their last save (../shared/training_logs); the negative:
two logs whose last progress is saved (DeepSpeed's save before its exit, nnU-Net's per-epoch
checkpoint) have uncommitted 0.
"""

from __future__ import annotations

import json
from pathlib import Path
from types import SimpleNamespace

import pandas as pd
import pytest

from gpuslo import names
from gpuslo.cli import main
from gpuslo.goodput.logs import analyse_log, load_profiles
from gpuslo.slo.attribution import fleet_job_split, journal_split
from gpuslo.slo.engine import compute_week
from gpuslo.slo.sources.training_logs import load_training_logs
from gpuslo.slo_spec import SloSpec

REPO = Path(__file__).resolve().parents[2]
SHARED = REPO.parent / "shared" / "training_logs"
CASES = SHARED / "cases"
AT_RISK = [
    SHARED / "h200" / "lightning-tqdm-crash-resume-h200.log",
    *sorted(CASES.glob("T08_*.log")),
    *sorted(CASES.glob("T15_*.log")),
    REPO / "tests" / "goodput" / "data" / "uncommitted_tail.log",
]
COMMITTED = [*sorted(CASES.glob("T03_*.log")), *sorted(CASES.glob("T17_*.log"))]
TICK_H = 2e-6  # JSON figures are rounded to 6 decimals; a category is floored to a tick


def _week(log: Path) -> dict:
    return compute_week(load_training_logs([str(log)], 8), None, None,
                        SloSpec()).to_json_dict()


def _goodput(log: Path) -> dict:
    return analyse_log(log, load_profiles(), gpus=8).document["goodput"]


def _sums(doc: dict) -> None:
    """Per job and for the fleet, the categories (uncommitted included) sum to allocated."""
    for job in doc["jobs"]:
        parts = sum(job[c] for c in names.JOB_CATEGORIES) + job[names.CATEGORY_UNCOMMITTED]
        assert job["allocated_gpu_seconds"] == pytest.approx(parts, abs=1e-5)
    parts = (doc["productive_gpu_hours"] + sum(doc["badput_gpu_hours_by_category"].values())
             + doc["uncommitted_gpu_hours"])
    assert doc["allocated_gpu_hours"] == pytest.approx(parts, abs=TICK_H)
    assert doc["allocated_gpu_hours"] == pytest.approx(doc["job_gpu_hours"], abs=20 * TICK_H)


def test_the_logs_are_what_this_test_says() -> None:
    assert len(AT_RISK) == 4 and len(COMMITTED) == 2


@pytest.mark.parametrize("log", AT_RISK, ids=lambda p: p.name[:30])
def test_uncommitted_progress_is_a_category_of_allocated(log: Path) -> None:
    doc, said = _week(log), _goodput(log)
    assert said["uncommitted_gpu_s"] > 0
    assert doc["uncommitted_gpu_hours"] == pytest.approx(said["uncommitted_gpu_s"] / 3600,
                                                         abs=TICK_H)
    _sums(doc)


@pytest.mark.parametrize("log", COMMITTED, ids=lambda p: p.name[:30])
def test_a_log_whose_last_progress_is_saved_has_none(log: Path) -> None:
    doc, said = _week(log), _goodput(log)
    assert said["uncommitted_gpu_s"] == 0.0
    assert doc["uncommitted_gpu_hours"] == 0.0
    assert all(job[names.CATEGORY_UNCOMMITTED] == 0.0 for job in doc["jobs"])
    _sums(doc)


def test_the_waterfall_has_its_own_bar(tmp_path: Path) -> None:
    """uncommitted_tail.log: 20 s steps at 8 GPUs, saved at step 100 (10:03:20), last step 200
    at 10:06:45: 205 s x 8 = 1640 GPU-s at risk; productive 1600 GPU-s (10:00:00 to the save)."""
    log = REPO / "tests" / "goodput" / "data" / "uncommitted_tail.log"
    assert main(["report", "--training-log", str(log), "--gpus", "8", "--out", str(tmp_path),
                 "--format", "md,html,json"]) == 0
    doc = json.loads((tmp_path / "report.json").read_text())
    fig = doc["report"]["figures"]
    assert fig["uncommitted"] == pytest.approx(1640 / 3600, abs=TICK_H)
    assert fig["allocated"] == pytest.approx((1600 + 1640) / 3600, abs=TICK_H)
    assert fig["productive_share_of_allocated"] == pytest.approx(1600 / 3240, abs=1e-5)
    md = (tmp_path / "report.md").read_text()
    assert f"| − {names.UNCOMMITTED_LABEL} | 0.5 | 0.5062 |" in md
    assert "| allocated | 0.9 | 1.0000 |" in md and "| = productive | 0.4 | 0.4938 |" in md
    assert 'id="uncommitted-step"' in (tmp_path / "report.html").read_text()


def test_journals_book_none_so_their_waterfall_shows_none(tmp_path: Path) -> None:
    """Negative: the journals' basis keeps to the counters (progress booked once settled), so
    its figures carry no uncommitted bar and the capacity table no uncommitted row."""
    from conftest import simulate_demo_week

    simulate_demo_week(tmp_path / "sim")
    assert main(["report", "--data", str(tmp_path / "sim"), "--week", "2026-W48",
                 "--out", str(tmp_path / "r"), "--format", "md,json"]) == 0
    doc = json.loads((tmp_path / "r" / "report.json").read_text())
    assert doc["uncommitted_gpu_hours"] == 0.0 and doc["report"]["figures"]["uncommitted"] is None
    assert names.CATEGORY_UNCOMMITTED not in doc["categories_gpu_hours"]
    assert names.UNCOMMITTED_LABEL not in (tmp_path / "r" / "report.md").read_text()


def test_the_capacity_split_takes_uncommitted_before_the_remainder() -> None:
    """One job holds 100 ticks; its journal says productive 40, checkpoint_save 10 and 30 not
    yet committed: other is the 20 left; a job asking more than it holds is capped."""
    t0 = pd.Timestamp("2026-11-30", tz="UTC").as_unit("ns")
    ends = pd.Series([t0 + pd.Timedelta(seconds=s) for s in (100, 50, 7)]).dt.as_unit("ns")
    acc = SimpleNamespace(tick_ns=10**9, segments=pd.DataFrame({
        "job": ["a", "b", ""], "start": pd.Series([t0] * 3).dt.as_unit("ns"), "end": ends}))
    jobs = pd.DataFrame({c: [0.0, 0.0] for c in names.JOB_CATEGORIES}, index=["a", "b"])
    jobs.loc["a", [names.CATEGORY_PRODUCTIVE, "checkpoint_save"]] = [40.0, 10.0]
    jobs.loc["b", names.CATEGORY_PRODUCTIVE] = 45.0
    jobs[names.CATEGORY_UNCOMMITTED] = [30.0, 30.0]
    split = fleet_job_split(acc, jobs)
    assert split.job_ticks.loc["a", [names.CATEGORY_PRODUCTIVE, "checkpoint_save",
                                     names.CATEGORY_UNCOMMITTED, "other"]].tolist() == [40, 10,
                                                                                        30, 20]
    assert split.job_ticks.loc["b", [names.CATEGORY_PRODUCTIVE, names.CATEGORY_UNCOMMITTED,
                                     "other"]].tolist() == [45, 5, 0]
    assert split.job_ticks.sum(axis=1).tolist() == [100, 50]
    assert journal_split(jobs, 10**9).fleet_ticks[names.CATEGORY_UNCOMMITTED] == 60
