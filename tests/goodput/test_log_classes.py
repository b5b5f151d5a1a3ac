"""Classes of log shape and wording the first-contact holdout of issue 23 showed missing, each
read on lines that are not the holdout case's own (another framework's, or the same kind
hand-varied), with a negative beside it: a similar line that must not be read that way.

Where a line is real it names its source; hand-varied lines say so.
"""

from __future__ import annotations

import pytest

from gpuslo.goodput.logs import load_profiles
from gpuslo.goodput.logs.assemble import assemble
from gpuslo.goodput.logs.clock import Clock
from gpuslo.goodput.logs.normalise import Normaliser
from gpuslo.goodput.logs.pipe import RecordPipe, wrap_width
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
    # negative (mmdet 2.x style, hand-varied): `Epoch [3][350/500]` into epoch 4, no `[0/…]`:
    # epoch 3 is the third, step 2 × 500 + 350 (the records cross an epoch: job-wide)
    lines = [f"2022-01-01 00:0{k}:00,000 - mmdet - INFO - Epoch [{e}][{i}/500]\tlr: 2.0e-02, "
             f"time: 0.5, loss: 1.0" for k, (e, i) in enumerate(
                 ((3, 350), (3, 400), (3, 450), (3, 500), (4, 50), (4, 100)))]
    assert steps(read(lines)) == (1350, 1600)


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


# -- one progress line printed by every rank, without a rank prefix ----------------------------
def test_copies_of_one_progress_line_from_every_rank_are_one_step() -> None:
    # hand-varied MMEngine-style lines: four ranks print iteration 20 within 50 ms, their own
    # `time` a little apart; the constant counter is still the counter, read once
    lines = [f"2024/05/01 10:00:01.{10 + 12 * r:03d} - mmengine - INFO - Iter(train) "
             f"[  20/1000]  lr: 1.0e-04  eta: 0:30:00  time: {t}  data_time: 0.0100  "
             f"loss: 0.9000" for r, t in enumerate(("1.2520", "1.2490", "1.2510", "1.2500"))]
    doc = read(lines)
    assert steps(doc) == (20, 20) and doc["read"]["progress_lines"] == 1
    assert doc["step_time_s"]["median"] == pytest.approx(1.25, rel=0.01)


def test_a_constant_number_over_lines_far_apart_is_not_a_counter() -> None:
    # negative: `iter: 20` printed unchanged a minute apart, between other lines, is no counter
    lines = []
    for m in range(4):
        lines += [f"2024-05-01 10:0{m}:00,000 - probe - INFO - warmup iter: 20 of 20 done, "
                  f"lat: 0.{m + 1}", f"2024-05-01 10:0{m}:30,000 - probe - INFO - idle"]
    assert steps(read(lines)) == (None, None)


# -- timing lines beside progress lines ----------------------------------------------------------
def test_a_rate_on_its_own_line_times_the_progress_line_beside_it() -> None:
    # hand-varied Informer/Autoformer exp_main lines (the Time-Series-Library family): the
    # `speed` line under each `iters` line
    lines = []
    for k, speed in enumerate(("0.1210", "0.1190", "0.1200", "0.1205")):
        lines += [f"\titers: {100 * (k + 1)}, epoch: 3 | loss: 0.{41 - k}07213",
                  f"\tspeed: {speed}s/iter; left time: {900 - 12 * k:.4f}s"]
    doc = read(lines)
    assert steps(doc) == (100, 400)
    assert doc["step_time_s"]["median"] == pytest.approx(0.12025, rel=0.01)


def test_steps_per_second_lines_time_tensorflow_steps() -> None:
    # hand-varied TF2 Estimator/Keras-CTL lines: `global_step/sec` between `step = N` lines
    lines = ["INFO:tensorflow:loss = 2.31, step = 0",
             "INFO:tensorflow:global_step/sec: 4.0",
             "INFO:tensorflow:loss = 1.97, step = 200",
             "INFO:tensorflow:global_step/sec: 5.0",
             "INFO:tensorflow:loss = 1.52, step = 400"]
    doc = read(lines)
    assert steps(doc) == (0, 400)
    assert doc["step_time_s"]["median"] == pytest.approx(0.225, rel=0.01)


def test_an_evaluation_rate_line_does_not_time_training() -> None:
    # negative: the rate belongs to an evaluation (its words say so): no step time
    lines = []
    for k in range(4):
        lines += [f"iters: {100 * (k + 1)}, epoch: 1 | loss: 0.5",
                  f"eval speed: 2{k}.5 it/s"]
    assert read(lines)["step_time_s"]["median"] is None


# -- save wording: the step after the word, a kill in another locale ----------------------------
@pytest.mark.parametrize(("line", "step"), [
    # hand-varied mmcv IterBasedRunner and TF Estimator/Saver wordings
    ("2021-03-01 10:00:00,000 - mmdet - INFO - Saving checkpoint at 8000 iters", 8000),
    ("INFO:tensorflow:Saving checkpoints for 12000 into /tmp/run/model.ckpt.", 12000),
    ("I0301 10:00:00.000 140 basic_session_run_hooks.py:606] Saving checkpoints for 500 into "
     "gs://bucket/model/model.ckpt.", 500),
])
def test_save_wordings_that_put_the_step_before_its_unit(line: str, step: int) -> None:
    lines = [f"Iter [{n}/40000]\tlr: 1.0e-02, time: 0.400, loss: 0.5" for n in (50, 100, 150)]
    doc = read(lines + [line])
    assert [s["step"] for s in doc["checkpoint_saves"]] == [step]


def test_a_save_count_is_not_the_step() -> None:
    # negative: "saving 3 checkpoints" counts files; "at 90 epochs" is an epoch, not a step
    lines = [f"Iter [{n}/40000]\tlr: 1.0e-02, time: 0.400, loss: 0.5" for n in (50, 100, 150)]
    doc = read(lines + ["Saving checkpoint at 3 epochs to ./work/epoch_3.pth"])
    assert [s["step"] for s in doc["checkpoint_saves"]] != [3]


def test_killed_in_the_zh_cn_locale_is_a_signal() -> None:
    # the shell's job-control message in zh_CN bash, glued to a bar and alone on its line
    bar = "[>>>>>>>>>>>>>> ] 120/500, 10.0 task/s, elapsed: 12s, ETA: 38s"
    lines = [f"Iter [{n}/40000]\tlr: 1.0e-02, time: 0.400, loss: 0.5" for n in (50, 100, 150)]
    for tail in (bar + "已杀死", "已杀死"):
        doc = read(lines + [tail])
        assert [i["cause"] for i in doc["interruptions"]] == ["signal"]
    assert read(lines + ["进程已杀死的日志已清理, 继续训练"])["interruptions"] == []


# -- epoch summaries with a time, when there are no step lines ---------------------------------
def _summaries(word: str = "Epoch") -> list[str]:
    # hand-varied Informer/PatchTST-style epoch lines (another layout than any case): one line
    # per epoch with the epoch's cost, a save line after each improvement
    lines = []
    for e, cost in ((41, "63.10"), (42, "62.85"), (43, "63.40"), (44, "62.95")):
        lines += [f"{word} {e} of 100 || train_loss = 0.{90 - e} || epoch cost time: {cost}s",
                  f"Validation loss decreased (0.{60 - e} --> 0.{59 - e}).  Saving model ..."]
    return lines


def test_epoch_summaries_with_times_are_the_steps() -> None:
    doc = read(_summaries())
    assert steps(doc) == (41, 44)
    assert doc["step_time_s"]["median"] == pytest.approx(63.025, rel=0.01)
    assert [s["step"] for s in doc["checkpoint_saves"]] == [41, 42, 43, 44]


def test_validation_epoch_summaries_are_not_steps() -> None:
    # negative: the same lines written by an evaluation loop are not training progress
    assert steps(read(_summaries("Validation epoch"))) == (None, None)


def test_a_line_opening_with_a_capital_is_not_the_rest_of_a_wrapped_one() -> None:
    # the epoch lines share one width by chance; the save line under each is its own record
    lines = [f"Epoch: {e}/90 | Train Loss: 0.4{e % 10}12 | Vali Loss: 0.3{e % 10}55 | "
             f"Cost: 12.{e % 10}0s" for e in range(20, 24)]
    mixed = [x for e in lines for x in (e, "Validation loss decreased.  Saving model ...")]
    assert wrap_width(mixed) is None
    # negative: a record a terminal really cut (Megatron, the rest opens mid-phrase) is joined
    cut = [f" iteration {n:8d}/  250000 | consumed samples: {n * 1024:12d} | elapsed time per "
           f"iteration (ms): 1269.3 | learning" for n in range(182, 186)]
    wrapped = [x for c in cut for x in (c, " rate: 1.365E-05 | lm loss: 2.382640E+00 |")]
    assert wrap_width(wrapped) == len(cut[0])


# -- counters named with a glued count, tables under a header ------------------------------------
def test_a_glued_count_name_is_a_counter() -> None:
    # hand-varied OpenAI-baselines logger rows (`niter`, as Stable-Baselines 2's `nupdates`)
    lines = [f"| niter | {n} |\n| fps | 512 |\n| policy_loss | -0.01 |" for n in (10, 20, 30)]
    doc = read([x for block in lines for x in block.split("\n") + [" -----------------"]])
    assert steps(doc) == (10, 30)


def test_a_glued_rollout_length_is_not_a_counter() -> None:
    # negative: baselines' `nsteps` is the rollout length, a setting printed once
    lines = ["| nsteps | 128 |", "| fps | 512 |", "| policy_loss | -0.01 |"]
    assert steps(read(lines)) == (None, None)


def test_a_table_under_its_header_reads_by_column_name() -> None:
    # hand-varied: a space-aligned scores table (rllab/garage style) with a cumulative time
    lines = ["Iteration    TotalEnvSteps    Time    AverageReturn    StdReturn"]
    for k, (n, t) in enumerate(((1, 60.0), (2, 121.5), (3, 181.0), (4, 242.0))):
        lines.append(f"{n:>9}    {n * 4000:>13}    {t:>4}    {-100 + 10 * k:>13}    "
                     f"{12.5:>9}")
    doc = read(lines)
    assert steps(doc) == (1, 4)
    assert doc["step_time_s"]["median"] == pytest.approx(60.5, rel=0.02)


def test_rows_that_do_not_fit_the_header_are_left_alone() -> None:
    # negative: YOLOv5's column header over a bar row (cells that are not numbers), and rows
    # of another width than the header: no column names are given
    lines = ["      Epoch    GPU_mem   box_loss  Instances       Size",
             "        1/9      3.1G    0.04521         80        640: 100%|██████████| 20/20 00:41",
             "      12      0.5      7"]
    assert steps(read(lines)) == (20, 20)
    pipe = RecordPipe(Normaliser(PROFILES), Clock())
    texts = [r.text for n, line in enumerate(lines) for r in pipe.push(n + 1, line)]
    assert len(texts) == 3 and not any("Epoch:" in t or "Size:" in t for t in texts)


def test_a_log_that_opens_at_epoch_one_batch_zero_counts_epochs_from_one() -> None:
    # negative of the 0-based rule: PyTorch's MNIST example (pytorch/examples mnist/main.py
    # format, hand-varied numbers) counts batches from 0 and epochs from 1
    lines = [f"Train Epoch: {e} [{n}/60000 ({n * 100 // 60000}%)]\tLoss: 0.{30 - e}1234"
             for e in (1, 2) for n in (0, 20000, 40000)]
    assert steps(read(lines)) == (0, 100000)


def test_explain_lists_a_timing_line_with_its_role() -> None:
    from gpuslo.goodput.logs.explain import explain
    from gpuslo.goodput.logs.wording import Wording

    lines = []
    for k in range(4):
        lines += [f"\titers: {100 * (k + 1)}, epoch: 1 | loss: 0.5", f"\tspeed: 0.12{k}s/iter"]
    parsed = parse_lines(lines, PROFILES)
    timing = [p for p in explain(parsed, Wording(PROFILES))["progress"] if p["family"] == "timing"]
    assert timing and timing[0]["fields"]["speed"].startswith("rate_spi")
