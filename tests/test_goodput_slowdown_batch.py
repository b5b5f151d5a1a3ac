"""The slowdown rule's batch form (`gpuslo.goodput.slowdown_batch`) gives, row by row, what the
`GoodputState` fold gives — on random journals whose logged step times are steady, spike and
slow down for good, with checkpoints, phases, restarts (with and without a new GPU count) and
job ends between them — and it does so itself: the journals it leaves to the fold are few."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuslo import names
from gpuslo.goodput import calculator
from gpuslo.goodput.calculator import PHASES, compute_goodput
from gpuslo.goodput.slowdown import SlowdownRule
from tests.test_goodput_batch import _assert_same, _events

STEP = st.one_of(
    # coalesced intervals with their measured step time: steady, a little slow, very slow
    st.tuples(st.just("timed_steps"), st.sampled_from([1.0, 1.0, 1.0, 1.01, 1.04, 1.5, 2.0])),
    st.tuples(st.just("timed_steps"), st.sampled_from([0.0, 0.5, 3.0])),
    st.tuples(st.just("steps"), st.integers(0, 300)),  # step time from the progress
)
EVENT = st.one_of(
    STEP, STEP, STEP,
    st.tuples(st.just("checkpoint"), st.integers(0, 100)),
    st.tuples(st.sampled_from(["phase_start", "phase_end"]), st.sampled_from(PHASES)),
    st.tuples(st.just("restart"), st.one_of(st.none(), st.integers(1, 8))),
    st.tuples(st.just("job_end"), st.sampled_from(["completed", "failed", "cancelled"])),
)
JOURNAL = st.tuples(st.integers(1, 8), st.lists(st.tuples(st.integers(0, 500), EVENT),
                                                  max_size=40))


def _journal(plan) -> list[dict]:
    gpus, events = plan
    return _events([(0, ("job_start", gpus)), *events])


@settings(max_examples=400, deadline=None)
@given(st.lists(JOURNAL, min_size=1, max_size=4))
def test_batch_slowdown_equals_fold_row_by_row(plans):
    _assert_same([_journal(plan) for plan in plans])


def _arrays(journals):
    rows = [(g, e) for g, events in enumerate(journals) for e in events]
    get = lambda key: np.array([e.get(key, "") for _, e in rows], dtype=object)  # noqa: E731
    number = lambda *keys: np.array(  # noqa: E731
        [float(next((e[k] for k in keys if k in e), np.nan)) for _, e in rows])
    return (np.array([g for g, _ in rows], dtype=np.int64), np.array([e["t"] for _, e in rows]),
            get("event"), get("category"), number("gpus"), get("status"),
            number("step", "from_step"), number("count"), number("step_time_s"))


def _slow_journal(seed: int) -> list[dict]:
    """Steady 1 s steps with noise, a spike, a sustained slowdown across a checkpoint, a
    restart and a second slowdown: what the simulator's stragglers look like."""
    rng = np.random.default_rng(seed)
    events = [{"v": 1, "t": 0.0, "event": "job_start", "job": "j", "node": "n", "gpus": 8}]
    t, step = 0.0, 0
    times = [*rng.uniform(0.98, 1.02, 6), 1.6, *rng.uniform(0.98, 1.02, 4), 1.5, 1.5, 1.5,
             *rng.uniform(0.98, 1.02, 3), 2.0, 2.0]
    for i, step_s in enumerate(times):
        t += 10 * step_s
        step += 10
        events.append({"v": 1, "t": t, "event": "steps", "step": step})
        if i % 4 == 3:
            events.append({"v": 1, "t": t, "event": "checkpoint", "step": step})
        if i == 16:
            t += 30
            events.append({"v": 1, "t": t, "event": "restart", "from_step": step})
    return events


def test_slowdowns_and_episodes_match_the_fold_without_folding():
    journals = [_slow_journal(seed) for seed in range(20)]
    rule = SlowdownRule()
    sub = calculator.slowdown_increments(*_arrays(journals), rule)
    assert sub.exact.all()  # none left to the fold: the batch form did them all
    _assert_same(journals)
    for g, events in enumerate(journals):
        fold = compute_goodput(events, rule=rule)
        assert fold.gpu_seconds[names.CATEGORY_SLOWDOWN] > 0
        got = [e for e in sub.episode_rows(None, events[-1]["t"]) if e["group"] == g]
        assert len(got) == len(fold.slowdowns)
        for mine, theirs in zip(got, fold.slowdowns, strict=True):
            assert mine["start"] == theirs.start_t and mine["end"] == theirs.end_t
            assert (mine["from_step"], mine["to_step"]) == (theirs.from_step, theirs.to_step)
            assert mine["reference_s"] == theirs.reference_s
            assert mine["ratio"] == pytest.approx(theirs.ratio, rel=1e-12)
            assert mine["gpu_seconds"] == pytest.approx(theirs.gpu_seconds, rel=1e-12)


def test_a_second_fresh_start_is_left_to_the_fold():
    """After a cancelled run the fold keeps held seconds across a new job_start: the batch form
    does not guess, it hands the journal back."""
    events = _slow_journal(0)[:12] + [
        {"v": 1, "t": 200.0, "event": "job_end", "status": "cancelled"},
        {"v": 1, "t": 210.0, "event": "job_start", "job": "j", "node": "n", "gpus": 4}]
    events += [{"v": 1, "t": 210.0 + 10 * k, "event": "steps", "step": 200 + 10 * k,
                "count": 10, "step_time_s": 1.0 if k < 4 else 2.0} for k in range(1, 8)]
    sub = calculator.slowdown_increments(*_arrays([events]), SlowdownRule())
    assert not sub.exact.any()
    _assert_same([events])
