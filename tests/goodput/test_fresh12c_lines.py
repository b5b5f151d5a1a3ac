"""Line kinds the fresh12 first-contact batch showed missing (fresh12 O14, verl GRPO on Ray),
each read on the case's real lines (trimmed to the fields that matter) and on a negative beside
it: a metric line that prints, with its own step time, each step a bar then draws (`twin`); the
whole step's duration among a step's named parts (`durations._whole`); a rank prefix cut off by
the `\\r` of a bar redraw (`pipe`).
"""

from __future__ import annotations

from statistics import median

from gpuslo.goodput.logs import load_profiles
from gpuslo.goodput.logs.assemble import assemble
from gpuslo.goodput.logs.clock import Clock
from gpuslo.goodput.logs.pipe import RecordPipe
from gpuslo.goodput.logs.reader import parse_lines

PROFILES = load_profiles()
ESC = "\x1b"
RAY = f"{ESC}[36m(TaskRunner pid=625502){ESC}[0m "
WORKER = f"{ESC}[36m(WorkerDict pid=626895){ESC}[0m "
# timing_s/step of verl's steps 1..8 (O14's lines 6..27), and the bar's elapsed after each
STEP_S = [36.27, 13.61, 12.55, 9.28, 9.07, 9.97, 10.42, 12.98]
ELAPSED = ["00:36", "00:50", "01:02", "01:11", "01:20", "01:30", "01:41", "01:54"]


def read(lines: list[str]) -> dict:
    parsed = parse_lines(lines, PROFILES)
    return assemble(parsed, job="t", gpus=1, checkpoint_step=PROFILES.checkpoint_step).document


def _metrics(step: int, step_s: float) -> str:
    return (f"{RAY}step:{step} - global_seqlen/mean:2578.0 - actor/entropy:0.4634 - "
            f"training/global_step:{step} - training/epoch:0 - timing_s/start_profile:0.000285 - "
            f"timing_s/gen:6.633 - timing_s/ref:13.52 - timing_s/update_actor:10.36 - "
            f"timing_s/step:{step_s} - timing_s/stop_profile:6.8e-05 - "
            f"timing_per_token_ms/gen:3.2388")


def verl(metric_steps: list[int] | None = None) -> list[str]:
    """O14's shape: the bar's opening draw, then per step a worker line, the metrics line of the
    step and the bar advanced to it (its prefix, then `\\r`, then the bar)."""
    lines = [f"{RAY}\rTraining Progress:   0%|          | 0/3746 [00:00<?, ?it/s]"]
    for k, (step_s, elapsed) in enumerate(zip(STEP_S, ELAPSED, strict=True), start=1):
        lines.append(f"{WORKER}INFO:2026-04-03 07:03:{10 + 5 * k:02d},229:update_weights done, "
                     "time cost: 2.48s")
        lines.append(_metrics((metric_steps or [])[k - 1] if metric_steps else k, step_s))
        lines.append(f"{RAY}\rTraining Progress:   0%|          | {k}/3746 [{elapsed}<37:53:29,"
                     f" 12.42s/it]")
    return "\n".join(lines).replace("\r", "\n").split("\n")  # `read` splits at `\r`


def test_a_metric_line_printing_the_step_the_bar_draws_next_times_it() -> None:
    doc = read(verl())
    assert doc["steps"]["last"] == 8
    # timing_s/step's median over steps 2..8, not the bar's mean since it began (114 s / 8 =
    # 14.25 s): the bar's opening draw `0/3746 [00:00<?, ?it/s]` is no step (`bars.opening_draw`),
    # so step 1 opens the run, and its 36.27 s, over twice the slowest other, is its warm-up
    assert abs(doc["step_time_s"]["median"] - median(STEP_S[1:])) < 0.01


def test_a_line_at_other_counts_than_the_bar_does_not_time_it() -> None:
    # negative: a line whose counter is not the step the bar draws next (an inner loop's or an
    # evaluation's count) is another loop's: the bar's own clock times the steps
    doc = read(verl(metric_steps=[100 * k for k in range(1, 9)]))
    assert doc["steps"]["last"] == 8
    assert abs(doc["step_time_s"]["median"] - 10.42) > 0.5


def test_the_whole_steps_duration_outranks_its_parts_named_by_timing() -> None:
    lines = [_metrics(k, s).replace(RAY, "") for k, s in enumerate(STEP_S, start=1)]
    assert abs(read(lines)["step_time_s"]["median"] - 10.42) < 0.01


def test_generic_timing_names_alone_stay_the_step_time() -> None:
    # negative: with no duration named after the step itself, a `timing` name still names it
    lines = [f"step:{k} - loss:0.5 - timing_s:{s}" for k, s in enumerate(STEP_S, start=1)]
    assert abs(read(lines)["step_time_s"]["median"] - 10.42) < 0.01


def _ranks(lines: list[str]) -> list[str | None]:
    from gpuslo.goodput.logs.normalise import Normaliser
    pipe = RecordPipe(Normaliser(PROFILES), Clock())
    out = []
    for number, line in enumerate(lines, start=1):
        out += pipe.push(number, line)
    out += pipe.flush()
    return [r.rank for r in out]


def test_a_prefix_cut_off_by_a_carriage_return_names_the_next_line() -> None:
    lines = f"{RAY}\rTraining Progress:   0%|          | 1/3746 [00:36<37:53:29, 36.42s/it]"
    assert _ranks(lines.split("\r")) == ["TaskRunner pid=625502"]


def test_a_prefix_glued_mid_line_names_no_later_line() -> None:
    # negative (fresh9 L02): rank 1's `[rank1]:[E ProcessGroupNCCL…]` glued after rank 0's bar,
    # then rank 0's next bar on a line of its own: the bar is no rank 1 line
    bar = "Epoch 0:  95%|█████████▍| {}/9188 [30:57<01:45,  4.68it/s, loss=11.5, v_num=0]"
    lines = [bar.format(8692) + "[rank1]:[E ProcessGroupNCCL.cpp:563] [Rank 1] Watchdog caught",
             "[rank1]:[E ProcessGroupNCCL.cpp:626] [Rank 1] Work WorkNCCL(SeqNum=4013) timed out",
             bar.format(8695)]
    assert _ranks(lines)[-1] is None


def test_a_prefix_line_names_only_the_line_right_after_it() -> None:
    # negative: a line with its own prefix keeps it; one further down is no continuation
    lines = [RAY, f"{WORKER}Using dataset class: RLHFDataset", RAY, "", "plain line"]
    assert _ranks(lines) == ["WorkerDict pid=626895", None]


# -- an XGBoost + Optuna pipeline's stage headers (fresh12 O19) ---------------------------------
STAGES = ["Loading Data", "Preprocessing Data", "Splitting Data", "Hyperparameter Optimization",
          "Training Final Model", "Evaluating Model", "Generating Visualizations", "Saving Model",
          "Generating Training Report"]


def _pipeline(titles: list[str]) -> list[str]:
    out = []
    for k, title in enumerate(titles, start=1):
        stamp = f"2026-03-14 14:31:{29 + k:02d},533 - train - INFO - "
        out += [f"{stamp}{'-' * 40}", f"{stamp}Step {k}: {title}", f"{stamp}{'-' * 40}",
                f"{stamp}Loaded 670 rows and 23 columns"]
    return out


def test_numbered_stage_headers_are_no_steps() -> None:
    doc = read(_pipeline(STAGES))
    assert doc["steps"]["first"] is None


def test_a_step_line_of_one_shape_is_progress() -> None:
    # negative: the same counter on lines of one shape (a number beside it) counts steps
    doc = read(_pipeline([f"loss {0.9 - k / 20:.2f}" for k in range(9)]))
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (1, 9)


# -- Colossal-AI's rich logger, a narrow console (fresh12 O15) ---------------------------------
def _rich(stamp: str, *parts: str) -> list[str]:
    width, column = 102, 29
    head = f"{stamp:<20}INFO     {parts[0]}"
    return [head.ljust(width)] + [(" " * column + p).ljust(width) for p in parts[1:]]


CALL = ("colossalai - colossalai - INFO:", "/home/users/nus/e1216290/scratch/colossalai/ColossalAI/"
        "examples/images/dr", "eambooth/train_dreambooth_colossalai.py:686 main")
SAVE = ("colossalai - colossalai - INFO: Saving model checkpoint to",
        "/home/users/nus/e1216290/scratch/colossalai/ColossalAI/examples/images/dr",
        "eambooth/weight_output/checkpoint-1000")


def test_a_rich_record_wrapped_over_lines_is_one_record() -> None:
    from gpuslo.goodput.logs.richwrap import RichJoin
    join, out = RichJoin(), []
    for n, line in enumerate(_rich("[04/12/24 17:15:52]", *CALL) + _rich("", *SAVE), start=1):
        out += join.push(n, line, None)
    out += join.flush()
    texts = [text for _, text, _, _ in out]
    assert texts[1].endswith("INFO: Saving model checkpoint to /home/users/nus/e1216290/scratch/"
                             "colossalai/ColossalAI/examples/images/dreambooth/weight_output/"
                             "checkpoint-1000")  # a word folded at the width joins with nothing
    assert [n for n, _, _, _ in out] == [1, 4]


def test_a_save_whose_path_rich_wrapped_names_its_step() -> None:
    lines = []
    for k in range(6):
        lines += _rich(f"[04/12/24 17:15:{40 + k}]", "colossalai - colossalai - INFO: max GPU_mem "
                       "cost is 3812.8251953125 MB")
    lines += _rich("[04/12/24 17:15:52]", *CALL) + _rich("", *SAVE)
    assert [s["step"] for s in read(lines)["checkpoint_saves"]] == [1000]


def test_lines_not_indented_to_the_message_column_are_not_joined() -> None:
    # negative: a line indented elsewhere (a traceback's, a table's) is a record of its own
    from gpuslo.goodput.logs.richwrap import RichJoin
    join, out = RichJoin(), []
    lines = _rich("[04/12/24 17:15:52]", SAVE[0]) + ["    File \"train.py\", line 3".ljust(102),
                                                     "checkpoint-1000"]
    for n, line in enumerate(lines, start=1):
        out += join.push(n, line, None)
    out += join.flush()
    assert [n for n, _, _, _ in out] == [1, 2, 3]
