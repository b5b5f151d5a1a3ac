"""Record shapes the fresh19 first-contact batch showed misread (11/20 at first contact,
tests/data/first_contact/training_logs_fresh19_2026-12-07.txt), each on the real lines
(tests/data/training_logs/fresh19, SOURCES_w.md) with a negative beside it: a similar line that
must not be read that way."""

from __future__ import annotations

from gpuslo.goodput.logs.bars import has_glyphs
from gpuslo.goodput.logs.roles import read_template
from gpuslo.goodput.logs.templates import SampleRecord, group
from tests.goodput.test_log_classes import read


def readings(lines: list[str]) -> list:
    return [read_template(t) for t in group(
        [SampleRecord(i + 1, text, None, None) for i, text in enumerate(lines)])]


# -- ultralytics/yolov3 2020 on Colab (fresh19 W20): a column bar whose glyphs were lost --------
W20_BAR = ("     0/299     15.8G      3.99     0.358         0      4.35        22       608:  "
           "63% 34/54 [00:42<00:25,  1.26s/it]")


def test_a_bar_copied_without_its_glyphs_counts_its_own_n_not_the_epoch_column() -> None:
    # the first column `0/299` is epoch / last epoch (train.py '%g/%g' % (epoch, epochs - 1));
    # the bar's n/N after `63%` and before `[elapsed<remaining` is the batch
    doc = read([W20_BAR])
    steps = doc["steps"]
    assert (steps["first"], steps["last"]) == (34, 34)
    assert steps["epoch_first"] == 0


def test_a_percentage_and_a_pair_without_a_bar_clock_are_no_bar() -> None:
    # negative: a percentage and an n/N with no `[elapsed<remaining` after them (an evaluation's
    # `acc 63% 34/54 right`) draw no bar, whatever their order
    (plain,) = readings(["eval 3/10 acc 63% 34/54 right"])
    assert not has_glyphs(plain.template.fields)
    (bar,) = readings([W20_BAR])
    assert has_glyphs(bar.template.fields)


# -- CosyVoice train_utils.log_per_step (fresh19 W14): `Batch {epoch}/{batch_idx + 1}` -----------
W14 = [f"2025-04-08 10:{m}:{s} DEBUG TRAIN Batch 0/{b} loss 1.339771 acc 0.298227 lr 0.00002040 "
       f"grad_norm 1.128567 rank 0" for m, s, b in (
           ("09", "49,523", 100), ("10", "08,566", 200), ("10", "48,075", 400),
           ("11", "09,096", 500), ("11", "30,111", 600), ("11", "52,043", 700),
           ("12", "10,660", 800))]


def test_a_pair_whose_n_stays_while_its_n_of_rises_is_epoch_then_counter() -> None:
    doc = read(W14)
    steps = doc["steps"]
    assert (steps["first"], steps["last"]) == (100, 800)
    assert 0.19 < doc["step_time_s"]["median"] < 0.22  # 19.04 s, 39.51 s / 2, 21.02 s ... a 100


def test_a_pair_whose_n_counts_up_to_a_steady_total_stays_n_of_n() -> None:
    # negative: the same line with the batch counting towards a total that stays (`n/N`)
    lines = [line.replace(f"Batch 0/{b}", f"Batch {k * 100}/900") for k, (line, b) in enumerate(
        zip(W14, (100, 200, 400, 500, 600, 700, 800), strict=True), start=1)]
    doc = read(lines)
    steps = doc["steps"]
    assert (steps["first"], steps["last"]) == (100, 700)


# -- the same paste (fresh19 W20): the traceback printed before the bar state it stopped -------
W20 = ['  File "/usr/local/lib/python3.6/dist-packages/torch/nn/functional.py", line 2540, in '
       'binary_cross_entropy_with_logits',
       '    return torch.binary_cross_entropy_with_logits(input, target, weight, pos_weight, '
       'reduction_enum)',
       'RuntimeError: CUDA out of memory. Tried to allocate 2.00 MiB (GPU 0; 15.90 GiB total '
       'capacity; 14.37 GiB already allocated; 1.88 MiB free; 15.03 GiB reserved in total by '
       'PyTorch)', W20_BAR]


def test_an_error_before_the_lone_bar_state_that_ends_the_log_stopped_that_state() -> None:
    doc = read(W20)
    assert [i["after_step"] for i in doc["interruptions"]] == [34]
    assert doc["restarts"] == []


def test_an_error_before_bar_states_that_go_on_is_not_moved() -> None:
    # negative: two bar states after the error (34, then 35): the job went on past it, so the
    # error is not read as the stop of the first
    doc = read(W20 + [W20_BAR.replace("63% 34/54 [00:42<00:25", "65% 35/54 [00:43<00:24")])
    assert doc["interruptions"] == []
