"""`report --journals`: a job whose journals hold no commit evidence (no checkpoint, no restart
from a step) has unknown goodput and ETTR, named in the goodput section, never 1.0 or 0.0
(newcomer12 F1; the tester's journals in tests/goodput/data/journals_nc12: a failed and a
running job without a checkpoint read goodput 0.0/ETTR 0.0000, a completed one goodput 1.0), as
`gpuslo goodput` says of a log with none. Its GPU-time stays allocated. The negative: a failed
job with a checkpoint keeps its figure, 4000 productive of 8080 held (0.4950), as its log."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from gpuslo.cli import main

JOURNALS = Path(__file__).resolve().parents[1] / "goodput" / "data" / "journals_nc12"


def _report(tmp_path: Path, *names: str) -> tuple[dict, str]:
    src = tmp_path / "journals"
    src.mkdir()
    for name in names:
        shutil.copy(JOURNALS / name, src / name)
    assert main(["report", "--journals", str(src), "--out", str(tmp_path / "r"),
                 "--format", "md,json"]) == 0
    return (json.loads((tmp_path / "r" / "report.json").read_text()),
            (tmp_path / "r" / "report.md").read_text())


def test_jobs_without_commit_evidence_have_unknown_goodput(tmp_path):
    doc, md = _report(tmp_path, "failed.jsonl", "running.jsonl", "no_ckpt.jsonl")
    jobs = {j["job"]: j for j in doc["jobs"]}
    for name in ("failed", "running", "no_ckpt"):
        assert jobs[name]["committed"] is False
        assert jobs[name]["goodput_ratio"] is None and jobs[name]["ettr"] is None, name
    assert jobs["failed"]["allocated_gpu_seconds"] == pytest.approx(8080.0)
    assert "| failed | 8 | 2.2 | — | — |" in md
    assert "3 job(s) (failed, no_ckpt, running) show no commit evidence" in md


def test_negative_a_failed_job_with_a_checkpoint_keeps_its_goodput(tmp_path):
    doc, md = _report(tmp_path, "failed_mid.jsonl")
    (job,) = doc["jobs"]
    assert job["committed"] is True
    assert job["allocated_gpu_seconds"] == pytest.approx(8080.0)
    assert job["wasted_progress"] == pytest.approx(4080.0)
    assert job["goodput_ratio"] == pytest.approx(4000 / 8080)
    assert "no commit evidence" not in md


def test_a_source_without_allocations_lists_no_journal_as_without_one(tmp_path):
    """newcomer12 F4: `report --training-log` listed every log's job under
    journals_without_allocation; a source with no allocation data has none to miss. (The
    negative, a simulated week with allocations listing job-0000, is the golden report.)"""
    log = Path(__file__).resolve().parents[1] / "goodput" / "data" / "uncommitted_tail.log"
    assert main(["report", "--training-log", str(log), "--gpus", "8", "--out",
                 str(tmp_path / "r"), "--format", "json"]) == 0
    doc = json.loads((tmp_path / "r" / "report.json").read_text())
    assert doc["jobs"] and doc["data_quality"]["journals_without_allocation"] == []
    doc, _ = _report(tmp_path, "failed_mid.jsonl")
    assert doc["data_quality"]["journals_without_allocation"] == []
