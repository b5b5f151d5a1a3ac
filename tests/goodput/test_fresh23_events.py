"""Event kinds the fresh23 first-contact batch (and fresh22's leftovers) showed missing, each read
on the case's real lines (tests/data/training_logs/fresh23 and fresh22 cases, sources in
../SOURCES_aa.md and ../SOURCES_z.md) and on a near miss beside it: a save's own printed
duration on a line of its own (AA18), TF1's `Restoring parameters from …ckpt-0` at a launch's
head (Z10), Lua Torch xlua's bar and a command line that starts at a later epoch (AA10).
"""

from __future__ import annotations

from tests.goodput.batch_lines import case, read


def lines(batch: str, name: str, first: int, last: int) -> list[str]:
    """Lines first..last (1-based, inclusive) of case `name` of `batch`, as committed."""
    return case(batch, name)[first - 1:last]


def saves(doc: dict) -> list[tuple[object, object]]:
    return [(s.get("step"), s.get("seconds")) for s in doc.get("checkpoint_saves") or []]


# -- GraphStorm's link-prediction trainer (awslabs/graphstorm#199, fresh23 AA18) ----------------
def test_a_saves_own_time_on_the_line_after_it_is_its_duration() -> None:
    # `successfully save the model to ~/…/epoch-0`, then `Time on save model 510.14134764671326`
    doc = read(case("fresh23", "AA18"))
    assert [round(s or 0, 2) for _, s in saves(doc)] == [510.14]


def test_a_duration_line_after_a_finished_save_opens_no_save() -> None:
    # negative: its words (`save model`) are a begin's; the save just ended gets the time
    doc = read(lines("fresh23", "AA18", 1, 8) + [
        "Model saved to ~/workspaceresults/models_pretrain/epoch-0/model.pt",
        "Time on save model 12.5"] + lines("fresh23", "AA18", 11, 17))
    assert saves(doc) == [(100, 12.5)]


def test_a_time_of_another_unit_or_with_words_after_is_none() -> None:
    # negative: `510 batches` is no duration; `ms` is milliseconds
    head = lines("fresh23", "AA18", 1, 9)
    assert saves(read(head + ["Time on save model 510 batches"])) == [(100, None)]
    assert saves(read(head + ["Checkpoint save time: 420 ms"])) == [(100, 0.42)]


# -- PixelLink on TF-Slim's Supervisor (dxv2k/pixel_link_py3 log_train.txt, fresh22 Z10) --------
def test_tf1_restoring_parameters_at_a_launchs_head_is_a_restore_of_step_0() -> None:
    # `INFO:tensorflow:Restoring parameters from /models/model.ckpt-0` before the session starts
    doc = read(case("fresh22", "Z10"))
    assert [(r["resumed_from_step"], r["opens_log"]) for r in doc["restarts"]] == [(0, True)]
    assert saves(doc) == []


def test_tf1_restoring_parameters_after_progress_is_an_evaluations_load() -> None:
    # negative: DeepSpeech (fresh10 M18) reloads its best_dev checkpoint after training, and an
    # Estimator restores for each evaluation: after the launch's progress, no restore
    steps = [f"INFO:tensorflow:global step {i}: loss = 0.5 (1.2 sec/step)" for i in (1, 2, 3)]
    doc = read(steps + ["INFO:tensorflow:Restoring parameters from /models/model.ckpt-2"]
               + [f"INFO:tensorflow:global step {i}: loss = 0.5 (1.2 sec/step)" for i in (4, 5)])
    assert doc["restarts"] == []


def test_a_step_0_load_its_lines_name_is_still_no_restart() -> None:
    # negative: released weights (Megatron's `successfully loaded checkpoint from … at iteration
    # 0`, fresh15 R07) hold no trained step of this job; only a file the run's saver named is
    doc = read(["successfully loaded checkpoint from /ckpt/release at iteration 0"] + [
        f" iteration {i}/ 100 | elapsed time per iteration (ms): 500.0 |" for i in (1, 2, 3)])
    assert doc["restarts"] == []


# -- ResMatch, a Lua Torch7 trainer (amitshaked/resmatch#5, fresh23 AA10) -----------------------
def test_xluas_bar_counts_the_steps_and_its_step_field_times_them() -> None:
    # ` [===… 301998/301998 …==>]  Tot: 6h54m | Step: 81ms`: the n/N drawn over the glyph run
    doc = read(case("fresh23", "AA10"))
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (301998, 301998)
    assert doc["step_time_s"]["median"] == 0.081


def test_a_bare_pair_before_a_closing_bracket_without_glyphs_is_no_bar() -> None:
    # negative: `3/4 ]` closes no glyph run; one such line is no counter
    doc = read(["train epoch 11   err 0.100179   lr 0.003", "accuracy 3/4 ] done"])
    assert doc["steps"]["first"] != 3


def test_a_command_line_starting_at_a_later_epoch_is_a_resume() -> None:
    # `th main.lua … -mc` / `net …_10_net.t7 -start_epoch 11 -debu` / `g -save_img`, wrapped
    doc = read(case("fresh23", "AA10"))
    assert [(r["resumed_from_step"], r["opens_log"]) for r in doc["restarts"]] == [(None, True)]


def test_a_start_at_epoch_1_or_a_config_value_is_no_resume() -> None:
    # negative: a fresh run's flag, a config dump's key, another schedule's start epoch
    tail = lines("fresh23", "AA10", 4, 8)
    for head in ("$ th main.lua -ds kitti -start_epoch 1 -debug", "start_epoch: 11",
                 "$ python train.py --swa_start_epoch 11"):
        assert read([head] + tail)["restarts"] == [], head
