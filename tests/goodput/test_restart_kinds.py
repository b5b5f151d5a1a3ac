"""Restarts that are not what their lines first look like (newcomer findings 2, 3, 4, 9, 10):
a fine-tune's load of another run's weights, a relaunch that starts from scratch, the gap
before a relaunched process's first dated line, the several lines of one HF resume, and
DeepSpeed's stamped save begin/end. Lines in the frameworks' own wording (Megatron-LM
training.py/checkpointing.py, HF Trainer, DeepSpeed torch_checkpoint_engine.py), hand-varied;
a negative beside each rule."""

from __future__ import annotations

import pytest

from tests.goodput.test_log_classes import read

WORLD = ("using world size: 64, data-parallel size: 8, tensor-model-parallel size: 8, "
         "pipeline-model-parallel size: 1")


def _iters(first: int, last: int, start: str = "12:00", sec: int = 0) -> list[str]:
    """Megatron iteration lines every 10 iterations, 12 s apart (1.2 s per iteration)."""
    hour, minute = (int(x) for x in start.split(":"))
    out = []
    for n, it in enumerate(range(first, last + 1, 10)):
        t = hour * 3600 + minute * 60 + sec + 12 * (n + 1)
        stamp = f"2024-05-01 {t // 3600:02d}:{t % 3600 // 60:02d}:{t % 60:02d}"
        out.append(f" [{stamp}] iteration {it:>8}/  500000 | consumed samples: {it * 512:>12} | "
                   "elapsed time per iteration (ms): 1200.0 | learning rate: 1.500E-04 | "
                   "global batch size:   512 | lm loss: 7.123456E+00 | loss scale: 1.0 |")
    return out


def _save(it: int) -> list[str]:
    return [f"saving checkpoint at iteration {it:>7} to /ckpt/gpt",
            f"  successfully saved checkpoint from iteration {it:>7} to /ckpt/gpt "
            "[ t 1/8, p 1/1 ]"]


# -- 2. Megatron --finetune: another run's weights, the counter set back to 0 ------------------
def test_a_finetune_load_is_no_restart_and_no_commit() -> None:
    lines = [WORLD, " loading checkpoint from /pretrained/llama at iteration 100000",
             "  successfully loaded checkpoint from /pretrained/llama [ t 1/8, p 1/1 ] at "
             "iteration 0"] + _iters(10, 200)
    doc = read(lines, gpus=8)
    assert doc["restarts"] == []
    assert doc["goodput"]["goodput"] is None and doc["status"] == "unknown"


def test_a_resume_load_before_progress_still_names_its_step() -> None:
    # negative: the load goes on from the step it names (no `--finetune`)
    lines = [WORLD, " loading checkpoint from /ckpt/gpt at iteration 200",
             "  successfully loaded checkpoint from /ckpt/gpt [ t 1/8, p 1/1 ] at iteration 200"
             ] + _iters(210, 400) + _save(400)
    doc = read(lines, gpus=8)
    assert [r["resumed_from_step"] for r in doc["restarts"]] == [200]


# -- 3. a relaunch with nothing restored: the counter starts again -----------------------------
def test_a_restart_from_random_wastes_the_first_runs_steps() -> None:
    first = [WORLD] + _iters(10, 200) + _save(200) + _iters(210, 260)
    lines = first + ["[2024-05-01 12:05:50] [E] srun: error: node-017: task 12: Killed", WORLD,
                     "WARNING: could not find the metadata file "
                     "/ckpt/gpt/latest_checkpointed_iteration.txt",
                     "    will not load any checkpoints and will start from random"
                     ] + _iters(10, 200, "12:20") + _save(200)
    doc = read(lines, gpus=1)
    assert [(r["resumed_from_step"], r["lost_steps"]) for r in doc["restarts"]] == [(0, 260)]
    assert [s["step"] for s in doc["checkpoint_saves"]] == [200, 200]
    seconds = doc["goodput"]["gpu_seconds"]
    assert seconds["productive"] == pytest.approx(20 * 12.0)  # run 2's 200 iterations only
    assert seconds["wasted_progress"] >= 26 * 12.0  # all of run 1's 260


def test_a_relaunch_that_goes_on_past_the_save_keeps_it() -> None:
    # negative: no restore line, but the counter goes on from the save (a silent restore)
    first = [WORLD] + _iters(10, 200) + _save(200) + _iters(210, 260)
    lines = first + ["[2024-05-01 12:05:50] [E] srun: error: node-017: task 12: Killed", WORLD
                     ] + _iters(210, 300, "12:20") + _save(300)
    doc = read(lines, gpus=1)
    assert doc["goodput"]["gpu_seconds"]["productive"] >= 29 * 12.0


# -- 4. the relaunch's undated lines: recovery until its first dated line ----------------------
def test_recovery_runs_to_the_relaunched_process_first_dated_line() -> None:
    first = [WORLD] + _iters(10, 200) + _save(200) + _iters(210, 260)
    lines = first + ["[2024-05-01 12:05:50] [E] srun: error: node-017: task 12: Killed", WORLD,
                     "[after megatron is initialized] datetime: 2024-05-01 12:15:00 ",
                     " loading checkpoint from /ckpt/gpt at iteration 200",
                     "  successfully loaded checkpoint from /ckpt/gpt [ t 1/8, p 1/1 ] at "
                     "iteration 200",
                     "[before the start of training step] datetime: 2024-05-01 12:20:42 "
                     ] + _iters(210, 400, "12:20", 42)
    seconds = read(lines, gpus=1)["goodput"]["gpu_seconds"]
    assert seconds["recovery"] == pytest.approx(550.0)  # 12:05:50 -> 12:15:00
    assert seconds["initialization"] == pytest.approx(342.0)  # 12:15:00 -> 12:20:42


def test_a_relaunch_line_with_its_own_stamp_starts_initialization() -> None:
    # negative: the first line of the relaunch is dated: recovery ends there
    first = [WORLD] + _iters(10, 200) + _save(200) + _iters(210, 260)
    lines = first + ["[2024-05-01 12:05:50] [E] srun: error: node-017: task 12: Killed",
                     "[2024-05-01 12:07:00] using world size: 64, data-parallel size: 8, "
                     "tensor-model-parallel size: 8, pipeline-model-parallel size: 1",
                     "[before the start of training step] datetime: 2024-05-01 12:20:42 "
                     ] + _iters(210, 400, "12:20", 42)
    seconds = read(lines, gpus=1)["goodput"]["gpu_seconds"]
    assert seconds["recovery"] == pytest.approx(70.0)


# -- 9. HF Trainer: the resume's several lines are one restart ---------------------------------
def _hf(stamp: str, text: str, line: int = 2048) -> str:
    return f"[INFO|trainer.py:{line}] 2024-05-01 {stamp},101 >> {text}"


def _bar(first: int, last: int) -> list[str]:
    out = []
    for step in range(first, last + 1, 10):
        out.append(f"{{'loss': 2.0{step % 100:02d}, 'grad_norm': 1.5, 'learning_rate': 4.9e-05, "
                   f"'epoch': {step / 1000:.2f}}}")
        out.append(f" {step // 10:3d}%|#         | {step}/1000 [{step * 2 // 60:02d}:"
                   f"{step * 2 % 60:02d}<20:00,  2.00s/it]")
    return out


def test_an_hf_resume_told_in_three_lines_is_one_restart() -> None:
    lines = ([_hf("12:00:00", "***** Running training *****")] + _bar(10, 200)
             + ["Saving model checkpoint to out/checkpoint-200"] + _bar(210, 300)
             + ["torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.",
                _hf("12:20:00", "***** Running training *****"),
                _hf("12:20:00", "  Continuing training from checkpoint, will skip to saved "
                                "global_step", 2070),
                _hf("12:20:00", "  Continuing training from epoch 0", 2071),
                _hf("12:20:00", "  Continuing training from global step 200", 2072)]
             + _bar(210, 400))
    doc = read(lines, gpus=1)
    assert [(r["resumed_from_step"], r["lost_steps"]) for r in doc["restarts"]] == [(200, 100)]


def test_an_hf_resume_without_its_step_stays_unnamed() -> None:
    # negative: no line names the step: one restart, its step not invented
    lines = ([_hf("12:00:00", "***** Running training *****")] + _bar(10, 200)
             + ["Saving model checkpoint to out/checkpoint-200"] + _bar(210, 300)
             + ["torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB.",
                _hf("12:20:00", "***** Running training *****"),
                _hf("12:20:00", "  Continuing training from checkpoint, will skip to saved "
                                "global_step", 2070)]
             + _bar(210, 400))
    restarts = read(lines, gpus=1)["restarts"]
    assert len(restarts) == 1


# -- 10. DeepSpeed: a save begun and committed, both stamped -----------------------------------
def _ds(stamp: str, text: str, where: str = "logging.py:96:log_dist") -> str:
    return f"[2024-05-01 {stamp}] [INFO] [{where}] {text}"


def _ds_steps(first: int, last: int, t0: int) -> list[str]:
    out = []
    for n, step in enumerate(range(first, last + 1, 10)):
        t = t0 + 20 * n
        out.append(_ds(f"12:{t // 60:02d}:{t % 60:02d},123",
                       f"[Rank 0] step={step}, skipped=0, lr=[0.0001], mom=[(0.9, 0.999)]"))
    return out


def test_deepspeed_save_begin_and_ready_give_its_duration() -> None:
    lines = (_ds_steps(10, 100, 20)
             + [_ds("12:03:20,200", "[Rank 0] [Torch] Checkpoint global_step100 is about to be "
                                    "saved!"),
                _ds("12:03:35,300", "[Torch] Checkpoint global_step100 is ready now!",
                    "torch_checkpoint_engine.py:33:commit")]
             + _ds_steps(110, 200, 220))
    parsed_doc = read(lines, gpus=1)
    assert [(s["step"], s["seconds"]) for s in parsed_doc["checkpoint_saves"]] == [(100, 15.1)]
    assert parsed_doc["goodput"]["gpu_seconds"]["checkpoint_save"] == pytest.approx(15.1)


def test_a_deepspeed_save_begun_after_a_stop_is_the_same_unfinished_save() -> None:
    # negative: accelerate begins the save, a watchdog fires, then DeepSpeed's begin line: one
    # save, never shown ready, so nothing is committed
    lines = (_ds_steps(10, 100, 20)
             + [_ds("12:03:20,200", "Saving current state to output_dir/checkpoint-100",
                    "accelerator.py:2950:save_state"),
                "[rank0]:[E501 12:33:20.475880828 ProcessGroupNCCL.cpp:616] [Rank 0] Watchdog "
                "caught collective operation timeout: WorkNCCL(SeqNum=140, OpType=ALLREDUCE) ran "
                "for 1800093 milliseconds before timing out.",
                _ds("12:33:21,111", "[Rank 0] [Torch] Checkpoint pytorch_model is about to be "
                                    "saved!")])
    doc = read(lines, gpus=1)
    assert len(doc["checkpoint_saves"]) == 1
    assert doc["goodput"]["goodput"] is None
