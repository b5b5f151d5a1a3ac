"""The slowdown rule's reference on a real noisy run (newcomer4 finding 5): a Megatron-LM GPT-2
pretrain log (find_string id 9506752970; /work/wt/newcomer4_inputs/train/t02_*), iterations 10 to
250 every 10, `elapsed time per iteration (ms)` as printed. The rule (README "The crawl",
`gpuslo.goodput.slowdown`) judges each interval against the median of the steady intervals
*before* it, as shared T01's `ratio_after_over_before` does; a hindsight median of the whole log
is not the rule. Every slowdown it files is at least two consecutive intervals above 1.03x the
reference in force, and a spike beside an interval within 1.03x of it is none."""

from __future__ import annotations

from statistics import median

import pytest

from gpuslo.goodput.slowdown import DEFAULT_THRESHOLD, Interval, sustained_slowdowns

MS = [1147.6, 820.7, 821.8, 849.8, 904.5, 837.6, 840.3, 849.5, 832.5, 869.1, 1069.8, 774.3,
      792.7, 860.2, 1296.2, 822.7, 839.6, 867.7, 1265.2, 901.4, 832.4, 970.0, 992.3, 842.4, 824.3]
T02 = [Interval(10 * i + 1, 10 * i + 10, ms / 1000) for i, ms in enumerate(MS)]
BY_LAST = {x.last_step: x for x in T02}


def test_each_slowdown_is_two_or_more_intervals_above_the_reference_in_force():
    found = sustained_slowdowns(T02)
    assert [(s.from_step, s.to_step) for s in found] == [
        (31, 50), (91, 110), (131, 150), (171, 200), (211, 230)]
    for s in found:
        run = [x for x in T02 if s.from_step <= x.first_step and x.last_step <= s.to_step]
        assert len(run) >= 2 and s.intervals == len(run)
        assert all(x.step_s > DEFAULT_THRESHOLD * s.reference_s for x in run)
    # the step-91 pair: 869.1 ms is 1.038x the 837.6 ms median of the seven steady intervals
    # before it (three seeding, four steady; 40-50 were slow), so it is slow, not the normal
    # neighbour of a spike
    assert found[1].reference_s == pytest.approx(median(MS[:3] + MS[5:9]) / 1000)


def test_a_spike_beside_an_interval_within_the_threshold_is_no_slowdown():
    # the same run's real step times: the post-save 1069.8 ms between 774.3 and 792.7 ms, after
    # the seed (reference 821.8 ms): one spike, no slowdown, and the reference does not move
    times = [1147.6, 820.7, 821.8, 774.3, 1069.8, 792.7, 822.7]
    assert sustained_slowdowns([Interval(i, i, t / 1000) for i, t in enumerate(times)]) == []


def test_the_job_s_own_reference_given_leaves_only_the_sustained_pairs():
    # with the reference fixed (a caller that knows the job's configuration: here the log's
    # median interval, 849.5 ms), the spikes at 110 and 150 pair with intervals within 1.03x of
    # it and are none; 181-200 and 211-230, two consecutive slow intervals each, still count
    reference = median(MS) / 1000
    found = sustained_slowdowns(T02, reference=reference)
    assert [(s.from_step, s.to_step, s.intervals) for s in found] == [(181, 200, 2), (211, 230, 2)]
    assert BY_LAST[100].step_s <= DEFAULT_THRESHOLD * reference < BY_LAST[110].step_s


def test_two_consecutive_slow_intervals_count_whatever_the_reference():
    # negative: the 190-200 pair (1265.2, 901.4 ms) is a slowdown against either reference
    for reference in (None, median(MS) / 1000):
        found = sustained_slowdowns(T02, reference=reference)
        assert any(s.from_step <= 181 and s.to_step >= 200 for s in found)
