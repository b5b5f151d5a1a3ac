"""Classes of log shape and wording the first-contact holdout of issue 23 showed missing, each
read on lines that are not the holdout case's own (another framework's, or the same kind
hand-varied), with a negative beside it: a similar line that must not be read that way.

Where a line is real it names its source; hand-varied lines say so.
"""

from __future__ import annotations

import pytest

from gpuslo.goodput.logs import load_profiles
from gpuslo.goodput.logs.assemble import assemble
from gpuslo.goodput.logs.pipe import wrap_width
from gpuslo.goodput.logs.reader import parse_lines

PROFILES = load_profiles()


def read(lines: list[str], gpus: int | None = 1) -> dict:
    parsed = parse_lines(lines, PROFILES)
    return assemble(parsed, job="t", gpus=gpus, checkpoint_step=PROFILES.checkpoint_step).document


def steps(doc: dict) -> tuple[int | None, int | None]:
    return doc["steps"]["first"], doc["steps"]["last"]


# -- aligned rows and padded bars are not terminal wraps ---------------------------------------
def test_rows_of_one_width_that_open_alike_are_not_wrapped() -> None:
    # hand-varied: a keyless epoch-summary table (darknet/YOLOv3 results.txt style), every row
    # padded to one width; a row starting `12/299` opens like `13/299`
    rows = [f"{e:>8}/299  {3.1 + e / 100:.3f}G  {0.05 - e / 1000:.5f}  {0.02:.5f}  "
            f"{0.6 + e / 100:.4f}  {0.5 + e / 100:.4f}     416  {0.4 + e / 1000:.4f}"
            for e in range(12, 18)]
    assert len({len(r) for r in rows}) == 1
    assert wrap_width(rows) is None
    doc = read(rows)
    assert steps(doc) == (12, 17) and doc["step_time_s"]["median"] is None


def test_tqdm_bars_padded_to_the_terminal_are_whole_lines() -> None:
    # hand-varied: a job-wide `steps:` bar of one width between `Epoch n` lines (diffusers'
    # train_text_to_image style): each bar is a whole line, not the start of the next record
    lines = []
    for e in range(3, 8):
        lines.append(f"Epoch {e}")
        n = e * 40
        lines.append(f"steps: {n // 4:3d}%|{'#' * 0}{'█' * (n // 8)}{' ' * (100 - n // 8)}| "
                     f"{n}/400 [01:{n // 10:02d}<03:00,  2.50it/s, lr=1e-05, loss=0.12]")
    assert wrap_width(lines) is None
    doc = read(lines)
    assert steps(doc) == (120, 280)  # job-wide: it kept rising where the epoch changed
    assert doc["step_time_s"]["median"] == pytest.approx(0.4, rel=0.05)


def test_a_per_epoch_bar_under_epoch_lines_still_takes_the_epoch() -> None:
    # negative of the above (Keras style, hand-varied): the counter starts again each epoch
    lines = []
    for e in (1, 2, 3):
        lines += [f"Epoch {e}/3"] + [f"{n:3d}/100 [========>.....................] - ETA: 2s - "
                                     f"loss: 0.{5 - e}" for n in (20, 50, 80)]
    assert steps(read(lines)) == (20, 280)


# -- the parts of a progress bar ----------------------------------------------------------------
def test_a_percentage_is_never_the_step() -> None:
    # hand-varied from accelerate scripts: `Steps: 22%|...` names the percentage, not a counter
    lines = [f"Steps: {p}%|{'█' * (p // 10):<10}| {p * 5}/500 [00:{p:02d}<01:00, 4.00it/s]"
             for p in (10, 12, 14, 16)]
    doc = read(lines)
    assert steps(doc) == (50, 80)


def test_the_bars_own_counter_and_its_elapsed_time_without_a_rate() -> None:
    # hand-varied from ultralytics YOLOv8 (bar_format `{l_bar}{bar:10}{r_bar}` cut to
    # `{n_fmt}/{total_fmt} {elapsed}`): the epoch `3/100` comes first, the bar's n/N after it
    lines = ["      Epoch    GPU_mem   box_loss   cls_loss   dfl_loss  Instances       Size",
             "      3/100      6.11G      1.102      1.331      1.207         87        640: "
             "100%|██████████| 2000/2000 16:40"]
    doc = read(lines)
    assert steps(doc) == (2000, 2000)
    assert doc["step_time_s"]["median"] == pytest.approx(1000 / 2000, rel=0.01)


def test_data_scanning_bars_are_not_training() -> None:
    # hand-varied: a dataset scan bar before training, then no training line: no progress
    lines = ["val: Scanning /data/voc/labels/test2007.cache... 4952 images, 0 backgrounds, "
             "0 corrupt: 100%|██████████| 4952/4952 [00:00<?, ?it/s]",
             "train: Scanning '/data/voc/labels/train.cache' images and labels... 16551 found: "
             "100%|██████████| 16551/16551 00:00"]
    assert steps(read(lines)) == (None, None)


# -- epochs counted from 0, saves at an epoch's end ---------------------------------------------
def test_a_per_epoch_counter_from_zero_means_epochs_from_zero() -> None:
    # hand-varied PaddleClas/PaddleOCR-style lines: `[0/250]` is printed, so epoch 3 is the
    # fourth epoch; the save without a step ends epoch 3 (0-based): step 4 × 250
    lines = [f"[2022/03/01 10:{m:02d}:00] ppcls INFO: [Train][Epoch 3/120][Iter: {i}/250]lr: "
             f"0.1, top1: 0.3, CELoss: 2.5, batch_cost: 0.5 s, reader_cost: 0.01 s"
             for m, i in ((0, 0), (1, 100), (2, 200))]
    lines += ["[2022/03/01 10:03:00] ppcls INFO: Already save model in ./output/epoch_3",
              "[2022/03/01 10:03:10] ppcls INFO: [Train][Epoch 4/120][Iter: 0/250]lr: 0.1, "
              "top1: 0.3, CELoss: 2.4, batch_cost: 0.5 s, reader_cost: 0.01 s"]
    doc = read(lines)
    assert steps(doc) == (750, 1000)


def test_a_per_epoch_counter_from_one_keeps_epochs_from_one() -> None:
    # negative (mmdet 2.x style, hand-varied): `Epoch [3][50/500]`, no `[0/…]`: epoch 3 is
    # the third, step 2 × 500 + 50
    lines = [f"2022-01-01 00:0{k}:00,000 - mmdet - INFO - Epoch [3][{i}/500]\tlr: 2.0e-02, "
             f"time: 0.5, loss: 1.0" for k, i in enumerate((50, 100, 150))]
    assert steps(read(lines)) == (1050, 1150)


def test_a_save_before_the_first_progress_ends_the_epoch_before() -> None:
    # hand-varied SpeechBrain-like lines (another recipe, other paths): the excerpt opens with
    # an end-of-epoch save, then epoch 5's bar of 1000 steps
    lines = ["speechbrain.utils.checkpoints - Saved an end-of-epoch checkpoint in "
             "results/conformer/7775/save/CKPT+2022-05-01+10-00-00+00",
             "speechbrain.utils.epoch_loop - Going into epoch 5",
             "100%|██████████| 1000/1000 [10:00<00:00,  1.67it/s, train_loss=1.2]",
             "speechbrain.utils.checkpoints - Saved an end-of-epoch checkpoint in "
             "results/conformer/7775/save/CKPT+2022-05-01+10-10-00+00",
             "speechbrain.utils.epoch_loop - Going into epoch 6",
             "100%|██████████| 1000/1000 [10:00<00:00,  1.67it/s, train_loss=1.1]"]
    doc = read(lines)
    assert [s["step"] for s in doc["checkpoint_saves"]] == [4000, 5000]
    assert steps(doc) == (5000, 6000)
