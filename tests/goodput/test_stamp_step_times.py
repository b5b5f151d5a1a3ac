"""Step time from wall-clock stamps and cumulative elapsed fields, where a line prints no
per-step duration (progress.py's order of preference and window rule): each class read on
hand-varied lines that are not a first-contact case's own, with a negative beside it."""

from __future__ import annotations

import pytest

from gpuslo.goodput.logs import windows
from gpuslo.goodput.logs.stamps import learn_shapes
from tests.goodput.test_log_classes import read, steps


def _median(doc: dict) -> float | None:
    return doc["step_time_s"]["median"]


# -- `%Y-%m-%d:%H:%M:%S`: MXNet's and Sockeye's datefmt joins date and time with a colon -------
def test_a_date_joined_to_its_time_by_a_colon_is_a_stamp() -> None:
    # hand-varied (MXNet Module.fit's Speedometer under a datefmt of `%Y-%m-%d:%H:%M:%S`):
    # batches every 40, 50 or 52 seconds apart; the speed is samples/sec, not a step rate
    stamps = ["2019-03-04:22:10:05", "2019-03-04:22:10:55", "2019-03-04:22:11:45",
              "2019-03-04:22:12:37", "2019-03-04:22:13:27"]
    lines = [f"[{s}:INFO:root:log] Epoch[2] Batch [{100 * (i + 1)}]\tSpeed: 210.{i} "
             f"samples/sec\taccuracy=0.71{i}" for i, s in enumerate(stamps)]
    doc = read(lines)
    assert steps(doc) == (100, 500)
    assert _median(doc) == pytest.approx(0.5)


def test_a_colon_joined_clock_with_no_year_first_date_is_not_a_stamp() -> None:
    # negative: a counter with three colons (`step 12:30:40:10`) and a day-first date with a
    # colon are not the `%Y-%m-%d:%H:%M:%S` layout
    assert learn_shapes(["step 12:30:40:10 loss 0.3", "04-03-2019:22:10:05 loss 0.3"]) == []


# -- whole-second stamps: a span of at least 20 s, not 5 or 6 s between lines -----------------
def test_whole_second_stamps_are_measured_over_a_long_enough_span() -> None:
    # hand-varied (a hand-written PyTorch loop logging every 8 batches): 0.7 s a batch, so the
    # lines fall 5 or 6 s apart; one delta alone reads 0.625 or 0.75
    t, lines = 0.0, []
    for n in range(8, 200, 8):
        t += 8 * 0.7
        s = int(t)
        lines.append(f"2025-03-01 08:{s // 60:02d}:{s % 60:02d} | INFO | [Epoch 2] "
                     f"Batch {n}/400 | loss={0.5 - n / 1000:.4f}")
    assert _median(read(lines)) == pytest.approx(0.7, rel=0.03)


def test_millisecond_stamps_are_measured_between_neighbours() -> None:
    # negative: stamps with milliseconds need no long span: each window is its own (a slow
    # second half shows in the median of the windows, not a whole-run mean)
    steps_s = [0.4] * 5 + [0.9] * 6
    t, lines = 100.137, []
    for i, s_ in enumerate(steps_s):
        t += 10 * s_
        lines.append(f"2025-03-01 08:{int(t) // 60:02d}:{int(t) % 60:02d}.{int(t % 1 * 1000):03d}"
                     f" INFO step {10 * (i + 1)} loss 0.{i}")
    assert _median(read(lines)) == pytest.approx(0.9, rel=0.01)


# -- a bar's cumulative elapsed time: its deltas, not its mean since step 0 ---------------------
def test_a_bar_captured_every_so_many_steps_reads_its_elapsed_deltas() -> None:
    # hand-varied (a diffusers/accelerate tqdm bar copied into a log every 100 steps, 4.0 s a
    # step now where the run began at 2.0 s): the mean since step 0 would say about 3
    elapsed, lines = 3000, []
    for n in range(1500, 2100, 100):
        elapsed += 400
        h, m, s = elapsed // 3600, elapsed // 60 % 60, elapsed % 60
        lines.append(f"Steps:  {n * 100 // 5000}%|███      | {n}/5000 [{h}:{m:02d}:{s:02d}<"
                     f"3:00:00,  3.10s/it, lr=1e-05, step_loss=0.12]")
    assert _median(read(lines)) == pytest.approx(4.0, rel=0.01)


def test_a_bar_redrawn_every_step_reads_its_elapsed_over_20_seconds() -> None:
    # negative: a bar redrawn each step with whole seconds is never read from one redraw's
    # delta (0 or 1 s a step); at 0.5 s a step the median stays 0.5
    lines = [f"Training:  {n // 4}%|██  | {n}/400 [{int(n * 0.5) // 60:02d}:"
             f"{int(n * 0.5) % 60:02d}<01:00,  2.00it/s]" for n in range(1, 200)]
    assert _median(read(lines)) == pytest.approx(0.5, rel=0.03)


# -- a window that held other work is not a step's time -----------------------------------------
def _epoch_lines(epoch: int, first: int, t: float) -> tuple[list[str], float]:
    """An epoch of 320 updates at 0.5 s: train_inner at +100 and +200 (after the epoch's data
    loading, 40 s), then 120 updates, validation (60 s) and a save (30 s) before the summary."""
    lines = [f"{_clock(t)} | INFO | trainer | begin training epoch {epoch}"]
    t += 40.0
    for k in (1, 2):
        t += 50.0
        lines.append(f"{_clock(t)} | INFO | train_inner | epoch {epoch:03d}: num_updates="
                     f"{first + 100 * k}, loss=3.1, lr=0.0001, ups=2.0")
    t += 60.0 + 90.0
    lines += [f"{_clock(t - 30)} | INFO | valid | epoch {epoch:03d} | loss 4.2 | num_updates "
              f"{first + 320}", f"{_clock(t - 1)} | INFO | checkpoint_utils | saved checkpoint "
              f"ck{epoch}.pt (epoch {epoch} @ {first + 320} updates)",
              f"{_clock(t)} | INFO | train | epoch {epoch:03d} | loss 3.1 | num_updates "
              f"{first + 320}"]
    return lines, t


def _clock(t: float) -> str:
    s = int(t)
    return f"2024-05-06 {s // 3600:02d}:{s // 60 % 60:02d}:{s % 60:02d}"


def test_validation_and_a_save_between_two_records_are_not_step_time() -> None:
    # hand-varied (fairseq-style train_inner every 100 updates, 0.5 s an update, an epoch of
    # 320 updates ending in validation, a save and the epoch summary): 0.5, not 0.9 (across the
    # data loading) or 1.25 (across validation and save)
    lines, t = [], 36000.0
    for epoch in range(3, 7):
        more, t = _epoch_lines(epoch, 320 * epoch, t)
        lines += more
    assert _median(read(lines)) == pytest.approx(0.5)


def test_records_alike_every_window_keep_every_window() -> None:
    # negative: a loop that prints two lines a step everywhere has no window with other work;
    # its slow windows count (1 s, 1 s, 3 s, 3 s, 3 s: the median is 3)
    lines, t = [], 36000.0
    for k, s_ in enumerate([1, 1, 3, 3, 3], 1):
        t += 50 * s_
        lines += [f"{_clock(t)} | INFO | step {50 * k} | loss 0.3",
                  f"{_clock(t)} | INFO | grad norm 1.{k}"]
    assert _median(read(lines)) == pytest.approx(3.0)


# -- an evaluation record of the same step ends that step's clock -------------------------------
def _hms(s: int) -> str:
    return f"{s // 3600}h {s // 60 % 60}m {s % 60}s"


def test_an_evaluation_record_of_a_step_ends_its_clock() -> None:
    # hand-varied (ms-swift/HF-style JSON lines: a train record, then an eval record of the same
    # step with the elapsed time after the evaluation; 10 s a step, evaluations of 300 s)
    lines, elapsed = [], 4 * 3600 + 17 * 60 + 9
    for step in range(1100, 1900, 100):
        elapsed += 1000
        lines.append(f'{{"loss": 0.2{step // 100}, "global_step/max_steps": "{step}/4000", '
                     f'"elapsed_time": "{_hms(elapsed)}"}}')
        elapsed += 300
        lines.append(f'{{"eval_loss": 0.3{step // 100}, "eval_runtime": 300.0, '
                     f'"global_step/max_steps": "{step}/4000", "elapsed_time": "{_hms(elapsed)}"}}')
    assert _median(read(lines)) == pytest.approx(10.0)


# -- a clock that ticks more slowly than the records come --------------------------------------
def test_stamps_repeated_in_batches_are_measured_over_their_tick() -> None:
    # hand-varied (a log shipper that dates lines by their arrival, flushing every 2 s with a
    # millisecond stamp; 0.1 s a step, one line a step): 20 lines share each stamp, so one
    # record's jump from the last batch reads 2 s over a step or two
    lines = []
    for n in range(1, 1200):
        flush = 7.431 + 2.0 * ((n - 1) // 20 + 1)
        lines.append(f"2025-06-01T10:{int(flush) // 60:02d}:{flush % 60:06.3f} step {n} "
                     f"loss 0.{n % 7}")
    assert _median(read(lines)) == pytest.approx(0.1, rel=0.06)
    assert windows.resolution([7.431 + 2.0 * (k // 20) for k in range(100)]) == 2.0


def test_distinct_millisecond_stamps_keep_their_resolution() -> None:
    # negative: stamps that never repeat keep a millisecond resolution, whole ones a second
    assert windows.resolution([10.0 + 0.137 * k for k in range(50)]) == 0.001
    assert windows.resolution([10.0 + 6 * k for k in range(50)]) == 1.0


# -- a clock that never advances is not the run's clock (assemble._frozen_clock) --------------
def _frozen_log(stamps: list[str]) -> list[str]:
    lines = []
    for i, stamp in enumerate(stamps, 1):
        lines.append(f"[{stamp}] step {i}/300 loss 0.{i % 10}5 step_time 0.500s")
        if i % 100 == 0:
            lines.append(f"Saved checkpoint at step {i}")
    return lines


def test_stamps_that_never_advance_are_not_the_clock() -> None:
    # found by a newcomer: every line stamped `[2026-01-01 00:00:00]` (a cached or fixed time)
    # while each prints step_time 0.5 s; placed by the stamps all but one step took no time
    # and goodput read 1.0 over 0.5 GPU-s. The step times time the log instead.
    doc = read(_frozen_log(["2026-01-01 00:00:00"] * 300), gpus=8)
    assert doc["goodput"]["gpu_seconds"]["productive"] == pytest.approx(300 * 0.5 * 8)
    assert any("not the run's clock" in note for note in doc["notes"])


def test_stamps_that_advance_stay_the_clock() -> None:
    stamps = [f"2026-01-01 00:{i // 2 // 60:02d}:{i // 2 % 60:02d}" for i in range(300)]
    doc = read(_frozen_log(stamps), gpus=8)
    assert not any("not the run's clock" in note for note in doc["notes"])
    assert doc["span_s"] == pytest.approx(149, abs=1.5)
