"""The sustained-slowdown rule (gpuslo.goodput.slowdown) and the `slowdown` badput category of
the calculator: step times from the shared training-log corpus (T01, T08), then timelines small
enough to redo by hand."""

from __future__ import annotations

import json

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuslo import names
from gpuslo.goodput import journal
from gpuslo.goodput.calculator import GoodputState, compute_goodput
from gpuslo.goodput.recorder import Recorder
from gpuslo.goodput.slowdown import Interval, SlowdownRule, sustained_slowdowns

SLOW = names.CATEGORY_SLOWDOWN
PRODUCTIVE = names.CATEGORY_PRODUCTIVE

# shared/training_logs expected.yaml, T01 (BLOOM-176B, log interval 1): one slow GPU of 384.
T01 = [(42780, 105.16), (42781, 105.17), (42782, 106.25), (42783, 110.17), (42784, 111.14)]
# T08 (nanoGPT, log interval 10, `time` is the logged iteration's dt): eval + save at 3000.
T08 = [(2920, 1.09934), (2930, 1.0973), (2940, 1.09768), (2950, 1.09694), (2960, 1.09723),
       (2970, 1.09765), (2980, 1.09918), (2990, 1.09665), (3000, 35.39233), (3010, 1.01995),
       (3020, 1.01595), (3030, 1.01759), (3040, 1.01657), (3050, 1.01674), (3060, 1.01823)]


def test_t01_last_two_steps_are_one_sustained_slowdown():
    found = sustained_slowdowns([Interval(s, s, t) for s, t in T01])
    assert len(found) == 1
    slow = found[0]
    assert (slow.from_step, slow.to_step, slow.intervals) == (42783, 42784, 2)
    assert slow.reference_s == pytest.approx(105.17)  # median of the three warm-up intervals
    assert slow.median_s == pytest.approx(110.655)
    assert slow.ratio == pytest.approx(1.052, abs=5e-4)
    assert slow.extra_s == pytest.approx((110.17 - 105.17) + (111.14 - 105.17))


def test_t08_eval_and_save_spike_is_not_a_crawl_and_faster_steps_are_not_slow():
    assert sustained_slowdowns([Interval(s, s, t) for s, t in T08]) == []


def test_a_spike_does_not_move_the_reference():
    times = [1.0] * 5 + [3.0] + [1.0] * 3 + [1.2, 1.2]
    found = sustained_slowdowns([Interval(i, i, t) for i, t in enumerate(times)])
    assert [(s.from_step, s.to_step, s.reference_s) for s in found] == [(9, 10, 1.0)]


def test_a_fixed_reference_and_steps_per_interval():
    intervals = [Interval(0, 9, 2.0), Interval(10, 19, 2.0), Interval(20, 29, 1.0)]
    (slow,) = sustained_slowdowns(intervals, reference=1.0)
    assert slow.extra_s == pytest.approx(2 * 10 * (2.0 - 1.0))


@pytest.mark.parametrize(
    "kwargs", [{"threshold": 1.0}, {"min_intervals": 0}, {"reference_intervals": 0},
               {"reference_window": 2}]
)
def test_bad_parameters_are_refused(kwargs):
    with pytest.raises(ValueError):
        sustained_slowdowns([], **kwargs)


def _timeline(step_times: list[float], gpus: int = 8, checkpoints=(), restart_after=None):
    """A job logging one step per interval at the given step times; checkpoints after the given
    steps (0-based). Returns the journal events."""
    t, events = 1000.0, [journal.event("job_start", 1000.0, job="j", node="n1", gpus=gpus)]
    for i, step_s in enumerate(step_times):
        t += step_s
        events.append(journal.event("steps", t, step=i + 1, count=1))
        if i in checkpoints:
            events.append(journal.event("checkpoint", t, step=i + 1))
        if restart_after == i:
            events.append(journal.event("restart", t + 100, from_step=0))
            t += 100
    return events


def test_two_slow_intervals_put_their_extra_seconds_into_slowdown():
    # 10 s steps (reference 10 s), then two 15 s steps, then 10 s again; 8 GPUs.
    events = _timeline([10, 10, 10, 15, 15, 10], checkpoints=(5,))
    g = compute_goodput(events)
    assert g.gpu_seconds[SLOW] == pytest.approx((5 + 5) * 8)
    assert g.gpu_seconds[PRODUCTIVE] == pytest.approx(70 * 8 - 80)
    (episode,) = g.slowdowns
    assert (episode.from_step, episode.to_step, episode.reference_s) == (4, 5, 10.0)
    assert episode.ratio == pytest.approx(1.5)
    assert (episode.start_t, episode.end_t) == (1030.0, 1060.0)
    assert episode.gpu_seconds == pytest.approx(80)


def test_one_slow_interval_is_a_spike_and_stays_productive_even_across_a_checkpoint():
    g = compute_goodput(_timeline([10, 10, 10, 40, 10, 10], checkpoints=(3, 5)))
    assert g.gpu_seconds[SLOW] == 0
    assert g.gpu_seconds[PRODUCTIVE] == pytest.approx(90 * 8)
    assert g.slowdowns == []


def test_a_run_confirmed_after_a_checkpoint_takes_back_what_the_checkpoint_held():
    # checkpoint after the first slow step: its 5 s extra are held, not committed.
    g = compute_goodput(_timeline([10, 10, 10, 15, 15, 10], checkpoints=(3, 5)))
    assert g.gpu_seconds[SLOW] == pytest.approx(80)
    assert g.gpu_seconds[PRODUCTIVE] == pytest.approx(70 * 8 - 80)


def test_a_restart_ends_an_unconfirmed_run_as_wasted_progress():
    g = compute_goodput(_timeline([10, 10, 10, 15], checkpoints=(2,), restart_after=3))
    assert g.gpu_seconds[SLOW] == 0
    assert g.gpu_seconds["wasted_progress"] == pytest.approx(15 * 8)
    assert g.gpu_seconds[PRODUCTIVE] == pytest.approx(30 * 8)


def test_step_time_derived_from_progress_when_the_journal_does_not_say():
    events = [journal.event("job_start", 0, job="j", node="n", gpus=2)]
    events += [journal.event("steps", 100 * k, step=10 * k) for k in range(1, 5)]  # 10 s steps
    events += [journal.event("steps", 400 + 200 * k, step=40 + 10 * k) for k in (1, 2)]  # 20 s
    events += [journal.event("job_end", 800, status="completed")]
    g = compute_goodput(events)
    assert g.gpu_seconds[SLOW] == pytest.approx(2 * 10 * (20 - 10) * 2)
    assert g.gpu_seconds[PRODUCTIVE] + g.gpu_seconds[SLOW] == pytest.approx(800 * 2)


@settings(max_examples=150, deadline=None)
@given(
    st.lists(st.tuples(st.floats(1, 30), st.booleans(), st.booleans()), min_size=1,
             max_size=40),
    st.sampled_from([SlowdownRule(), SlowdownRule(1.2, 3, 2, 5), SlowdownRule(1.01, 1, 1, 1)]),
)
def test_counters_never_go_down_and_add_up_to_the_elapsed_time(plan, rule):
    gpus, t = 4, 0.0
    events = [journal.event("job_start", 0.0, job="j", node="n", gpus=gpus)]
    for i, (step_s, checkpoint, restart) in enumerate(plan):
        t += step_s
        events.append(journal.event("steps", t, step=i + 1, count=1))
        if checkpoint:
            events.append(journal.event("checkpoint", t, step=i + 1))
        if restart:
            events.append(journal.event("restart", t, from_step=i + 1))
    events.append(journal.event("job_end", t, status="completed"))
    state, previous = GoodputState(rule), dict.fromkeys(names.JOB_CATEGORIES, 0.0)
    for event in events:
        state.apply(event)
        now = state.result.gpu_seconds
        assert all(now[c] >= previous[c] - 1e-9 for c in names.JOB_CATEGORIES)
        previous = dict(now)
    assert sum(previous.values()) == pytest.approx(t * gpus)
    assert state.result.uncommitted_gpu_s == pytest.approx(0.0, abs=1e-9)


def test_recorder_writes_mean_step_and_compute_times_of_each_window(tmp_path):
    clock = iter(float(x) for x in range(100, 200)).__next__
    rec = Recorder(tmp_path, "job-a", node="n1", clock=clock, coalesce_steps=2)
    rec.job_start(8)
    rec.step(1, step_time_s=1.0, compute_s=0.5)
    rec.step(2, step_time_s=3.0, compute_s=0.7)
    rec.step(3, step_time_s=1.0)  # no compute time for step 4: the window says none
    rec.step(4, step_time_s=1.0)
    rec.job_end()
    steps = [json.loads(line) for line in (tmp_path / "job-a.jsonl").read_text().splitlines()]
    steps = [e for e in steps if e["event"] == "steps"]
    assert [(e.get("step_time_s"), e.get("compute_s")) for e in steps] == [
        (2.0, 0.6), (1.0, None)
    ]
    assert rec.goodput.compute_s == pytest.approx(0.6)
    with pytest.raises(ValueError):
        rec.step(5, compute_s=-1)


def test_journal_refuses_a_bad_step_time():
    with pytest.raises(ValueError, match="step_time_s"):
        journal.check_event({"v": 1, "t": 1, "event": "steps", "step": 1, "step_time_s": "x"})
