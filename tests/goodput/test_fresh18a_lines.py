"""Lines of the fresh18 first-contact batch (fixer V1), each with a negative that must not be read
that way: a window's whole-second duration beside a finer rate of the same window (V01); a loss
named after a duration, a best model's file under its bare label (V02)."""

from __future__ import annotations

import json
from typing import Any

from gpuslo.goodput.logs.normalise import Normaliser
from gpuslo.goodput.logs.reader import LogReader
from tests.goodput.batch_lines import PROFILES, read
from tests.goodput.batch_lines import case as batch_case

NORM = Normaliser(PROFILES)


def case(name: str) -> list[str]:
    return batch_case("fresh18", name)


# -- fairseq's train_inner JSON: "ups" beside "train_wall" in whole seconds (fresh18 V01) ---------
def test_a_rate_finer_than_the_windows_whole_seconds_times_the_window() -> None:
    # 200 updates a line: train_wall 28 s (0.14 s, only the time inside the steps), ups 6.83-7.1
    # (0.141-0.148 s); the windows that held a validation (ups 2.48-4.36) are no step's
    median = read(case("V01"))["step_time_s"]["median"]
    assert 0.1406 <= median <= 0.1554 and median != 0.14


def _fairseq(train_wall: str, ups: str) -> list[str]:
    out = []
    for k in range(1, 8):
        record = {"epoch": 1, "num_updates": str(200 * k), "ups": ups, "train_wall": train_wall,
                  "wall": str(30 * k)}
        out.append(f"[2022-06-06 09:{18 + k}:00,000][train_inner][INFO] - {json.dumps(record)}")
    return out


def test_a_window_duration_as_fine_as_the_rate_stays_the_windows_time() -> None:
    # negative: train_wall printed to the millisecond (28.512 s) is finer than the rate: its
    # 0.1426 s a step is read, not the rate's 0.1447; and so is 28 s against a rate of two
    # figures (6.9: 0.7 %, not four times finer than 28's 1.8 %)
    assert read(_fairseq("28.512", "6.91"))["step_time_s"]["median"] == 0.14256
    assert read(_fairseq("28", "6.9"))["step_time_s"]["median"] == 0.14
    assert read(_fairseq("28", "6.91"))["step_time_s"]["median"] == 0.144718


# -- Coqui TTS: metrics spread over indented lines, a loss named after a duration (fresh18 V02) -
def test_a_value_named_as_a_loss_is_no_time_whatever_its_name_holds() -> None:
    # `| > loss_duration: 1.76319  (2.02938)` is the duration predictor's loss; `step_time` times
    # the step: 1.31510, 1.24220, 1.22270, 1.34090, 1.31130 s
    assert read(case("V02"))["step_time_s"]["median"] == 1.3113


def _coqui(names: list[str]) -> list[str]:
    out = []
    for k, value in enumerate((1.3151, 1.2422, 1.2227, 1.3409, 1.3113), 1):
        out += [f" > TRAINING (2022-11-03 10:{10 + k}:00) ",
                f"   --> STEP: {k}/36 -- GLOBAL_STEP: {25 * k}"]
        out += [f"     | > {name}: {value:.5f}  (1.3)" for name in names]
    return out


def test_a_duration_named_without_a_loss_stays_a_step_time() -> None:
    # negative: `duration` alone still times the step (1.22-1.34 s a line); named as a loss it
    # times nothing, and with no other time on the lines the step time is unknown
    assert read(_coqui(["duration"]))["step_time_s"]["median"] == 1.3113
    assert read(_coqui(["loss_duration"]))["step_time_s"]["median"]  is None


def test_a_best_models_file_under_its_bare_label_is_a_save_at_the_step_it_names() -> None:
    # ` > BEST MODEL : /content/…/best_model_1000037.pth` after epochs 0 and 2 (save_best_model
    # prints it, then writes the file)
    saves = read(case("V02"))["checkpoint_saves"]
    assert [s["step"] for s in saves] == [1000037, 1000109]


def test_a_best_model_label_without_a_weights_file_or_after_a_load_verb_is_no_save() -> None:
    # negatives: HRNet's `=> best model : True` (a flag before its own `saving checkpoint`
    # line), a classifier's `>>> Best Model : Random Forest`, and a load of the best model
    steps = [f"2022-11-03 10:{10 + i}:00 step: {100 * i}/1000 loss 1.2 step_time: 1.31"
             for i in range(1, 6)]
    for label in ("=> best model : True", ">>> Best Model : Random Forest  (AUC = 0.8812)",
                  "Loading best model: /content/run/best_model_200.pth"):
        assert read(steps[:2] + [label] + steps[2:])["checkpoint_saves"] == [], label
    saved = read(steps[:2] + [" > BEST MODEL : /content/run/best_model_200.pkl"] + steps[2:])
    assert [s["step"] for s in saved["checkpoint_saves"]] == [200]


# -- DCGAN-tensorflow under TF 1.15: an abort at start-up, a relaunch, a global counter (V03) ----
REFERENCE = 1796601600.0  # 2026-12-07: when the log was last written (its file's mtime)
_ABSL = ("W0522 00:53:00.436580 140124560234304 module_wrapper.py:139] From main.py:75: The name "
         "tf.ConfigProto is deprecated. Please use tf.compat.v1.ConfigProto instead.")
_TF_CPP = ("2021-05-22 00:53:00.437019: I tensorflow/core/platform/cpu_feature_guard.cc:142] "
           "Your CPU supports instructions that this TensorFlow binary was not compiled to use")


def _parse(lines: list[str]) -> Any:
    reader = LogReader(PROFILES, reference=REFERENCE)
    for line in lines:
        reader.feed(line)
    return reader.finish()


def test_year_less_stamps_above_the_first_full_one_take_its_year() -> None:
    # the absl `W0522 00:53:00` warnings open the launch, the C++ lines below print 2021
    parsed = _parse([_ABSL, _TF_CPP, _ABSL.replace("00:53:00", "00:53:02")])
    assert parsed.year_assumed is None and parsed.clock_back == []
    assert parsed.first_ts == 1621644780.43658  # 2021-05-22 00:53:00.436580 UTC
    assert read(case("V03"))["span_s"] < 400  # not 16 h across a year's jump


def test_year_less_stamps_with_no_full_one_or_across_new_year_keep_their_own_year() -> None:
    # negatives: no full stamp at all: the file's year (said in a note); a full stamp on Jan 1
    # below a Dec 31 year-less one: the year before it
    alone = _parse([_ABSL, _ABSL.replace("00:53:00", "00:53:02")])
    assert alone.year_assumed == 2026
    new_year = _parse([_ABSL.replace("W0522 00:53:00", "W1231 23:59:58"),
                       _TF_CPP.replace("2021-05-22 00:53:00", "2022-01-01 00:00:01")])
    assert new_year.clock_back == [] and new_year.first_ts == 1640995198.43658  # 2021-12-31


def test_a_logging_record_glued_to_a_step_lines_last_value_is_its_own_record() -> None:
    # the last step line of V03 ends `g_loss: 0.69223416WARNING:tensorflow:From …/saver.py:963:
    # remove_checkpoint …`: read as the step it is, its `time:` the elapsed time of the others
    assert read(case("V03"))["step_time_s"]["median"] == 0.7589


def test_a_logging_word_inside_a_message_or_after_a_stamp_is_no_glued_record() -> None:
    # negatives: `level INFO:` in prose has a space before it; a stamp then `INFO:root:`
    assert NORM.split("loss 0.69 now at level INFO:root: ok") == [
        "loss 0.69 now at level INFO:root: ok"]
    assert NORM.split("2021-05-22 00:53:00 INFO:root:step 5") == [
        "2021-05-22 00:53:00 INFO:root:step 5"]
    assert NORM.split("g_loss: 0.69223416WARNING:tensorflow:From x.py:9: y") == [
        "g_loss: 0.69223416", "WARNING:tensorflow:From x.py:9: y"]


def test_an_unnamed_counter_after_an_open_bracket_before_the_epoch_is_the_step() -> None:
    # `[       1 Epoch:[ 0/25] [   0/ 273] time: 1.2979, …` to `[     393 Epoch:[ 1/25] [ 119/
    # 273] …`: the global counter, not epoch × 273 + batch (0 .. 392)
    steps = read(case("V03"))["steps"]
    assert (steps["first"], steps["last"]) == (1, 393)


def test_a_closed_or_unnamed_follower_bracket_counter_stays_as_it_was() -> None:
    # negative: `[ 3 | Epoch …` is not left open before the name; the pair in the epoch is read
    lines = [f"[ 3 | Epoch:[ 0/25] [ {b:3d}/ 273] time: {0.75 * (b + 1):.4f}, d_loss: 1.39"
             for b in range(0, 40)]
    steps = read(lines)["steps"]
    assert (steps["first"], steps["last"]) == (0, 39)


def test_a_start_up_printed_again_unstamped_after_a_fatal_abort_is_a_relaunch() -> None:
    # the first launch aborts (CUDA out of memory, `Fatal Python error: Aborted`); the opening
    # `WARNING:tensorflow:` / contrib notice again, unstamped, then counter 1 .. 393
    doc = read(case("V03"))
    assert len(doc["restarts"]) == 1
    assert [i["cause"] for i in doc["interruptions"]] == ["cuda_oom"]


def test_a_start_up_line_printed_again_unstamped_after_a_stamped_line_stays_its_tail() -> None:
    # negative: the same opening again right after a stamped line with no stop between: its
    # tail (another program's dump), no relaunch
    opening = ["WARNING:tensorflow:", "The TensorFlow contrib module will not be included."]
    steps = [f"2021-05-22 00:53:{10 + k:02d}.000000: I step {k} loss 0.5" for k in range(1, 6)]
    assert read(opening + steps + opening)["restarts"] == []


# -- PDPP/MTID: eight DDP processes print the start-up, then their bars glued by \r (V04) -------
def test_an_unstamped_start_up_printed_again_by_each_process_before_any_step_is_one_launch(
        ) -> None:
    doc = read(case("V04"))
    assert doc["restarts"] == [] and doc["interruptions"] == []
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (1, 3)


def _pdpp(between: list[str]) -> list[str]:
    loaded = ["Loading the CrossTask features",
              "Loaded /data/crosstask/train_list.json", "Loaded /data/output.json"]
    bars = [f"total train:   {k}%|          | {k}/200 [{k * 34 // 60:02d}:{k * 34 % 60:02d}"
            "<1:56:14, 34.00s/it]" for k in range(0, 4)]
    return loaded + between + loaded[1:] + bars


def test_the_same_start_up_again_after_a_stop_before_any_step_stays_a_relaunch() -> None:
    # negative: a traceback between the two start-ups: the first process died, a new one began
    stop = ["Traceback (most recent call last):", '  File "main.py", line 9, in <module>',
            "RuntimeError: CUDA error: out of memory"]
    assert len(read(_pdpp(stop))["restarts"]) == 1
    assert read(_pdpp([]))["restarts"] == []


# -- Knover: `Evaluation:` then `step N:lm_loss: …` per evaluation batch, past the training (V07)
def test_a_counter_printed_only_under_an_evaluation_header_is_not_the_training_steps() -> None:
    # two launches of steps 100 .. 1000; the evaluation blocks count to 4200 and 2600
    doc = read(case("V07"))
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (100, 1000)
    assert len(doc["restarts"]) == 1 and len(doc["interruptions"]) == 2


def _knover(header: str, evals: int) -> list[str]:
    out = [f"[train][1] progress: 1/1 step: {100 * k}, time: 3.{k}00, speed: 27.2 steps/s"
           for k in range(1, 4)]
    out += ["=" * 40, header] + [f"\tstep {100 * k}:lm_loss: 4.6, ppl: 101.3, loss: 4.6"
                                 for k in range(1, evals + 1)]
    return out


def test_a_counter_under_a_header_that_is_not_only_an_evaluations_name_stays_read() -> None:
    # negatives: the most numerous family is read as the steps where its block is opened by a
    # line that is no bare evaluation header (`Evaluating 5000 samples:`, `Training:`)
    assert read(_knover("Evaluation:", 8))["steps"]["last"] == 300
    assert read(_knover("Evaluating 5000 samples:", 8))["steps"]["last"] == 800
    assert read(_knover("Training:", 8))["steps"]["last"] == 800
