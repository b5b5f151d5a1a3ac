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
