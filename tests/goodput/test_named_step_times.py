"""Step times a line prints itself: a field named like a time per batch, step or iteration in
any wording, and rates of steps. Each class is read on hand-written lines (other frameworks'
wording, other numbers) with a negative beside it: a similar field that is not the step time."""

from __future__ import annotations

from tests.goodput.test_log_classes import read


def median_s(doc: dict) -> float | None:
    return (doc.get("step_time_s") or {}).get("median")


# -- camelCase names: `AvgTime`, `BatchTime` -----------------------------------------------------
def test_a_camel_case_time_name_is_a_step_time() -> None:
    # hand-varied (a custom segmentation loop, `[Train] Epoch: [e][n/N] ... (BatchTime 0.83)`)
    lines = [f"[Train] Epoch: [3][{n}/1200]  Loss:0.{n % 7 + 2}1 LR 1.00e-04  (BatchTime 0.83)"
             for n in range(40, 46)]
    assert median_s(read(lines)) == 0.83


def test_a_camel_case_rate_of_samples_is_not_a_step_time() -> None:
    # negative: `SamplesPerSec` is throughput, camelCase split or not
    lines = [f"Epoch: [3][{n}/1200]  Loss:0.5 SamplesPerSec {30 + n % 3}.5"
             for n in range(40, 46)]
    assert median_s(read(lines)) is None


# -- `X (t)`: a time named by `(t)` after its name (open_clip) -----------------------------------
def test_a_batch_t_field_is_the_step_time_and_data_t_is_not() -> None:
    # hand-varied: open_clip-style wording with other numbers; `/s` after it is samples per second
    times = [0.812, 0.798, 0.805, 0.801, 0.799]
    lines = [f"2024-03-0{i + 1} 10:00:00,000 | INFO | Train Epoch: 2 [ {2048 * (i + 1)}/500000 "
             f"({i}%)] Loss: 2.{i}1 Data (t): 0.{i + 1}04 Batch (t): {t:.3f}, {2560 / t:.3f}/s "
             f"LR: 0.000100" for i, t in enumerate(times)]
    assert median_s(read(lines)) == 0.801


def test_a_data_t_alone_is_not_a_step_time() -> None:
    # negative: only the data-loading time is printed: a part of the step
    lines = [f"Train Epoch: 2 [ {2048 * (i + 1)}/500000 ({i}%)] Loss: 2.{i}1 Data (t): 0.{i + 1}04"
             for i in range(5)]
    assert median_s(read(lines)) is None


# -- a latency is one event's duration; parts printed with their share are not the step ----------
def test_an_end_to_end_latency_is_the_step_and_its_shares_are_parts() -> None:
    # hand-varied (an RLHF trainer's per-step timing line, DeepSpeed-Chat style wording)
    lines = []
    for k, e2e in enumerate([3.41, 3.43, 3.45, 3.47]):  # rising: still not a total
        lines += [f"|E2E latency={e2e:.2f}s |Generate time={e2e * 0.7:.2f}s (70.00%) "
                  f"|Training time={e2e * 0.3:.2f}s (30.00%)",
                  f"epoch: 1|step: {500 + k}|actor_loss: 0.{k + 1}|critic_loss: 0.{k + 2}"]
    assert median_s(read(lines)) == 3.44


def test_durations_printed_with_their_share_are_not_the_step_time() -> None:
    # negative: only the parts are printed (each with its share): no step time can be given
    lines = [f"step: {500 + k}|Generate time=2.{k}0s (70.00%) |Training time=1.{k}0s (30.00%)"
             for k in range(4)]
    assert median_s(read(lines)) is None


# -- warm-up: a first time within the run's own jitter is a step like the others ----------------
def test_a_first_time_within_the_runs_jitter_is_kept() -> None:
    # hand-varied (a toy run logging every 20 iterations, millisecond times that scatter 3x):
    # the first 0.012 is below twice the slowest later one (0.009): not a warm-up
    times = [0.012, 0.004, 0.009, 0.003, 0.006, 0.005]
    lines = [f"05/03 09:12:07 - mmengine - INFO - Epoch(train) [1][{20 * (k + 1)}/200]  "
             f"lr: 1.000e-03  time: {t:.3f}  data_time: 0.001  loss: 0.{k + 3}"
             for k, t in enumerate(times)]
    assert median_s(read(lines)) == 0.0055  # median of all six


def test_a_first_time_far_beyond_the_run_is_warm_up() -> None:
    # negative: a compilation-heavy first window (4.8 s) against 0.30-0.34 s afterwards
    times = [4.8, 0.31, 0.33, 0.30, 0.34, 0.32]
    lines = [f"05/03 09:12:07 - mmengine - INFO - Epoch(train) [1][{20 * (k + 1)}/200]  "
             f"lr: 1.000e-03  time: {t:.3f}  data_time: 0.001  loss: 0.{k + 3}"
             for k, t in enumerate(times)]
    assert median_s(read(lines)) == 0.32  # the five after it


# -- Keras's epoch-end bar: `n/N [====] - 142s 1s/step`: precise over rounded -------------------
def _keras(epochs: range, steps: int, secs: list[int], per_step: str) -> list[str]:
    lines: list[str] = []
    for e, s in zip(epochs, secs, strict=True):
        lines += [f"Epoch {e}/40", f"{steps}/{steps} [==============================] - {s}s "
                  f"{per_step}/step - loss: 0.{e}1 - accuracy: 0.8{e % 10}"]
    return lines


def test_a_keras_bars_elapsed_over_its_steps_beats_a_whole_second_per_step() -> None:
    # hand-varied: 250 steps in 477-481 s print `2s/step` (rounded): elapsed / steps, median 1.916
    doc = read(_keras(range(11, 15), 250, [478, 481, 477, 480], "2s"))
    assert doc["step_time_s"]["median"] == 1.916


def test_a_keras_bars_milliseconds_per_step_beat_its_whole_seconds() -> None:
    # negative: `- 6s 243ms/step` over 25 steps: 6 s / 25 = 0.24 is rounded to 8 %; 243 ms is not
    doc = read(_keras(range(11, 15), 25, [6, 6, 6, 6], "243ms"))
    assert doc["step_time_s"]["median"] == 0.243


# -- a tqdm bar first seen mid-way (`initial=` a resumed step): its rate is the step time --------
def _tqdm(n: int, total: int, elapsed: str, rate: str) -> str:
    return (f"Steps:  {100 * n // total}%|█████▌     | {n}/{total} [{elapsed}<12:00, {rate}, "
            f"loss=0.112, lr=5e-05]")


def test_a_bar_whose_rate_outruns_its_elapsed_began_mid_way() -> None:
    # hand-varied: 3000 steps at 4.10 s/it would take 3.4 h; 20:30 elapsed is 300 steps since
    # the bar was resumed at 2700
    doc = read([_tqdm(3000, 5000, "20:30", "4.10s/it")])
    assert abs(doc["step_time_s"]["median"] - 4.1) < 0.02


def test_a_bar_whose_rate_agrees_with_its_elapsed_counts_from_zero() -> None:
    # negative: 3000 steps in 41:40 at 0.86 s/it (EMA; the mean is 0.833): elapsed / n
    doc = read([_tqdm(3000, 5000, "41:40", "0.86s/it")])
    assert abs(doc["step_time_s"]["median"] - 2500 / 3000) < 0.001


def test_a_bars_final_draw_with_a_slow_last_rate_still_counts_from_zero() -> None:
    # negative: at n = N tqdm's EMA holds the loop's end (2000 steps in 16:40, 1.9 s/it)
    doc = read([_tqdm(2000, 2000, "16:40", "1.90s/it")])
    assert abs(doc["step_time_s"]["median"] - 0.5) < 0.001


# -- rate lines of steps and no counter (TPUEstimator's `global_step/sec`) ----------------------
def test_rate_lines_of_steps_with_no_counter_give_the_step_time() -> None:
    # hand-varied (Estimator-style, another model): each value printed by two handlers
    lines = []
    for rate in (2.41, 2.52, 2.47, 2.50, 2.44):
        lines += [f"INFO:tensorflow:global_step/sec: {rate}",
                  f"I0704 10:00:01.123456 1404 basic_session_run_hooks.py:702] global_step/sec: "
                  f"{rate}", f"INFO:tensorflow:examples/sec: {rate * 32:.2f}"]
    doc = read(lines)
    assert doc["steps"]["last"] is None
    assert abs(doc["step_time_s"]["median"] - 1 / 2.47) < 1e-4
    assert doc["step_time_s"]["count"] == 5  # twice-printed values once


def test_rate_lines_of_examples_are_not_a_step_time() -> None:
    # negative: throughput alone (`examples/sec`) says nothing of a step
    lines = [f"INFO:tensorflow:examples/sec: {r}" for r in (80.1, 79.4, 81.0, 80.6)]
    assert read(lines)["step_time_s"]["median"] is None


def test_a_bars_final_draw_far_beyond_its_elapsed_began_mid_way() -> None:
    # hand-varied: a resumed bar closing at 4000/4000 after 25:00 at 7.5 s/it (200 steps)
    doc = read([_tqdm(4000, 4000, "25:00", "7.50s/it")])
    assert abs(doc["step_time_s"]["median"] - 7.5) < 0.01
