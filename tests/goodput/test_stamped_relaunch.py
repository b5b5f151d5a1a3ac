"""A relaunch whose restore lines carry stamps is dated by them: recovery runs from the stop to
the restore, the restore is `checkpoint_restore` and the re-run steps are progress (newcomer 2
finding 6: Lightning's `Restoring states from the checkpoint path at ...` and DeepSpeed's
`Loading checkpoint from ...`, all stamped, were read as "the relaunch's first lines carry no
time" and their restore and first re-run steps booked as recovery). Negative: the same relaunch
with unstamped restore lines keeps the note."""

from __future__ import annotations

import pytest

from tests.goodput.test_log_classes import read


def _t(second: int) -> str:
    return f"2026-11-03 {10 + second // 3600:02d}:{second // 60 % 60:02d}:{second % 60:02d}"


def _lightning(stamped_restore: bool) -> list[str]:
    # Lightning under a `[%Y-%m-%d %H:%M:%S]` prefix: 50 steps every 100 s, a ModelCheckpoint save
    # every 200 steps, a CUDA error after step 550, the relaunch 600 s later restores step 400
    lines = []
    for i in range(1, 12):
        lines.append(f"[{_t(100 * i)}] Epoch 0: step {50 * i} train_loss=2.31")
        if i % 4 == 0:
            lines.append(f"[{_t(100 * i + 10)}] Epoch 0, global step {50 * i}: 'val_loss' reached"
                         f" 2.1 (best 2.1), saving model to '/ckpt/epoch=0-step={50 * i}.ckpt'"
                         " as top 1")
    lines.append(f"[{_t(1101)}] RuntimeError: CUDA error: an illegal memory access was encountered")
    restore = ["Restoring states from the checkpoint path at /ckpt/epoch=0-step=400.ckpt",
               "Restored all states from the checkpoint at /ckpt/epoch=0-step=400.ckpt"]
    if stamped_restore:
        lines += [f"[{_t(1700)}] GPU available: True (cuda), used: True",
                  f"[{_t(1703)}] {restore[0]}", f"[{_t(1720)}] {restore[1]}"]
    else:
        lines += ["GPU available: True (cuda), used: True", *restore]
    for i in range(9, 17):
        lines.append(f"[{_t(1720 + 100 * (i - 8))}] Epoch 0: step {50 * i} train_loss=1.9")
        if i % 4 == 0:
            lines.append(f"[{_t(1730 + 100 * (i - 8))}] Epoch 0, global step {50 * i}: 'val_loss'"
                         f" reached 1.8 (best 1.8), saving model to "
                         f"'/ckpt/epoch=0-step={50 * i}.ckpt' as top 1")
    return lines


def test_stamped_restore_lines_date_the_relaunch() -> None:
    doc = read(_lightning(True))
    gpu_s = doc["goodput"]["gpu_seconds"]
    assert gpu_s["checkpoint_restore"] == pytest.approx(17.0)  # 10:28:23 -> 10:28:40
    assert gpu_s["recovery"] == pytest.approx(1703 - 1101)  # the error to the restore
    assert not any("carry no time" in note for note in doc["notes"]), doc["notes"]


def test_unstamped_restore_lines_keep_the_note() -> None:
    # negative: no stamp between the stop and the first re-run step: recovery to that step
    doc = read(_lightning(False))
    assert any("carry no time" in note for note in doc["notes"]), doc["notes"]
    assert doc["goodput"]["gpu_seconds"]["checkpoint_restore"] == pytest.approx(0.0)


def _deepspeed(last_line: bool) -> list[str]:
    # DeepSpeed log_dist lines: a step every 2 s (10 steps a line), killed after step 600, the
    # relaunch loads global_step500 (torch_checkpoint_engine, then engine.py's ZeRO lines)
    def step(t: float, n: int) -> str:
        return (f"[{_t(int(t))},123] [INFO] [logging.py:96:log_dist] [Rank 0] step={n}, "
                "skipped=0, lr=[0.0001], mom=[(0.9, 0.999)]")
    lines = [step(20 * k, 10 * k) for k in range(1, 61)]
    lines.insert(25, f"[{_t(500)},200] [INFO] [logging.py:96:log_dist] [Rank 0] Saving model "
                     "checkpoint: /ckpt/global_step250/mp_rank_00_model_states.pt")
    lines.insert(51, f"[{_t(1000)},200] [INFO] [logging.py:96:log_dist] [Rank 0] Saving model "
                     "checkpoint: /ckpt/global_step500/mp_rank_00_model_states.pt")
    lines.append("RuntimeError: CUDA error: uncorrectable ECC error encountered")
    lines.append(f"[{_t(1202)},000] [ERROR] [launch.py:325:sigkill_handler] ['/usr/bin/python', "
                 "'-u', 'train.py'] exits with return code = 1")
    lines.append(f"[{_t(2400)},000] [INFO] [torch_checkpoint_engine.py:27:load] [Torch] Loading "
                 "checkpoint from /ckpt/global_step500/mp_rank_00_model_states.pt...")
    if last_line:
        lines.append(f"[{_t(2430)},000] [INFO] [engine.py:3023:_load_zero_checkpoint] loading 8 "
                     "zero partition checkpoints for rank 0")
    lines += [step(2430 + 20 * k, 500 + 10 * k) for k in range(1, 21)]
    return lines


def test_a_zero_load_is_bounded_by_its_last_line() -> None:
    gpu_s = read(_deepspeed(True))["goodput"]["gpu_seconds"]
    assert gpu_s["checkpoint_restore"] == pytest.approx(30.0)  # Loading ... -> loading 8 zero
    assert gpu_s["recovery"] == pytest.approx(2400 - 1200 - 0.123, abs=1.0)


def test_a_load_with_no_end_line_books_no_restore_time() -> None:
    # negative: the load's start alone bounds nothing
    gpu_s = read(_deepspeed(False))["goodput"]["gpu_seconds"]
    assert gpu_s["checkpoint_restore"] == pytest.approx(0.0)
