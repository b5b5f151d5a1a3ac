"""Line kinds the fresh12 first-contact batch (O10-O19) showed missing, each read on the case's
real lines and on a negative beside it: a run header printed again after progress or a stop (a
relaunch, O10), an epoch's time per epoch beside a rounded per-step rate (Keras verbose=2, O11),
a counter named by its noun and a loop variable's letter (`batch i:1`, O18), 3D Gaussian
Splatting's `Saving Gaussians` (O16), a batch counter that resets with its epoch and prints no
epoch length, timed only inside the epochs (MXNet Gluon, O17), a save's timer among the step's
metrics (verl's `timing_s/save_checkpoint`, O14) and Ray's worker death whose list of common
causes names an OOM killer as one guess (O14).
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


# -- a research trainer's Python logging, three launches (fresh12 O10) -----------------------
TRAINER = "progressive_diffusion_distillation_with_adaptive_step_curriculum.training.trainer"
LAUNCHES = [
    "2026-02-13 14:52:20,363 - __main__ - INFO - Starting training...",
    f"2026-02-13 14:52:20,363 - {TRAINER} - INFO - Starting training...",
    "2026-02-13 14:52:20,785 - __main__ - ERROR - Training failed with error: mat1 and mat2 "
    "shapes cannot be multiplied (308x512 and 768x256)",
    "Traceback (most recent call last):",
    '  File "scripts/train.py", line 213, in main',
    "    trainer.train()",
    "RuntimeError: mat1 and mat2 shapes cannot be multiplied (308x512 and 768x256)",
    "2026-02-13 14:53:12,611 - __main__ - INFO - Loading configuration from configs/default.yaml",
    "2026-02-13 14:53:23,833 - __main__ - INFO - Starting training...",
    f"2026-02-13 14:53:23,833 - {TRAINER} - INFO - Starting training...",
    f"2026-02-13 14:54:54,206 - {TRAINER} - INFO - Step 50 | Loss: 0.0002 | LR: 1.00e-04 | "
    "Curriculum: 200",
    "2026-02-13 14:55:13,965 - __main__ - INFO - Loading configuration from configs/default.yaml",
    "2026-02-13 14:55:25,173 - __main__ - INFO - Starting training...",
    f"2026-02-13 14:55:25,173 - {TRAINER} - INFO - Starting training...",
] + [f"2026-02-13 {14 + (56 + k) // 60}:{(56 + k) % 60:02d}:22,976 - {TRAINER} - INFO - "
     f"Step {50 * (k + 1)} | Loss: 0.0002 | LR: 1.00e-04 | Curriculum: {200 * (k + 1)}"
     for k in range(6)]


def test_a_run_header_printed_again_after_a_stop_or_progress_is_a_relaunch() -> None:
    doc = read(LAUNCHES)
    assert len(doc["restarts"]) == 2
    assert [i["after_step"] for i in doc["interruptions"]] == [None, 50]


def test_a_run_header_echoed_by_two_loggers_or_printed_once_is_no_relaunch() -> None:
    # negative: the third launch alone (two loggers print its one start) holds no relaunch
    doc = read(LAUNCHES[12:])
    assert doc["restarts"] == [] and doc["interruptions"] == []
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (50, 300)


# -- Keras model.fit(verbose=2), a character LSTM (fresh12 O11) -------------------------------
KERAS = ["Epoch 1/100", "128/128 - 5s - loss: 3.1494 - accuracy: 0.1463 - 5s/epoch - 43ms/step"]
for _e, _ms in enumerate((358, 355, 354, 374, 355, 349, 349), start=2):
    KERAS += [f"Epoch {_e}/100",
              f"128/128 - 0s - loss: 2.9102 - accuracy: 0.1586 - {_ms}ms/epoch - 3ms/step"]


def test_an_epochs_time_over_its_steps_beats_a_rounded_per_step_rate() -> None:
    doc = read(KERAS)
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (128, 1024)
    assert doc["step_time_s"]["median"] == round(355 / 128 / 1000, 6)


def test_a_per_epoch_time_on_lines_inside_the_epoch_is_no_window() -> None:
    # negative: lines at 32, 64 and 96 of 128 are not the epoch's end, so their `ms/epoch`
    # times no steps since the line before; the printed per-step rate stays the step time
    lines = []
    for e in range(1, 5):
        lines += [f"Epoch {e}/100"] + [
            f"{n}/128 - 0s - loss: 2.9102 - accuracy: 0.1586 - 355ms/epoch - 3ms/step"
            for n in (32, 64, 96, 128)]
    assert read(lines)["step_time_s"]["median"] == 0.003


# -- AlphaZero_Gobang's train.py, print() lines (fresh12 O18) ---------------------------------
GOBANG = ["2025-06-04 19:53:31, batch i:1, episode_len:28",
          "2025-06-04 19:53:48, batch i:2, episode_len:39",
          "kl:0.01113,lr_multiplier:1.000,loss:5.3159,entropy:4.3723,explained_var_old:0.000,"
          "explained_var_new:0.106",
          "2025-06-04 19:54:08, batch i:3, episode_len:46",
          "kl:0.02387,lr_multiplier:1.000,loss:5.1880,entropy:4.3426,explained_var_old:-0.041,"
          "explained_var_new:0.241",
          "2025-06-04 19:54:26, batch i:4, episode_len:42",
          "2025-06-04 19:54:38, batch i:5, episode_len:28"]


def test_a_counter_named_by_its_noun_and_a_loop_letter_is_the_step() -> None:
    doc = read(GOBANG)
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (1, 5)


def test_a_count_named_n_after_a_noun_is_no_counter() -> None:
    # negative: `batch n:` names a size (n items), not a loop index: it counts nothing
    lines = [line.replace("batch i:", "batch n:") for line in GOBANG]
    assert read(lines)["steps"]["first"] is None


# -- 3D Gaussian Splatting's train.py, tqdm bar then stamped prints (fresh12 O16) --------------
SPLAT = [f"Training progress:  99%|█████████▊| {n}/30000 [10:{45 + (n - 29620) // 50:02d}<00:09, "
         "41.91it/s, Loss=0.0430947, psnr=25.00, Num=2589054]" for n in range(29620, 30001, 20)]
SPLAT += ["[ITER 30000] Evaluating train: L1 0.0232 PSNR 27.3186 [12/01 14:21:47]",
          "[ITER 30000] Saving Gaussians [12/01 14:21:47]",
          "Training complete. [12/01 14:22:03]"]


def test_saving_gaussians_is_a_save_of_its_iteration() -> None:
    doc = read(SPLAT)
    assert [s["step"] for s in doc["checkpoint_saves"]] == [30000]


def test_saving_plots_of_the_gaussians_is_no_save() -> None:
    # negative: what is saved is a plot, the Gaussians only its subject
    lines = [line.replace("Saving Gaussians", "Saving plots of Gaussians") for line in SPLAT]
    assert read(lines)["checkpoint_saves"] == []


# -- MXNet Gluon SSD's train_net.py, two lines an epoch (fresh12 O17) --------------------------
GLUON = [f"2020-09-02 {s} - train_net.py[line:177] - INFO: [Epoch {e}][Batch {b}], Speed: 6.896 "
         "samples/sec, CrossEntropy=8.60e-01, SmoothL1=3.74e-03, val_AP=0.168"
         for s, e, b in (("13:28:04,330", 0, 0), ("13:28:31,118", 0, 50), ("13:28:56,225", 1, 0),
                         ("13:29:23,402", 1, 50), ("13:29:48,626", 2, 0),
                         ("13:30:16,129", 2, 50), ("13:30:41,000", 3, 0),
                         ("13:31:08,000", 3, 50))]


def test_a_batch_counter_that_resets_with_the_epoch_is_the_step() -> None:
    doc = read(GLUON)
    assert (doc["steps"]["printed_first"], doc["steps"]["printed_last"]) == (0, 50)
    # only the 50 batches inside an epoch are timed: across epochs the count is a guess
    # (26.788, 27.177, 27.503, 27.0 s per 50 batches: the median of four)
    assert doc["step_time_s"]["median"] == round((27.0 + 27.177) / 2 / 50, 5)


def test_a_batch_counter_that_falls_inside_an_epoch_is_no_step() -> None:
    # negative: the batch goes back while the epoch stays: it does not count within the epoch
    lines = [re.sub(r"\[Epoch \d\]", "[Epoch 0]", line) for line in GLUON]
    assert read(lines)["steps"]["printed_last"] != 50


# -- verl's GRPO trainer on Ray: a save, then the step's metrics with its timer (fresh12 O14) ---
RUNNER = "\x1b[36m(TaskRunner pid=625502)\x1b[0m "
WORKER = "\x1b[36m(WorkerDict pid=626895)\x1b[0m "
FOLDER = "/data/verl/checkpoints/math_grpo/global_step_20/actor"
VERL = [
    RUNNER + "\rTraining Progress:   0%|          | 18/3746 [03:36<9:40:35,  9.34s/it]",
    RUNNER + "step:19 - global_seqlen/min:2510 - actor/entropy:11.6156 - timing_s/gen:4.21 - "
    "timing_s/step:9.97 - training/global_step:19 - training/epoch:0",
    RUNNER + "\rTraining Progress:   1%|          | 19/3746 [03:45<9:32:13,  9.21s/it]",
    RUNNER + "local_global_step_folder: checkpoints/math_grpo/global_step_20",
    WORKER + f"INFO:2026-04-03 07:06:29,723:[Rank 0] Saved model to {FOLDER}/model_world_size_1"
    "_rank_0.pt",
    WORKER + f"INFO:2026-04-03 07:06:46,070:[Rank 0] Saved optim to {FOLDER}/optim_world_size_1"
    "_rank_0.pt",
    WORKER + "INFO:2026-04-03 07:06:49,396:update_weights done, time cost: 2.70s",
    RUNNER + "step:20 - global_seqlen/min:2426 - actor/entropy:11.6238 - timing_s/gen:4.30 - "
    "timing_s/save_checkpoint:28.736737434985116 - timing_s/step:37.91 - "
    "training/global_step:20 - training/epoch:0",
    RUNNER + "\rTraining Progress:   1%|          | 20/3746 [04:23<18:27:18, 17.83s/it]",
    RUNNER + "\rTraining Progress:   1%|          | 21/3746 [04:34<16:20:21, 15.79s/it]",
]


def test_a_save_timer_among_the_steps_metrics_is_the_saves_time() -> None:
    saves = read(VERL)["checkpoint_saves"]
    assert [(s["step"], s["seconds"]) for s in saves] == [(20, 28.736737)]


def test_a_save_timer_with_no_save_line_invents_no_save() -> None:
    # negative: without a line that saves, the timer alone is no save of its own
    lines = [line for line in VERL if "Saved " not in line and "step_folder" not in line]
    assert read(lines)["checkpoint_saves"] == []


RAYLET = ("\x1b[33m(raylet)\x1b[0m A worker died or was killed while executing a task by an "
          "unexpected system error. To troubleshoot the problem, check the logs for the dead "
          "worker. Worker exit type: SYSTEM_ERROR Worker exit detail: Worker unexpectedly exits "
          "with a connection error code 2. End of file. Some common causes include: (1) the "
          "process was killed by the OOM killer due to high memory usage, (2) ray stop --force "
          "was called, or (3) the worker crashed unexpectedly due to SIGSEGV or another "
          "unexpected error.")


def test_a_worker_death_listing_its_common_causes_is_a_lost_worker() -> None:
    doc = read(VERL + [RAYLET])
    assert [(i["after_step"], i["cause"]) for i in doc["interruptions"]] == [(21, "worker_lost")]


def test_an_oom_killer_named_as_what_happened_is_still_an_oom() -> None:
    # negative: no list of guesses: the OOM killer is the cause the line gives
    line = "A worker died or was killed: the process was killed by the OOM killer"
    doc = read(VERL + [line])
    assert [i["cause"] for i in doc["interruptions"]] == ["cuda_oom"]
