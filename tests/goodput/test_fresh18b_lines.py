"""Classes read on the fresh18 first-contact batch's real lines (the second fixer's cases), each
with a negative that must not be read that way: a best-result line ending `→ saved` is a save,
and an epoch counter inside a cross-validation fold starts again per fold without a restart
(THGNN, V16).
"""

from __future__ import annotations

from tests.goodput.batch_lines import case as batch_case
from tests.goodput.batch_lines import read


def case(name: str) -> list[str]:
    return batch_case("fresh18", name)


# -- `*** New best AUC=… → saved` after each improving epoch (THGNN train_cv.py, fresh18 V16) ------
def test_a_best_result_line_ending_arrow_saved_is_a_save() -> None:
    doc = read(case("V16"))
    assert len(doc["checkpoint_saves"]) == 11


def test_a_best_result_not_saved_or_without_the_word_is_no_save() -> None:
    # negatives: the same line saying it was not saved, and a best metric with no save word
    lines = [f"  [Fold 1 Ep {e:03d}] tr_loss=0.2590 tr_auc=0.4949 | val_auc=0.3667 | 2.{e}s"
             for e in range(1, 4)]
    lines.insert(1, "  *** New best AUC=0.3667 F1=0.4351 (not saved)")
    lines.insert(3, "  New best model! acc 0.91")
    assert read(lines)["checkpoint_saves"] == []


# -- an epoch counter per cross-validation fold: `[Fold 2 Ep 001]` after `[Fold 1 Ep 048]` ---------
def test_an_epoch_counter_starting_again_where_its_fold_rises_is_no_restart() -> None:
    doc = read(case("V16"))
    assert doc["restarts"] == []
    assert doc["interruptions"] == []
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (1, 53)  # 48 + 5 epochs


def _epochs(fold: int | None, last: int) -> list[str]:
    tag = f"Fold {fold} " if fold is not None else ""
    return [f"  [{tag}Ep {e:03d}] tr_loss=0.2{e:03d} tr_auc=0.4949 | val_auc=0.3667 | 2.1s"
            for e in range(1, last + 1)]


def test_an_epoch_counter_going_back_with_no_fold_or_the_same_fold_stays_a_restart() -> None:
    # negatives: no fold on the line, and the fold printed again unchanged
    assert len(read(_epochs(None, 6) + _epochs(None, 3))["restarts"]) == 1
    assert len(read(_epochs(1, 6) + _epochs(1, 3))["restarts"]) == 1
    assert read(_epochs(1, 6) + _epochs(2, 3))["restarts"] == []


# -- an epoch label that lags the counter's wrap (PaddleGAN's trainer, fresh18 V08) ----------------
def test_an_iteration_wrapped_at_n_under_the_old_epoch_label_belongs_to_the_next_epoch() -> None:
    doc = read(case("V08"))
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (10, 1970)
    assert doc["restarts"] == []


def _paddle(pairs: list[tuple[int, int]]) -> list[str]:
    return [f"[05/20 04:{13 * k // 60:02d}:{13 * k % 60:02d}] ppgan.engine.trainer INFO: Epoch: "
            f"{e}/100, iter: {i}/989 lr: 2.000e-04 perceptual: 102.612 batch_cost: 1.1 sec"
            for k, (e, i) in enumerate(pairs)]


def test_a_counter_falling_by_other_than_its_wrap_keeps_its_epoch_label() -> None:
    # negatives: 980 + 10 wraps to 1 at N = 989 (the next epoch's); a fall to 1 from 950 (not the
    # stride wrapped), or with the epoch not rising next, is the counter going back
    wrapped = [(1, i) for i in range(900, 990, 10)] + [(1, 1)] + [(2, i) for i in range(11, 60, 10)]
    assert read(_paddle(wrapped))["restarts"] == []
    fell = [(1, i) for i in range(870, 960, 10)] + [(1, 1)] + [(2, i) for i in range(11, 60, 10)]
    assert len(read(_paddle(fell))["restarts"]) == 1
    stays = [(1, i) for i in range(900, 990, 10)] + [(1, 1)] + [(1, i) for i in range(11, 60, 10)]
    assert len(read(_paddle(stays))["restarts"]) == 1


# -- a fast tqdm bar redrawn every 0.1 s, 13 batches a draw (SeqAR-Diffusion, fresh18 V15) --------
def test_a_fast_bar_jumping_at_its_own_pace_in_its_first_second_goes_on() -> None:
    doc = read(case("V15"))
    assert abs(doc["step_time_s"]["median"] - 20 / 2590) < 0.0002  # [00:20] for 2590 a bar
    assert doc["restarts"] == []


def _bar(n: int, s: int) -> str:
    return f" {n * 100 // 3000:2d}%|          | {n}/3000 [00:{s:02d}<20:50,  2.00it/s]"


def test_a_bar_jumping_more_than_its_rate_allows_at_00_00_began_mid_way() -> None:
    # negative: 499 steps at 2 it/s cannot pass in the first second: the bar began at a resumed
    # step (tqdm's initial=), and its steps take its rate's 0.5 s, not 20 s / 540
    lines = [_bar(1, 0), _bar(500, 0)] + [_bar(500 + 20 * k, 10 * k) for k in range(1, 6)]
    assert abs(read(lines)["step_time_s"]["median"] - 0.5) < 0.03


# -- TRL's SFTTrainer tail: an eval bar's end, the training bar, a final eval (fresh18 V14) -------
def test_the_tail_of_an_eval_bar_the_log_opens_inside_is_no_training_loop() -> None:
    doc = read(case("V14"))
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (1600, 1755)
    assert doc["restarts"] == []
    assert abs(doc["step_time_s"]["median"] - 21.2) < 0.05 * 21.2


def _eval(n: int, s: int) -> str:
    return f"{n * 100 // 984:3d}%|#####     | {n}/984 [{s // 60:02d}:{s % 60:02d}<00:01,  3.50it/s]"


def _train(k: int) -> str:
    t = 21 * k
    return f" 91%|#####     | {1600 + k}/1755 [10:{t // 60:02d}:{t % 60:02d}<53:33, 21.00s/it]"


def test_a_bar_drawn_from_its_start_before_the_other_is_not_taken_for_an_eval_tail() -> None:
    final = [_eval(n, n // 4) for n in range(1, 985, 7)]
    train = [_train(k) for k in range(41)]
    tail = [_eval(n, 280 + n - 979) for n in range(979, 985)]
    doc = read(tail + train + final)
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (1600, 1640)
    # negative: the 984 bar opens from 1 before the 1755 bar: not the tail of an evaluation
    assert read(final + train + final)["steps"]["first"] == 1


def test_a_save_naming_a_step_below_its_runs_first_is_at_the_last_step() -> None:
    doc = read(case("V14"))  # `💾 Step 7: Saving final model...` after 1755/1755, said again
    assert [s["step"] for s in doc["checkpoint_saves"]] == [1755]


def test_a_save_naming_a_step_of_its_run_or_said_again_after_steps_stays() -> None:
    # negatives: a save naming a step the run passed keeps it; the same path saved again after
    # more steps is another save
    train = [_train(k) for k in range(41)]
    lines = train[:20] + ["Step 1610: Saving checkpoint...", "Model saved to: ./out/ckpt"]
    lines += train[20:] + ["Model saved to: ./out/ckpt"]
    assert [s["step"] for s in read(lines)["checkpoint_saves"]] == [1610, 1640]
