"""A job_end that is not completed settles the progress after the last checkpoint as
`wasted_progress` (newcomer12 F1), in the fold, the batch form and the exporter's counters, as
a training log that ends in a crash does. A tester built the journals (tests/goodput/data/
journals_nc12): failed_mid — 8 GPUs for 1010 s, checkpoint at step 50 (t+500), steps to 100
(t+1000), `job_end failed` at t+1010: it read productive 4000 of the 8080 GPU-s held, wasted 0,
the 4080 left uncommitted for ever (the report's goodput 1.0, the exporter's only counter
productive 4000). final_crash.log is the same job as a log (10 s steps, save at 50, OOM after
100). Negatives: a running journal keeps its progress uncommitted; a completed one commits it."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

from gpuslo.exporter.jobs.journals import JournalTailer
from gpuslo.goodput import compute_goodput, parse_journal
from gpuslo.goodput.calculator import goodput_table
from gpuslo.goodput.logs import analyse_log, load_profiles

DATA = Path(__file__).parent / "data"
JOURNALS = DATA / "journals_nc12"


def _events(name: str) -> list[dict]:
    events, problems = parse_journal((JOURNALS / name).read_text(), name)
    assert not problems
    return events


def test_a_failed_end_wastes_the_progress_after_the_last_checkpoint():
    r = compute_goodput(_events("failed_mid.jsonl"))
    assert r.gpu_seconds["productive"] == pytest.approx(4000.0)
    assert r.gpu_seconds["wasted_progress"] == pytest.approx(4080.0)
    assert r.uncommitted_gpu_s == 0.0
    assert sum(r.gpu_seconds.values()) == pytest.approx(8 * 1010.0)  # all the held time
    failed = compute_goodput(_events("failed.jsonl"))
    assert failed.gpu_seconds["wasted_progress"] == pytest.approx(8080.0)


def test_negative_a_running_journal_keeps_it_uncommitted_a_completed_one_commits_it():
    running = compute_goodput(_events("running.jsonl"))
    assert running.uncommitted_gpu_s == pytest.approx(8000.0)
    assert running.gpu_seconds["wasted_progress"] == 0.0
    done = compute_goodput(_events("no_ckpt.jsonl"))
    assert done.gpu_seconds["productive"] == pytest.approx(8 * 120.0)
    assert done.gpu_seconds["wasted_progress"] == 0.0


def test_the_batch_form_settles_it_at_the_same_event():
    events = _events("failed_mid.jsonl")
    col = {k: np.array([e.get(k) or "" for e in events], dtype=object)
           for k in ("event", "category", "status")}
    table = goodput_table(np.zeros(len(events), dtype=np.int64),
                          np.array([e["t"] for e in events]), col["event"], col["category"],
                          np.array([e.get("gpus", np.nan) for e in events], dtype=float),
                          col["status"],
                          step=np.array([e.get("step", np.nan) for e in events], dtype=float))
    for i in range(len(events)):
        fold = compute_goodput(events[:i + 1])
        for c, values in table.gpu_seconds.items():
            assert values[i] == pytest.approx(fold.gpu_seconds[c]), (i, c)
    assert table.gpu_seconds["wasted_progress"][-1] == pytest.approx(4080.0)


def test_the_exporter_counts_it_and_its_counters_only_grow(tmp_path):
    lines = (JOURNALS / "failed_mid.jsonl").read_text().splitlines(keepends=True)
    journal = tmp_path / "failed_mid.jsonl"
    tailer = JournalTailer(str(tmp_path))
    seen: dict[str, float] = {}
    for line in lines:
        with journal.open("a") as handle:
            handle.write(line)
        tailer.poll()
        ((_, g),) = list(tailer.jobs(100))
        for c, v in g.gpu_seconds.items():
            assert v >= seen.get(c, 0.0), c
            seen[c] = v
    assert seen["productive"] == pytest.approx(4000.0)
    assert seen["wasted_progress"] == pytest.approx(4080.0)


def test_the_same_job_as_a_log_agrees():
    doc = analyse_log(DATA / "final_crash.log", load_profiles(), gpus=8).document["goodput"]
    assert doc["uncommitted_gpu_s"] == 0.0
    assert doc["gpu_seconds"]["wasted_progress"] == pytest.approx(4000.0)
    assert doc["gpu_seconds"]["wasted_progress"] > 0 and doc["goodput"] < 0.5
