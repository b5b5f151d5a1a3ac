"""Job families: a finished job keeps its counters but cannot stall."""

from gpuslo.exporter.collector import build_families
from gpuslo.exporter.jobs.journals import JournalTailer
from gpuslo.goodput import journal
from gpuslo.goodput.calculator import JobGoodput


def _series(families, name):
    return [s for f in families for s in f.samples if s.name == name]


def test_only_a_running_job_exposes_its_last_progress():
    running = JobGoodput(job="a", status="running", last_progress_t=1000.0, committed_step=10)
    finished = JobGoodput(job="b", status="completed", last_progress_t=900.0, committed_step=20)
    families = build_families(None, [("a", running), ("b", finished)], now=2000.0)
    progress = _series(families, "gpuslo_job_last_progress_timestamp_seconds")
    assert [s.labels["job"] for s in progress] == ["a"]
    assert {s.labels["job"] for s in _series(families, "gpuslo_job_gpu_seconds_total")} == {
        "a",
        "b",
    }


def test_a_running_job_exposes_its_compute_time_per_step_and_its_slowdown_counter():
    running = JobGoodput(job="a", status="running", compute_s=0.42)
    running.gpu_seconds["slowdown"] = 80.0
    finished = JobGoodput(job="b", status="completed", compute_s=0.5)
    families = build_families(None, [("a", running), ("b", finished)], now=2000.0)
    compute = _series(families, "gpuslo_job_step_compute_seconds")
    assert [(s.labels["job"], s.value) for s in compute] == [("a", 0.42)]
    slow = [s for s in _series(families, "gpuslo_job_gpu_seconds_total")
            if s.labels["category"] == "slowdown"]
    assert [(s.labels["job"], s.value) for s in slow] == [("a", 80.0), ("b", 0.0)]


def _journal(path, job, end_status, t_end):
    lines = [journal.event("job_start", 0.0, job=job, gpus=8),
             journal.event("checkpoint", 100.0, step=5),
             journal.event("job_end", t_end, status=end_status)]
    path.write_text("".join(journal.encode_line(e) for e in lines))


def test_a_finished_job_expires_an_hour_after_its_end_a_failed_one_stays(tmp_path):
    """Completed at t=200 and cancelled at t=300 leave after 200 + 3600 and 300 + 3600; a failed
    job may still restart, so only --max-jobs bounds it."""
    _journal(tmp_path / "done.jsonl", "done", "completed", 200.0)
    _journal(tmp_path / "gone.jsonl", "gone", "cancelled", 300.0)
    _journal(tmp_path / "crashed.jsonl", "crashed", "failed", 250.0)
    tailer = JournalTailer(tmp_path)
    tailer.poll()
    ids = lambda now: sorted(job for job, _ in tailer.jobs(20, now))  # noqa: E731
    assert ids(3700.0) == ["crashed", "done", "gone"]
    assert ids(3801.0) == ["crashed", "gone"]
    assert ids(3901.0) == ["crashed"]
    assert [job for job, _ in tailer.jobs(20, 3901.0, hold_s=10_000)] == ["gone", "crashed",
                                                                          "done"]
