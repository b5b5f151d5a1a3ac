"""The engine's journal goodput (`gpuslo.slo.journal_goodput`) and node scores
(`gpuslo.slo.crawl.node_scores`) computed batch by batch give what they give in one pass: every
rule is per journal (scores: per job), so cutting the rows between journals (jobs) changes
nothing — checked on a simulated fleet with stragglers, a window that starts mid-week, and one
journal the batch form leaves to the fold."""

from __future__ import annotations

import pandas as pd
import pytest

from gpuslo.goodput.slowdown import SlowdownRule
from gpuslo.slo import crawl, frames, journal_goodput
from gpuslo.slo.events import batches, index_events
from gpuslo.slo.simulate import faults
from gpuslo.slo.simulate.fleet import simulate

START = pd.Timestamp("2026-11-23T00:00:00Z")


def _left_to_the_fold(at: pd.Timestamp) -> list[dict]:
    """Steady steps, a cancelled run, a fresh job_start and then slow steps: the batch form
    hands such a journal to the fold (the fold keeps held seconds across the new start)."""
    rows = [{"event": "job_start", "time": at, "gpus": 4}]
    rows += [{"event": "steps", "time": at + pd.Timedelta(seconds=10 * k), "step": 10 * k,
              "count": 10, "step_time_s": 1.0} for k in range(1, 13)]
    rows += [{"event": "job_end", "time": at + pd.Timedelta(seconds=200), "status": "cancelled"},
             {"event": "job_start", "time": at + pd.Timedelta(seconds=210), "gpus": 4}]
    rows += [{"event": "steps", "time": at + pd.Timedelta(seconds=210 + 10 * k),
              "step": 200 + 10 * k, "count": 10, "step_time_s": 1.0 if k < 4 else 2.0}
             for k in range(1, 8)]
    return [{"job": "job-fold", "node": "node-x", **row} for row in rows]


@pytest.fixture(scope="module")
def week():
    sim = simulate(faults.Fleet(nodes=16, gpus_per_node=8, days=7), seed=3, start=START)
    extra = frames.make_frame("job_events", _left_to_the_fold(START + pd.Timedelta(days=3)))
    events = pd.concat([sim.frames["job_events"], extra], ignore_index=True)
    return events, START + pd.Timedelta(days=2), sim.end


def test_batch_by_batch_equals_one_pass(week, monkeypatch):
    events, start, end = week
    index = index_events(events)
    folded = []
    fold = journal_goodput._fold

    def recording_fold(job_events, idx, groups, *rest):
        folded.append(len(groups))
        return fold(job_events, idx, groups, *rest)

    monkeypatch.setattr(journal_goodput, "_fold", recording_fold)
    whole, whole_slow = journal_goodput.goodput_and_slowdowns(
        events, start, end, SlowdownRule(), index, batch_events=len(events))
    assert folded == [1] and len(whole_slow) >= 2  # the fold's journal and the stragglers
    for size in (1, 97, 2_000):
        per_node, slow = journal_goodput.goodput_and_slowdowns(
            events, start, end, SlowdownRule(), index, batch_events=size)
        pd.testing.assert_frame_equal(per_node, whole, rtol=1e-12)
        pd.testing.assert_frame_equal(slow, whole_slow, rtol=1e-12)


def test_node_scores_batch_by_batch_equal_one_pass(week, monkeypatch):
    events, _, end = week
    index = index_events(events)
    start = START  # the whole week: five jobs report compute times
    whole = crawl.node_scores(events, start, end, index)
    assert whole["job"].nunique() >= 3 and whole["score"].min() < 1.0
    monkeypatch.setattr(crawl, "batches", lambda first, n: batches(first, n, 50))
    pd.testing.assert_frame_equal(crawl.node_scores(events, start, end, index), whole)
    monkeypatch.setattr(crawl, "batches", lambda first, n: batches(first, n, 1))
    pd.testing.assert_frame_equal(crawl.node_scores(events, start, end, index), whole)
