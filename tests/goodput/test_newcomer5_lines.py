"""Lines newcomer evaluation #5 (/work/wt/newcomer5_findings.md) showed misread, each on the
newcomer's real lines (sources in /work/wt/newcomer5_inputs/SOURCES.md) with a negative beside
it: a counter that goes on across the epoch is job-wide already (#2); a save the log ends in
whose writes are not shown, where its earlier saves showed theirs, commits nothing (#14); a
run's first line after a line naming the step its loop starts from stands for the steps since
then (#12); a rate that is a mean over a window holding a save is no step's time (#3); a
cumulative clock first seen mid-run counts the job's time before the log, not accounted (#1);
Keras records a paste ran together with blanks between are read apart (#5)."""

from __future__ import annotations

import pytest

from gpuslo.goodput.logs import load_profiles
from gpuslo.goodput.logs.assemble import assemble
from gpuslo.goodput.logs.reader import parse_lines

PROFILES = load_profiles()


def read(lines: list[str], gpus: int = 8) -> dict:
    parsed = parse_lines(lines, PROFILES)
    return assemble(parsed, job="t", gpus=gpus, checkpoint_step=PROFILES.checkpoint_step).document


def _range(doc: dict) -> tuple:
    s = doc["steps"]
    return s["first"], s["last"], s["global_last"]


# -- #2: PaddleOCR's `iter:` is its global_step: it goes on across the epoch -------------------
# PaddlePaddle/PaddleOCR#2299 (2021-03-20), the cut last line completed only to `lr:` as stored
PADDLE = [
    f"[2021/03/20 11:54:{t}] root INFO: epoch: [4/10], iter: {n}, lr: 0.000820, loss: 0.973238, "
    f"acc: 0.531250, reader_cost: 0.00007 s, batch_cost: {c} s, samples: 256, ips: 5322.24591"
    for t, n, c in [(28, 29, "0.04810"), (28, 30, "0.04601"), (47, 31, "18.44550"),
                    (47, 32, "0.04537"), (47, 33, "0.04418"), (47, 34, "0.04378")]
] + [
    "[2021/03/20 11:54:47] root INFO: save model in ./output/cls/zt2mv3/latest",
    "[2021/03/20 11:54:47] root INFO: save model in ./output/cls/zt2mv3/iter_epoch_4",
    "[2021/03/20 11:54:47] root INFO: Initialize indexs of datasets:['./train_data/ztcls/"
    "train.txt']",
    "[2021/03/20 11:56:58] root INFO: epoch: [5/10], iter: 35, lr:",
]


def test_a_counter_that_goes_on_where_the_epoch_rises_is_job_wide_as_printed() -> None:
    # epoch 4 ends at iter 34 and epoch 5 opens at 35: no reset, so 35 is the job's step 35
    # (it was 34 + 1 stride + 35 = 70, a job-wide count built a second time)
    assert _range(read(PADDLE)) == (29, 35, 35)


def test_a_counter_that_resets_at_one_epoch_rise_stays_per_epoch() -> None:
    # negative: the same shape, the counter back at 0 where epoch 6 begins: per-epoch, so the
    # count goes on across the epochs (34 + 1 + 0 ... by the usual stride), never a restart
    lines = PADDLE[:6] + [
        "[2021/03/20 11:56:58] root INFO: epoch: [5/10], iter: 35, lr: 0.000700, loss: 0.8",
        "[2021/03/20 11:57:58] root INFO: epoch: [6/10], iter: 0, lr: 0.000700, loss: 0.8",
        "[2021/03/20 11:57:59] root INFO: epoch: [6/10], iter: 1, lr: 0.000700, loss: 0.8",
    ]
    doc = read(lines)
    assert doc["steps"]["global_last"] > 35 and not doc["restarts"]


# -- #14: a save begun where the log ends, its writes not shown although earlier saves' were --
# huggingface/transformers#15401 (run_qa, 2022-01-29) as stored: its last line cut mid-word
_HF = "[INFO|trainer.py:2103] 2022-01-29 00:{} >> Saving model{}"
_BAR = " {}%|{}| {}/14754 [{}<{},  3.53it/s]"
HF = [
    _BAR.format(64, "█" * 102 + "▍" + " " * 56, 9500, "45:17", "24:48")
    + _HF.format("31:31,545", " checkpoint to /tmp/debug_squad/checkpoint-9500"),
    "[INFO|configuration_utils.py:430] 2022-01-29 00:31:31,546 >> Configuration saved in "
    "/tmp/debug_squad/checkpoint-9500/config.json",
    "[INFO|modeling_utils.py:1074] 2022-01-29 00:31:32,024 >> Model weights saved in "
    "/tmp/debug_squad/checkpoint-9500/pytorch_model.bin",
    "[INFO|tokenization_utils_base.py:2074] 2022-01-29 00:31:32,024 >> tokenizer config file "
    "saved in /tmp/debug_squad/checkpoint-9500/tokenizer_config.json",
    "[INFO|tokenization_utils_base.py:2080] 2022-01-29 00:31:32,025 >> Special tokens file "
    "saved in /tmp/debug_squad/checkpoint-9500/special_tokens_map.json",
    "{'loss': 0.7144, 'learning_rate': 9.666531110207402e-06, 'epoch': 1.36}" + " " * 202,
    _BAR.format(68, "█" * 107 + " " * 51, 10000, "47:40", "22:27")
    + _HF.format("33:54,470", ""),
]


def _committed(doc: dict) -> tuple:
    g = doc["goodput"]
    return g["gpu_seconds"]["productive"], g["uncommitted_gpu_s"]


@pytest.mark.parametrize("tail", ["", " checkpoint to /tmp/debug_squad/checkpoint-10000"])
def test_a_save_the_log_ends_in_without_the_writes_its_earlier_save_showed_commits_nothing(
        tail: str) -> None:
    # Trainer logs `Saving model checkpoint to` before it writes; the 9500 save's files are
    # listed, the 10000 one's are not (cut as stored, or its line whole): 9500 -> 10000,
    # 00:31:32 -> 00:33:54 (142.4 s on 1 GPU), is uncommitted; 2717 s (45:17) stay committed
    doc = read(HF[:-1] + [HF[-1][:-len("Saving model")] + "Saving model" + tail], gpus=1)
    productive, uncommitted = _committed(doc)
    assert productive == pytest.approx(2717.0) and uncommitted == pytest.approx(142.446)
    assert any("writes are not shown" in n for n in doc["notes"])


def test_a_save_the_log_ends_in_is_counted_where_no_save_showed_its_writes() -> None:
    # negative: the same log with the 9500 save's file lines gone: the log never shows a save's
    # writes, so the last save is counted as before (the job prints nothing more when it returns)
    doc = read([HF[0], HF[5], HF[6] + " checkpoint to /tmp/debug_squad/checkpoint-10000"],
               gpus=1)
    productive, uncommitted = _committed(doc)
    assert uncommitted == 0.0 and productive > 2717.0
    assert not any("writes are not shown" in n for n in doc["notes"])


# -- #12: Megatron's first `iteration` line means the iterations since the loop started --------
# verdimrc/playground-nemo-2.0-gh 05-byoc-te-mb/with-ngc-pytorch-25.06-cleanup.md (Megatron-Bridge
# Llama-1B, 10 iterations, log interval 10, 2025-10-06): its training lines, save and exit
MEGATRON = [
    "Training ...",
    "Setting rerun_state_machine.current_iteration to {}...",
    "> setting tensorboard ...",
    "Step Time : 4.65s GPU utilization: 59892.5TFLOP/s/GPU",
    " [2025-10-06 03:27:07] iteration       10/      10 | consumed samples:         5120 | "
    "elapsed time per iteration (ms): 4647.8 | learning rate: 1.500000E-06 | global batch size: "
    "  512 | lm loss: 9.763827E+00 | loss scale: 1.0 | grad norm: 33.055 | number of skipped "
    "iterations:   0 | number of nan iterations:   0 |",
    "[Rank 0] (after 10 iterations) memory (MB) | allocated: 9554.87939453125 | max allocated: "
    "12003.60400390625 | reserved: 12232.0 | max reserved: 12232.0",
    "[after training is done] datetime: 2025-10-06 03:27:07",
    "saving checkpoint at iteration      10 to /opt/Megatron-Bridge/nemo_experiments/default/"
    "checkpoints in torch_dist format",
    "  successfully saved checkpoint from iteration      10 to /opt/Megatron-Bridge/"
    "nemo_experiments/default/checkpoints [ t 1/1, p 1/1 ]",
]


def _megatron(start: str | None) -> list[str]:
    return [x.format(start) for x in MEGATRON if start is not None or "{}" not in x]


@pytest.mark.parametrize(("start", "steps"), [("0", 10), ("4", 6)])
def test_a_first_line_after_the_loops_named_start_stands_for_the_steps_since(
        start: str, steps: int) -> None:
    # train() prints the iteration it starts from (0, or the one loaded) and starts its interval
    # timer: `iteration 10` at 4647.8 ms per iteration ran 10 - start iterations before its stamp
    # (one stamp: the span is the step times; 8 GPUs, committed by the save at 10)
    doc = read(_megatron(start))
    assert doc["goodput"]["gpu_seconds"]["productive"] == pytest.approx(steps * 4.6478 * 8,
                                                                        rel=1e-4)


def test_a_lone_first_line_with_no_named_start_stands_for_one_step() -> None:
    # negative: without the start line (an excerpt from mid-run) its steps cannot be told: one
    doc = read(_megatron(None))
    assert doc["goodput"]["gpu_seconds"]["productive"] == pytest.approx(4.6478 * 8, rel=1e-4)


def test_a_start_line_with_a_save_before_the_first_record_changes_nothing() -> None:
    # negative: a save between the start line and the first record: that record is not the
    # loop's first window (the stride stays unknown, one step)
    lines = _megatron("0")
    lines.insert(2, "saving checkpoint at iteration       0 to /ckpt in torch_dist format")
    doc = read(lines)
    assert doc["goodput"]["gpu_seconds"]["productive"] == pytest.approx(4.6478 * 8, rel=1e-4)


# -- #3: fairseq's epoch-average `train_ups` holds the epoch's checkpoint write ---------------
# facebookresearch/fairseq#2493 (wav2vec fine-tuning, 2021-01-06) as stored, its last line cut
FAIRSEQ = [
    '2021-01-06 00:49:14 | INFO | fairseq.trainer | Finished saving checkpoint to checkpoin'
    'ts/checkpoint110.pt',
    '2021-01-06 00:49:55 | INFO | fairseq.checkpoint_utils | Saved checkpoint checkpoints/c'
    'heckpoint110.pt (epoch 110 @ 3402 updates, score 100.0) (writing took 61.4147016429997'
    '2 seconds)',
    '2021-01-06 00:49:55 | INFO | fairseq_cli.train | end of epoch 110 (average epoch stats'
    ' below)',
    '2021-01-06 00:49:55 | INFO | train | {"epoch": 110, "train_loss": "482.931", "train_nt'
    'okens": "9392.23", "train_nsentences": "87.1935", "train_nll_loss": "4.483", "train_wp'
    's": "1020.2", "train_ups": "0.11", "train_wpb": "9392.2", "train_bsz": "87.2", "train_'
    'num_updates": "3402", "train_lr": "5e-05", "train_gnorm": "77.424", "train_loss_scale"'
    ': "0.5", "train_train_wall": "99", "train_wall": "12948"}',
    '2021-01-06 00:49:55 | INFO | fairseq.trainer | begin training epoch 111',
    '2021-01-06 00:51:34 | INFO | fairseq_cli.train | end of epoch 111 (average epoch stats'
    ' below)',
    '2021-01-06 00:51:34 | INFO | train | {"epoch": 111, "train_loss": "502.462", "train_nt'
    'okens": "9392.23", "train_nsentences": "87.1935", "train_nll_loss": "4.665", "train_wp'
    's": "2942.9", "train_ups": "0.31", "train_wpb": "9392.2", "train_bsz": "87.2", "train_'
    'num_updates": "3433", "train_lr": "5e-05", "train_gnorm": "103'
]


def test_a_rate_averaged_over_a_window_that_held_a_save_is_no_step_time() -> None:
    # epoch 110's `train_ups 0.11` (9.09 s an update) spans the 61.4 s write of checkpoint110;
    # epoch 111's window holds none: 99 s / 31 updates = 3.19 s by its stamps (ups 0.31)
    doc = read(FAIRSEQ)
    assert doc["step_time_s"]["median"] == pytest.approx(99 / 31, rel=1e-4)
    assert doc["step_time_s"]["count"] == 1


def test_a_rate_in_the_runs_band_after_a_save_is_a_step_time() -> None:
    # negative (hand-varied from epoch 111's line): a rate after the save that is like the
    # run's others (0.30 ups, 3.33 s beside 3.19 s) did not hold the write: it stays
    lines = list(FAIRSEQ)
    lines[3] = lines[3].replace('"train_ups": "0.11"', '"train_ups": "0.30"')
    doc = read(lines)
    assert doc["step_time_s"]["count"] == 2


def test_a_rate_averaged_over_a_window_with_no_save_is_a_step_time() -> None:
    # negative: the same summaries with the save lines gone: both windows are the loop's own,
    # and the median is of the two (9.09 and 3.19)
    doc = read([x for x in FAIRSEQ if "checkpoint" not in x])
    assert doc["step_time_s"]["count"] == 2
    assert doc["step_time_s"]["max"] == pytest.approx(1 / 0.11, rel=1e-4)


# -- #1: fairseq's cumulative `train_wall` on an excerpt's first line is the job's past --------
# facebookresearch/fairseq#514 (2019), the `train_inner` lines of epochs 9 and 10
_INNER = ("| epoch {:03d}:   {} / 2737 loss=6.220, nll_loss=5.070, ppl=33.60, wps=12800, ups={}, "
          "wpb=2568, bsz=108, num_updates={}, lr=0.000208983, gnorm=1.242, clip=0%, oom=0, "
          "wall={}, train_wall={}")
FAIRSEQ_INNER = [_INNER.format(9, 1000, "4.7", 22897, 4847, 4501),
                 _INNER.format(9, 2000, "4.8", 23897, 5048, 4693),
                 _INNER.format(10, 1000, "4.7", 25634, 5408, 5026)]


def test_a_cumulative_clock_first_seen_mid_run_times_only_the_first_lines_own_steps() -> None:
    # train_wall 4501 at update 22897 is the job's training since it began: the log shows
    # 4501 -> 5026 (525 s) and its first line's own 1000 updates at 1 / 4.7 s (212.8 s)
    doc = read(FAIRSEQ_INNER)
    assert doc["span_s"] == pytest.approx(525 + 1000 / 4.7, abs=0.5)
    assert any("before the log, not accounted" in n for n in doc["notes"])


def test_a_cumulative_clock_from_the_runs_first_steps_keeps_its_time() -> None:
    # negative (hand-varied): the same lines from the run's start (update 1000 at train_wall
    # 230): nothing before the log, the timer's 230 s stand as they were
    lines = [_INNER.format(1, 1000, "4.7", 1000, 260, 230),
             _INNER.format(1, 2000, "4.8", 2000, 461, 422)]
    doc = read(lines)
    assert doc["span_s"] == pytest.approx(422, abs=0.5)
    assert not any("before the log" in n for n in doc["notes"])


# -- #5: Keras epochs a paste ran together, the terminal's padding between ---------------------
# qqwweee/keras-yolo3#284 (2018-11-25), epochs 1-5 as pasted (epochs 2 and 3 joined to the next
# line with 101 and 18 blanks)
_KBAR = "2/2 [==============================] - {}s {}s/step - loss: {} - val_loss: {}"
KERAS = [
    "Train on 66 samples, val on 7 samples, with batch size 32.",
    "Epoch 1/50",
    _KBAR.format(977, 489, "7732.9583", "6391.2349"),
    "Epoch 2/50" + " " * 101 + _KBAR.format(553, 277, "6053.7227", "4881.7363"),
    "Epoch 3/50" + " " * 101 + _KBAR.format(570, 285, "4689.0405", "3795.5706") + " " * 18
    + "Epoch 4/50",
    _KBAR.format(533, 266, "3626.1056", "3024.2988"),
    "Epoch 5/50",
    _KBAR.format(538, 269, "2811.5165", "2315.7861"),
]


def test_keras_records_a_paste_ran_together_with_blanks_between_are_read_apart() -> None:
    # every epoch's bar is read: the span is the five epochs' printed times, not three of them
    doc = read(KERAS, gpus=1)
    assert doc["span_s"] == pytest.approx(977 + 553 + 570 + 533 + 538)
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (2, 10)


def test_an_epoch_named_in_a_message_after_one_blank_is_not_cut() -> None:
    # negative (hand-varied): `Epoch 2/50` after a single blank is the message's words, so the
    # line is not two records and the bar's time stays unread, as before
    lines = KERAS[:3] + ["Resuming at Epoch 2/50 " + _KBAR.format(553, 277, "6053.7", "4881.7")]
    doc = read(lines, gpus=1)
    assert doc["span_s"] == pytest.approx(977)
