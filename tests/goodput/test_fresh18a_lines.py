"""Lines of the fresh18 first-contact batch (fixer V1), each with a negative that must not be read
that way: a window's whole-second duration beside a finer rate of the same window (V01); a loss
named after a duration, a best model's file under its bare label (V02)."""

from __future__ import annotations

import json

from tests.goodput.batch_lines import case as batch_case
from tests.goodput.batch_lines import read


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
