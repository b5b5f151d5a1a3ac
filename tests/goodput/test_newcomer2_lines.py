"""Lines newcomer evaluation #2 showed misread, each on realistic lines with a negative beside
it: a silent hang that Slurm's time limit ends (finding 3)."""

from __future__ import annotations

from gpuslo.goodput.logs import load_profiles
from gpuslo.goodput.logs.assemble import assemble
from gpuslo.goodput.logs.reader import parse_lines

PROFILES = load_profiles()
CANCEL = ("slurmstepd: error: *** JOB 88231 ON gpu-node-07 CANCELLED AT {} DUE TO TIME LIMIT "
          "***")


def read(lines: list[str]) -> dict:
    parsed = parse_lines(lines, PROFILES)
    return assemble(parsed, job="t", gpus=8, checkpoint_step=PROFILES.checkpoint_step).document


def steps_then(cancel_at: str) -> list[str]:
    """Steps 10..200 every 20 s (2 s/it), a save at 100, then Slurm's time-limit cancel."""
    lines = []
    for i in range(1, 21):
        t = 1793700000 + 20 * i
        stamp = f"2026-11-03 10:{(t - 1793700000) // 60:02d}:{(t - 1793700000) % 60:02d}"
        lines.append(f"{stamp} | INFO | step {10 * i}/1000 | loss 2.0 | 2.00 s/it")
        if i == 10:
            lines.append(f"{stamp} | INFO | Saved checkpoint to /ckpt/step_100.pt")
    return [*lines, CANCEL.format(cancel_at)]


def test_an_hour_of_silence_before_a_time_limit_cancel_is_a_hang_of_the_job() -> None:
    doc = read(steps_then("2026-11-03T11:06:40"))
    assert [(h["after_step"], h["seconds"]) for h in doc["hangs"]] == [(200, 3600.0)]
    assert [(i["cause"], i["layer"]) for i in doc["interruptions"]] == [("time_limit", "training")]
    seconds = doc["goodput"]["gpu_seconds"]
    assert seconds["other"] == 3600.0 * 8  # the stall, not uncommitted progress
    # steps 101..200, 2 s each, lost with the cancel (newcomer12 F1: a job_end not completed
    # settles the progress after the last save as wasted; it used to stay uncommitted)
    assert seconds["wasted_progress"] == 200.0 * 8
    assert doc["goodput"]["uncommitted_gpu_s"] == 0.0
    assert doc["goodput"]["interruptions"] == {"training": 1}


def test_a_time_limit_cancel_right_after_progress_is_no_hang() -> None:
    doc = read(steps_then("2026-11-03T10:06:42"))
    assert doc["hangs"] == []
    assert [(i["cause"], i["layer"]) for i in doc["interruptions"]] == [("time_limit", "platform")]
    assert doc["goodput"]["gpu_seconds"]["other"] == 0.0


# -- finding 5: a restore's wording, a save that fills the disk, an NCCL error before a reset ----
def run_lines(first: int, last: int, minute: int) -> list[str]:
    """`train step N` lines every 10 s (1 s/step) from minute `minute` of 10:00."""
    out = []
    for n, step in enumerate(range(first, last + 1, 10)):
        t = 60 * minute + 10 * n
        out.append(f"2026-11-03 10:{t // 60:02d}:{t % 60:02d} INFO train step {step} loss 2.0 "
                   "step_time=1.00s")
    return out


SAVE_200 = ["2026-11-03 10:03:20 INFO Saving checkpoint to /ckpt/step_200.pt",
            "2026-11-03 10:03:30 INFO Checkpoint saved to /ckpt/step_200.pt in 10.0s"]
ENOSPC = ["2026-11-03 10:05:10 INFO Saving checkpoint to /ckpt/step_300.pt",
          "2026-11-03 10:05:15 ERROR Traceback (most recent call last):",
          '  File "train.py", line 210, in save',
          "    torch.save(state, path)",
          "RuntimeError: [enforce fail at inline_container.cc:595] . unexpected pos 2147483712 vs "
          "2147483600",
          "OSError: [Errno 28] No space left on device"]
RESUME = ["2026-11-03 10:10:15 INFO Resuming from checkpoint /ckpt/step_200.pt",
          "2026-11-03 10:10:35 INFO Loaded checkpoint /ckpt/step_200.pt (step 200)"]


def test_a_resume_and_loaded_wording_is_a_restore_of_its_step_after_a_full_disk() -> None:
    doc = read([*run_lines(10, 200, 0), *SAVE_200, *run_lines(210, 300, 3), *ENOSPC, *RESUME,
                *run_lines(210, 300, 11)])
    assert [(r["resumed_from_step"], r["lost_steps"]) for r in doc["restarts"]] == [(200, 100)]
    assert [(i["cause"], i["layer"]) for i in doc["interruptions"]] == [("disk_full", "training")]


def test_a_pretrained_load_or_a_bare_traceback_is_no_restore_nor_a_full_disk() -> None:
    doc = read(["2026-11-03 09:59:00 INFO Loaded checkpoint /models/pretrained/bert.pt",
                *run_lines(10, 200, 0), *SAVE_200, *run_lines(210, 300, 3), *ENOSPC[:5]])
    assert doc["restarts"] == []
    assert [i["cause"] for i in doc["interruptions"]] == ["python_exception"]


NCCL = ["Traceback (most recent call last):",
        "torch.distributed.DistBackendError: NCCL error in: ../torch/csrc/distributed/c10d/"
        "ProcessGroupNCCL.cpp:1970, unhandled system error (run with NCCL_DEBUG=INFO for "
        "details), NCCL version 2.20.5"]


def test_an_nccl_traceback_before_the_counter_goes_back_is_the_interruption() -> None:
    doc = read([*run_lines(10, 200, 0), *SAVE_200, *run_lines(210, 300, 3), *NCCL,
                *run_lines(210, 300, 8)])
    assert [i["cause"] for i in doc["interruptions"]] == ["nccl_error"]
    assert len(doc["restarts"]) == 1


def test_an_error_that_progress_goes_on_after_is_no_interruption() -> None:
    doc = read([*run_lines(10, 200, 0), *SAVE_200, *run_lines(210, 300, 3), *NCCL,
                *run_lines(310, 400, 8)])
    assert doc["interruptions"] == [] and doc["restarts"] == []


# -- finding 7: Keras 3 with BackupAndRestore: `Killed`, then `Epoch 3/5` again ---------------
BAR = "━━━━━━━━━━━━━━━━━━━━"


def keras_epoch(n: int, steps: int = 1875, saved: bool = True) -> list[str]:
    lines = [f"Epoch {n}/5",
             f"{steps}/1875 {BAR} 11s 6ms/step - accuracy: 0.9600 - loss: 0.1321 - "
             "val_accuracy: 0.9712 - val_loss: 0.1023"]
    if saved:
        lines.append(f"Epoch {n}: val_loss improved from 0.1{n}230 to 0.1{n}130, saving model "
                     "to /ckpt/model.keras")
    return lines


def test_a_keras_epoch_header_again_after_killed_is_a_restart() -> None:
    doc = read([*keras_epoch(1), *keras_epoch(2), *keras_epoch(3, 1000, saved=False), "Killed",
                *keras_epoch(3)])
    assert len(doc["restarts"]) == 1
    assert [i["cause"] for i in doc["interruptions"]] == ["signal"]
    seconds = doc["goodput"]["gpu_seconds"]
    assert seconds["wasted_progress"] > 0  # the killed partial epoch is not productive


def test_each_epochs_header_and_its_save_line_once_is_no_restart() -> None:
    doc = read([*keras_epoch(1), *keras_epoch(2), *keras_epoch(3)])
    assert doc["restarts"] == [] and doc["interruptions"] == []
    assert doc["goodput"]["gpu_seconds"]["wasted_progress"] == 0.0


def keras2_epoch(n: int, improved: bool) -> list[str]:
    said = (f"val_loss improved from 0.9{n:02d} to 0.8{n:02d}, saving model to "
            f"model/weights_3T384.{n:03d}-0.8.h5" if improved
            else "val_loss did not improve from 0.80084")
    return [f"Epoch {n}/40",
            "225/225 [==============================] - 26s 115ms/step - loss: 0.5337 - "
            "val_loss: 0.8109", "", f"Epoch {n:05d}: {said}"]


def test_a_new_run_after_early_stopping_is_one_restart_whatever_its_epoch_lines() -> None:
    # fresh8 K02: epochs to 14, early stopping, then a new run from epoch 6 whose later
    # `did not improve` lines repeat a shape the first run printed for a higher epoch
    first = [line for n in (13, 14) for line in keras2_epoch(n, improved=False)]
    again = [line for n in range(6, 12) for line in keras2_epoch(n, improved=n < 10)]
    doc = read([*first, "Epoch 00014: early stopping", *again])
    assert len(doc["restarts"]) == 1


def test_killed_after_a_silence_is_the_jobs_stop_not_a_hang() -> None:
    # the job's own stop after a silent evaluation (mmseg's `Killed` during eval, holdout B13)
    doc = read([*steps_then("2026-11-03T11:06:40")[:-1], "2026-11-03 11:06:40 | Killed"])
    assert [i["cause"] for i in doc["interruptions"]] == ["signal"]
    assert doc["hangs"] == [] and doc["goodput"]["gpu_seconds"]["other"] == 0.0
