"""Time in the report (issue 27, item 3): a log without dates has no calendar window (never
1970-01-01); a report is "weekly" only over about a week and is named by its window's length
otherwise; without capacity data the availability line says why instead of printing
"against the objective 0.9800: — the objective"."""

from __future__ import annotations

import json
import re

import pandas as pd
import pytest
from conftest import DATASETS, REPO, SHARED

from gpuslo.cli import main
from gpuslo.slo.report.model import window_name

# Keras 2.1 `verbose=2` epochs (` - 498s - loss: …`) and a ModelCheckpoint save, no clock or date
# on any line (first-contact fresh C28).
UNDATED = (REPO / "tests" / "data" / "training_logs" / "fresh" / "cases"
           / "C28_keras21-verbose2-epoch-lines-quoted-did-not-improve-then-save-epoch49.log")
# Megatron-LLM iterations with their time per iteration, no date, and no save or load line.
NO_COMMIT = SHARED / "training_logs" / "cases" / "T07_megatron-llm-steady-state-127s-iterations.log"


@pytest.fixture(scope="module")
def undated(tmp_path_factory) -> dict:
    """The report of a training log whose lines carry no date or clock: its epochs' own times
    add up to 5978 s (1.66 h), counted from the log's first line."""
    out = tmp_path_factory.mktemp("undated")
    assert not re.search(r"(19|20)\d\d[-/]|\d:\d\d", UNDATED.read_text())
    assert main(["report", "--training-log", str(UNDATED), "--gpus", "8", "--out", str(out)]) == 0
    return {name: (out / name).read_text() for name in ("report.md", "report.html",
                                                         "report.json")}


def test_a_log_without_dates_has_no_calendar_window(undated, capsys, tmp_path):
    for name, text in undated.items():
        assert "1970" not in text, name
    assert main(["report", "--training-log", str(UNDATED), "--gpus", "8", "--out",
                 str(tmp_path)]) == 0
    printed = capsys.readouterr().out
    assert "1970" not in printed and "undated" in printed.split("\n")[0]
    doc = json.loads(undated["report.json"])
    assert doc["start"] is None and doc["end"] is None
    assert doc["window"] == {
        "dated": False,
        "hours": pytest.approx(5978 / 3600, abs=1e-6),
        "why": "the training logs carry no dates: their times count from the first line",
    }
    title = undated["report.md"].split("\n")[2]
    assert title == "# GPU fleet report over 1.7 hours, undated (relative to the log's start)"


def test_a_log_whose_goodput_is_unknown_adds_no_made_up_figures(tmp_path, capsys):
    # T07 proves no commit: its goodput would be a held 0.0 and ETTR 0.0. Alone, the report is
    # written with goodput unknown and the reason (exit 1, as `gpuslo goodput` exits for it:
    # newcomer6 finding 8 had exit 2 and no report); beside a log that proves its commits it is
    # a job of the report (its span counts) with no goodput, and the goodput covers 1 of 2 logs
    assert main(["report", "--training-log", str(NO_COMMIT), "--gpus", "8", "--out",
                 str(tmp_path / "alone"), "--format", "json,md"]) == 1
    out = capsys.readouterr().out
    assert "goodput unknown for every training log read (1)" in out
    doc = json.loads((tmp_path / "alone" / "report.json").read_text())
    assert doc["goodput_ratio"] is None and doc["data_quality"]["goodput_logs"] == {
        "known": 0, "logs": 1}
    assert "no commit evidence" in doc["data_quality"]["cannot_fill"]["job_goodput"]
    assert [job["goodput_ratio"] for job in doc["jobs"]] == [None]
    assert main(["report", "--training-log", str(NO_COMMIT), "--training-log", str(UNDATED),
                 "--gpus", "8", "--out", str(tmp_path / "both"), "--format", "json"]) == 0
    doc = json.loads((tmp_path / "both" / "report.json").read_text())
    jobs = {job["job"]: job for job in doc["jobs"]}
    assert jobs[NO_COMMIT.stem]["goodput_ratio"] is None and jobs[NO_COMMIT.stem]["ettr"] is None
    assert jobs[UNDATED.stem]["goodput_ratio"] is not None
    assert doc["data_quality"]["goodput_logs"] == {"known": 1, "logs": 2}
    coverage = doc["data_quality"]["cannot_fill"]["goodput_coverage"]
    assert "goodput covers 1 of 2 training logs" in coverage and "T07" in coverage
    # the fleet's goodput is the known log's own: T07's held time is not in it
    assert doc["goodput_ratio"] == pytest.approx(jobs[UNDATED.stem]["goodput_ratio"])


def test_without_capacity_data_availability_says_why_not_a_dash(undated):
    md = undated["report.md"]
    assert "against the objective 0.9800: —" not in md and "— the objective" not in md
    section = md.split("## Availability", 1)[1].split("## ", 1)[0]
    assert "Not available: training logs carry no GPU inventory or verdicts." in section


@pytest.mark.parametrize("start, end, name", [
    ("2026-11-23", "2026-11-30", "weekly report"),
    ("2026-11-23", "2026-11-30T12:00", "weekly report"),
    ("2026-11-23", "2026-11-24", "daily report"),
    ("2026-11-23", "2026-11-25", "report over 2 days"),
    ("2024-03-30", "2025-03-14", "report over 349 days"),
    ("2026-11-23", "2026-11-23T06:00", "report over 6.0 hours"),
    ("2026-11-01", "2026-12-01", "report over 30 days"),
])
def test_the_report_is_named_by_its_window(start, end, name):
    doc = {"start": pd.Timestamp(start, tz="UTC").isoformat(),
           "end": pd.Timestamp(end, tz="UTC").isoformat(), "window": {"dated": True}}
    assert window_name(doc) == name


def test_the_stepfun_year_is_not_a_weekly_report(tmp_path, capsys):
    stepfun = DATASETS / "stepfun_infinitehbd" / "fault_trace.json"
    assert main(["report", "--trace", str(stepfun), "--trace-format", "stepfun", "--out",
                 str(tmp_path), "--format", "md"]) == 0
    title = (tmp_path / "report.md").read_text().split("\n")[2]
    assert title == ("# GPU fleet report over 349 days 2024-03-30T00:00:00Z to "
                     "2025-03-14T00:00:00Z")
    assert "weekly" not in capsys.readouterr().out.lower()
