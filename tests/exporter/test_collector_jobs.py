"""Job families: a finished job keeps its counters but cannot stall."""

from gpuslo.exporter.collector import build_families
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
