"""Step and step-time classes the fresh22 first-contact batch showed misread (6/20 at first
contact, tests/data/first_contact/training_logs_fresh22_2026-12-07.txt), each on the case's real
lines (tests/data/training_logs/fresh22, SOURCES_z.md) with a negative beside it: a near-miss
that must not be read that way.

- a value wrapped in braces is named by the word before the brace (Z20);
- a line that both an epoch marker and the epoch-lines-as-steps template match is the one whose
  whole template it fits (Z12, MindSpore);
- two unnamed `n/N` pairs side by side are the epoch and the batch within it where the second
  resets as the first rises (Z09, JDE / ultralytics-yolov3's table);
- a bar run anew in a few gaps of a line family that goes on across them is an inner loop, not
  the training, however many times it is redrawn (Z07, LISA's validation tqdm).
"""

from __future__ import annotations

from gpuslo.goodput.logs.leadpair import inner_pair
from gpuslo.goodput.logs.learn import learn
from gpuslo.goodput.logs.matchers import own_line
from gpuslo.goodput.logs.roles import read_template
from gpuslo.goodput.logs.templates import SampleRecord, group
from gpuslo.goodput.logs.tokens import values
from tests.goodput.batch_lines import case as batch_case
from tests.goodput.batch_lines import read


def case(name: str) -> list[str]:
    return batch_case("fresh22", name)


def _median(doc: dict) -> float | None:
    return doc["step_time_s"]["median"]


def _sample(lines: list[str]) -> list[SampleRecord]:
    return [SampleRecord(k, text, None, None) for k, text in enumerate(lines, 1)]


# -- values in braces (Lane_Segmentation's train.py, fresh22 Z20) --------------------------------
def test_a_value_in_braces_is_named_by_the_word_before_the_brace() -> None:
    found = values("INFO epoch: {1/300}, step: {8229/8250}, loss : {0.7355070}, lr : {0.0001}")
    assert [v.key for v in found][:4] == ["INFO epoch", "", "step", ""]
    assert found[4].key == "loss"


def test_a_brace_that_opens_the_record_names_nothing() -> None:
    # negative: no word before the brace, as with `[`
    assert values("{3/10} loss 0.2")[0].key == ""
    assert values("[3/10] loss 0.2")[0].key == ""


def test_braced_epoch_and_step_are_read_as_epoch_and_in_epoch_step() -> None:
    doc = read(case("Z20"))
    assert doc["steps"]["epoch_first"] is None or doc["steps"]["printed_first"] == 8229
    assert doc["steps"]["printed_first"] == 8229 and doc["steps"]["printed_last"] == 19
    assert abs(_median(doc) - 0.303) < 0.005
    assert doc["restarts"] == []  # the step back to 1 in epoch 2 is the next epoch


# -- an epoch marker and the epoch lines as steps (MindSpore LossMonitor, fresh22 Z12) ----------
_Z12_STEP = "epoch: 2 step: 62, loss is 2.2144224643707275"
_Z12_ACC = "epoch: 2 acc: 0.40401785714285715, best acc is 0.40401785714285715"


def test_mindspore_loss_monitor_lines_are_the_steps_beside_an_epoch_accuracy_marker() -> None:
    doc = read(case("Z12"))
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (1, 21)
    assert abs(_median(doc) - 0.1436) < 0.002  # `per step time: 143.6 ms` beside each


def test_the_marker_line_is_no_step_though_both_cuts_match_it() -> None:
    learnt = learn(_sample(case("Z12")))
    (steps,) = [m for m in learnt.progress if m.family == "epochs"]
    (marker,) = [m for m in learnt.markers if "acc" in m.reading.template.text]
    for text, own in ((_Z12_STEP, True), (_Z12_ACC, False)):
        prog = steps.read(text, 1, 1, None, None)
        assert prog is not None and marker.read(text, 1, 1, None, None) is not None
        assert own_line(prog, marker, text) is own
    # negative: a line of a third shape that both cuts match fits neither whole
    other = "epoch: 2 lr: 0.001"
    assert not own_line(steps.read(other, 1, 1, None, None), marker, other)


def test_a_line_printed_many_times_an_epoch_is_no_epoch_step() -> None:
    # negative: a t5 fine-tuning script's unnumbered `Epoch 2 - Batch loss:` every 5 batches
    # beside its epoch summaries (fresh12 O13): its epoch repeats, so its lines time batches
    # they do not number; no step time is read from them, never an epoch's as a step's
    doc = read(batch_case("fresh12", "O13"))
    assert _median(doc) is None


# -- two unnamed n/N pairs: epoch and batch (JDE train.py, fresh22 Z09) -------------------------
_Z09 = ["2021-01-25 05:58:59 [INFO]:     0/29       0/165     0.227      2.06        19       158",
        "2021-01-25 06:04:17 [INFO]:     0/29      40/165     0.172      1.99      18.7       149",
        "2021-01-25 06:09:34 [INFO]:     0/29      80/165     0.125      1.34      18.2       104",
        "2021-01-25 07:20:13 [INFO]:     1/29       0/165    0.0364     0.104      15.4     -5.01",
        "2021-01-25 07:25:31 [INFO]:     1/29      40/165    0.0351    0.0865      15.5     -5.37"]


def _pair_roles(rows: list[str]) -> tuple[int | None, int | None]:
    texts = [r.split(" ", 2)[2] for r in rows]  # `[INFO]: …`, the stamp cut
    (tpl,) = group(_sample(texts))
    reading = read_template(tpl)
    return reading.epoch, reading.step


def test_two_unnamed_pairs_are_the_epoch_and_the_batch_within_it() -> None:
    assert _pair_roles(_Z09) == (0, 2)
    doc = read(case("Z09"))
    assert abs(_median(doc) - 7.925) < 0.05  # the stamps 40 batches apart, over 40


def test_two_pairs_whose_second_does_not_reset_with_the_first_are_not_so_read() -> None:
    # negatives: the second goes on where the first rises (two counters of their own), and a
    # first pair that jumps by two
    on = [r.replace("     1/29       0/165", "     1/29     120/165").replace(
        "     1/29      40/165", "     1/29     160/165") for r in _Z09]
    jump = [r.replace("     1/29", "     3/29") for r in _Z09]
    for rows in (on, jump):
        texts = [r.split(" ", 2)[2] for r in rows]  # `[INFO]: …`, the stamp cut
        (tpl,) = group(_sample(texts))
        assert inner_pair(tpl.fields, 0) is None
        assert _pair_roles(rows)[1] == 0


# -- a validation bar run between epochs (LISA train_ds.py, fresh22 Z07) ------------------------
def test_a_bar_run_anew_between_the_step_lines_is_an_evaluation_not_the_steps() -> None:
    doc = read(case("Z07"))
    assert (doc["steps"]["printed_first"], doc["steps"]["printed_last"]) == (23, 3)
    assert abs(_median(doc) - 37.616) < 0.05  # `Time 38.311 (38.311)`: the batch time
    assert doc["restarts"] == []  # two ranks' redraws of the bar are no restarts


def _bar(n: int, total: int = 50) -> str:
    return f"{100 * n // total:3d}%|{'#' * (n // 5):<10}| {n}/{total} [00:{n:02d}<00:10,  4.10it/s]"


def test_a_training_bar_between_epoch_summaries_stays_the_steps() -> None:
    # negative: one summary line a gap (an epoch's end, its step named), the bar filling each
    # gap anew: the bar is the training, not a loop run between the lines' steps
    lines = ["Iter 0/150 loss 0.900 val_loss 0.95"]
    for epoch in range(1, 4):
        lines += [_bar(n) for n in range(0, 51, 5)]
        lines.append(f"Iter {50 * epoch}/150 loss {0.5 / epoch:.3f} val_loss 0.61")
    assert learn(_sample(lines)).inner == []
    assert learn(_sample(case("Z07"))).inner == ["bar:n/N:"]
