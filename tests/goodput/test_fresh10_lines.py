"""Line kinds the fresh10 first-contact batch showed missing, each read on the case's real lines
and on a negative beside it: a round counter in brackets before a TAB (M12), a save glued after a
progress record's `||` fields and a duration whose unit closes the sentence (M03), a counter
glued to its name after a sentence (M07) or to `step_` (M04), numbered save lines with lines
between (M04), an unnamed `n/N` apart from a table row's number (M19), a tie of bar totals (M16),
a constant clock that matches no time between lines (M13), an integer between a name and its
fraction (M01), per-array save lines and an epoch between dumps (M15), stamps no item carries
(M18), Bert-VITS2's model files (M08) and a prompt that says how to save (M09).
"""

from __future__ import annotations

from gpuslo.goodput.logs import load_profiles
from gpuslo.goodput.logs.assemble import assemble
from gpuslo.goodput.logs.reader import parse_lines

PROFILES = load_profiles()


def read(lines: list[str]) -> dict:
    parsed = parse_lines(lines, PROFILES)
    return assemble(parsed, job="t", gpus=1, checkpoint_step=PROFILES.checkpoint_step).document


# -- XGBoost's evaluation log, verbose_eval=10 (dmlc/xgboost#2437, fresh10 M12) ----------------
XGBOOST = ["[0]\ttrain-rmse:0.473405", "[10]\ttrain-rmse:0.283467", "[20]\ttrain-rmse:0.169742",
           "[30]\ttrain-rmse:26.6116", "[40]\ttrain-rmse:1039.72", "[99]\ttrain-rmse:897.348"]


def test_a_bracketed_round_before_a_tab_is_the_step() -> None:
    doc = read(XGBOOST)
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (0, 99)


def test_a_viewers_line_number_before_a_space_is_still_a_prefix() -> None:
    # negative: `[1745] ` then a message is a log viewer's line number, not the job's counter
    lines = [f"[{1745 + i}] train-rmse:0.{47 + i}" for i in range(6)]
    assert read(lines)["steps"]["first"] is None


# -- ssd.pytorch's train.py (amdegroot/ssd.pytorch#101, fresh10 M03) ---------------------------
SSD = ["Timer: 7.2530 sec.", "iter 0 || Loss: 27.0166 || Saving state, iter: 0",
       "Timer: 0.2107 sec.", "iter 10 || Loss: 15.7912 || Timer: 0.2110 sec.",
       "iter 20 || Loss: 17.3288 || Timer: 0.2107 sec.",
       "iter 30 || Loss: 16.7687 || Timer: 0.2109 sec.",
       "iter 40 || Loss: 12.1029 || Timer: 0.2092 sec."]


def test_a_save_glued_after_the_progress_fields_is_a_save_of_its_step() -> None:
    doc = read(SSD)
    assert [s["step"] for s in doc["checkpoint_saves"]] == [0]
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (0, 40)


def test_a_progress_field_named_like_a_save_is_no_save() -> None:
    # negative: the segment after `||` must open with the save's word, not hold it in a name
    lines = [line.replace("Saving state, iter: 0", "Timer: 0.2107 sec.") for line in SSD]
    lines[3] = "iter 10 || Loss: 15.7912 || saved_lr: 0.001 || Timer: 0.2110 sec."
    assert read(lines)["checkpoint_saves"] == []


def test_seconds_whose_unit_ends_the_sentence_are_the_step_time() -> None:
    assert read(SSD)["step_time_s"]["median"] == 0.2108


def test_a_number_before_a_sentence_ending_word_that_is_no_unit_is_no_time() -> None:
    # negative: `Timer: 3 steps.` names no unit of time
    lines = [f"iter {10 * i} || Loss: 1.5 || Timer: 3 steps." for i in range(5)]
    assert read(lines)["step_time_s"]["median"] is None


# -- hualin95/Deeplab-v3plus train_cityscapes.py (its issue #4, fresh10 M07) --------------------
DEEPLAB = ["2018-12-12 10:11:18,731 - root - INFO - =>saving a new best checkpoint...",
           "2018-12-12 10:11:23,507 - root - INFO - Training one epoch...",
           "2018-12-12 10:11:30,239 - root - INFO - The train loss of epoch3-batch-0:0.35167",
           "2018-12-12 10:15:39,260 - root - INFO - The train loss of epoch3-batch-50:0.23037",
           "2018-12-12 10:19:44,211 - root - INFO - The train loss of epoch3-batch-100:0.26938",
           "2018-12-12 10:23:47,616 - root - INFO - The train loss of epoch3-batch-150:0.18850"]


def test_a_counter_glued_to_its_name_after_a_sentence_is_the_step() -> None:
    doc = read(DEEPLAB)
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (0, 150)
    assert abs(doc["step_time_s"]["median"] - 4.899) < 0.01


def test_a_glued_name_of_another_loop_is_no_step() -> None:
    # negative: the glued token names a validation batch (`val-batch`): not the training steps
    lines = [line.replace("epoch3-batch", "epoch3-val_batch") for line in DEEPLAB]
    assert read(lines)["steps"]["first"] is None


# -- Tianxiaomo/pytorch-YOLOv4's train.py (its issue #354, fresh10 M04) ------------------------
YOLO = ["2020-12-21 19:00:10,276 train.py[line:448] INFO: Created checkpoint directory",
        "2020-12-21 19:00:10,746 train.py[line:453] INFO: Checkpoint 1 saved !",
        "2020-12-21 19:06:25,537 train.py[line:448] INFO: Created checkpoint directory",
        "2020-12-21 19:06:25,999 train.py[line:453] INFO: Checkpoint 2 saved !",
        "2020-12-21 19:06:32,426 train.py[line:412] DEBUG: Train step_320: loss : 252729.1,"
        "loss xy : 498.70，loss cls : 884.03,lr : 1.6e-10",
        "2020-12-21 19:12:45,360 train.py[line:448] INFO: Created checkpoint directory",
        "2020-12-21 19:12:45,827 train.py[line:453] INFO: Checkpoint 3 saved !",
        "2020-12-21 19:19:12,259 train.py[line:412] DEBUG: Train step_640: loss : 252508.5,"
        "loss xy : 534.02，loss cls : 956.49,lr : 2.56e-09"]


def test_a_counter_glued_to_step_underscore_is_the_step() -> None:
    doc = read(YOLO)
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (320, 640)
    assert abs(doc["step_time_s"]["median"] - 2.374) < 0.001


def test_a_counter_glued_to_a_longer_word_is_no_step() -> None:
    # negative: `xstep_320` is a name with a number in it, not `step_` and its counter
    lines = [line.replace("step_", "xstep_") for line in YOLO]
    assert read(lines)["steps"]["first"] is None


def test_numbered_saved_lines_with_no_progress_between_are_saves_each() -> None:
    assert len(read(YOLO)["checkpoint_saves"]) == 3


def test_one_saved_line_every_rank_prints_is_one_save() -> None:
    # negative: the same text again (each rank's copy) is the same save, not another
    lines = ["step 10 loss 1.0", "step 20 loss 0.9", "step 30 loss 0.8", "Checkpoint 1 saved !",
             "Checkpoint 1 saved !", "step 40 loss 0.7"]
    assert len(read(lines)["checkpoint_saves"]) == 1


# -- EasyOCR's trainer/train.py (JaidedAI/EasyOCR#1192, fresh10 M19) ---------------------------
EASYOCR = ["       [20000/300000] Train loss: 0.14954, Valid loss: 0.09600, "
           "Elapsed_time: 1291.66819",
           "\tCurrent_accuracy : 90.000, Current_norm_ED  : 0.9200",
           "\t" + "-" * 80, "\tGround Truth              | Prediction                | Confidence",
           "\t" + "-" * 80,
           "\t23 Church St              | 23 Church St              | 0.7626\tTrue",
           "\t049481                    | 049481                    | 0.9509\tTrue",
           "\t" + "-" * 80,
           "\t[40000/300000] Train loss: 0.11850, Valid loss: 0.12338, Elapsed_time: 2585.50984"]


def test_a_table_row_opening_with_a_number_is_not_the_n_of_n_slash_n() -> None:
    doc = read(EASYOCR)
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (20000, 40000)
    assert doc["restarts"] == []
    assert abs(doc["step_time_s"]["median"] - 0.0647) < 0.0001


def test_two_templates_of_one_n_slash_n_counter_are_still_one_family() -> None:
    # negative: the same unnamed `[n/N]` counter in two wordings is one counter, read across both
    lines = ["[100/300] Train loss: 0.5", "[200/300] Train loss: 0.4, Valid loss: 0.3",
             "[300/300] Train loss: 0.3", "[400/300] Train loss: 0.2, Valid loss: 0.3"]
    doc = read(lines)
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (100, 400)


# -- superpoint_graph's learning/main.py (loicland/superpoint_graph#122, fresh10 M16) -----------
SPG_CASE = ("M16_superpoint-graph-spg-2019-epoch-88-90-of-450-tqdm-bars-then-traceback-in-epoch-"
            "90-iter-1.log")


def test_a_tie_of_bar_totals_goes_to_the_training_bars_n() -> None:
    from pathlib import Path
    lines = (Path(__file__).parent.parent / "data" / "training_logs" / "fresh10" / "cases" /
             SPG_CASE).read_text().splitlines()
    doc = read(lines)
    # the epoch-90 bar `1/11` is the training's; the evaluation bar `4/4` is left out
    assert doc["restarts"] == []
    assert doc["steps"]["printed_last"] == 1
    assert len(doc["interruptions"]) == 1


def test_the_n_drawn_more_often_is_the_usual_one_without_a_tie() -> None:
    # negative: no tie (4 drawn twice, 11 once): the usual N stays the more common 4
    bar = "100%|##########| {n}/{t} [00:02<00:00,  4.86it/s]"
    lines = [bar.format(n=4, t=4), "-> Test accuracy: 80.0", bar.format(n=4, t=4),
             "-> Test accuracy: 81.0", bar.format(n=11, t=11)]
    doc = read(lines)
    assert doc["steps"]["printed_last"] == 4


# -- ILM-ASSL's train.py (its issue thread, 2023; fresh10 M13) ---------------------------------
ILM = ["[2023-03-13 09:06:10,661][       train.py][line: 833][    INFO] [3:20 high] iter "
       "[11220/49000] LR 0.00198 Sup 1.3578 Unsup 0.2357 Contra 1.6587 mIoU 85.94",
       "[2023-03-13 09:07:02,919][       train.py][line: 833][    INFO] [3:20 high] iter "
       "[11230/49000] LR 0.00198 Sup 1.3517 Unsup 0.2431 Contra 1.7105 mIoU 86.03",
       "[2023-03-13 09:07:59,184][       train.py][line: 833][    INFO] [3:20 high] iter "
       "[11240/49000] LR 0.00198 Sup 1.4172 Unsup 0.2362 Contra 1.7023 mIoU 86.06",
       "[2023-03-13 09:08:53,960][       train.py][line: 833][    INFO] [3:20 high] iter "
       "[11250/49000] LR 0.00198 Sup 1.3491 Unsup 0.2575 Contra 1.7118 mIoU 85.99",
       "[2023-03-13 09:09:47,802][       train.py][line: 833][    INFO] [3:20 high] iter "
       "[11260/49000] LR 0.00198 Sup 1.3237 Unsup 0.2175 Contra 1.6902 mIoU 85.97"]


def test_a_constant_clock_that_matches_no_time_between_lines_is_a_label() -> None:
    assert abs(read(ILM)["step_time_s"]["median"] - 5.431) < 0.01


def test_a_constant_clock_near_the_time_between_lines_is_still_the_window() -> None:
    # negative: `[0:54 …]` is near the 52-57 s between the lines: a window's time, read per step
    lines = [line.replace("[3:20 high]", "[0:54 high]") for line in ILM]
    assert abs(read(lines)["step_time_s"]["median"] - 5.4) < 0.01


# -- NVIDIA/tacotron2's train.py (its issue #368, fresh10 M01) ---------------------------------
TACOTRON = ["Epoch: 0", "Train loss 0 48.220909 Grad Norm 13.484264 5.71s/it",
            "Validation loss 0: 37.061010  ",
            "Saving model and optimizer state at iteration 0 to /data/models/x/checkpoint_0",
            "Train loss 1 35.229748 Grad Norm 25.020286 3.79s/it",
            "Train loss 2 16.508032 Grad Norm 17.146819 3.99s/it",
            "Train loss 3 9.564240 Grad Norm 13.827114 3.99s/it",
            "Train loss 4 5.843519 Grad Norm 6.745416 3.99s/it"]


def test_an_integer_between_a_name_and_its_fraction_is_the_counter() -> None:
    doc = read(TACOTRON)
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (0, 4)
    assert doc["step_time_s"]["median"] == 3.99


def test_a_constant_integer_between_a_name_and_its_fraction_is_no_counter() -> None:
    # negative: `top 5 0.92` (top-5 accuracy) prints the same 5 on every line: not a count
    lines = [f"Train top 5 0.9{i}21 grad {i + 1}.5" for i in range(5)]
    assert read(lines)["steps"]["first"] is None


# -- theano_alexnet's train.py (uoguelph-mlrg/theano_alexnet#33, fresh10 M15) -------------------
ALEXNET = ["... training", "epoch 1: validation loss nan ", "epoch 1: validation error nan %",
           "weight saved: W_0_1", "weight saved: b_0_1", "weight saved: W0_1_1",
           "weight saved: W1_1_1", "weight saved: W_2_1", "weight saved: b_2_1",
           "epoch 2: validation loss nan ", "epoch 2: validation error nan %",
           "weight saved: W_0_2", "weight saved: b_0_2"]


def test_one_line_per_array_is_one_save_and_an_epoch_between_starts_another() -> None:
    assert len(read(ALEXNET)["checkpoint_saves"]) == 2
    assert len(read(ALEXNET[:9])["checkpoint_saves"]) == 1


def test_a_weight_saved_as_a_number_is_no_checkpoint() -> None:
    # negative: `saved` before the name is not a weight written (`saved weight decay 0.01`)
    lines = ["epoch 1: loss 0.5", "saved weight decay 0.01 to the config", "epoch 2: loss 0.4"]
    assert read(lines)["checkpoint_saves"] == []


# -- Mozilla DeepSpeech 0.6's DeepSpeech.py (mozilla/DeepSpeech#2414, fresh10 M18) --------------
DEEPSPEECH = [
    "INFO:tensorflow:Restoring parameters from /ckpt/train-229122",
    "I1008 10:30:58.323175 140310328948544 saver.py:1280] Restoring parameters from "
    "/ckpt/train-229122",
    "I Restored variables from most recent checkpoint at /ckpt/train-229122, step 229122",
    "I STARTING Optimization",
    "Epoch 0 |   Training | Elapsed Time: 0:05:12 | Steps: 22740 | Loss: 0.485720   ",
    "I Saved new best validating model with loss 0.975475 to: /ckpt/best_dev-251862",
    "I FINISHED optimization in 0:05:43.925413",
    "I1008 10:36:43.868929 140310328948544 saver.py:1280] Restoring parameters from "
    "/ckpt/best_dev-251862"]


def test_stamps_on_lines_no_item_carries_are_no_lead_in() -> None:
    doc = read(DEEPSPEECH)
    assert "lead_in_s" not in doc
    assert doc["span_s"] < 400


def test_stamps_the_items_carry_still_bound_the_span() -> None:
    # negative: stamped progress lines anchor the clock; the span is stamp to stamp
    lines = [f"I1008 10:3{i}:00.000000 1 train.py:1] step {100 * i} loss 0.5" for i in range(5)]
    doc = read(lines)
    assert doc["span_s"] == 240.0


# -- Bert-VITS2's train_ms.py (YYuX-1145/Bert-VITS2-Integration-package#66, fresh10 M08) -------
VITS2 = ["INFO:models:Saving model and optimizer state at iteration 10 to Data\\Bert0\\models\\"
         f"{name}_1000.pth" for name in ("G", "D", "WD", "DUR")]


def test_every_vits_model_file_names_the_global_step_not_the_epoch() -> None:
    doc = read(["Epoch 10 step 990 loss 2.0", *VITS2, "Epoch 11 step 1010 loss 2.0"])
    assert {s["step"] for s in doc["checkpoint_saves"]} == {1000}


def test_another_file_name_leaves_the_iteration_the_step() -> None:
    # negative: `model_1000.pth` is no VITS model file: `iteration 10` stays the step named
    lines = [line.replace("DUR_1000", "model_1000") for line in VITS2[3:]]
    doc = read(["step 5 loss 2.0", *lines, "step 15 loss 2.0"])
    assert [s["step"] for s in doc["checkpoint_saves"]] == [10]


# -- faceswap's train (deepfakes/faceswap#125, fresh10 M09) -------------------------------------
def test_a_prompt_that_says_how_to_save_is_no_save() -> None:
    lines = ["step 1 loss 0.5", "step 2 loss 0.4", "step 3 loss 0.3",
             'Starting. Press "Enter" to stop training and save model', "step 4 loss 0.2"]
    assert read(lines)["checkpoint_saves"] == []


def test_a_save_worded_as_an_order_is_still_a_save() -> None:
    # negative: `Save model to <path>` opening the line is a save begun
    lines = ["step 1 loss 0.5", "step 2 loss 0.4", "step 3 loss 0.3",
             "Save model to /runs/x/ckpt_3.pt", "step 4 loss 0.2"]
    assert [s["step"] for s in read(lines)["checkpoint_saves"]] == [3]
