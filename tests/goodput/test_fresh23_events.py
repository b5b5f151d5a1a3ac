"""Event kinds the fresh23 first-contact batch (and fresh22's leftovers) showed missing, each read
on the case's real lines (tests/data/training_logs/fresh23 and fresh22 cases, sources in
../SOURCES_aa.md and ../SOURCES_z.md) and on a near miss beside it: a save's own printed
duration on a line of its own (AA18), TF1's `Restoring parameters from …ckpt-0` at a launch's
head (Z10), Lua Torch xlua's bar and a command line that starts at a later epoch (AA10), a first
line printed again in a row by launches that died at once (Z19), a lone first line after a pause
the run never took, and a final save right after the last periodic one (Z01).
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


# -- Pytorch-UNet's train.py, a fork's train_log.log (XuPenglei/Pytorch-UNet, fresh22 Z19) ------
def test_a_first_line_printed_again_in_a_row_is_a_launch_each() -> None:
    # `INFO: Using device cuda` three times in a row after the first run's validation lines,
    # then three more full start-ups: the log's own launch printed the line once (six launches)
    doc = read(case("fresh22", "Z19"))
    assert [r["line"] for r in doc["restarts"]] == [30, 31, 32, 48, 64, 80]


def test_a_first_line_every_rank_printed_in_a_row_stays_one_launch() -> None:
    # negative: where the log's own launch printed the line three times in a row (each rank),
    # the same run of three later is one launch (ranks once)
    head = lines("fresh22", "Z19", 1, 1) * 2 + lines("fresh22", "Z19", 1, 29)
    doc = read(head + lines("fresh22", "Z19", 30, 47))
    assert [r["line"] for r in doc["restarts"]] == [34]  # the last of the three, one launch


# -- I-JEPA steering fine-tune's finetune.log (phoenix1881/Predictive-Steering-with-I-JEPA, Z01) --
def test_a_lone_first_line_after_a_pause_the_run_never_took_is_a_launch() -> None:
    # `Loaded I-JEPA encoder …` 13 min after epoch 10 (epochs every 30 s), then `Epoch 1` again;
    # and once more 20 h later, the log's last line
    doc = read(case("fresh22", "Z01"))
    assert [r["line"] for r in doc["restarts"]] == [14, 64]


def test_a_lone_first_line_at_the_runs_own_pace_is_none() -> None:
    # negative: the same line 30 s after the epoch before (the run's pace), the epochs going on
    start = "2025-04-26 15:51:26,000 INFO: Loaded I-JEPA encoder with missing keys: [], " \
        "unexpected keys: []"
    epoch = "2025-04-26 15:51:56,500 INFO: Epoch 11: Train MSE Loss: 0.009406"
    doc = read(lines("fresh22", "Z01", 1, 13) + [start, epoch])
    assert doc["restarts"] == []


def test_a_final_save_after_the_last_periodic_one_is_a_save_of_its_own() -> None:
    # `Checkpoint saved: ijepa_finetune_epoch40.pth`, then 0.3 s later `Finetuned model saved:
    # ijepa_finetune_final.pth`: the file name drops the epoch number
    doc = read(lines("fresh22", "Z01", 14, 63))  # (the file's lines 62 and 63 are 49 and 50)
    assert [s["line"] for s in doc["checkpoint_saves"]][-2:] == [49, 50]


def test_the_files_of_one_save_carrying_its_number_are_one_save() -> None:
    # negative: model and optimizer files of epoch 40, or files without a number, one save each
    body = lines("fresh22", "Z01", 14, 61)
    for files in (("model_epoch40.pth", "optimizer_epoch40.pth"), ("model.pth", "optim.pth")):
        doc = read(body + [
            f"2025-04-26 16:24:20,664 INFO: Checkpoint saved: {files[0]}",
            f"2025-04-26 16:24:20,964 INFO: Optimizer state saved: {files[1]}"])
        assert [s["line"] for s in doc["checkpoint_saves"]][-1] == 49, files


def test_a_best_model_copy_after_the_periodic_save_is_part_of_it() -> None:
    # negative (fresh12 O10): `Saved checkpoint to checkpoints/checkpoint_step_500.pt`, then
    # `Saved best model to checkpoints/best_model.pt` 1.2 s later: one save point
    doc = read(lines("fresh22", "Z01", 14, 61) + [
        "2025-04-26 16:24:20,664 INFO: Saved checkpoint to checkpoints/checkpoint_epoch_40.pt",
        "2025-04-26 16:24:21,864 INFO: Saved best model to checkpoints/best_model.pt"])
    assert [s["line"] for s in doc["checkpoint_saves"]][-1] == 49


def test_tf1_restoring_parameters_after_a_stop_line_opens_the_next_launch() -> None:
    # the same load after a traceback: the relaunched process's restore (a stop between)
    steps = [f"INFO:tensorflow:global step {i}: loss = 0.5 (1.2 sec/step)" for i in (1, 2, 3)]
    stop = ["Traceback (most recent call last):", '  File "train.py", line 9, in <module>',
            "RuntimeError: CUDA error: an illegal memory access was encountered"]
    doc = read(steps + stop + ["INFO:tensorflow:Restoring parameters from /models/model.ckpt-2"]
               + [f"INFO:tensorflow:global step {i}: loss = 0.5 (1.2 sec/step)" for i in (3, 4)])
    assert [r["resumed_from_step"] for r in doc["restarts"]] == [2]
