"""A script's own end mark and the next script of a job, read on the fresh17 first-contact batch's
real lines (U03, a hackathon baseline logging `START train.py` .. `END train.py`, then `START
predict.py`), each with a negative that must not be read that way: the same script launched
again after its end, another script after a crash or a log that just stops, and `END` inside
other words or naming no script. Also the end wording as a whole message after a logger's
prefix (fresh12 O06, O19; fresh17 U02, U20) and a save restated after the end line (O19).
"""

from __future__ import annotations

from gpuslo.goodput.logs import analyse_log, load_profiles
from gpuslo.goodput.logs.reader import parse_lines
from tests.goodput.batch_lines import LOGS, read
from tests.goodput.batch_lines import case as batch_case

PROFILES = load_profiles()
_LOG = " __main__     INFO     "  # the baseline's `%(name)-12s %(levelname)-8s` (U03)


def case(name: str) -> list[str]:
    return batch_case("fresh17", name)


def _ends(lines: list[str]) -> list[int]:
    return [o.line for o in parse_lines(lines, PROFILES).observations if o.kind == "end"]


# -- the script's own end mark (raifhack baseline, fresh17 U03) -----------------------------------
def test_a_script_end_mark_naming_the_script_is_an_end_line() -> None:
    lines = case("U03")
    assert [lines[k - 1].split()[-1] for k in _ends(lines)] == ["train.py", "predict.py"]


def test_end_inside_other_words_or_naming_no_script_is_no_end_line() -> None:
    # negatives: PaddleVideo's epoch summaries (fresh13 P13), a word holding END, and a script
    # named mid-sentence
    assert _ends(["[12/25 14:25:53] END epoch:1   train loss: 0.6912 top1: 0.5625",
                  f"2021-09-25 15:35:05,034{_LOG}SEND train.py",
                  f"2021-09-25 15:35:05,034{_LOG}ENDPOINT train.py",
                  f"2021-09-25 15:35:05,034{_LOG}END train.py copied to backup/"]) == []


# -- another script after the run's clean end (U03) ----------------------------------------------
def test_another_script_started_after_a_clean_end_is_a_job_step_not_a_restart() -> None:
    doc = read(case("U03"))
    assert len(doc["restarts"]) == 6  # the seven train.py launches; predict.py is none
    assert any("line 152: another script starts" in n for n in doc["notes"])


_TRAIN = [f"2021-09-25 15:51:35,946{_LOG}START train.py",
          f"2021-09-25 15:51:35,947{_LOG}Load train df",
          f"2021-09-25 15:51:37,103{_LOG}Fit model",
          f"2021-09-25 15:53:06,305{_LOG}Save models (cv)"]
_PREDICT = [f"2021-09-25 15:56:11,322{_LOG}START predict.py",
            f"2021-09-25 15:56:11,323{_LOG}Load test df",
            f"2021-09-25 15:56:11,576{_LOG}Predict",
            f"2021-09-25 15:56:11,756{_LOG}END predict.py"]


def test_a_second_script_after_an_end_is_no_restart_but_after_a_stop_it_is() -> None:
    ended = _TRAIN + [f"2021-09-25 15:53:06,870{_LOG}END train.py"]
    assert read(ended + _PREDICT)["restarts"] == []
    # negatives: the log just stops before the next script (no end line), or a crash
    assert len(read(_TRAIN + _PREDICT)["restarts"]) == 1
    crashed = ended[:-2] + ["2021-09-25 15:51:48,374 __main__     ERROR    Traceback (most recent "
                            "call last):", "ValueError: Input contains NaN"]
    assert len(read(crashed + _PREDICT)["restarts"]) == 1


def test_the_same_script_launched_again_after_its_end_stays_a_restart() -> None:
    # negative: `START train.py` again after `END train.py` (fresh13 P07's same-script relaunch
    # after `Finetuning completed successfully!` is a restart by its facts)
    ended = _TRAIN + [f"2021-09-25 15:53:06,870{_LOG}END train.py"]
    again = [line.replace("15:5", "16:5") for line in ended]
    assert len(read(ended + again)["restarts"]) == 1


# -- the end wording after a logger's prefix (fresh12 O19, O06; fresh17 U02, U20) ------------------
def test_training_completed_as_a_whole_message_after_a_logger_prefix_is_an_end_line() -> None:
    lines = ["2026-03-14 14:32:31,394 - train - INFO - Training completed",
             "2025-07-07 19:14:40.172 INFO: Training complete.",
             "2026-02-03 13:29:00.644 | INFO     | __main__:train:199 - Training completed!",
             "2025-10-02 14:29:20,334 - INFO - [__main__] - ✅ Training completed in 3 days, "
             "17:44:15.424134",
             "2025-10-02 14:29:20,764 - INFO - [__main__] - 🎉 === Training Complete ==="]
    assert _ends(lines) == [1, 2, 3, 4, 5]
    assert _ends([case("U02")[366], case("U20")[245]]) == [1, 2]


def test_words_that_only_mention_training_finishing_are_no_end_line() -> None:
    # negatives: a question, a sentence going on after the words, another run's word
    assert _ends(["2021-01-01 10:00:00,000 - INFO - Checking whether training finished: no",
                  "2021-01-01 10:00:00,000 - INFO - Training complete for fold 1, next fold",
                  "Waiting until training completed is reported",
                  "2025-05-08 21:24:02,596 - __main__ - INFO - Finetuning completed "
                  "successfully!"]) == []


def test_another_script_after_a_logged_training_completed_is_a_job_step() -> None:
    ended = _TRAIN + [f"2021-09-25 15:53:06,870{_LOG}Training completed"]
    assert read(ended + _PREDICT)["restarts"] == []


# -- a save restated after the end line (XGBoost pipeline, fresh12 O19) ---------------------------
def test_a_save_restated_after_the_end_line_is_the_same_save() -> None:
    # `Saved model to: …`, `Training Complete!`, then the summary's `Model saved to: …` (the
    # file holds GBK bytes: read as gpuslo reads a file)
    (path,) = (LOGS / "fresh12" / "cases").glob("O19_*.log")
    assert len(analyse_log(path, gpus=1).document["checkpoint_saves"]) == 1


def test_a_save_of_another_step_after_the_end_line_is_another_save() -> None:
    # negative: after the end, a save naming another step than the open one is another save
    lines = [f"2021-09-25 15:00:{s:02d},000 - train - INFO - step {s} loss 0.5"
             for s in range(1, 11)]
    lines += ["2021-09-25 15:00:11,000 - train - INFO - Saved checkpoint to: out/ckpt-10.pt",
              "2021-09-25 15:00:12,000 - train - INFO - Training completed",
              "2021-09-25 15:00:13,000 - train - INFO - Saved checkpoint to: out/ckpt-11.pt"]
    assert [s["step"] for s in read(lines)["checkpoint_saves"]] == [10, 11]


def test_a_save_to_another_target_after_the_end_line_is_another_save() -> None:
    # negative: LLaMA-Factory's `Training completed.`, then HF's final `Saving model checkpoint
    # to <output dir>` after `checkpoint-2100` (fresh15 R05): three saves by its facts
    (path,) = (LOGS / "fresh15" / "cases").glob("R05_*.log")
    assert len(analyse_log(path, gpus=1).document["checkpoint_saves"]) == 3


# -- a traceback's frames printed again inside one stack (U03) -------------------------------------
def test_a_frame_printed_twice_inside_one_traceback_is_no_relaunch() -> None:
    # U03's first two launches, each ending in a stack that passes sklearn's `inner_f` wrapper
    # twice: the frame lines printed again inside the stack are no start-up printed again, and
    # the second `START train.py` 8 min later is the one relaunch
    assert [r["line"] for r in read(case("U03")[:68])["restarts"]] == [37]


def test_the_same_start_up_after_a_traceback_is_still_a_relaunch() -> None:
    # negative: cutting the frames away leaves the launches as they were
    lines = [line for line in case("U03")[:68] if not line.startswith("  ")]
    assert len(read(lines)["restarts"]) == 1
