"""Line kinds the fresh13 and fresh12 first-contact batches showed missing, each read on the
cases' real lines and on negatives from real logs of other halves: the script's opening lines
printed again as a relaunch (fresh13 P04, P07; fresh12 O19), never a status pair the loop prints
every step (fresh12 O15), a table header printed over every row (fresh4 F22) nor debug lines
printed again as a log ends (fresh6 H12).
"""

from __future__ import annotations

from gpuslo.goodput.logs import load_profiles
from gpuslo.goodput.logs.assemble import assemble
from gpuslo.goodput.logs.opening import same
from gpuslo.goodput.logs.reader import parse_lines

PROFILES = load_profiles()


def read(lines: list[str]) -> dict:
    parsed = parse_lines(lines, PROFILES)
    return assemble(parsed, job="t", gpus=1, checkpoint_step=PROFILES.checkpoint_step).document


# -- the opening printed again before any progress (MathAlphaZero training.log, fresh13 P04) ----
CONFIG = ("参数配置: {'epochs': 100, 'problems_per_epoch': 60, 'simulations': 50, "
          "'batch_size': 32, 'lr': 0.001, 'gamma': 0.96, 'td_lambda': 0.8, 'n_step': 5, "
          "'problem_timeout': 30.0, "
          "'max_depth': 30, 'temperature': 0.5, 'load_model': 'data/brain_3.0.pth', "
          "'save_model': 'data/brain_3.0.pth', 'memory_path': 'data/memory_per.pkl', "
          "'miner_memory': 'data/memory_final_for_miner.pkl', 'no_auto_discover': False")
P04_FIRST = ["2026-05-22 02:54:53,879 - INFO - ====== MathAlphaZero 3.0 "
             "自动训练（修复版）启动 ======",
             f"2026-05-22 02:54:53,879 - INFO - {CONFIG}}}",
             "2026-05-22 02:54:53,880 - INFO - 规则库加载完成，动作空间大小: 20"]
P04_AGAIN = ["2026-05-22 02:56:38,753 - INFO - ====== MathAlphaZero 3.0 "
             "自动训练（最终修复版）启动 ======",
             f"2026-05-22 02:56:38,753 - INFO - {CONFIG}, 'reset': False}}",
             "2026-05-22 02:56:38,754 - INFO - 规则库加载完成，动作空间大小: 20",
             "2026-05-22 02:56:39,151 - INFO - 加载模型: data/brain_3.0.pth (兼容模式)"]
P04_EPOCHS = ["2026-05-22 02:56:39,224 - INFO - Epoch 1/100 | 课程深度: 2 | 经验池大小: 85",
              "2026-05-22 02:57:12,678 - INFO - 训练损失: 32.1293",
              "2026-05-22 02:57:12,716 - INFO - Epoch 1 完成 | 成功率: 15.0% | 累计成功: 9",
              "2026-05-22 02:57:12,716 - INFO - Epoch 2/100 | 课程深度: 2 | 经验池大小: 97",
              "2026-05-22 02:57:44,904 - INFO - 训练损失: 25.0835",
              "2026-05-22 02:57:44,952 - INFO - Epoch 2 完成 | 成功率: 13.3% | 累计成功: 10"]


def test_a_banner_and_configuration_printed_again_are_a_relaunch() -> None:
    assert len(read(P04_FIRST + P04_AGAIN + P04_EPOCHS)["restarts"]) == 1


def test_the_same_opening_printed_once_is_no_relaunch() -> None:
    # negative: the second launch alone
    assert read(P04_AGAIN + P04_EPOCHS)["restarts"] == []


def test_the_opening_printed_again_within_seconds_is_no_relaunch() -> None:
    # negative: two processes printing the same start-up block one after the other (a
    # relaunch is a new process: its first line comes `GAP_S` or more after the line before)
    again = [line.replace("02:56:38", "02:54:54").replace("02:56:39", "02:54:54")
             for line in P04_AGAIN]
    assert read(P04_FIRST + again + P04_EPOCHS)["restarts"] == []


def test_same_line_needs_the_same_numbers() -> None:
    assert same("INFO - ====== MathAlphaZero 3.0 自动训练（修复版）启动 ======",
                "INFO - ====== MathAlphaZero 3.0 自动训练（最终修复版）启动 ======")
    # negative: a loop's status line carries the iteration's numbers
    assert not same("INFO - Epoch 1/100 | 课程深度: 2", "INFO - Epoch 2/100 | 课程深度: 2")


# -- a framed banner printed again by a pipeline that never stepped (fresh12 O19) ---------------
RULE = "=" * 60


def o19(stamp: str, tail: list[str]) -> list[str]:
    return [f"2026-03-14 {stamp} - train - INFO - {RULE}",
            f"2026-03-14 {stamp} - train - INFO - XGBoost Training Pipeline for CFDST Column "
            "Strength Prediction",
            f"2026-03-14 {stamp} - train - INFO - {RULE}",
            f"2026-03-14 {stamp} - train - INFO - Step 1: Loading Data",
            f"2026-03-14 {stamp} - train - INFO - Loaded 670 rows and 23 columns"] + [
                f"2026-03-14 {stamp} - train - INFO - {line}" for line in tail]


O19 = (o19("14:31:13,935", ["Step 2: Preprocessing Data", "Found 670 missing values",
                             "Fitted imputer with strategy: median"])
       + o19("14:31:29,532", ["Step 2: Preprocessing Data", "No missing values found",
                              "Saved model to: output\\linear\\xgboost_model.pkl",
                              "Training Complete!"]))


def test_a_framed_banner_printed_again_is_a_relaunch_and_a_stop() -> None:
    doc = read(O19)
    assert len(doc["restarts"]) == 1
    assert [i["cause"] for i in doc["interruptions"]] == ["unknown"]


def test_a_rule_line_printed_again_alone_is_no_relaunch() -> None:
    # negative: the banner's `====` rules recur through the log (stage frames); only the rule
    # followed by the banner's own second line is the opening printed again
    lines = o19("14:31:13,935", []) + [f"2026-03-14 14:31:29,552 - train - INFO - {RULE}",
                                       "2026-03-14 14:31:29,552 - train - INFO - Starting Optuna "
                                       "Hyperparameter Optimization",
                                       f"2026-03-14 14:31:29,552 - train - INFO - {RULE}"]
    assert read(lines)["restarts"] == []


# -- launches after a finished run, one cut after its first line (csm-1b finetune.log, P07) -----
def p07(stamp: str, lines: list[str]) -> list[str]:
    return [f"2025-05-08 {stamp[k] if isinstance(stamp, list) else stamp} - __main__ - INFO - "
            f"{line}" for k, line in enumerate(lines)]


LOAD = "Loading CSM model: sesame/csm-1b"
FALLBACK = "Falling back to random init for codebook_embedding"
P07 = (p07("20:59:07,241", [LOAD]) + p07("20:59:26,186", [FALLBACK, "Applying LoRA to model..."])
       + [line for e in range(1, 4) for line in p07(
           [f"21:0{e}:00,000", f"21:0{e}:30,000", f"21:0{e}:59,000"],
           [f"Starting epoch {e}/3", f"Calculating validation loss at step {e - 1}...",
            f"Saved checkpoint to finetuned_model\\checkpoint-epoch-{e}"])]
       + p07("21:04:02,596", ["Finetuning completed successfully!"])
       + p07("21:29:34,688", [LOAD]) + p07("21:30:09,176", [FALLBACK])
       + p07("21:31:31,437", ["Starting epoch 1/3"])
       + p07("21:49:03,738", [LOAD])  # cut after its first line
       + p07("21:49:52,584", [LOAD]) + p07("21:50:10,337", [FALLBACK])
       + p07("21:54:22,533", ["Starting epoch 1/3"]))


def test_each_launch_is_a_restart_one_cut_after_its_first_line_too() -> None:
    assert len(read(P07)["restarts"]) == 3


# -- negatives from other halves' real logs ------------------------------------------------------
def test_a_status_pair_the_loop_prints_every_step_is_no_relaunch() -> None:
    # colossalai's dreambooth (fresh12 O15): a rich-wrapped location line, then the step's
    # `max GPU_mem cost`, every 1-2 s
    lines = [line for k in range(12) for line in (
        f"[04/12/24 17:15:{10 + 2 * k:02d}] INFO     colossalai - colossalai - INFO: "
        "/home/users/train_dreambooth_colossalai.py:669 main",
        "                    INFO     colossalai - colossalai - INFO: max GPU_mem cost is "
        "3812.8251953125 MB")]
    assert read(lines)["restarts"] == []


def test_a_table_header_over_every_row_is_no_relaunch() -> None:
    # nerfstudio's rich table (fresh4 F22): the header and its rule printed before each row,
    # the step going on after each
    lines = [line for step in range(4090, 4690, 100) for line in (
        "Step (% Done)       Train Iter (time)    ETA (time)           Train Rays / Sec",
        "-" * 83,
        f"{step} ({step / 50:.2f}%)       43.140 ms            39 s, 300.687 ms     14.86 M")]
    assert read(lines)["restarts"] == []


def test_debug_lines_printed_again_as_the_log_ends_are_no_relaunch() -> None:
    # FastMaskRCNN's debug prints (fresh6 H12): `classes` / `['background']` again after the
    # step line, then the OOM killer: nothing shows a run begun again
    lines = ["classes", "['background']", "111111111begin iter 2222222222",
             "iter 144: image-id:0254212, time:1.722(sec), regular_loss: 0.248765",
             "labels", "[]", "classes", "['background']", "", "**Killed**"]
    assert read(lines)["restarts"] == []


# -- a launch that never stepped: its dump after the error is no checkpoint (P07) ---------------
PARTIAL = (P07[:-1]
           + p07("21:50:20,128", ["Calculating initial validation loss..."])
           + ["2025-05-08 21:50:20,192 - __main__ - ERROR - Traceback (most recent call last):",
              '  File "E:\\PythonApps\\csm-streaming\\lora_no_whsiper.py", line 1112, in main',
              "soundfile.LibsndfileError: Error opening '.\\\\data\\\\egri_csillagok_0002.wav': "
              "System error."]
           + p07("21:50:31,426", ["Saved partial model to finetuned_model\\model_partial."
                                  "safetensors despite errors"]))


def test_a_save_after_the_error_of_a_launch_that_never_stepped_is_no_checkpoint() -> None:
    doc = read(PARTIAL)
    assert len(doc["checkpoint_saves"]) == 3  # the three epochs' saves, not the dump
    assert any("never stepped" in note for note in doc["notes"])


def test_the_same_save_after_an_error_in_a_launch_that_stepped_is_listed() -> None:
    # negative: the first launch, which stepped, saves after an error line: its save is judged
    # as any save (no stop follows it: listed)
    lines = P07[:11] + PARTIAL[-4:-1] + P07[11:12]
    assert len(read(lines)["checkpoint_saves"]) == 3


# -- evaluations naming their step as the only step line (P07) -----------------------------------
def test_evaluations_at_each_step_are_the_steps_where_no_step_line_is_printed() -> None:
    doc = read(P07[:14])
    assert (doc["steps"]["printed_first"], doc["steps"]["printed_last"]) == (0, 2)
    assert doc["step_time_s"]["median"] is not None


def test_evaluations_beside_step_lines_are_not_the_steps() -> None:
    # negative: a loop that prints its own step lines (`Step 5 | Loss: …`): those are the steps
    lines = [line for k in range(1, 7) for line in (
        f"2025-05-08 21:0{k}:00,000 - __main__ - INFO - Step {10 * k} | Loss: 2.{k}",
        f"2025-05-08 21:0{k}:30,000 - __main__ - INFO - Calculating validation loss at step "
        f"{10 * k - 3}...")]
    doc = read(lines)
    assert (doc["steps"]["printed_first"], doc["steps"]["printed_last"]) == (10, 60)


def test_evaluations_at_irregular_steps_or_at_an_epochs_end_are_no_steps() -> None:
    # negatives: steps not steadily spaced (an early-stopping check); an epoch's end names none
    irregular = [f"2025-05-08 21:0{k}:00,000 - __main__ - INFO - Calculating validation loss at "
                 f"step {s}..." for k, s in enumerate((0, 3, 4, 9, 10))]
    assert read(irregular)["steps"]["printed_last"] is None
    epochs = [f"2025-05-08 21:0{k}:00,000 - __main__ - INFO - Calculating validation loss at "
              f"end of epoch {k}..." for k in range(1, 6)]
    assert read(epochs)["steps"]["printed_last"] in (None, 5)  # epochs at most, never a step


# -- a bare `<int> <float>` row beside another printer's pairs (ColBERT train.out, P17) ----------
P17 = [line for k in range(12) for line in (
    f"[Mar 29, 16:33:{54 + k // 2 * 1 + k % 2:02d}] {970 + k} 5.34{k}118787620297",
    "True",
    f"\t\t\t\t 0.2{k}420642733573914 4.{k}18227005004883",
    f"#>>>    6.{k} 6.52 \t\t|\t\t -0.11999999999999922")] + [
    "[Mar 29, 16:34:28] #> Done with all triples!",
    "#> Saving a checkpoint to /home/ubuntu/colbert/experiments/test/none/2024-03/29/16.21.45/"
    "checkpoints/colbert ..",
    "#> Joined...", "#> Joined..."]


def test_a_bare_row_opening_with_a_steadily_rising_integer_is_the_step() -> None:
    doc = read(P17)
    assert (doc["steps"]["printed_first"], doc["steps"]["printed_last"]) == (970, 981)
    assert [s["step"] for s in doc["checkpoint_saves"]] == [981]


def test_another_printers_float_pairs_alone_are_no_steps() -> None:
    # negative: the unstamped `0.21… 4.11…` pairs (no integer opens them)
    assert read([line for line in P17 if line.startswith("\t")])["steps"]["printed_last"] is None


def test_a_table_of_numbered_rows_printed_at_once_is_no_steps() -> None:
    # negative: a per-class listing (`0 0.512`, `1 0.433`, …) rises by one too, in one second
    rows = [f"[Mar 29, 16:40:00] {k} 0.{500 - 7 * k}" for k in range(10)]
    assert read(rows)["steps"]["printed_last"] is None
