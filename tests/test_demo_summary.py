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
