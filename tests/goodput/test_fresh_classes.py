"""Classes of progress reading the fresh first-contact batch of issue 23 showed missing, each
read on hand-varied lines that are not a fresh case's own, with a negative beside it: a similar
line that must not be read that way (a loss, an lr, a validation counter is not progress)."""

from __future__ import annotations

from tests.goodput.test_log_classes import read, steps


# -- a bracketed epoch whose word carries a qualifier: `Epoch(train) [e][n/N]` -----------------
def test_a_qualified_epoch_word_still_names_the_bracketed_epoch() -> None:
    # hand-varied (MMEngine-style, another loop length): epoch 5 to 6 of a 300-iteration epoch
    lines = [f"01/02 10:{m:02d}:00 - mmengine - INFO - Epoch(train) [{e}][{n:>3}/300]  "
             f"lr: 2.0000e-02  time: 0.5000  loss: {1.5 - m / 100:.4f}"
             for m, (e, n) in enumerate([(5, 100), (5, 200), (5, 300), (6, 100), (6, 200)])]
    doc = read(lines)
    assert steps(doc) == (4 * 300 + 100, 5 * 300 + 200)


def test_a_qualified_validation_counter_is_not_training_progress() -> None:
    lines = [f"01/02 10:0{m}:00 - mmengine - INFO - Epoch(train) [5][{n}/300]  loss: 1.{m}"
             for m, n in enumerate([100, 200, 300])]
    lines += [f"01/02 10:0{3 + m}:00 - mmengine - INFO - Epoch(val) [5][{n}/50]  time: 0.2"
              for m, n in enumerate([10, 20])]
    assert steps(read(lines)) == (100, 300)  # one epoch: the counter as printed (epochs.py)


# -- an epoch with its own total beside a per-epoch counter: `Epoch 7/20 iter 3/12` -------------
def test_a_counter_whose_total_is_below_the_epochs_total_restarts_each_epoch() -> None:
    # hand-varied: logged every 25 iterations of 12-iteration epochs, so no reset is ever seen
    # inside one template; 12 < 20 epochs means the counter cannot be job-wide
    pairs = [(7, 3), (9, 4), (11, 5), (13, 6)]
    lines = [f"trainer: Epoch {e}/20 iter {n}/12 | loss: {0.9 - e / 100:.3f} | lr: 1.0e-04"
             for e, n in pairs]
    assert steps(read(lines)) == (6 * 12 + 3, 12 * 12 + 6)  # no epoch 0 printed: from 1


def test_a_job_wide_counter_beside_an_epoch_total_stays_job_wide() -> None:
    # negative: the counter's total (4000) is above the epochs' (20) and it keeps rising
    lines = [f"trainer: Epoch {e}/20 step {n}/4000 | loss: 0.5 | lr: 1.0e-04"
             for e, n in [(1, 150), (2, 350), (3, 550)]]
    assert steps(read(lines)) == (150, 550)


# -- `n of N` is a counter and its total ------------------------------------------------------
def test_n_of_n_beside_an_epoch_is_a_per_epoch_counter() -> None:
    # hand-varied (TF1 session-trainer style): epoch 3 of 10, step 250 of 500
    lines = [f"2021-01-01 00:0{i}:00.000000: epoch 3 of 10, step {n} of 500, loss = 0.{i + 3}"
             f" (120.0 examples/sec; 0.5 sec/batch)" for i, n in enumerate([250, 260, 270])]
    assert steps(read(lines)) == (250, 270)  # one epoch: the counter as printed (epochs.py)


def test_a_loss_of_a_number_is_not_a_total() -> None:
    # negative: `loss 2 of 3 heads` style wording with no counter keeps no epoch arithmetic
    lines = [f"step {n}, loss 2 of 3 heads = 0.{n}" for n in (10, 20, 30)]
    assert steps(read(lines)) == (10, 30)


# -- a counter printed first on the line, cut off by `:` or `|` --------------------------------
def test_an_unnamed_counter_that_opens_the_record_is_the_step() -> None:
    # hand-varied: a bare trainer printing `step | loss | lr | time`, one record every 5 steps
    lines = [f"{n} | loss {4.0 - n / 100:.4f} | lr 1.000000e-04 | {2500 + n % 3}.50ms"
             for n in range(100, 160, 5)]
    doc = read(lines)
    assert steps(doc) == (100, 155)
    assert doc["step_time_s"]["median"] is not None


def test_a_colon_counter_with_its_names_after_the_values_is_the_step() -> None:
    # hand-varied darknet-style: names follow their values (`avg loss`, `seconds`)
    lines = [f" {n}: {3.0 - n / 1e4:.6f}, {2.5:.6f} avg loss, 0.001000 rate, "
             f"{1.2 + (n % 2) / 100:.6f} seconds, {n * 64} images" for n in range(5000, 5004)]
    doc = read(lines)
    assert steps(doc) == (5000, 5003)


def test_a_leading_number_that_does_not_rise_or_has_no_names_is_not_the_step() -> None:
    # negatives: a rank prefix repeated on every line, and a bare row of numbers
    ranked = [f"0: loss 0.{n} | lr 1e-04" for n in range(3, 9)]
    assert steps(read(ranked)) == (None, None)
    bare = [f"{n}: {n * 0.5:.2f}, {n * 0.25:.2f}" for n in (9, 4, 7, 2)]
    assert steps(read(bare)) == (None, None)


# -- a detection-metric validation bar is not training progress -------------------------------
def _bar(head: str, n: int, total: int, secs: int, rate: str) -> str:
    filled = "█" * (10 * n // total)
    return (f"{head}{100 * n // total:3d}%|{filled:<10}| {n}/{total} "
            f"[00:{secs:02d}<00:30, {rate}]")


def test_a_detection_metrics_bar_is_validation() -> None:
    # hand-varied (YOLO-style): the mAP header bar after the training bar is validation
    lines = [_bar("      1/50      6.1G      2.5: ", n, 200, n // 4, "4.00it/s")
             for n in (100, 200)]
    lines.append(_bar("        Class     Images  Instances      P      R      mAP50: ",
                      12, 80, 2, "6.00it/s"))
    assert steps(read(lines)) == (100, 200)


# -- a per-epoch counter that prints no N: the reset where the epoch rises is a new epoch ------
def test_an_untotalled_per_epoch_counter_goes_on_across_the_epoch() -> None:
    # hand-varied (a `Epoch e, batch n,` trainer logging every 10 batches, 40 per epoch)
    lines = [f"2024-03-01 10:{i:02d}:00,000 INFO Epoch {e}, batch {n}, loss[loss=0.{i + 1}], "
             f"lr: 1.0e-03" for i, (e, n) in enumerate([(2, 0), (2, 10), (2, 20), (2, 30),
                                                          (3, 0), (3, 10)])]
    doc = read(lines)
    # job-wide 30 + the stride of 10, then 10 more: an estimate of the epoch's length, so the
    # steps are the counter as printed and the estimate is global_first/last (fresh12 O03, O04)
    assert (doc["steps"]["global_first"], doc["steps"]["global_last"]) == (0, 50)
    assert steps(doc) == (0, 10)
    assert not doc["restarts"]


def test_a_marker_shaped_prefix_does_not_hide_the_step_line() -> None:
    # hand-varied (MXNet-style): `Epoch[7]` summaries share the step lines' opening
    lines = []
    for e in (7, 8):
        lines += [f"2019-01-01 10:{e}{b // 100}:{b % 60:02d},000 INFO Epoch[{e}] Batch [{b}]"
                  f"\tSpeed: 500.00 samples/sec\taccuracy=0.9" for b in (100, 200, 300)]
        lines.append(f"2019-01-01 10:{e}9:00,000 INFO Epoch[{e}] Train-accuracy=0.9")
    doc = read(lines)
    assert steps(doc)[0] == 100 and not doc["restarts"]


def test_a_counter_that_falls_with_no_epoch_change_is_still_a_restart() -> None:
    # negative: the same counter going back inside one epoch is not a new epoch
    lines = [f"2024-03-01 10:{i:02d}:00,000 INFO Epoch 2, batch {n}, loss[loss=0.5], lr: 1e-03"
             for i, n in enumerate([0, 10, 20, 30, 10, 20])]
    assert read(lines)["restarts"]
