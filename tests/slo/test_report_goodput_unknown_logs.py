"""`report --training-log` over logs whose goodput is unknown (no commit evidence): each still
gives what it shows, its span, crashes, hangs and restarts, and the goodput says which logs it
covers (newcomer6 findings 7 and 8, tests/fixtures/newcomer6: a folder of crashing jobs read
"0 job interruptions", goodput 1.0000 and the job_goodput SLO met over the one log with a save;
a folder whose only log had unknown goodput exited 2 and wrote nothing). The negative: a folder
whose every log proves its commits reads as before, with no coverage note."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from gpuslo.cli import main

LOGS = Path(__file__).resolve().parents[1] / "fixtures" / "newcomer6" / "logs"


def _report(tmp_path: Path, capsys, *names: str) -> tuple[int, dict, str]:
    folder = tmp_path / "logs"
    folder.mkdir()
    for name in names:
        shutil.copy(LOGS / name, folder / name)
    code = main(["report", "--training-log", str(folder), "--gpus", "8", "--out",
                 str(tmp_path / "r"), "--format", "json,md"])
    capsys.readouterr()
    return (code, json.loads((tmp_path / "r" / "report.json").read_text()),
            (tmp_path / "r" / "report.md").read_text())


def test_a_crashing_log_with_unknown_goodput_still_counts_its_interruption(tmp_path, capsys):
    code, doc, md = _report(tmp_path, capsys, "lf8261.log", "lora2.log")
    assert code == 0
    assert doc["interruptions"] == 1  # lf8261's NCCL watchdog timeout, was 0
    assert "0 job interruptions" not in md and "1 job interruptions" in md
    assert doc["data_quality"]["goodput_logs"] == {"known": 1, "logs": 2}
    jobs = {job["job"]: job for job in doc["jobs"]}
    assert jobs["lf8261"]["goodput_ratio"] is None and jobs["lf8261"]["ettr"] is None
    assert jobs["lf8261"]["wall_seconds"] > 0  # its span counts (MTTI's hours)
    # the goodput is lora2's own, and says it covers 1 of the 2 logs
    assert doc["goodput_ratio"] == pytest.approx(jobs["lora2"]["goodput_ratio"])
    assert "goodput covers 1 of 2 training logs" in md.split("## ", 1)[0]
    slo_row = next(line for line in md.splitlines() if line.startswith("| job_goodput |"))
    assert "partial: goodput covers 1 of 2 training logs" in slo_row, slo_row
    assert "lf8261.log" in doc["data_quality"]["cannot_fill"]["goodput_coverage"]


def test_a_folder_whose_only_log_has_unknown_goodput_is_reported_exit_1(tmp_path, capsys):
    code, doc, md = _report(tmp_path, capsys, "nemo118369.log")
    assert code == 1  # unknown, not an input error (2)
    assert doc["interruptions"] == 1  # the 7-hour NCCL hang, reported nowhere before
    assert doc["goodput_ratio"] is None
    assert doc["slos"]["job_goodput"]["compliant"] is None
    assert "no commit evidence" in doc["data_quality"]["cannot_fill"]["job_goodput"]
    head = md.split("## ", 1)[0]
    assert "goodput unknown for every training log read (1)" in head
    assert "productive GPU-hours (training logs): 0.0" not in head


def test_negative_logs_that_prove_their_commits_carry_no_coverage_note(tmp_path, capsys):
    code, doc, md = _report(tmp_path, capsys, "lora2.log")
    assert code == 0
    assert doc["data_quality"]["goodput_logs"] == {"known": 1, "logs": 1}
    assert "goodput_coverage" not in doc["data_quality"]["cannot_fill"]
    assert "covers" not in md and "partial" not in md
