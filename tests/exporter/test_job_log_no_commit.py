"""A job whose log shows progress but no commit evidence is not hidden by `exporter --job-log`:
its progress (`gpuslo_job_last_step`, `gpuslo_job_last_progress_timestamp_seconds`), its
interruptions and `gpuslo_job_goodput_unknown{reason}` are published; its goodput is not
(no `gpuslo_job_gpu_seconds_total`, no committed `gpuslo_job_step`: never a made-up 0.0).
Found by newcomer12 (tests/fixtures/newcomer12/README.md): hf_nockpt.log as slurm-1.out gave
no series at all, so a stall of that job could never page."""

from __future__ import annotations

from pathlib import Path

from conftest import REPO
from prometheus_client.parser import text_string_to_metric_families

from gpuslo.exporter.jobs.log_reading import goodput_unknown_reason
from gpuslo.exporter.jobs.logs import JobLogTailer
from gpuslo.exporter.server import Exporter
from gpuslo.exporter.snapshot import NodeSnapshot

FIXTURES = REPO / "tests" / "fixtures" / "newcomer12"


def exposed(tmp_path: Path, **logs: str) -> dict[tuple[str, tuple], float]:
    """The job series of an exporter following `logs` ({file name in the folder: fixture})."""
    folder = tmp_path / "joblog"
    folder.mkdir()
    for name, fixture in logs.items():
        (folder / name).write_bytes((FIXTURES / fixture).read_bytes())
    tailer = JobLogTailer([str(folder / "*")], tmp_path / "state", default_gpus=8, settle_s=0)
    exporter = Exporter(lambda: NodeSnapshot("n1"), None, job_logs=tailer,
                        job_hold_s=float("inf"))
    exporter.poll_journals()
    text = exporter.exposition().decode()
    return {(s.name, tuple(sorted(s.labels.items()))): s.value
            for f in text_string_to_metric_families(text) for s in f.samples
            if s.name.startswith("gpuslo_job")}


def names_of(series: dict, job: str) -> set[str]:
    return {name for name, labels in series if ("job", job) in labels}


def test_a_log_without_commit_evidence_still_shows_its_progress(tmp_path):
    series = exposed(tmp_path, **{"slurm-1.out": "hf_nockpt.log"})
    assert series[("gpuslo_job_goodput_unknown",
                   (("job", "slurm-1"), ("reason", "no_commit_evidence")))] == 1.0
    assert series[("gpuslo_job_last_step", (("job", "slurm-1"),))] > 0
    assert series[("gpuslo_job_last_progress_timestamp_seconds", (("job", "slurm-1"),))] > 0
    assert "gpuslo_job_interruptions_total" in names_of(series, "slurm-1")
    assert not names_of(series, "slurm-1") & {"gpuslo_job_gpu_seconds_total", "gpuslo_job_step"}


def test_a_log_with_commits_has_its_goodput_and_no_unknown(tmp_path):
    """The negative: a log that proves its commits is published as before."""
    series = exposed(tmp_path, **{"slurm-8.out": "hf_crash_restart.log"})
    found = names_of(series, "slurm-8")
    assert {"gpuslo_job_gpu_seconds_total", "gpuslo_job_step", "gpuslo_job_last_step"} <= found
    assert "gpuslo_job_goodput_unknown" not in found


def test_the_reason_is_a_bounded_word():
    unknown = {"status": "unknown", "goodput": {"reason": "no commit evidence: no checkpoint"}}
    assert goodput_unknown_reason(unknown) == "no_commit_evidence"
    assert goodput_unknown_reason({"status": "unknown", "goodput": {"reason": "no clock: the "
                                   "log gives no time for its steps"}}) == "no_clock"
    assert goodput_unknown_reason({"status": "unknown", "goodput": {"reason": "new"}}) == "other"
    assert goodput_unknown_reason({"status": "ok", "goodput": {"reason": "x"}}) == ""
    assert goodput_unknown_reason({"status": "unknown", "goodput": None}) == ""  # no progress
