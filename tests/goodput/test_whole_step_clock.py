"""The clock over a trainer's own timer that leaves part of each step out (wholestep.py), from the
lines of fresh10 M14 (lufficc/SSD's `Cost:` per 10 iterations), fresh18 V08 (PaddleGAN's
`batch_cost`) and fresh6 H13 (Jacinle's `time/step` on a tqdm bar), each with a negative: a timer
the clock runs both sides of (maskrcnn-benchmark's window median, fresh4 F10), a clock more than
twice the timer (a save between every two steps, fresh6 H22), a clock no longer than the timer,
and stamps a transport wrote (a CRI file's)."""

from __future__ import annotations

from gpuslo.goodput.logs.assemble import assemble
from gpuslo.goodput.logs.reader import LogReader
from tests.goodput.batch_lines import PROFILES, case, read


def _median(lines: list[str]) -> float:
    return read(lines)["step_time_s"]["median"]


# -- a timer that leaves part of every step out: the clean windows' clock is the step's -----------
def test_millisecond_stamps_longer_than_every_window_timer_are_the_step_time() -> None:
    # `Cost: 5.54s` per 10 iterations (tic taken after the logging); the stamps 13:55:53.054 ->
    # 13:56:28.939 give 0.5925-0.6183 s an iteration, every window longer than its `Cost`
    assert _median(case("fresh10", "M14")) == 0.59475


def test_whole_second_stamps_over_long_spans_beat_an_averaged_batch_cost() -> None:
    # `batch_cost: 1.13305 sec` (loader + train step averaged over the interval) against 13-14 s
    # per 10 iterations on whole-second stamps read over spans of 20 s and more
    assert _median(case("fresh18", "V08")) == 1.3


def test_a_bars_elapsed_time_beats_the_trainers_step_meter_on_its_postfix() -> None:
    # `time/step=1.016501` (the step function's own meter) on a bar at `1006/1006 [18:08<00:00,
    # 1.08s/it]`: 1088 s / 1006 = 1.0815 s an iteration
    assert _median(case("fresh6", "H13")) == 1.081511


# -- negatives: the timer stays -------------------------------------------------------------------
def test_a_timer_the_clock_runs_both_sides_of_stays() -> None:
    # maskrcnn-benchmark's `time: 0.6546 (0.6794)` is the window's median step; the stamps give
    # 0.6476, 0.6988, 0.6930, 0.6739 s: some windows shorter than the timer, so no part left out
    assert _median(case("fresh4", "F10")) == 0.6546


def test_a_clock_over_twice_the_timer_holds_other_work_and_the_timer_stays() -> None:
    # `time = 0.134 sec` per step, a checkpoint written between every two `Step:` lines 4.79 s apart
    assert _median(case("fresh6", "H22")) == 0.134


def _ssd(costs: list[str], stamps: list[str]) -> list[str]:
    return [f"2018-12-17 13:{stamp} SSD.trainer INFO: Iter: {10 * k:06d}, Lr: 0.00069, "
            f"Cost: {cost}s, Eta: 11:18:23, Loss: 16.110"
            for k, (cost, stamp) in enumerate(zip(costs, stamps, strict=True), 1)]


STAMPS = ["55:53,054", "55:59,009", "56:05,192", "56:11,117", "56:17,044", "56:22,996"]


def test_a_clock_no_longer_than_the_timer_leaves_the_timer() -> None:
    # the same stamps with `Cost: 6.10s`: the timer (0.61 s) already holds every window's clock
    assert _median(_ssd(["6.10"] * 6, STAMPS)) == 0.61


def test_the_same_lines_with_their_timer_shorter_read_the_clock() -> None:
    # the control of the one above: `Cost: 5.54s` under the same stamps is left short of them
    assert 0.59 <= _median(_ssd(["5.54"] * 6, STAMPS)) <= 0.62


def _fed(lines: list[str], ts: list[float | None]) -> dict:
    reader = LogReader(PROFILES)
    for line, t in zip(lines, ts, strict=True):
        reader.feed(line, ts=t)
    return assemble(reader.finish(), job="t", gpus=1,
                    checkpoint_step=PROFILES.checkpoint_step).document


def test_stamps_a_transport_wrote_are_no_clock_of_the_trainers() -> None:
    # the same records as a container runtime's file gives them (`LogReader.feed(line, ts)`, the
    # trainer's own stamp gone): with no stamp to span, `Cost:` reads as each line's time, and
    # the collector's times, 59.5 s apart, are when the lines arrived, not the trainer's clock:
    # the step time stays the timer's (5.54 s), as with no time at all, not 5.95 s
    lines = [line[len("2018-12-17 13:55:53,054 "):] for line in _ssd(["5.54"] * 6, STAMPS)]
    carried = _fed(lines, [1545054953.054 + 59.5 * k for k in range(6)])["step_time_s"]
    assert carried == _fed(lines, [None] * 6)["step_time_s"]
    assert carried["median"] == 5.54
