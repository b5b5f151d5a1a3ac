"""Classes of input the fresh5 first-contact batch of issue 23 showed unread, each read on lines in
the shape of the real ones (other numbers, other names), with a negative beside it: a similar
line that must not be read that way."""

from __future__ import annotations

from tests.goodput.test_log_classes import read, steps


def median_s(doc: dict) -> float | None:
    return (doc.get("step_time_s") or {}).get("median")


# -- a launcher's or scheduler's restart line is a restart on its own (no error line before) -----
ELASTIC = "INFO:torch.distributed.elastic.agent.server.api:[default] "


def test_an_elastic_agent_restarting_its_worker_group_is_a_restart() -> None:
    lines = [ELASTIC + "Worker group FAILED. 2/2 attempts left; will restart worker group",
             ELASTIC + "Stopping worker group", ELASTIC + "Rendezvous'ing worker group",
             ELASTIC + "Starting worker group"]
    assert len(read(lines)["restarts"]) == 1


def test_one_restart_told_by_two_agents_is_one() -> None:
    # negative: two nodes' agents print the same restart line; no progress between them
    line = ELASTIC + "Worker group FAILED. 3/3 attempts left; will restart worker group"
    assert len(read([line, line.replace("[default]", "[default] ")])["restarts"]) == 1


SUBMITIT = "submitit {level} (2023-03-02 11:{m}:{s},104) - {text}"


def test_a_preempted_and_requeued_job_that_starts_again_is_one_restart() -> None:
    start = "Starting with JobEnvironment(job_id=8123, hostname=gpu-7, local_rank=0(4))"
    texts = [("INFO", "05", "10", start),
             ("WARNING", "09", "40", "Caught signal SIGUSR2 on gpu-7: this job is preempted."),
             ("INFO", "09", "41", "Requeued job 8123 (2 remaining timeouts)"),
             ("INFO", "09", "41", "Exiting gracefully after preemption/timeout."),
             ("INFO", "14", "02", start)]
    lines = [SUBMITIT.format(level=lv, m=m, s=s, text=t) for lv, m, s, t in texts]
    assert len(read(lines)["restarts"]) == 1
    assert len(read(lines[:3])["restarts"]) == 1  # the requeue alone: the job will run again
    assert len(read(lines[:2] + lines[3:])["restarts"]) == 1  # the start after the preemption


def test_a_first_start_and_a_requeue_option_are_no_restart() -> None:
    # negative: the job's first start, and a config line naming the requeue option
    lines = [SUBMITIT.format(level="INFO", m="01", s="00",
                             text="Starting with JobEnvironment(job_id=9, hostname=n1)"),
             "slurm_requeue: True, requeue on timeout enabled"]
    assert read(lines)["restarts"] == []


# -- a line's own seconds per step beats other durations on it (a size along time, an elapsed) --
def test_seconds_per_step_printed_on_the_line_is_the_step_time() -> None:
    # RETURNN's PyTorch engine: `max_size:time` is a batch's longest sequence, `elapsed` the
    # sub-epoch's running time
    lines = [f"ep 7 train, step {n}00, ce 0.{n}, num_seqs 31, "
             f"max_size:time {280000 + 640 * (n % 4)}, mem_usage:cuda:0 61.2GB, "
             f"0.7{n % 10} sec/step, elapsed 0:{n + 10}:{15 * (n % 4)}, "
             f"exp. remaining 0:04:10, complete {50 + n}.1%" for n in range(11, 17)]
    assert 0.7 <= median_s(read(lines)) < 0.8


def test_a_time_field_without_a_rate_per_step_stays_the_step_time() -> None:
    # negative: the same line with no `sec/step`: its one duration is the step's
    lines = [f"ep 7 train, step {n}, ce 0.{n}, num_seqs 31, time 0.6{n % 3}" for n in range(11, 17)]
    assert 0.6 <= median_s(read(lines)) < 0.7


# -- a duration that, times the rate of steps, is the counter's advance is the window's time ----
def test_a_duration_covering_the_steps_since_the_last_row_is_a_window() -> None:
    # keras-rl's TrainEpisodeLogger: one row per episode, the counter cumulative env steps
    rows, total = [], 12000
    for episode, length in enumerate((305, 210, 260, 188), start=40):
        total += length
        rows.append(f"{total:>6}/50000: episode: {episode}, duration: {length / 160:.3f}s, "
                    f"episode steps: {length}, steps per second: 160, episode reward: {length}.000,"
                    f" mean reward: 1.000 [1.000, 1.000], loss: 3.{episode}, mean_q: 41.5")
    assert abs(median_s(read(rows)) - 1 / 160) < 1e-4


def test_a_step_duration_beside_its_rate_stays_a_step_time() -> None:
    # negative: a step's own duration beside its rate (duration × rate is one step)
    rows = [f"step {n * 50}/5000: duration: 0.{500 + n}s, steps per second: 1.9{n}, loss: 2.{n}"
            for n in range(1, 6)]
    assert 0.5 <= median_s(read(rows)) < 0.51


# -- a counter named as a step is the training steps though the line prints a throughput -------
def test_a_step_counter_with_an_images_per_second_profile_is_progress() -> None:
    # LightlyTrain's train step lines, a profiling block with `img/s` at the end
    lines = [f"[2026-04-01 13:02:{n:02d},052][INFO] Train Step {n * 10}/200 | Epoch 1 | "
             f"train_loss: 28.{n} | lr: 0.00005 | Profiling [ GPU Util 52.3% | GPU Max Mem  "
             f"9760.3 MB | Step Time 0.2{n}s | Data Time 0.03s |  121 img/s ]" for n in range(1, 5)]
    doc = read(lines)
    assert steps(doc) == (10, 40)
    assert 0.2 < median_s(doc) < 0.25


def test_a_bar_of_images_is_still_not_steps() -> None:
    # negative: a counter not named as a step, on a bar of images per second
    lines = [f"Preprocessing {n * 64}/2048 [00:0{n}<00:31, 121 img/s]" for n in range(1, 6)]
    assert steps(read(lines)) == (None, None)


# -- rich's RichHandler leaves a repeated time out and pads its column: the stamp above dates it --
def rich_lines(pad: str) -> list[str]:
    lines = []
    for n, (minute, second) in enumerate(((40, 3), (40, 17), (40, 30), (40, 44)), start=1):
        lines.append(f"[03/02/24 09:{minute}:{second:02d}] INFO     fold - fold - INFO: "
                     "train.py:88 main")
        lines.append(f"{pad}INFO     fold - fold - INFO: Training, Epoch: 0, Step: {n}, "
                     f"Global_Step: {n}, Loss: fape=1.{n} lddt=3.9")
    return lines


def test_a_line_under_a_blank_stamp_column_has_the_stamp_above() -> None:
    doc = read(rich_lines(" " * 20))
    assert steps(doc) == (1, 4)
    assert 13.0 <= median_s(doc) <= 14.0


def test_a_line_indented_otherwise_is_not_dated_by_the_stamp_above() -> None:
    # negative: an indent that is not the stamp column's width (a message's own indent)
    doc = read(rich_lines(" " * 4))
    assert steps(doc) == (1, 4)
    assert median_s(doc) is None


# -- a table bordered by bars, names of several words in its header -----------------------------
RULE = "+--------------+--------------+--------------+"


def test_rows_of_a_bordered_table_under_its_header_are_progress() -> None:
    # turicreate's progress table: a row every few seconds, so iterations are skipped
    rows = [(1, 4.1, 1.21), (2, 4.3, 2.03), (3, 4.2, 2.84), (4, 4.4, 3.66), (8, 4.0, 6.95)]
    lines = [RULE, "| Iteration    | Loss         | Elapsed Time |", RULE]
    lines += [f"| {n:<12} | {loss:<12} | {t:.2f}s{'':<7} |" for n, loss, t in rows] + [RULE]
    doc = read(lines)
    assert steps(doc) == (1, 8)
    assert 0.8 <= median_s(doc) <= 0.83


def test_a_bordered_table_of_words_is_not_progress() -> None:
    # negative: a bordered table whose rows are words (a model summary)
    lines = [RULE, "| Layer        | Type         | Params       |", RULE,
             "| encoder      | Conv2d       | 1.2 M        |",
             "| head         | Linear       | 3 K          |", RULE]
    assert steps(read(lines)) == (None, None)


# -- darknet's iteration line opens with its counter and a colon, like an srun label -------------
REGION = ("Region Avg IOU: 0.0{n}4084, Class: 1.000000, Obj: 0.61, No Obj: 0.49, "
          "Avg Recall: 0.0,  count: 6{n}")


def test_a_darknet_iteration_line_is_not_an_srun_label() -> None:
    lines = [REGION.format(n=n) for n in range(4)]
    lines += ["7: 301.114, 295.8377 avg, 0.000100 rate, 912.5 seconds, 448 images",
              "Loaded: 0.000051 seconds"] + [REGION.format(n=n) for n in range(4, 8)]
    doc = read(lines)
    assert steps(doc) == (7, 7)
    assert median_s(doc) == 912.5


def test_srun_labels_are_still_taken_off() -> None:
    # negative: srun --label prefixes before a step line are the task's rank, not a counter
    lines = [f"{rank}: step {n * 10} | loss 2.{n} | time 0.5{n}s" for n in range(1, 5)
             for rank in (0, 1)]
    doc = read(lines)
    assert steps(doc) == (10, 40)


# -- tensorpack: its stamp, its spelled epoch time, an epoch's time over its steps ---------------
def tensorpack_lines(epochs: range) -> list[str]:
    def stamp(t: int) -> str:
        return f"[0912 10:{t // 60:02d}:{t % 60:02d}"

    lines, t = [], 0
    for e in epochs:
        lines.append(f"{stamp(t)} @base.py:275] Start Epoch {e} ...")
        t += 220 + e
        lines.append(f"{stamp(t)} @base.py:285] Epoch {e} (global_step {e * 500}) "
                     f"finished, time:3 minutes 4{e} seconds.")
        lines.append(f"{stamp(t + 1)} @monitor.py:474] QueueInput/queue_size: 49.8{e}")
        t += 1
    return lines


def test_a_tensorpack_epoch_time_is_a_window_over_the_epoch_steps() -> None:
    doc = read(tensorpack_lines(range(2, 6)))
    assert steps(doc) == (1000, 2500)
    assert 0.44 <= median_s(doc) <= 0.45  # 3 min 4x s over 500 steps
    assert doc["span_from"] == "timestamps"


def test_one_tensorpack_epoch_line_gives_no_step_time() -> None:
    # negative: one epoch's time, and no other line to say how many steps it held; the stamp's
    # time of day is not a duration either
    doc = read(tensorpack_lines(range(4, 5)))
    assert steps(doc) == (2000, 2000)
    assert median_s(doc) is None


def test_a_step_line_saying_done_keeps_its_step_time() -> None:
    # negative: "done" on a step line that is not the end of an epoch
    lines = [f"Epoch 3, step {n * 100}/5000 ({n * 2}% done), time 0.5{n % 3}s" for n in range(1, 6)]
    assert 0.5 <= median_s(read(lines)) < 0.6


# -- a line that opens with a bracketed counter and says what it does there ----------------------
def test_evaluation_and_save_lines_after_a_bracketed_counter_are_not_the_steps() -> None:
    # 3DGS-style: evaluation and save messages name the iteration; the tqdm bar is the training
    lines = []
    for k, it in enumerate((3000, 4500, 6000, 7500), start=1):
        lines.append(f"Training progress:  {k * 5}%|#{k}        | {it}/30000 "
                     f"[0{k}:05<04:30, 50.1{k}it/s, Loss=0.0{k}]")
        lines += ["", f"[ITER {it}] Evaluating test: L1 0.03{k} PSNR 18.{k} [05/03 11:2{k}:07]"]
    lines += ["", "[ITER 7500] Saving Checkpoint [05/03 11:24:09]"]
    doc = read(lines)
    assert steps(doc) == (3000, 7500)
    assert [s["step"] for s in doc["checkpoint_saves"]] == [7500]


def test_a_bracketed_counter_followed_by_metrics_is_still_the_steps() -> None:
    # negative: `[ITER n]` then the step's own numbers
    lines = [f"[ITER {n * 100}] loss 0.0{n} lr 0.001 time 0.2{n % 3}s" for n in range(1, 6)]
    assert steps(read(lines)) == (100, 500)
