"""Line classes the fresh21 first-contact batch showed misread (11/15 at first contact,
tests/data/first_contact/training_logs_fresh21_2026-12-07.txt), each on the case's real lines
(tests/data/training_logs/fresh21, SOURCES_y.md) with a negative beside it: a similar line that
must not be read that way."""

from __future__ import annotations

from gpuslo.goodput.logs.tokens import template, values
from gpuslo.goodput.logs.wording import Wording
from tests.goodput.batch_lines import PROFILES, read

WORDING = Wording(PROFILES)


def kinds(text: str) -> list[str]:
    return [rule.kind for rule, _, _ in WORDING.match(text)]


# -- pytracking ltr 2022 (fresh21 Y01): BaseTrainer's fail-safe, then epoch 35's stats ----------
def y01_record(batch: int, fps: str) -> str:
    return (f"[train: 35, {batch} / 1000] FPS: {fps}  ,  Loss/total: 3.4{batch % 7}968  ,  "
            f"Loss/segm: 1.38611  ,  Stats/acc: 0.81421  ,  Stats/clf_acc: 0.82711")


Y01 = ["Restarting training from last epoch ...", y01_record(50, "4.0 (7.9)"),
       y01_record(100, "5.4 (8.5)"), y01_record(150, "6.1 (8.0)")]


def test_a_trainer_restarting_its_training_is_a_restart() -> None:
    assert "restart" in kinds("Restarting training from last epoch ...")
    assert "restart" in kinds("Relaunching training after failure (attempt 2/3)")
    assert "restart" in kinds("INFO: retrying training from checkpoint ckpt-100")
    doc = read(Y01)
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (50, 150)
    assert len(doc["restarts"]) == 1


def test_a_schedule_restarted_or_a_step_retried_is_no_restart() -> None:
    # negative: SGDR's warm restarts, a learning-rate schedule restarted, one step retried, and
    # a help text's instruction name no training begun again
    for text in ("Restarting the learning-rate schedule", "Using SGDR with warm restarts (T_0=10)",
                 "retrying training step 5 after a NaN loss",
                 "hint: restart training with --resume to continue"):
        assert "restart" not in kinds(text), text
    lines = ["Using SGDR with warm restarts (T_0=10)", *Y01[1:]]
    assert read(lines)["restarts"] == []


# -- CogVideo finetune trainer 2025 (fresh21 Y08): a step, then the trainer's start-up ----------
Y08_BAR = ("Training steps:   2%|▍                      | 1/54 [43:50<38:43:26, 2630.32s/it, "
           "grad_norm=0.00171, loss=0.203, lr=1e-5]")
Y08_STARTUP = [
    "05/13/2025 20:39:25 - INFO - trainer - Initialized Trainer",
    "05/13/2025 20:39:25 - INFO - trainer - Accelerator state:",
    "Distributed environment: NO",
    "Num processes: 1",
    "05/13/2025 20:39:25 - INFO - trainer - Initializing models",
    "05/13/2025 20:39:33 - INFO - trainer - Initializing optimizer and lr scheduler",
    "05/13/2025 20:39:39 - INFO - trainer - Initializing trackers",
    "05/13/2025 20:39:39 - INFO - trainer - Starting training",
]


def test_the_hf_examples_logger_format_prints_a_run_header() -> None:
    # `%(asctime)s - %(levelname)s - %(name)s - %(message)s`: the level before the logger name
    assert "train_start" in kinds("INFO - trainer - Starting training")
    assert "train_start" in kinds("trainer - INFO - Starting training")
    assert "train_start" not in kinds("INFO - trainer - Initializing models")


def test_a_run_header_after_a_step_is_a_new_launch() -> None:
    doc = read([Y08_BAR, *Y08_STARTUP])
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (1, 1)
    assert len(doc["restarts"]) == 1


def test_a_run_header_before_any_step_or_between_steps_that_go_on_is_none() -> None:
    # negative: the start-up printed twice before any step (two ranks), then the loop
    lines = [*Y08_STARTUP, *Y08_STARTUP[-2:], Y08_BAR]
    assert read(lines)["restarts"] == []
    # negative: a header between records of one counter that goes on (a second stage)
    bar2 = Y08_BAR.replace("2%", "4%").replace("1/54 [43:50", "2/54 [1:27:40")
    lines = [Y08_BAR, "05/13/2025 21:23:00 - INFO - trainer - Starting training stage 2", bar2]
    assert read(lines)["restarts"] == []


# -- AllenNLP 2.x in ContextualSP 2021 (fresh21 Y12): tqdm ascii bar, a traceback glued --------
Y12_BAR = ("ROUGE: 0.0000, EM: 0.0000, F1: 0.0000, F2: 0.0000, F3: 0.0000, BLEU4: 0.0000, "
           "loss: 0.0882 ||:  58%|#####8    | 4573/7882 [21:50<11:54,  4.63it/s]")
Y12 = [Y12_BAR + "Traceback (most recent call last):",
       '  File "/home/u/envs/uttre/bin/allennlp", line 8, in <module>',
       "    sys.exit(run())"]


def test_a_tqdm_ascii_bars_partial_cell_is_a_glyph_not_a_value() -> None:
    assert [v.text for v in values(" 58%|#####8    | 4573/7882 [21:50<11:54,  4.63it/s]")] == [
        "58%", "4573", "7882", "21:50", "11:54", "4.63it/s"]
    assert template(" 58%|#####8    | 4573/7882") == template(" 60%|######    | 4700/7882")


def test_a_digit_between_bars_not_opened_by_a_percentage_stays_a_value() -> None:
    # negative: a table's cell `|8|`, and a digit after `#` outside a bar
    assert [v.text for v in values("| epoch |8| loss |")] == ["8"]
    assert [v.text for v in values("run #3 done")] == ["3"]


def test_an_ascii_bar_with_a_traceback_glued_gives_its_step_and_settled_rate() -> None:
    doc = read(Y12)
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (4573, 4573)
    assert abs(doc["step_time_s"]["median"] - 1 / 4.63) < 1e-3
    assert doc["interruptions"][0]["after_step"] == 4573


def test_an_early_lone_draw_keeps_its_mean_since_the_bar_began() -> None:
    # negative: 40 s and 30 steps in, tqdm's EMA is not settled: elapsed / steps (1.333 s)
    bar = " 10%|#         | 30/300 [00:40<06:00,  1.00s/it]"
    doc = read([bar, "Traceback (most recent call last):", "    x()"])
    assert abs(doc["step_time_s"]["median"] - 40 / 30) < 1e-3


def test_a_lone_final_draw_keeps_its_mean() -> None:
    # negative: a bar's last draw at n = N: its EMA holds the loop's end (an eval, a save)
    bar = "100%|##########| 300/300 [06:00<00:00,  3.00s/it]"
    doc = read([bar, "Traceback (most recent call last):", "    x()"])
    assert abs(doc["step_time_s"]["median"] - 360 / 300) < 1e-3


def test_a_bar_run_of_several_draws_keeps_its_clock() -> None:
    # negative: OpenRLHF's bar (dev A13): the first draw's EMA (6.63 s) strays from the steps'
    # 11.03 s; the run's later draws time it, not the EMA
    post = "pg=-0.0683, rm=-0.5, kl=0, act_lr=4.95e-7]"
    lines = [f"Train epoch [1/1]:  99%|█████████▉| 127/128 [23:32<00:06,  6.63s/it, {post}",
             "Traceback (most recent call last):", "    x()",
             f"Train epoch [1/1]: 100%|██████████| 128/128 [23:32<00:00, 26.11s/it, {post}"]
    assert read(lines)["step_time_s"]["median"] > 10


def test_a_run_header_after_an_untimed_configuration_line_is_none() -> None:
    # negative (fresh14 Q20): a model summary's `Batch=256 RAM` line read as a counter, then
    # the run header and the epoch table: no launch before it had stepped
    lines = ["  Parameters       : 1,173,411", "  Batch=256 RAM    : ~6.3 MB (data)",
             "Starting training — 50 epochs, batch=256", "",
             " Epoch | TrainLoss | TrainAcc |  ValLoss |  ValAcc |       LR |   Time",
             "     1 |    1.0164 |   50.80% |   0.8634 |  60.67% | 0.001000 |  19.6s"]
    assert read(lines)["restarts"] == []
