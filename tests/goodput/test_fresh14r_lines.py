"""A relaunch shown only by its start-up lines printed again (fresh14 Q01, Q05, Q08, Q19), read
on the cases' real lines (`opening.Opening`: any two start-up lines printed again in order, not
only the log's first two; `relaunch.reopenings` decides), and the negatives: a configuration
header printed before every iteration, ranks' copies of one start-up within the same second, an
evaluation block printed again while the counter goes on, a chained traceback's frames printed
again, and a stamped record's unstamped tail (another program's configuration dump, Q04).
"""

from __future__ import annotations

from gpuslo.goodput.logs import load_profiles
from gpuslo.goodput.logs.assemble import assemble
from gpuslo.goodput.logs.clock import Clock
from gpuslo.goodput.logs.reader import parse_lines
from gpuslo.goodput.logs.stamps import learn_shapes

PROFILES = load_profiles()


def read(lines: list[str]) -> dict:
    parsed = parse_lines(lines, PROFILES)
    return assemble(parsed, job="t", gpus=1, checkpoint_step=PROFILES.checkpoint_step).document


# -- two start-up notices printed again, alike but for one word (pygcn train.log, Q01) ----------
def q01_notices(stamp: str) -> list[str]:
    return [f"[2022-06-26 {stamp},025]trained model saved at :../train_model/model.pt",
            f"[2022-06-26 {stamp},027]best model saved at :../best_model/model.pt",
            f"[2022-06-26 {stamp},027]Epoch: 0001"]


Q01_ITERS = [f"[2022-06-26 21:43:{42 + 3 * k},483]iter:00{20 * (k + 1):02d} loss_train: 2.1153 "
             "acc_train: 0.3594 time: 0.1659s" for k in range(4)]


def test_two_alike_start_up_notices_printed_again_are_a_relaunch() -> None:
    assert len(read(q01_notices("21:43:24") + q01_notices("21:43:39") + Q01_ITERS)
               ["restarts"]) == 1


def test_start_up_notices_printed_once_are_no_relaunch() -> None:
    assert read(q01_notices("21:43:39") + Q01_ITERS)["restarts"] == []


# -- a configuration block printed again without its first line (loguru notebook, Q05) -----------
def q05_config(stamp: str, first: bool = True) -> list[str]:
    head = f"2025-11-22 {stamp} | INFO     | __main__:"
    lines = [f"{head}_load_yaml_config:7 - Loaded configuration from conf\\default.yaml"] if first \
        else []
    return lines + [
        f"{head}<module>:29 - Logger initialized (level=INFO, file=logs/train.log)",
        f"{head}<module>:62 - env_config SatelliteMACEnvConfig(num_slots_per_step=800, "
        "decision_horizon=2, history_len=4)",
        f"{head}<module>:86 - train_config HPPOConfig(frames_per_batch=3200, "
        "mini_batch_size=128, rollout_epochs=4)",
        f"{head}<module>:93 - Config ready | seed=42 frames_per_batch=3200 horizon=2 num_envs=8"]


def q05_iters(minute: int, count: int) -> list[str]:
    return [f"2025-11-22 21:{minute + k}:24.179 | INFO     | __main__:_log_metrics:30 - "
            f"iter={k:04d} reward=-120564.2422 ESS=0.8563 clip_fraction=0.1172"
            for k in range(count)]


def test_a_configuration_block_printed_again_without_its_first_line_is_a_relaunch() -> None:
    lines = (q05_config("21:45:46.050") + q05_config("21:47:53.838")
             + q05_config("21:48:00.427", first=False) + q05_iters(48, 5)
             + q05_config("21:58:19.794", first=False) + q05_iters(59, 3))
    assert len(read(lines)["restarts"]) == 3


def test_ranks_copies_of_a_configuration_block_in_one_second_are_no_relaunch() -> None:
    lines = (q05_config("21:48:00.427") + q05_config("21:48:00.912", first=False)
             + q05_iters(48, 5))
    assert read(lines)["restarts"] == []


def test_a_configuration_header_before_every_iteration_is_no_relaunch() -> None:
    lines = []
    for k in range(5):
        lines += q05_config(f"21:{48 + k}:00.427", first=False)[2:]
        lines += [line.replace("iter=0000", f"iter={k:04d}") for line in
                  q05_iters(48 + k, 1)]
    assert read(lines)["restarts"] == []


def test_an_evaluation_block_printed_again_while_the_counter_goes_on_is_no_relaunch() -> None:
    evaluation = ["2025-11-22 {} | INFO     | __main__:eval:12 - Evaluating policy on 8 envs",
                  "2025-11-22 {} | INFO     | __main__:eval:20 - Evaluation episodes: 16"]
    lines = [line.format("21:47:50.000") for line in evaluation] + q05_iters(48, 3)
    lines += [line.format("21:51:30.000") for line in evaluation]
    lines += [line.replace("iter=000", "iter=001") for line in q05_iters(52, 3)]
    assert read(lines)["restarts"] == []


# -- torchlight's `[%m.%d.%y|%H:%M:%S]` stamps and a parameter block printed again (ST-GCN, Q08) -
def test_a_date_and_time_joined_by_a_bar_is_a_stamp() -> None:
    shapes = learn_shapes(["[03.24.23|09:56:11] Parameters:", "[03.24.23|09:56:31] Done."])
    found = shapes[0].regex.search("[03.24.23|10:10:36] Parameters:")
    assert found is not None
    assert Clock().seconds(found.groupdict()) == 1679652636.0  # 2023-03-24 10:10:36 UTC


CONFIG = ("{'work_dir': '.\\\\output\\\\', 'config': 'config/st_gcn/kinetics-skeleton/train.yaml', "
          "'phase': 'train', 'start_epoch': 0, 'num_epoch': 50, 'weights': None}")


def q08_launch(stamps: list[str]) -> list[str]:
    lines = [f"[03.24.23|{stamps[0]}] Parameters:", CONFIG, ""]
    for epoch, stamp in enumerate(stamps):
        lines += [f"[03.24.23|{stamp}] Training epoch: {epoch}"]
        if epoch + 1 < len(stamps):
            lines += [f"[03.24.23|{stamps[epoch + 1]}] \tmean_loss: nan",
                      f"[03.24.23|{stamps[epoch + 1]}] Time consumption:",
                      f"[03.24.23|{stamps[epoch + 1]}] Done."]
    return lines


def test_a_parameter_block_printed_again_after_a_launch_that_never_stepped_is_one() -> None:
    lines = (q08_launch(["10:24:01", "10:24:21", "10:24:41"]) + q08_launch(["10:48:22"])
             + q08_launch(["12:15:58", "12:16:18", "12:16:38"]))
    assert len(read(lines)["restarts"]) == 2


# -- a start-up block printed again with no stamps, after a chained traceback (AlphaZero, Q19) ---
FRAMES = ['  File "/opt/homebrew/lib/python3.14/multiprocessing/queues.py", line 397, in put',
          "    self._writer.send_bytes(obj)",
          '  File "/opt/homebrew/lib/python3.14/multiprocessing/connection.py", line 400, in _send',
          "    n = write(self._handle, buf)",
          "BrokenPipeError: [Errno 32] Broken pipe"]
TRACEBACK = (["Process SpawnPoolWorker-5:", "Traceback (most recent call last):"] + FRAMES
             + ["", "During handling of the above exception, another exception occurred:", "",
                "Traceback (most recent call last):"] + FRAMES)
STARTUP = ["Device:            mps", "Workers:           8", "Simulations/move:  1000",
           "Games/iteration:   100", "Training window:   5000 games", "Max game length:   100",
           "", "Resuming from checkpoints/best.pt",
           "  meta: {'iteration': 23, 'best_iteration': 15}", "", "=" * 60,
           "  Iteration 1/12  (global 24)", "=" * 60, "", "[1/3] Self-play",
           "  (parallel self-play on 8 CPU workers)"]


def games(count: int, first_id: int) -> list[str]:
    return [f"  game {k + 1:3d}/100  id={first_id + k}   plies=44    winner=P2     73.3s  "
            "avg_len=44" for k in range(count)]


WORKERS = TRACEBACK + [line.replace("Worker-5", "Worker-6") for line in TRACEBACK]


def test_a_start_up_block_printed_again_is_a_launch_each_time() -> None:
    lines = WORKERS + STARTUP + STARTUP + games(7, 8001) + STARTUP + games(9, 8008)
    assert len(read(lines)["restarts"]) == 3


def test_chained_tracebacks_frames_printed_again_are_no_relaunch() -> None:
    # negative: two pool workers' chained tracebacks repeat the same frames before the one
    # launch after them (its restore after the failure is its one restart)
    assert len(read(WORKERS + STARTUP + games(9, 8008))["restarts"]) == 1


# -- another program's configuration dump: a stamped record's unstamped tail (Q04) --------------
def q04_dump(stamp: str, script: str, number: int) -> list[str]:
    return [f"2024-05-26 {stamp} - INFO - {script} - {number} - Train config: DATA:",
            "  classes: ['aeroplane', 'bicycle', 'bird', 'boat', 'bottle', 'bus', 'car']",
            "  dir: dataset/VOC2007", "  height: 416", "  name: VOC", "TRAIN:", "  batch_size: 8",
            "  epochs: 30", "  lr: 0.01"]


def test_a_stamped_records_tail_printed_again_is_no_relaunch() -> None:
    epochs = [f"2024-05-26 16:{10 + 5 * k}:03 - INFO - task2_train_fasterrcnn.py - 65 - EPOCH "
              f"{k + 1} of 30" for k in range(4)]
    lines = (q04_dump("16:04:40", "task2_train_fasterrcnn.py", 30) + epochs
             + q04_dump("19:14:54", "task2_inference_fasterrcnn.py", 31))
    assert read(lines)["restarts"] == []


# -- a profiler's stage lines printed twice an epoch, the first time before any progress (R10) ---
def r10_epoch(epoch: int, minute: int) -> list[str]:
    stage = "STAGE:2025-04-07 10:{:02d}:{:02d} 22264:22264 ActivityProfilerController.cpp:{}] " \
            "Completed Stage: {}"
    block = [(314, "Warm Up"), (320, "Collection"), (324, "Post Processing")]
    lines = [stage.format(minute, 46 + k // 2, code, name) for k, (code, name) in enumerate(block)]
    lines += [stage.format(minute + 2, 32 + k // 2, code, name)
              for k, (code, name) in enumerate(block)]
    return lines + [f"Epoch {epoch} |             Train Loss: {11.2338 - epoch / 3:.4f} | Token "
                    "Acc: 0.0490 | Seq Acc: 0.0000 |             Val Loss: 10.9681 | Token Acc: "
                    "0.0660 | Seq Acc: 0.0000"]


R10_START = ["start load training data...", "finish load training data...", "start training...",
             "No checkpoint found, starting fresh training.", "Starting Training From Epoch 0"]


def test_a_profilers_stage_lines_printed_every_epoch_are_no_relaunch() -> None:
    # negative: the stage block is the loop's, printed again before the first epoch's line
    lines = R10_START + [line for e in range(5) for line in r10_epoch(e, 29 + 4 * e)]
    assert read(lines)["restarts"] == []


def test_a_loops_header_before_a_counter_gone_back_is_a_relaunch() -> None:
    lines = R10_START + [line for e in range(4) for line in r10_epoch(e, 29 + 4 * e)]
    assert len(read(lines + r10_epoch(0, 49) + r10_epoch(1, 53))["restarts"]) == 1
