"""The demo's printed summary says `—` for a figure the data cannot give: the StepFun trace has
no jobs, and its line read `productive 0.0 GPU-h`, a measured zero."""

from __future__ import annotations

import json
from pathlib import Path

from gpuslo.cli import main
from gpuslo.demo.prometheus import ScrapeResult
from gpuslo.demo.run import DEMO, print_summary

JOB = {"job": "demo-pretrain", "restart_step": 40, "goodput_ratio": 0.667, "productive_s": 2400,
       "wasted_progress_s": 300, "recovery_s": 600}


def test_the_stepfun_line_says_dash_for_productive(tmp_path: Path, capsys) -> None:
    out = tmp_path / "stepfun"
    assert main(["report", "--trace", str(DEMO / "stepfun" / "fault_trace.json"),
                 "--trace-format", "stepfun", "--out", str(out), "--format", "json"]) == 0
    report = json.loads((out / "report.json").read_text())
    capsys.readouterr()
    print_summary(tmp_path, {}, ScrapeResult("skipped"), {"StepFun trace": report}, JOB)
    (line,) = [x for x in capsys.readouterr().out.splitlines() if "provisioned" in x]
    assert "productive —, goodput — (no jobs in this data)" in line, line
    assert "productive 0.0" not in line


def test_newcomer8_f9_the_goodput_headline_parts_add_up(tmp_path: Path, capsys) -> None:
    """newcomer8 F9: "goodput 0.667 (2,400 s productive, 300 s wasted progress, 600 s
    recovery)" left out 300 s of initialization and checkpoints; the demo's own job now names
    every part of the 3,600 s allocated."""
    from gpuslo.demo.job import record_job

    job = record_job(tmp_path, now=1_700_000_000.0)
    capsys.readouterr()
    print_summary(tmp_path, {}, ScrapeResult("skipped"), {}, job)
    (line,) = [x for x in capsys.readouterr().out.splitlines() if "goodput 0.667" in x]
    assert "of 3,600 s allocated" in line, line
    assert job["productive_s"] + sum(job["badput_s"].values()) == job["allocated_s"] == 3600
    for part in ("2,400 s productive", "300 s wasted progress", "600 s recovery",
                 "120 s initialization", "120 s checkpoint save", "60 s checkpoint restore"):
        assert part in line, line


def test_a_summary_without_its_parts_keeps_the_three(tmp_path: Path, capsys) -> None:  # negative
    print_summary(tmp_path, {}, ScrapeResult("skipped"), {}, JOB)
    (line,) = [x for x in capsys.readouterr().out.splitlines() if "goodput 0.667" in x]
    assert "(2,400 s productive, 300 s wasted progress, 600 s recovery)" in line
