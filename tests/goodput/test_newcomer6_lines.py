"""Lines newcomer evaluation #6 (/work/wt/newcomer6_findings.md) showed misread, each on the
newcomer's real lines (the issue thread named above each) with a negative beside it: a shell
transcript whose process was killed and launched again is two runs (#21); interleaved per-rank
tqdm bars are each a counter over its own total, never one counter whose totals rise (#12); a
bar first seen at `00:00` whose steps fit that second at its own rate ran from 0, no resume
(#2); a bar's step time is its steps after the first draw, not a mean holding the start-up (#3);
a step logged as a float in a bar's postfix (`step=7440.0`) is the step, the bar's clock none (#19);
a bar or a traceback's header as wide as the terminal wrap opens its own record (#6).
"""

from __future__ import annotations

from pathlib import Path

from gpuslo.goodput.logs import load_profiles
from gpuslo.goodput.logs.assemble import assemble
from gpuslo.goodput.logs.clock import Clock
from gpuslo.goodput.logs.normalise import Normaliser
from gpuslo.goodput.logs.pipe import RecordPipe
from gpuslo.goodput.logs.reader import parse_lines

PROFILES = load_profiles()


def read(lines: list[str], gpus: int = 1) -> dict:
    parsed = parse_lines(lines, PROFILES)
    return assemble(parsed, job="t", gpus=gpus, checkpoint_step=PROFILES.checkpoint_step).document


# -- #21: a process killed, then its command and start-up again: a relaunch -------------------
# InternLandMark/LandMark#65 (issue description, first block, verbatim; bar glyphs shortened)
PROMPT = ("root@18135a5a8205:/LandMark# python3 -m app.trainer --config "
          "confs/matrixcity/matrixcity_2block_multi.txt")
LANDMARK = [
    PROMPT,
    "Training with a single process on 1 GPUs.",
    " 31%|█████████▉                     | 331/1063 [01:06<03:59,  3.06it/s]Killed",
    PROMPT,
    "Training with a single process on 1 GPUs.",
    " 33%|██████████▋                    | 348/1063 [01:08<02:57,  4.03it/s]Killed",
]


def test_a_start_up_printed_again_after_a_kill_is_a_relaunch() -> None:
    doc = read(LANDMARK)
    assert [i["line"] for i in doc["interruptions"]] == [3, 6]
    assert [r["line"] for r in doc["restarts"]] == [4]


def test_a_start_up_printed_again_with_no_stop_before_it_and_the_counter_going_on_is_none() -> (
        None):
    # negative: the same block again with nothing stopped before it and the bar going on is a
    # status line of the loop, as before
    lines = [LANDMARK[0], LANDMARK[1], LANDMARK[2].replace("Killed", ""), *LANDMARK[3:]]
    doc = read(lines)
    assert doc["restarts"] == []
    assert [i["line"] for i in doc["interruptions"]] == [6]


# -- #12: per-rank bars of one DeepSpeed job, each with its own total ---------------------------
# deepspeedai/DeepSpeed#942 (comment by ellen1230, verbatim excerpt)
DS = [
    "04/20/2021 21:05:45 - WARNING - root - Skipping validation because "
    "validation_data_path_prefix is unspecified",
    "[2021-04-20 21:05:45,681] [INFO] [distributed.py:46:init_distributed] Initializing torch "
    "distributed with backend: nccl",
    "04/20/2021 21:05:46 - INFO - root - Added key: store_based_barrier_key:1 to store for rank: 0",
    "VOCAB SIZE: 30528",
    "0%| | 0/61601 [00:00<?, ?it/s]",
    "0%| | 0/62442 [00:00<?, ?it/s]",
    "0%| | 0/64146 [00:00<?, ?it/s]",
    "0%| | 1/61289 [00:05<95:22:15, 5.60s/it]",
    "0%| | 1/61601 [00:05<88:22:49, 5.17s/it]",
    "0%| | 2/61289 [00:06<15:05:38, 1.13it/s]",
    "0%| | 1/62442 [00:05<101:23:58, 5.85s/it]",
    "0%| | 2/61601 [00:05<13:54:11, 1.23it/s]",
    "0%| | 3/61289 [00:07<11:16:09, 1.51it/s]",
    "0%| | 4/61289 [00:07<1:51:54, 9.13it/s]",
    "0%| | 6/61289 [00:07<1:42:52, 9.93it/s]",
]


def test_interleaved_rank_bars_are_counters_over_their_own_totals() -> None:
    doc = read(DS, gpus=4)
    steps = doc["steps"]
    assert steps["last"] <= 6 and steps["global_last"] <= 6  # not 61601..62442 (127429)
    assert steps["epoch_first"] is None and steps["epoch_last"] is None  # no epoch made up
    assert doc["restarts"] == []  # not "resumed from step 61600"
    assert 0.08 < doc["step_time_s"]["median"] < 0.2  # ~10 it/s after a 5 s first step: not
    # 80 µs, nor 7 s / 6 steps (a mean since the start that holds the first step's start-up)


def test_a_logger_whose_n_over_n_total_rises_with_its_n_steady_still_turns() -> None:
    # negative: CosyVoice's `TRAIN Batch 0/100` .. `0/800` is no bar: its rising N is the counter
    lines = [f"2024-07-01 10:00:{10 + k:02d},000 INFO TRAIN Batch 0/{n} loss 2.{k} lr 0.001"
             for k, n in enumerate((100, 200, 300, 400, 500))]
    steps = read(lines)["steps"]
    assert (steps["first"], steps["last"]) == (100, 500)


# -- #2: a fresh Lightning fit pasted as its bar's last state ---------------------------------
# Lightning-AI/pytorch-lightning#14428 (issue description, verbatim)
PL = [
    "GPU available: False, used: False",
    "TPU available: False, using: 0 TPU cores",
    "IPU available: False, using: 0 IPUs",
    "HPU available: False, using: 0 HPUs",
    "",
    "  | Name    | Type       | Params",
    "---------------------------------------",
    "0 | encoder | Sequential | 50.4 K",
    "1 | decoder | Sequential | 51.2 K",
    "---------------------------------------",
    "101 K     Trainable params",
    "0         Non-trainable params",
    "101 K     Total params",
    "0.407     Total estimated model params size (MB)",
    "Epoch 0: 100%|██████████████████| 100/100 [00:00<00:00, 324.18it/s, loss=0.0663, v_num=13]",
    "",
    "`Trainer.fit` stopped: `max_epochs=1` reached.",
]


def test_a_bar_whose_steps_fit_its_second_at_its_rate_ran_from_zero() -> None:
    doc = read(PL)
    assert doc["restarts"] == []  # not "resumed from step 99 as the log opens"
    assert doc["steps"]["last"] == 100


def test_a_bar_at_zero_elapsed_too_far_for_its_rate_still_resumed_mid_way() -> None:
    # negative: 5000 steps at 324 it/s need 15 s, not the second the bar shows: it began mid-way
    lines = PL[:14] + [PL[14].replace("100/100", "5000/5000")] + PL[15:]
    doc = read(lines)
    assert [r["resumed_from_step"] for r in doc["restarts"]] == [4999]


# -- #3: Lightning's bar: the first step held the start-up ------------------------------------
# Lightning-AI/pytorch-lightning#4225 (comment by Limtle, verbatim excerpt: the second run)
def _bar(n: int, t: int, rate: str) -> str:
    pct = round(100 * n / 18)
    return f"Epoch 0:  {pct}%|██▏       | {n}/18 [00:{t:02d}<01:02,  {rate}s/it, loss=10.0]"


RUN = ["Epoch 0:   0%|          | 0/18 [00:00<?, ?it/s] ",
       _bar(1, 8, "8.77"), _bar(2, 11, "5.82"), _bar(3, 14, "4.87"), _bar(4, 17, "4.47"),
       _bar(5, 20, "4.14")]


def test_a_bars_step_time_leaves_out_a_first_step_that_held_the_start_up() -> None:
    doc = read(RUN)
    assert doc["step_time_s"]["median"] == 3.0  # the clock's 3 s a step, not 20 / 5 = 4.0
    assert doc["slowdowns"] == []


def test_a_bar_at_its_own_pace_from_the_first_step_keeps_its_mean() -> None:
    # negative: the first step no slower than the rest (3 s, then 3 s each): the mean since the
    # start, as before (whole seconds explain the difference)
    run = [RUN[0]] + [_bar(n, 3 * n, "3.00") for n in range(1, 6)]
    assert read(run)["step_time_s"]["median"] == 3.0


# -- #14: a save that prints its step as `N updates`, and its best copy on the next line -------
# facebookresearch/fairseq-lua#60 (verbatim, 14 lines)
LUA = [
    "| epoch 009 | 0045063 updates | 0000000 epoch updates | path trainings/fconv/state_last.th7",
    "| epoch 009 | 0046063 updates | words/s    7730| trainloss     3.03 | train ppl     8.14",
    "| epoch 009 | 0047063 updates | words/s    7784| trainloss     2.85 | train ppl     7.21",
    "| epoch 009 | 0048063 updates | words/s    7772| trainloss     2.82 | train ppl     7.05",
    "| epoch 009 | 0049063 updates | words/s    7921| trainloss     2.85 | train ppl     7.23",
    "| epoch 009 | 0050063 updates | words/s    7834| trainloss     2.81 | train ppl     6.99",
    "| checkpoint 010 | epoch 010 | 0050070 updates | s/checkpnt     439 | words/s    7810 | "
    "lr 0.025000",
    "| checkpoint 010 | epoch 010 | 0050070 updates | trainloss     2.87 | train ppl     7.31",
    "| checkpoint 010 | epoch 010 | 0050070 updates | validloss     3.23 | valid ppl     9.36 | "
    "testloss     3.28 | test ppl     9.70",
    "| checkpoint 010 | epoch 010 | 0050070 updates | saved model to "
    "trainings/fconv/model_epoch10.th7",
    "| checkpoint 010 | epoch 010 | 0050070 updates | saved new best model to "
    "trainings/fconv/model_best.th7",
    "| epoch 010 | 0050070 updates | 0000000 epoch updates | path "
    "trainings/fconv/state_epoch10.th7",
    "| epoch 010 | 0050070 updates | 0000000 epoch updates | path trainings/fconv/state_last.th7",
    "| epoch 010 | 0051070 updates | words/s    7650| trainloss     2.77 | train ppl     6.84",
]


def test_a_save_at_the_updates_it_prints_and_its_best_copy_are_one_save() -> None:
    doc = read(LUA, gpus=8)
    assert [s["step"] for s in doc["checkpoint_saves"]] == [50070]  # not 50063 twice
    steps = doc["goodput"]["steps"]
    assert (steps["productive"], steps["uncommitted"]) == (5008, 1000)


def test_two_saves_of_one_epoch_with_progress_between_stay_two() -> None:
    # negative: the loop went on between the two save lines (a record between): two saves
    lines = LUA[:10] + [LUA[13].replace("0051070", "0050570"), LUA[10]] + LUA[13:]
    assert len(read(lines, gpus=8)["checkpoint_saves"]) == 2


# -- #13: an epoch begun after the last epoch summary: its time is training, not `other` ------
# facebookresearch/fairseq#2493 (comment by osddeitf, verbatim, the epoch stats JSON shortened)
FAIRSEQ = [
    "2021-01-05 23:30:23 | INFO | fairseq.checkpoint_utils | Preparing to save checkpoint for "
    "epoch 70 @ 2162 updates",
    "2021-01-05 23:30:42 | INFO | fairseq.trainer | Finished saving checkpoint to "
    "checkpoints/checkpoint70.pt",
    "2021-01-05 23:31:24 | INFO | fairseq.checkpoint_utils | Saved checkpoint "
    "checkpoints/checkpoint70.pt (epoch 70 @ 2162 updates, score 100.0) (writing took "
    "61.31149206700138 seconds)",
    "2021-01-05 23:31:24 | INFO | fairseq_cli.train | end of epoch 70 (average epoch stats below)",
    '2021-01-05 23:31:24 | INFO | train | {"epoch": 70, "train_loss": "534.887", "train_wps": '
    '"1021.2", "train_ups": "0.11", "train_num_updates": "2162", "train_lr": "5e-05", '
    '"train_gnorm": "71.26", "train_train_wall": "99", "train_wall": "8236"}',
    "2021-01-05 23:31:24 | INFO | fairseq.trainer | begin training epoch 71",
    "2021-01-05 23:33:02 | INFO | fairseq_cli.train | end of epoch 71 (average epoch stats below)",
]


def test_an_epoch_begun_after_the_last_summary_is_uncommitted_training() -> None:
    gp = read(FAIRSEQ, gpus=8)["goodput"]
    assert gp["gpu_seconds"]["other"] == 0.0  # not 784 GPU-s of "other"
    assert gp["uncommitted_gpu_s"] == 784.0  # 98 s of epoch 71 × 8 GPUs


def test_a_log_that_ends_after_its_own_epochs_summary_keeps_the_tail_other() -> None:
    # negative: no later epoch begun, only a line of epoch 70's own after its summary: the
    # tail is time the log shows as neither steps nor a named phase, as before
    lines = FAIRSEQ[:5] + [
        "2021-01-05 23:33:02 | INFO | fairseq_cli.train | end of epoch 70 (average epoch stats "
        "below)"]
    gp = read(lines, gpus=8)["goodput"]
    assert gp["gpu_seconds"]["other"] == 784.0


# -- #20: nanoGPT's eval and checkpoint between two stamped iteration lines --------------------
# karpathy/nanoGPT#215 (issue description, verbatim incl. its `> ` quoting; blank quote lines cut)
NANO = [
    f"> 2023-03-22 09:{t} iter {n}: loss 3.9, time {ms}ms, mfu 15.34%"
    for t, n, ms in [("30:39", 2920, "1099.34"), ("30:50", 2930, "1097.30"),
                     ("31:01", 2940, "1097.68"), ("31:12", 2950, "1096.94"),
                     ("31:23", 2960, "1097.23"), ("31:34", 2970, "1097.65"),
                     ("31:45", 2980, "1099.18"), ("31:56", 2990, "1096.65")]
] + [
    "> 2023-03-22 09:32:32 step 3000: train loss 4.0390, val loss 4.0427",
    "> saving checkpoint to out",
    "> 2023-03-22 09:32:41 iter 3000: loss 4.2490, time 35392.33ms, mfu 13.85%",
] + [
    f"> 2023-03-22 09:{t} iter {n}: loss nan, time {ms}ms, mfu 14.12%"
    for t, n, ms in [("32:52", 3010, "1019.95"), ("33:02", 3020, "1015.95"),
                     ("33:12", 3030, "1017.59"), ("33:22", 3040, "1016.57")]
]


def test_an_eval_and_save_pause_between_stamped_steps_is_not_progress() -> None:
    gp = read(NANO, gpus=8)["goodput"]["gpu_seconds"]
    assert 30 * 8 < gp["other"] < 36 * 8  # ~34 s beyond 10 steps of ~1.1 s, not productive


def test_the_same_pause_around_a_save_alone_stays_an_upper_bound_save() -> None:
    # negative: no eval line in the gap, only the save: the existing rule, checkpoint_save
    lines = NANO[:8] + NANO[9:]
    gp = read(lines, gpus=8)["goodput"]["gpu_seconds"]
    assert gp["other"] == 0.0 and gp["checkpoint_save"] > 30 * 8


def test_a_pause_around_an_eval_alone_is_left_as_it_was() -> None:
    # negative: an eval summary and no save in the gap: nothing says what the pause was
    lines = NANO[:9] + NANO[10:]
    gp = read(lines, gpus=8)["goodput"]["gpu_seconds"]
    assert gp["other"] == 0.0 and gp["checkpoint_save"] == 0.0


# -- #4: a stamped first step line stands for its stride of steps, timed by the next ----------
# pytorch/torchtitan#1287 (PR description log, verbatim; the metrics after `loss` cut)
TITAN = [
    "[rank0]:[0] 2025-06-25 12:55:32,539 - root - INFO - Waiting for checkpoint save request...",
    "[rank0]:[0] 2025-06-25 12:55:37,346 - root - INFO - Received async checkpoint request with "
    "id=./outputs/checkpoint/step-1",
] + [
    f"[rank0]:[titan] 2025-06-25 12:{t} - root - INFO - step: {n}  loss:  9.9493  memory: "
    "49.66GiB(52.28%)  tps: 5,917  tflops: 342.67  mfu: 34.65%"
    for t, n in [("55:55,589", 10), ("56:09,436", 20), ("56:23,343", 30), ("56:37,275", 40)]
]


def _init_s(doc: dict) -> float:
    return doc["goodput"]["gpu_seconds"]["initialization"] / doc["goodput"]["gpus"]


def test_the_first_step_lines_steps_ran_before_it_not_initialization() -> None:
    # 23.05 s from the first stamp to `step: 10`; steps 2-10 at the next stride's 1.39 s ran
    # in ~12.5 s of it (step 1's time holds the start-up: not known): ~10.5 s is start-up
    assert 10.0 < _init_s(read(TITAN)) < 11.0


def test_a_lone_first_step_line_keeps_its_gap_as_initialization() -> None:
    # negative: no next line to time its steps: nothing is known of them, as before
    assert 22.5 < _init_s(read(TITAN[:3])) < 23.5


# -- (#2's guard, fresh3 E24) a bar that ran from 0 leaves the resume to the resume line ------
# ludwig-ai/ludwig#739 (turn 48, PR comment, 2020; fresh3 E24's lines, the table cut)
LUDWIG = [
    "Resuming training of model: results/experiment_run_6/model ",
    ">>>> progress tracker epoch 5",
    "",
    "Epoch  6",
    "Training: 100%|██████████| 22/22 [00:01<00:00, 16.29it/s]",
    "Evaluation train: 100%|██████████| 22/22 [00:00<00:00, 28.13it/s]",
    "Took 50.2718s",
    "Validation loss on combined improved, model saved",
]


def test_resuming_training_of_a_model_path_is_a_restore() -> None:
    assert len(read(LUDWIG)["restarts"]) == 1


def test_resuming_training_with_no_path_is_no_restore() -> None:
    # negative: the words with no model path name nothing loaded (and the epoch bar ran from 0)
    for words in ("Resuming training", "Resume training from scratch"):
        assert read([words, *LUDWIG[1:]])["restarts"] == []


# -- #19: Lightning's bar carrying the job-wide step as a float in its postfix -----------------
# rhasspy/piper#746 (comment by nvjob, verbatim, 2 lines; the stop line glued by tqdm's `\r`)
PIPER_BAR = "Epoch 5999: 100% 2/2 [00:03<00:00,  1.92s/it, v_num=2, step=7440.0]"
PIPER = [PIPER_BAR + "`Trainer.fit` stopped: `max_epochs=6000` reached.", PIPER_BAR]


def test_a_bars_postfix_step_logged_as_a_float_is_the_step() -> None:
    doc = read(PIPER)
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (7440, 7440)
    assert doc["steps"]["epoch_last"] == 5999
    # the bar's 3 s are its 2 batches', not 7,440 steps': no step time rather than 0.4 ms
    assert doc["step_time_s"]["median"] is None


def test_a_whole_float_step_off_a_bar_or_before_its_rate_stays_a_metric() -> None:
    # negative: the same float on a line with no bar, and a float `step` before a bar's rate
    # (tqdm's description, not its postfix), leave the bar's own n/N the steps
    doc = read(["loss: 0.25, step=7440.0", "loss: 0.24, step=7440.0",
                " 50%|█████     | 1/2 [00:01<00:01,  1.00s/it]",
                " 100%|██████████| 2/2 [00:02<00:00,  1.00s/it]"])
    assert doc["steps"]["last"] == 2
    doc = read(["step=7440.0 100%|██████████| 2/2 [00:03<00:00,  1.92s/it, v_num=2]"] * 2)
    assert doc["steps"]["last"] == 2


# -- #6: a crash cited at a loss record: a bar and rich's traceback box joined as wrapped lines --
# Facico/Chinese-Vicuna#147 (fresh11 N04, the case's lines): dicts, the bar and the box's header
# each padded to 163 columns, the wrap width
N04 = sorted((Path(__file__).resolve().parents[1] / "data" / "training_logs" / "fresh11"
              / "cases").glob("N04_*.log"))[0].read_text().splitlines()


def _records(lines: list[str], wrap: int) -> list[tuple[int, str]]:
    pipe = RecordPipe(Normaliser(PROFILES), Clock(), wrap)
    out = [r for number, line in enumerate(lines, start=1) for r in pipe.push(number, line)]
    return [(r.line, r.text.strip()[:40]) for r in out + pipe.flush()]


def test_a_crash_glued_to_a_padded_bar_is_cited_at_its_traceback_line() -> None:
    crash = read(N04)["interruptions"][0]
    assert (crash["line"], crash["after_step"]) == (5, 50)
    assert "Traceback (most recent call last)" in crash["text"]


def test_a_bar_or_a_traceback_header_as_wide_as_the_wrap_opens_its_own_record() -> None:
    wide = "{'loss': 1.3664, 'epoch': 0.06}".ljust(60)
    bar = "  2%|██▉         | 50/2019 [24:43<15:52:05, 29.01s/it".ljust(60)
    head = "─── Traceback (most recent call last) ───╮".ljust(60)
    assert [n for n, _ in _records([wide, bar, head, "│ x.py:261 in <module> │"], 60)] == [
        1, 2, 3, 4]
    # negative: a line cut at the width still joins its rest, a rest that names a traceback
    # inside its words included
    assert [n for n, _ in _records([wide, "'lr': 0.0001}"], 60)] == [1]
    assert len(_records([wide, "see the Traceback (most recent call last) above"], 60)) == 1


def test_a_bar_after_a_dangling_key_still_joins_it() -> None:
    # negative (fresh10 M16, superpoint_graph): the epoch line ends in `:`, its bar follows
    head = "Epoch 88/450 (results/bremen/standard):"
    bar = "100%|████████████████████████████████| 11/11 [00:02<00:00,  4.86it/s]"
    assert [n for n, _ in _records([head, bar], 60)] == [1]
