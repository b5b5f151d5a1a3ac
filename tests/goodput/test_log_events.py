"""Event wordings the fresh first-contact batch of issue 23 showed missing (checkpoint saves,
saves begun but not finished), each read on lines that are not the case's own (hand-varied),
with a negative beside it: a similar line that must not be read that way.
"""

from __future__ import annotations

import pytest

from gpuslo.goodput.logs import load_profiles
from gpuslo.goodput.logs.assemble import assemble
from gpuslo.goodput.logs.reader import parse_lines

PROFILES = load_profiles()


def read(lines: list[str], gpus: int | None = 1) -> dict:
    parsed = parse_lines(lines, PROFILES)
    return assemble(parsed, job="t", gpus=gpus, checkpoint_step=PROFILES.checkpoint_step).document


def _caffe(iters: range) -> list[str]:
    return [f"I0301 10:{n // 100:02d}:00.000000  4242 solver.cpp:218] Iteration {n} "
            f"(1.2 iter/s, 83.3s/100 iters), loss = 0.{n % 97:02d}" for n in iters]


def _saves(doc: dict) -> list[int | None]:
    return [s["step"] for s in doc["checkpoint_saves"]]


# -- Caffe's snapshot wording: "Snapshotting to <file named by its iteration>" ------------------
@pytest.mark.parametrize("lines", [
    # hand-varied BVLC Caffe: a path, then the solver state of the same snapshot
    ["I0301 10:20:01.000000  4242 solver.cpp:334] Snapshotting to /data/run/m_iter_2000.caffemodel",
     "I0301 10:20:02.000000  4242 solver.cpp:342] Snapshotting solver state to "
     "/data/run/m_iter_2000.solverstate"],
    # hand-varied NVCaffe: a bare file name, no directory
    ["I0301 10:20:01.000000  4242 solver.cpp:479] Snapshotting to binary proto file "
     "net_iter_2000.caffemodel"],
])
def test_caffe_snapshotting_is_one_save_at_its_iteration(lines: list[str]) -> None:
    doc = read(_caffe(range(1800, 2001, 100)) + lines)
    assert _saves(doc) == [2000]
    assert doc["goodput"]["goodput"] is not None


def test_a_snapshot_of_the_data_is_not_a_save() -> None:
    # negative: a snapshot word with no "to <file>" is no checkpoint
    doc = read(_caffe(range(1800, 2001, 100)) + [
        "I0301 10:20:01.000000  4242 net.cpp:100] Taking snapshot of the input queue"])
    assert doc["checkpoint_saves"] == []


# -- a bare "Checkpoint at step N" record (darkflow) --------------------------------------------
def test_a_bare_checkpoint_at_step_record_is_a_save() -> None:
    lines = [f"it {n} | loss {2.5 - n / 100:.3f}" for n in range(40, 52)]
    doc = read(lines[:6] + ["Checkpoint at iteration 45"] + lines[6:] + ["CHECKPOINT AT STEP 51"])
    assert _saves(doc) == [45, 51]


@pytest.mark.parametrize("line", [
    "Checkpoint at step 45 will be kept for 3 days",   # more than the bare record
    "save_steps=500",                                  # a config line
    "Checkpoint at step 45: not saved (disk full)",    # hand-varied: a save that did not happen
])
def test_checkpoint_words_that_are_not_a_save_record(line: str) -> None:
    lines = [f"it {n} | loss {2.5 - n / 100:.3f}" for n in range(40, 52)]
    assert read(lines[:6] + [line] + lines[6:])["checkpoint_saves"] == []


# -- a save begun but not finished before the run stops commits nothing -------------------------
def _bar_then(tail: list[str]) -> list[str]:
    head = [f"2024-05-01 10:00:{s:02d},000 - INFO - step {s} loss 0.5" for s in range(1, 11)]
    return head + tail


def test_a_save_cut_short_by_a_stop_is_not_a_commit() -> None:
    # hand-varied: the save starts, then the NCCL watchdog stops the run with no end line
    doc = read(_bar_then([
        "2024-05-01 10:00:11,000 - INFO - Saving checkpoint to /ckpt/step_10",
        "2024-05-01 10:30:11,000 - ERROR - Watchdog caught collective operation timeout: "
        "WorkNCCL(SeqNum=9, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1800001 milliseconds",
    ]))
    assert _saves(doc) == [10]
    assert doc["goodput"]["goodput"] is None


def test_a_finished_save_before_a_stop_is_a_commit() -> None:
    # negative: the end line is there, so the step was committed before the stop
    doc = read(_bar_then([
        "2024-05-01 10:00:11,000 - INFO - Saving checkpoint to /ckpt/step_10",
        "2024-05-01 10:00:15,000 - INFO - Checkpoint saved to /ckpt/step_10",
        "2024-05-01 10:30:11,000 - ERROR - Watchdog caught collective operation timeout: "
        "WorkNCCL(SeqNum=9, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1800001 milliseconds",
    ]))
    assert doc["goodput"]["goodput"] is not None


def test_a_save_with_no_end_line_followed_by_progress_is_a_commit() -> None:
    # negative: frameworks that print only the start of a save go on training after it
    doc = read(_bar_then(["2024-05-01 10:00:11,000 - INFO - Saving checkpoint to /ckpt/step_10",
                          "2024-05-01 10:00:14,000 - INFO - step 11 loss 0.5"]))
    assert doc["goodput"]["goodput"] is not None


# -- restores: "loading checkpoint: <path>", a DeepSpeed tag directory, lower-case fairseq ------
def test_loading_checkpoint_colon_path_before_progress_is_a_resume() -> None:
    # hand-varied DeepSpeed engine line of one rank, then the per-rank shard lines
    lines = ["[2021-01-01 10:00:00,000] [INFO] [engine.py:1400:_load_checkpoint] rank: 0 loading "
             "checkpoint: ckpt/run7/2500/mp_rank_00_model_states.pt"]
    lines += [f"successfully loaded 2 ZeRO state_dicts for rank {r}" for r in (0, 1, 2, 3)]
    doc = read(lines)
    assert [r["resumed_from_step"] for r in doc["restarts"]] == [2500]


@pytest.mark.parametrize("line", [
    "loading checkpoint: none found, starting from scratch",   # no path: nothing was restored
    "Loading checkpoint shards: 100%|██████████| 4/4 [00:03<00:00,  1.2it/s]",  # HF weights
    "successfully loaded 2 ZeRO state_dicts for rank 0",        # a shard, not the restore itself
])
def test_loading_words_that_are_not_a_resume(line: str) -> None:
    assert read([line])["restarts"] == []


def test_fairseq_lower_case_saved_and_loaded_checkpoint() -> None:
    # hand-varied fairseq 0.12 wording (lower case), epochs and updates not the case's own
    stamp = "2023-01-02 03:04:{:02d} | INFO | "
    lines = [stamp.format(0) + "fairseq.trainer | loaded checkpoint /c/checkpoint_last.pt "
             "(epoch 7 @ 1200 updates)"]
    lines += [stamp.format(2 * k + 2) + f"train_inner | epoch 007:     {k * 10 + 10} / 400 "
              f"loss=3.1, num_updates={1210 + 10 * k}, wall=0" for k in range(5)]
    lines += [stamp.format(20) + "fairseq.checkpoint_utils | saved checkpoint /c/checkpoint7.pt "
              "(epoch 7 @ 1250 updates, score 3.0) (writing took 4.5 seconds)"]
    doc = read(lines)
    assert [r["resumed_from_step"] for r in doc["restarts"]] == [1200]
    assert [(s["step"], s["seconds"]) for s in doc["checkpoint_saves"]] == [(1250, 4.5)]


def test_a_stop_glued_to_the_save_line_came_after_the_save() -> None:
    # negative (hand-varied mmcv): the evaluation bar drawn after the save, then the shell's
    # "Killed" on the same physical line: the save finished before the stop
    doc = read(_bar_then([
        "2024-05-01 10:00:11,000 - INFO - Saving checkpoint at 10 iterations"
        "[>>>>>>>>>      ] 12/50, 4.0 task/s, elapsed: 3s, ETA: 9s Killed"]))
    assert [i["cause"] for i in doc["interruptions"]] == ["signal"]
    assert doc["goodput"]["goodput"] is not None


def test_commits_without_a_clock_give_goodput_by_steps_and_say_why() -> None:
    # hand-varied darkflow-like lines: saves proven, but no stamp, duration or rate anywhere:
    # goodput by steps (stepbasis.py; tests/goodput/test_step_goodput.py), GPU-seconds unknown
    lines = [f"it {n} | loss {2.5 - n / 100:.3f}" for n in range(40, 52)]
    doc = read(lines[:6] + ["Checkpoint at step 45"] + lines[6:])
    assert doc["goodput"]["goodput_basis"] == "steps"
    assert doc["goodput"]["goodput"] == 0.5  # 40..45 committed of 40..51
    assert doc["goodput"]["reason"].startswith("no clock")


# -- restores named by the checkpoint file right after the verb; the printed counter may reset ---
@pytest.mark.parametrize(("line", "step"), [
    # hand-varied torch-rnn -init_from (a TAB after the verb)
    ("Initializing from \tckpts/run3/checkpoint_4500.t7", 4500),
    # hand-varied fvcore Checkpointer
    ("[11/02 08:00:01 fvcore.common.checkpoint]: [Checkpointer] Loading from "
     "runs/r2/model_0019999.pth ...", 19999),
    # hand-varied pytorch_GAN_zoo "found at path …, pursuing the training"
    ("Model found at path ckpt/faces/faces_s2_i12000.pt, pursuing the training", 12000),
])
def test_a_restore_named_by_its_checkpoint_file(line: str, step: int) -> None:
    stamps = [f"[11/02 08:0{n}:00 d2.utils.events]:  eta: 1:00:00  iter: {n * 20 + 19}  "
              f"total_loss: 0.4  time: 1.5000  data_time: 0.1" for n in range(1, 4)]
    doc = read([line] + stamps)
    assert [r["resumed_from_step"] for r in doc["restarts"]] == [step]
    # the printed counter restarted below the checkpoint's step: still one restart, a commit
    assert doc["goodput"]["goodput"] is not None


@pytest.mark.parametrize("line", [
    "Initializing from pretrained/imagenet_resnet50.pth",          # a fine-tune's weights
    "Loading from cache dir /data/cache ...",                       # no checkpoint file
    "Model found at path ckpt/faces/faces_s2_i12000.pt",            # no resume said
])
def test_from_a_file_words_that_are_not_a_restore(line: str) -> None:
    assert read([line])["restarts"] == []


def test_a_counter_reset_by_a_restore_loses_no_negative_steps() -> None:
    # hand-varied torch-rnn: two runs from the same checkpoint, the first resets its counter
    run = ["Initializing from \tcv/checkpoint_40.t7"]
    doc = read(run + [f"Epoch 1.00 / 5, i = {n} / 900, loss = 3.0" for n in (1, 2)]
               + run + [f"Epoch 1.10 / 5, i = {n} / 900, loss = 3.0" for n in (41, 42)])
    assert [r["resumed_from_step"] for r in doc["restarts"]] == [40, 40]
    assert all(r["lost_steps"] is None or r["lost_steps"] >= 0 for r in doc["restarts"])


# -- Keras ModelCheckpoint: "Epoch 0000N: …, saving model to <file>" (a progress-shaped record) --
def test_keras_model_checkpoint_lines_are_saves_per_epoch() -> None:
    # hand-varied: val_acc monitor, an h5 file in a folder, one epoch that did not improve
    lines = ["Epoch 00001: val_acc improved from -inf to 0.61230, saving model to out/best.h5",
             "Epoch 00002: val_acc did not improve from 0.61230",
             "Epoch 00003: saving model to out/weights.03.h5"]
    assert len(read(lines)["checkpoint_saves"]) == 2


def test_saving_model_to_outside_a_keras_epoch_line_is_not_this_rule() -> None:
    # negative: a sentence that mentions the phrase mid-line is left to the general rules
    doc = read(["Epoch 3/10 - loss 0.4 - the callback will be saving model to disk later"])
    assert doc["checkpoint_saves"] == []
