"""The Recorder: journal shape, coalescing and its size, crash safety, OpenTelemetry metrics."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from opentelemetry.sdk.metrics import MeterProvider
from opentelemetry.sdk.metrics.export import InMemoryMetricReader

from gpuslo.goodput import Recorder, compute_goodput, parse_journal


class Clock:
    def __init__(self) -> None:
        self.t = 1_700_000_000.0

    def __call__(self) -> float:
        return self.t


def run_worked_example(rec: Recorder, clock: Clock) -> None:
    """Issue 4's timeline through the Recorder: 60 s steps, checkpoint at 80, fail after 100,
    restart 600 s later from step 80."""
    rec.job_start(gpus=8)
    for n in range(1, 101):
        clock.t += 60
        rec.step(n)
        if n == 80:
            rec.checkpoint(80)
    rec.job_end("failed")


def test_worked_example_through_the_recorder(tmp_path: Path) -> None:
    clock = Clock()
    run_worked_example(Recorder(tmp_path, "job-1", node="n1", clock=clock), clock)
    clock.t += 600
    rec = Recorder(tmp_path, "job-1", node="n1", clock=clock)  # the restarted process
    rec.restart(from_step=80)
    rec.close()
    events, problems = parse_journal((tmp_path / "job-1.jsonl").read_text(), "job-1.jsonl")
    assert problems == []
    g = compute_goodput(events)
    assert g.gpu_seconds["wasted_progress"] == 8 * 1200.0
    assert g.gpu_seconds["recovery"] == 8 * 600.0
    assert g.gpu_seconds["productive"] == 8 * 4800.0
    assert rec.goodput.gpu_seconds == g.gpu_seconds  # the restarted Recorder re-read its journal


def test_lines_are_schema_versioned_and_steps_coalesced(tmp_path: Path) -> None:
    clock = Clock()
    with Recorder(tmp_path, "j", node="n", clock=clock, coalesce_s=60) as rec:
        rec.job_start(1)
        for n in range(1, 181):  # 180 one-second steps → 3 lines
            clock.t += 1
            rec.step(n)
    rows = [json.loads(line) for line in (tmp_path / "j.jsonl").read_text().splitlines()]
    assert all(r["v"] == 1 and isinstance(r["t"], float) for r in rows)
    assert [(r["first_step"], r["step"], r["count"]) for r in rows if r["event"] == "steps"] == [
        (1, 61, 61),
        (62, 122, 61),
        (123, 180, 58),
    ]


def test_a_week_of_one_second_steps_stays_small(tmp_path: Path) -> None:
    clock = Clock()
    with Recorder(tmp_path, "week", node="node-0001", clock=clock) as rec:
        rec.job_start(8)
        for n in range(1, 7 * 24 * 3600 + 1):
            clock.t += 1
            rec.step(n)
            if n % 3600 == 0:
                rec.checkpoint(n)
    size = (tmp_path / "week.jsonl").stat().st_size
    assert size < 2 * 1024 * 1024, size  # measured: about 1.1 MB for 604 800 steps


def test_truncated_line_from_a_crash_is_reported_and_appending_continues(tmp_path: Path) -> None:
    clock = Clock()
    rec = Recorder(tmp_path, "j", node="n", clock=clock)
    rec.job_start(1)
    rec.close()
    with open(tmp_path / "j.jsonl", "a") as f:
        f.write('{"v":1,"t":17000')  # kill -9 mid-write
    clock.t += 10
    Recorder(tmp_path, "j", node="n", clock=clock).restart(0)
    events, problems = parse_journal((tmp_path / "j.jsonl").read_text(), "j.jsonl")
    assert [e["event"] for e in events] == ["job_start", "restart"]
    assert [(p.line, "truncated" in p.detail) for p in problems] == [(2, True)]


def test_bad_arguments(tmp_path: Path) -> None:
    rec = Recorder(tmp_path, "ok", node="n")
    with pytest.raises(ValueError), rec.phase("lunch"):
        pass
    with pytest.raises(ValueError):
        rec.job_end("exploded")
    rec.close()


def test_opentelemetry_metrics_match_the_journal(tmp_path: Path) -> None:
    reader = InMemoryMetricReader()
    clock = Clock()
    rec = Recorder(
        tmp_path,
        "otel",
        node="n",
        clock=clock,
        meter_provider=MeterProvider(metric_readers=[reader]),
    )
    rec.job_start(2)
    with rec.phase("initialization"):
        clock.t += 30
    run_steps = [(n, 10.0) for n in range(1, 6)]
    for n, dt in run_steps:
        clock.t += dt
        rec.step(n)
    rec.checkpoint(5)
    rec.job_end("failed", layer="node")
    points = {}
    for rm in reader.get_metrics_data().resource_metrics:
        for sm in rm.scope_metrics:
            for metric in sm.metrics:
                for p in metric.data.data_points:
                    key = tuple(sorted(p.attributes.items()))
                    points[(metric.name, key)] = p.value
    job = ("job", "otel")
    assert points[("gpuslo.job.gpu_seconds", (("category", "initialization"), job))] == 60.0
    assert points[("gpuslo.job.gpu_seconds", (("category", "productive"), job))] == 100.0
    assert points[("gpuslo.job.interruptions", (job, ("layer", "node")))] == 1
    assert points[("gpuslo.job.step", (job,))] == 5


# --- issue 12: the Recorder never raises into the training loop after construction ------------
def _journal_goodput(path: Path):
    events, _ = parse_journal(path.read_bytes(), str(path))
    return compute_goodput(events)


def test_construction_errors_are_one_type(tmp_path: Path) -> None:
    from gpuslo.errors import RecorderError

    (tmp_path / "a-file").write_text("")
    with pytest.raises(RecorderError, match="cannot open"):
        Recorder(tmp_path / "a-file" / "journals", "job")  # the directory cannot be created
    with pytest.raises(RecorderError, match="job id"):
        Recorder(tmp_path, "../escape")


def test_a_deleted_journal_directory_is_recreated_with_the_whole_journal(tmp_path: Path) -> None:
    import shutil

    clock = Clock()
    journals = tmp_path / "journals"
    rec = Recorder(journals, "job", node="n", clock=clock, coalesce_steps=100)
    rec.job_start(8)
    for n in range(1, 1001):
        clock.t += 1
        rec.step(n)
    shutil.rmtree(journals)  # an operator's cleanup mid-run
    for n in range(1001, 2001):
        clock.t += 1
        rec.step(n)
    rec.checkpoint(2000)
    rec.job_end("completed")
    assert _journal_goodput(journals / "job.jsonl").gpu_seconds == rec.goodput.gpu_seconds
    assert rec.goodput.gpu_seconds["productive"] == 2000 * 8


_FULL_DISK = """
import resource, signal, sys
from gpuslo.goodput import Recorder
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # writes past the limit fail with EFBIG instead
t = [1_700_000_000.0]
rec = Recorder(sys.argv[1], "job", node="n", clock=lambda: t[0])
rec.job_start(8)
soft, hard = resource.getrlimit(resource.RLIMIT_FSIZE)
resource.setrlimit(resource.RLIMIT_FSIZE, (200, hard))  # the disk is full from here
for n in range(1, 11):
    t[0] += 60
    rec.step(n)
    rec.checkpoint(n)
errors = rec.write_errors
resource.setrlimit(resource.RLIMIT_FSIZE, (soft, hard))  # space again
t[0] += 60
rec.job_end("completed")
print(errors, rec.goodput.gpu_seconds["productive"])
"""


def test_a_disk_that_refuses_writes_is_counted_retried_and_never_raised(tmp_path: Path) -> None:
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", _FULL_DISK, str(tmp_path)], capture_output=True,
                          text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    errors, productive = done.stdout.split()
    assert int(errors) > 0 and float(productive) == 660 * 8
    assert "cannot write" in done.stderr and done.stderr.count("cannot write") == 1
    path = tmp_path / "job.jsonl"
    assert _journal_goodput(path).gpu_seconds["productive"] == 660 * 8


def test_an_old_journal_with_invalid_utf8_is_skipped_not_fatal(tmp_path: Path) -> None:
    clock = Clock()
    with Recorder(tmp_path, "job", node="n", clock=clock) as rec:
        rec.job_start(8)
        clock.t += 60
        rec.step(1)
        rec.checkpoint(1)
    with (tmp_path / "job.jsonl").open("ab") as handle:
        handle.write(b'{"v":1,"t":1.7e9,"event":"steps","step":\xff\xfe}\n')
    clock.t += 60
    rec = Recorder(tmp_path, "job", node="n", clock=clock)  # was UnicodeDecodeError
    assert rec.goodput.gpu_seconds["productive"] == 60 * 8
    rec.close()
