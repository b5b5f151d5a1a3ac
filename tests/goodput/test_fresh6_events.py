"""Event classes the fresh6 first-contact batch showed missing (failures in other framings, a
save that begins and fails, save wordings of framework families), each read on the case's real
line and on a negative beside it: a similar line that must not be read that way.
"""

from __future__ import annotations

from gpuslo.goodput.logs import load_profiles
from gpuslo.goodput.logs.assemble import assemble
from gpuslo.goodput.logs.reader import parse_lines

PROFILES = load_profiles()


def read(lines: list[str]) -> dict:
    parsed = parse_lines(lines, PROFILES)
    return assemble(parsed, job="t", gpus=1, checkpoint_step=PROFILES.checkpoint_step).document


def _causes(doc: dict) -> list[str]:
    return [i["cause"] for i in doc["interruptions"]]


def _caffe(iters: range) -> list[str]:
    return [f"I0521 18:{n // 100:02d}:08.992463 18350 solver.cpp:571] Iteration {n}, lr = 1e-13"
            for n in iters]


# -- glog's fatal CHECK (Caffe): the process aborts ----------------------------------------------
SNAPSHOT = ("I0521 18:36:09.160795 18350 solver.cpp:449] Snapshotting to binary proto file "
            "models/train_iter_1000.caffemodel")
FATAL = ("F0521 18:36:09.160861 18350 io.cpp:67] Check failed: "
         "proto.SerializeToOstream(&output) ")


def test_glog_check_failed_is_an_interruption() -> None:
    # real lines (train-CRF-RNN#53, fresh6 H02)
    doc = read(_caffe(range(50, 1000, 50)) + [FATAL, "*** Check failure stack trace: ***"])
    assert _causes(doc) == ["fatal_check"]


def test_a_line_about_checks_is_not_an_interruption() -> None:
    # negative: an informational line with the words, not glog's CHECK text
    doc = read(_caffe(range(50, 1000, 50)) + ["I0521 18:36:09.1 18350 net.cpp:99] Checking "
                                              "failed layers: none"])
    assert doc["interruptions"] == []


def test_a_snapshot_the_fatal_check_cuts_short_is_not_a_save() -> None:
    # real lines (H02): the snapshot begins, the write fails, the process aborts
    doc = read(_caffe(range(50, 1000, 50)) + [SNAPSHOT, FATAL])
    assert doc["checkpoint_saves"] == []
    assert doc["goodput"]["goodput"] is None


def test_a_snapshot_followed_by_progress_is_a_save() -> None:
    # negative: the same snapshot line, then the solver goes on
    doc = read(_caffe(range(50, 1000, 50)) + [SNAPSHOT] + _caffe(range(1000, 1200, 50)))
    assert [s["step"] for s in doc["checkpoint_saves"]] == [1000]


# -- TensorFlow's ShutdownHook: lame (unresponsive) TPU workers ---------------------------------
def _tf_steps() -> list[str]:
    return [f"I0902 03:{m:02d}:36.516501 140070334211904 basic_session_run_hooks.py:260] "
            f"loss = 1.1, step = {488000 + 100 * m} (45.410 sec)" for m in range(1, 7)]


def test_lame_workers_found_is_an_interruption() -> None:
    # real line (t5-japanese, fresh6 H08)
    doc = read(_tf_steps() + ["INFO:tensorflow:ShutdownHook: lame workers found: "
                              "HeartbeatManager(/job:worker/replica:0/task:0/device:CPU:0)"])
    assert _causes(doc) == ["worker_lost"]


def test_a_heartbeat_line_without_lame_workers_is_not() -> None:
    # negative: the heartbeat manager's start line
    doc = read(_tf_steps() + ["INFO:tensorflow:Initialized HeartbeatManager with 1 workers."])
    assert doc["interruptions"] == []


# -- the shell's "Killed": in markdown emphasis, and as bash's job-status report ----------------
def _iters() -> list[str]:
    return [f"iter {n}: image-id:0254212, time:1.722(sec), regular_loss: 0.248765"
            for n in range(140, 145)]


def test_killed_in_markdown_bold_is_an_interruption() -> None:
    # real line (FastMaskRCNN, fresh6 H12)
    assert _causes(read(_iters() + ["", "**Killed**"])) == ["signal"]


def test_a_word_killed_inside_a_sentence_is_not() -> None:
    # negative: a message that names the word, not the shell's report
    assert read(_iters() + ["**Killed** processes are restarted by the supervisor"])[
        "interruptions"] == []


BAR = ("Epoch 15 (validation) validation/acc/qa=1.000000:   2%|#4          | 20/1094 "
       "[00:41<11:04,  1.62it/s]")


def test_bash_job_status_killed_glued_to_a_bar_is_an_interruption() -> None:
    # real line (NSCL-PyTorch, fresh6 H13): bash's "line 6:  PID Killed   command"
    train = [f"Epoch 15 loss=0.04: {p}%|###| {p * 10}/1006 [18:08<00:00,  1.08s/it]"
             for p in (50, 100)]
    doc = read(train + [BAR + "/home/u/Jacinle/bin/jac-crun: line 6:  3305 Killed"
                        "                  $JACROOT/bin/jac-run \"$@\""])
    assert _causes(doc) == ["signal"]


def test_a_count_of_killed_things_on_a_bar_is_not() -> None:
    # negative: "3 Killed" with one space, a count in a game-style metric
    train = [f"Episode {n}: reward=1.0, 3 Killed total, steps={n * 10}" for n in range(1, 6)]
    assert read(train)["interruptions"] == []


# -- save wordings of framework families -------------------------------------------------------
def _awd(epochs: range) -> list[str]:
    out = []
    for e in epochs:
        out += [f"| epoch {e:3d} |   800/ 1106 batches | lr 20.00 | ms/batch 95.31 | loss  4.01 "
                f"| ppl    55.54",
                f"| end of epoch {e:3d} | time: 110.84s | valid loss  4.09 | valid ppl    59.97",
                "-" * 89]
    return out


def test_awd_lstm_saving_normal_is_a_finished_save() -> None:
    # real line (zihangdai/mos, fresh6 H15): printed after save_checkpoint of a new best model
    doc = read(_awd(range(25, 26)) + ["Saving Normal!"] + _awd(range(26, 27)))
    assert len(doc["checkpoint_saves"]) == 1
    assert doc["goodput"]["goodput"] is not None


def test_saving_words_without_the_family_exclamation_are_not_a_save() -> None:
    # negative: "Saving Normal maps" is not the family's line
    doc = read(_awd(range(25, 27)) + ["Saving Normal maps for visualisation"])
    assert doc["checkpoint_saves"] == []


def _nmt(steps: range) -> list[str]:
    return [f"  global step {s} lr 1e-05 step-time 1.45s wps 0.01K ppl 157.83 bleu 0.00"
            for s in steps]


def test_nmt_save_eval_names_the_step_saved() -> None:
    # real line (tensorflow/nmt in nslt, fresh6 H16): printed right before saver.save
    doc = read(_nmt(range(6100, 7100, 100)) + ["# Save eval, global step 7000"])
    assert [s["step"] for s in doc["checkpoint_saves"]] == [7000]


def test_nmt_other_hash_lines_are_not_a_save() -> None:
    # negative: nmt's external-eval line names a step but saves nothing
    doc = read(_nmt(range(6100, 7100, 100)) + ["# External evaluation, global step 7000"])
    assert doc["checkpoint_saves"] == []


# -- the VITS family: "iteration" is the epoch, G_/D_<N>.pth names the global step --------------
VITS = "2023-02-01 22:27:{:02d},272\t32k\tINFO\t"


def test_vits_loaded_checkpoint_is_a_restore_of_the_file_step() -> None:
    # real lines (so-vits-svc, fresh6 H25)
    doc = read([VITS.format(30) + "Loaded checkpoint './logs\\32k\\G_1000.pth' (iteration 1)",
                VITS.format(34) + "Loaded checkpoint './logs\\32k\\D_1000.pth' (iteration 1)",
                VITS.format(53) + "Train Epoch: 1 [0%]"])
    assert [r["resumed_from_step"] for r in doc["restarts"]] == [1000]


def test_a_pretrained_file_named_otherwise_is_not_a_vits_restore() -> None:
    # negative: no "(iteration N)" after the quoted file
    assert read([VITS.format(30) + "Loaded checkpoint './pretrain/hubert.pt' for features"])[
        "restarts"] == []


def test_vits_save_names_the_global_step_in_the_file() -> None:
    # real line (F12 of fresh4, fresh6 H25 the same): iteration 23084 is the epoch
    doc = read(["[INFO] ====> Epoch: 23083",
                "[INFO] Saving model and optimizer state at iteration 23084 to "
                "./logs/vcg_model/G_277000.pth"])
    assert [s["step"] for s in doc["checkpoint_saves"]] == [277000]


def test_tacotron_save_at_iteration_keeps_the_iteration() -> None:
    # negative (NVIDIA tacotron2 train.py): there the iteration is the step, the file no G_/D_
    doc = read(["Train loss 1000 0.412 Grad Norm 0.5 1.20s/it",
                "Saving model and optimizer state at iteration 1000 to outdir/checkpoint_1000"])
    assert [s["step"] for s in doc["checkpoint_saves"]] == [1000]


# -- a traceback out of the save itself: the save failed ----------------------------------------
def _steps_then(tail: list[str]) -> list[str]:
    head = [f"2024-05-01 10:00:{s:02d},000 - INFO - step {s} loss 0.5" for s in range(1, 11)]
    return head + tail


def test_a_traceback_out_of_a_save_is_a_failed_save() -> None:
    # hand-varied: torch.save raises (disk full), the job dies
    doc = read(_steps_then([
        "2024-05-01 10:00:11,000 - INFO - Saving checkpoint to /ckpt/step_10",
        "Traceback (most recent call last):",
        '  File "train.py", line 90, in save',
        "OSError: [Errno 28] No space left on device"]))
    assert doc["checkpoint_saves"] == []
    assert doc["goodput"]["goodput"] is None
    assert _causes(doc) == ["disk_full"]  # the full disk named (newcomer #2)


def test_a_hang_after_a_save_leaves_the_save_listed_uncommitted() -> None:
    # negative: a watchdog says the job blocked, not that the write failed (fresh C18)
    doc = read(_steps_then([
        "2024-05-01 10:00:11,000 - INFO - Saving checkpoint to /ckpt/step_10",
        "2024-05-01 10:30:11,000 - ERROR - Watchdog caught collective operation timeout: "
        "WorkNCCL(SeqNum=9, OpType=ALLREDUCE, Timeout(ms)=1800000) ran for 1800001 milliseconds"]))
    assert [s["step"] for s in doc["checkpoint_saves"]] == [10]
    assert doc["goodput"]["goodput"] is None
