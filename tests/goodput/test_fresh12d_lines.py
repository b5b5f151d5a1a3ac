"""Line kinds the fresh12 first-contact batch showed missing, read on the cases' real lines and on
a negative beside each: records printed once per step with no step number, between numbered
progress lines (fresh12 O01: `perstep`); a bar's opening draw that says no iteration was timed
yet (fresh12 O14, fresh C21: `bars.opening_draw`).
"""

from __future__ import annotations

from statistics import median

from gpuslo.goodput.logs import load_profiles
from gpuslo.goodput.logs.assemble import assemble
from gpuslo.goodput.logs.durations import unit_done
from gpuslo.goodput.logs.explain import explain
from gpuslo.goodput.logs.reader import parse_lines
from gpuslo.goodput.logs.templates import Field
from gpuslo.goodput.logs.wording import Wording

PROFILES = load_profiles()
# O01's `[timing] sample processed in …s` of its steps 50..64 (lines 152-180: epoch 2's first
# samples), a step each, in the order printed
SAMPLE_S = [13.82, 19.32, 20.30, 15.64, 9.07, 12.10, 12.66, 16.77, 12.63, 11.96, 21.97, 15.29,
            14.14, 16.60, 14.70]


def read(lines: list[str]) -> dict:
    parsed = parse_lines(lines, PROFILES)
    return assemble(parsed, job="t", gpus=1, checkpoint_step=PROFILES.checkpoint_step).document


def grpo(stride: int, per_gap: int, word: str = "sample processed in",
         times: list[float] | None = None) -> list[str]:
    """O01's shape: per sample `grpo_loss is …` and `[timing] <word> …s`; every `stride` samples
    `[step N] avg_loss=…`; `per_gap` timing lines between two numbered ones."""
    times = times or SAMPLE_S
    lines, k = [], 0
    for step in range(stride, stride * (len(times) // per_gap) + 1, stride):
        for _ in range(per_gap):
            lines += ["grpo_loss is -0.0 and kl is 0.0303194522857666",
                      f"[timing] {word} {times[k]:.2f}s"]
            k += 1
        lines.append(f"[step {step}] avg_loss=0.0001 acc=0.0400")
    return lines


def test_a_line_printed_once_per_step_between_numbered_ones_times_the_steps() -> None:
    doc = read(grpo(stride=5, per_gap=5))
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (5, 15)
    assert doc["step_time_s"]["count"] == 15  # each step's own time, the first gap's too
    assert abs(doc["step_time_s"]["median"] - median(SAMPLE_S)) < 1e-6


def test_a_runs_first_step_is_its_warm_up_only_when_far_from_every_other() -> None:
    # O01's first sample took 211.99 s among 4.49-595.38 s: a step; 500 s among 9-22 s is not
    slow = read(grpo(stride=5, per_gap=5, times=[500.0] + SAMPLE_S[1:]))
    assert slow["step_time_s"]["count"] == 14 and slow["step_time_s"]["max"] == 21.97
    kept = read(grpo(stride=5, per_gap=5, times=[30.0] + SAMPLE_S[1:]))
    assert kept["step_time_s"]["count"] == 15 and kept["step_time_s"]["max"] == 30.0


def test_explain_lists_the_per_step_line_as_read() -> None:
    ex = explain(parse_lines(grpo(stride=5, per_gap=5), PROFILES), Wording(PROFILES))
    read_as = {e["template"]: e["family"] for e in ex["progress"]}
    assert read_as["[timing] sample processed in <n>s"] == "per-step"
    assert not any("sample processed" in e["template"] for e in ex["unread"])


def test_a_count_that_does_not_divide_the_stride_gives_no_step_time() -> None:
    # negative: 3 lines between numbered lines 5 steps apart are not one per step (nor per k)
    doc = read(grpo(stride=5, per_gap=3))
    assert doc["steps"]["last"] == 25
    assert doc["step_time_s"]["median"] is None


def test_counts_that_change_between_gaps_give_no_step_time() -> None:
    # negative: 5 lines in one 5-step gap, 4 in the next: the lines are not the steps
    lines = grpo(stride=5, per_gap=5)
    lines.remove("[timing] sample processed in 16.77s")
    assert read(lines)["step_time_s"]["median"] is None


def test_a_line_per_k_steps_gives_its_duration_only_when_named_per_step() -> None:
    # a line at every 5th of 25 steps: its duration may be its last step's or its 5 steps'
    assert read(grpo(stride=25, per_gap=5))["step_time_s"]["median"] is None
    named = read(grpo(stride=25, per_gap=5, word="step_time:"))
    assert abs(named["step_time_s"]["median"] - median(SAMPLE_S)) < 1e-6


def test_an_evaluation_line_counted_between_steps_is_not_a_step() -> None:
    # negative: an evaluation's samples, however many, time no training step
    doc = read(grpo(stride=5, per_gap=5, word="eval sample processed in"))
    assert doc["step_time_s"]["median"] is None


def test_a_units_whole_time_is_no_part_of_a_step() -> None:
    assert unit_done(Field(0, "num", "sample processed in", "s", "")) == "sample"
    assert unit_done(Field(0, "num", "timing_s/sample", "", "")) is None  # a phase
    assert unit_done(Field(0, "num", "data time", "", "")) is None


def test_unnumbered_lines_with_no_numbered_ones_stay_no_step() -> None:
    # fresh12 O13 (a documented miss): T5-Finetune logs `Batch loss` at `idx % 5 == 0` with no
    # index; nothing in the lines says each stands for 5 batches, so no step time is guessed
    lines = [f"2025-03-02 05:32:{7 + k:02d},935 - INFO - Epoch 2 - Batch loss: 0.{k + 1}523"
             for k in range(12)]
    assert read(lines)["step_time_s"]["median"] is None


# -- a bar's opening draw (fresh12 O14, fresh C21; fresh6 H21 the negative) --------------------
def _bar(n: int, clock: str, rate: str, glued: str = "") -> str:
    return f"Training Progress:   0%|          | {n}/3746 [{clock}, {rate}]{glued}"


def test_a_bars_untimed_opening_draw_is_no_step() -> None:
    lines = [_bar(0, "00:00<?", "?it/s")] + [
        _bar(k, f"00:{10 * k:02d}<37:53:29", "10.00s/it") for k in range(1, 6)]
    assert (read(lines)["steps"]["first"], read(lines)["steps"]["last"]) == (1, 5)


def test_an_opening_draw_carrying_the_steps_values_is_step_0() -> None:
    # negative (fresh6 H21, stylegan2-pytorch): the draw at 0 prints step 0's losses after it
    lines = [f"0% {n}/90000 [{c}, {r}]G: 1.51 | D: 0.21 | GP: 0.00 | PL: 0.00" for n, c, r in (
        (0, "00:00<?", "?it/s"), (49, "02:46<81:43:57", " 3.27s/it"),
        (97, "05:04<71:55:48", " 2.88s/it"), (149, "07:35<72:52:45", " 2.92s/it"))]
    assert read(lines)["steps"]["first"] == 0


def test_an_opening_draw_that_prints_a_rate_stays_step_0() -> None:
    # negative (shared T21, rich): `0/1250 0:00:00 • -:--:-- 0.00it/s` prints a rate, not `?`
    lines = ["Epoch 1/999 ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━ 0/1250 0:00:00 • -:--:-- "
             "0.00it/s"] + [
        f"Epoch 1/999 ━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━━ {k}/1250 0:0{k}:13 • 1:28:29 "
        f"0.23it/s train/loss: 49.389" for k in range(1, 8)]
    assert read(lines)["steps"]["first"] == 0
