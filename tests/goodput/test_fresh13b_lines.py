"""Line kinds the fresh13 first-contact batch (P04, P05, P07, P14) showed missing, each read on
the case's real lines and on a negative beside it: a script's opening line printed again by a new
launch (P04's retitled banner, P07's five relaunches), an RL loop's `Frame` counter over its
`Episode` (P05), a restore worded `checkpoint @ epoch N` at the head of a log (P14).
"""

from __future__ import annotations

import re

from gpuslo.goodput.logs import load_profiles
from gpuslo.goodput.logs.assemble import assemble
from gpuslo.goodput.logs.reader import parse_lines
from gpuslo.goodput.logs.relaunch import Opening

PROFILES = load_profiles()


def read(lines: list[str]) -> dict:
    parsed = parse_lines(lines, PROFILES)
    return assemble(parsed, job="t", gpus=1, checkpoint_step=PROFILES.checkpoint_step).document


# -- a self-play trainer launched twice (MathAlphaZero training.log, fresh13 P04) ---------------
_CONFIG = ("参数配置: {'epochs': 100, 'problems_per_epoch': 60, 'simulations': 50, "
           "'batch_size': 32, 'lr': 0.001, 'load_model': 'data/brain_3.0.pth', "
           "'save_model': 'data/brain_3.0.pth'}")


def _epochs(first_minute: int) -> list[str]:
    lines = []
    for n in range(1, 5):
        m = first_minute + n
        stamp = f"2026-05-22 02:{m:02d}"
        lines += [f"{stamp}:39,224 - INFO - Epoch {n}/100 | 课程深度: 2 | 经验池大小: {85 + n}",
                  f"{stamp}:59,678 - INFO - 训练损失: {30 - n}.1293",
                  f"{stamp}:59,716 - INFO - Epoch {n} 完成 | 成功率: 15.0% | 累计成功: 9"]
    return lines


MATH = [
    "2026-05-22 02:54:53,879 - INFO - ====== MathAlphaZero 3.0 自动训练（修复版）启动 ======",
    f"2026-05-22 02:54:53,879 - INFO - {_CONFIG}",
    "2026-05-22 02:54:53,880 - INFO - 规则库加载完成，动作空间大小: 20",
    "2026-05-22 02:56:38,753 - INFO - ====== MathAlphaZero 3.0 自动训练（最终修复版）启动 ======",
    f"2026-05-22 02:56:38,753 - INFO - {_CONFIG}",
    "2026-05-22 02:56:38,754 - INFO - 规则库加载完成，动作空间大小: 20",
    "2026-05-22 02:56:39,151 - INFO - 加载模型: data/brain_3.0.pth (兼容模式)",
] + _epochs(56)


def test_an_opening_banner_printed_again_retitled_is_a_relaunch() -> None:
    assert len(read(MATH)["restarts"]) == 1


def test_an_opening_printed_once_is_no_relaunch() -> None:
    # negative: the same log with the first launch's three lines left out
    assert read(MATH[3:])["restarts"] == []


def test_a_banner_with_most_words_changed_is_another_line() -> None:
    # negative: a banner of another program (two of seven tokens changed) is no reprint
    other = MATH[3].replace("MathAlphaZero 3.0 自动训练（最终修复版）启动",
                            "Evaluator 3.0 评估启动")
    assert read(MATH[:3] + [other] + MATH[4:])["restarts"] == []


# -- a LoRA script relaunched (csm-streaming lora log, fresh13 P07) ----------------------------
_OPEN = "__main__ - INFO - Loading CSM model: sesame/csm-1b"
_PREAMBLE = ["__main__ - ERROR - Failed to initialize codebook_embedding from Mimi: "
             "'SplitResidualVectorQuantizer' object has no attribute 'codebooks'",
             "__main__ - INFO - Applying LoRA to model...",
             "__main__ - INFO - Dataset created with 3 samples",
             "__main__ - INFO - Starting finetuning process"]


def _launch(hour: str, epochs: int) -> list[str]:
    lines = [f"2025-05-08 {hour}:00,100 - {_OPEN}"]
    lines += [f"2025-05-08 {hour}:{10 + k:02d},100 - {text}" for k, text in enumerate(_PREAMBLE)]
    for e in range(1, epochs + 1):
        lines += [f"2025-05-08 {hour}:{20 + 3 * e:02d},000 - __main__ - INFO - Starting epoch "
                  f"{e}/13",
                  f"2025-05-08 {hour}:{21 + 3 * e:02d},000 - __main__ - INFO - Calculating "
                  f"validation loss at step {e - 1}...",
                  f"2025-05-08 {hour}:{22 + 3 * e:02d},000 - __main__ - INFO - Saved checkpoint "
                  f"to finetuned_model\\checkpoint-epoch-{e}"]
    return lines


CSM = (_launch("20:59", 4) + _launch("21:29", 2)
       + [f"2025-05-08 21:49:03,738 - {_OPEN}"]  # a launch that died before its next line
       + _launch("21:53", 2))


def test_each_launch_of_a_script_is_one_restart_even_one_that_died_at_once() -> None:
    assert len(read(CSM)["restarts"]) == 3


def test_a_line_echoed_at_the_same_moment_is_one_launch() -> None:
    # negative: two handlers writing the opening line twice in a row, same stamp
    lines = _launch("20:59", 4)
    assert read(lines[:1] + lines)["restarts"] == []


def test_a_warning_at_the_head_is_no_opening() -> None:
    # negative: a library's warning opens the log and comes back each epoch (not a launch)
    warn = ("/opt/conda/lib/python3.7/site-packages/paddle/tensor/creation.py:125: "
            "DeprecationWarning: `np.object` is a deprecated alias")
    opening = Opening()
    opening.first(warn, read=False)
    assert not opening.see(warn, 100.0, 5)
    first = Opening()
    first.first(_OPEN, read=False)
    first.last = (1, 0.0)
    assert first.see(_OPEN, 60.0, 9)


# -- an RL loop's frames and episodes (IQN-and-Extensions training.log, fresh13 P05) ------------
IQN = ["Using  cpu",  # the episodes redrawn with \r, one line each as the file reader splits them
       *(f"Episode {e}\tFrame {20 * e + e % 3} \tAverage100 Score: {20 + e % 7}.{e % 10}0"
         for e in range(1, 40)),
       "Episode 40\tFrame 813\tAverage100 Score: 20.33"]


def test_an_rl_loops_frame_counter_is_the_step_over_its_episode() -> None:
    doc = read(IQN)
    assert doc["steps"]["printed_first"] == 21 and doc["steps"]["printed_last"] == 813


def test_an_episode_alone_is_still_the_counter() -> None:
    # negative: with no frame counter printed, the episode stays the unit of work
    lines = [re.sub(r"Frame \d+ ?", "", line) for line in IQN]
    assert read(lines)["steps"]["printed_last"] == 40


# -- a restore worded with `@` at the head of a log (RAM Paddle port resume.log, fresh13 P14) ---
RAM = (["[*] Model Checkpoint Dir: ./ckpt",
        "[*] Loading model from ./ckpt",
        "[*] Loaded ram_6_8x8_1_ckpt.pth.tar checkpoint @ epoch 87",
        "[*] Train on 60000 samples, validate on 60000 samples"]
       + [line for e in range(88, 92) for line in (
           f"Epoch: {e}/200 - LR: 0.000300",
           "1681.6s - loss: 0.213 - acc: 95.833: 100%|█| 60000/60000 [28:01<00:00, 35.84it/s]",
           "train loss: 0.213 - train acc: 95.833 - val loss: 0.080 - val acc: 97.997 - "
           "val err: 2.003")])


def test_a_restore_at_epoch_worded_with_at_sign_is_a_restore() -> None:
    doc = read(RAM)
    assert len(doc["restarts"]) == 1


def test_an_at_sign_in_another_line_is_no_restore() -> None:
    # negative: a save line using `@` (no restore word) is not a restore
    lines = [line.replace("Loaded ram_6_8x8_1_ckpt.pth.tar checkpoint", "Best model checkpoint")
             for line in RAM]
    assert read(lines)["restarts"] == []


def test_a_column_header_above_each_epoch_is_no_opening() -> None:
    # negative: YOLOv7's table header opens an excerpt and comes back above every epoch's row
    header = "     Epoch   gpu_mem       box       obj       cls     total    labels  img_size"
    opening = Opening()
    opening.first(header, read=False)
    assert opening.closed and not opening.see(header, 60.0, 6)
