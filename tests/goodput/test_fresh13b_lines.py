"""Line kinds the fresh13 first-contact batch (P05, P14) showed missing, each read on the case's
real lines and on a negative beside it: an RL loop's `Frame` counter over its `Episode` (P05), a
restore worded `checkpoint @ epoch N` at the head of a log (P14).
"""

from __future__ import annotations

import re

from gpuslo.goodput.logs import load_profiles
from gpuslo.goodput.logs.assemble import assemble
from gpuslo.goodput.logs.reader import parse_lines

PROFILES = load_profiles()


def read(lines: list[str]) -> dict:
    parsed = parse_lines(lines, PROFILES)
    return assemble(parsed, job="t", gpus=1, checkpoint_step=PROFILES.checkpoint_step).document


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


def test_a_stack_frame_number_is_no_counter() -> None:
    # negative: a C++ backtrace's `frame #N:` (shared T04) beside no episode counts nothing
    lines = IQN[:1] + [f"frame #{k}: c10::Error::Error(c10::SourceLocation, std::string) + 0x42"
                       for k in range(12)]
    assert read(lines)["steps"]["printed_last"] is None


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

