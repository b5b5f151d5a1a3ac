"""Step counter and step time classes the fresh6 first-contact batch showed misread (16/30 at
first contact, tests/data/first_contact/training_logs_fresh6_2026-12-06.txt), each on the real
lines (tests/data/training_logs/fresh6, SOURCES_h.md) with a negative beside it: a similar line
that must not be read that way."""

from __future__ import annotations

from gpuslo.goodput.logs.roles import read_template
from gpuslo.goodput.logs.templates import SampleRecord, group
from tests.goodput.test_log_classes import read, steps


def median_s(doc: dict) -> float | None:
    return (doc.get("step_time_s") or {}).get("median")


def readings(lines: list[str]) -> list:
    return [read_template(t) for t in group(
        [SampleRecord(i + 1, text, None, None) for i, text in enumerate(lines)])]


# -- Pointcept's InformationWriter (fresh6 H24): `Remain` is time left; `[e/E][n/N]` --------------
POINTCEPT = ("[2025-04-01 01:{m}:{s},249 INFO hook.py line 624 979131] Train: [14/170][{n}/1090] "
             "Data 0.007 (0.722) Batch {b} (1.184) Remain 56:{r}:29 loss: 5.1829 Lr: 2.79213e-04")
H24 = [POINTCEPT.format(m=m, s=s, n=n, b=b, r=r) for m, s, n, b, r in (
    ("30", "50", 50, "0.466", "15"), ("31", "49", 100, "0.518", "16"),
    ("32", "46", 150, "0.399", "27"), ("33", "47", 200, "0.555", "10"),
    ("34", "46", 250, "0.433", "06"), ("35", "41", 300, "0.447", "28"))]


def test_a_field_named_remain_is_time_left_not_the_window() -> None:
    # 56:15:29 read as the window's time gave 4017 s per step; the stamps give ~1.17 s
    doc = read(H24)
    assert 1.0 < median_s(doc) < 1.3
    roles = {f.key: r.roles[f.index].role for r in readings(H24) for f in r.template.fields}
    assert roles["Remain"] == "remaining"


def test_a_duration_named_otherwise_is_no_time_left() -> None:
    # negative: `Remainder` of a division is no clock word, `time` stays a step time
    (r,) = readings([f"step {n} time 0.5 remainder 3" for n in (1, 2, 3)])
    assert "remaining" not in {x.role for x in r.roles.values()}


def test_the_outer_pair_of_two_glued_pairs_is_the_epoch() -> None:
    # within one epoch the in-epoch count stays as printed (`epochs.printed_scale`)
    doc = read(H24)
    assert steps(doc) == (50, 300)
    assert (doc["steps"]["epoch_first"], doc["steps"]["epoch_last"]) == (14, 14)


def test_an_outer_pair_that_falls_is_no_epoch() -> None:
    # negative, hand-varied: the outer n goes down while the inner one moves: two counters
    doc = read([f"[{a}/9][{n}/50] loss 1.0" for a, n in ((5, 10), (3, 20), (4, 30), (2, 40))])
    assert doc["steps"]["epoch_first"] is None


# -- DeepLearningExamples BERT TF2 (fresh6 H22): ` / loss = ` is a separator ---------------------
BERT = "I0302 02:13:{s} 140737349982016 model_training_utils.py:{line}] {text}"
H22 = [BERT.format(s=s, line=line, text=text) for s, line, text in (
    ("35.044099", 523, "Saved checkpoint to /results/phase_1/ckpt-23"),
    ("35.045680", 538, "Step: 23 Lr 8.0872e-06 Loss scale 32768"),
    ("35.045771", 539, "Train Step: 23/90  / loss = 11.3046875 / time = 0.134 sec"),
    ("35.045808", 540, "Perf 7.89"),
    ("39.832320", 523, "Saved checkpoint to /results/phase_1/ckpt-24"),
    ("39.833479", 538, "Step: 24 Lr 8.43882e-06 Loss scale 32768"),
    ("39.833561", 539, "Train Step: 24/90  / loss = 11.1640625 / time = 0.134 sec"),
    ("39.833591", 540, "Perf 7.90"),
    ("44.619166", 523, "Saved checkpoint to /results/phase_1/ckpt-25"),
    ("44.620579", 538, "Step: 25 Lr 8.79044e-06 Loss scale 32768"))]


def test_a_slash_before_a_named_value_is_a_separator_not_n_of_n() -> None:
    lines = [line for line in H22 if "Train Step" in line]
    (r,) = readings([line.split("] ", 1)[1] for line in lines])
    roles = {f.key: r.roles[f.index].role for f in r.template.fields}
    assert roles["time"] == "step_s" and roles["loss"] == "metric"
    assert r.total is not None  # `23/90` stays n/N


def test_a_same_step_line_of_another_family_gives_its_step_time() -> None:
    # the stamps are 4.79 s apart (a checkpoint every step); the line's own time is 0.134 s
    doc = read(H22)
    assert steps(doc) == (23, 25) and median_s(doc) == 0.134


def test_a_line_of_another_step_gives_no_time() -> None:
    # negative: the timed line prints another loop's count (an eval batch 3, 4): no step's time
    lines = [line.replace("Train Step: 23/90", "Eval Batch: 3/90").replace(
        "Train Step: 24/90", "Eval Batch: 4/90") for line in H22]
    assert median_s(read(lines)) != 0.134


# -- InstructLab (fresh6 H23): a bar and rank lines counting the same steps ----------------------
BAR = "Epoch 0:  {p}%|█████████▋| {n}/78 [03:{e}<00:05,  {r}s/it]"
RANKS = [f"Epoch: 0, Step: 77, Rank: {k}, loss = 0.9" for k in (3, 1, 2, 5, 7, 6, 4, 0)]


def test_a_bar_drawing_a_step_the_lines_print_is_the_same_loop() -> None:
    doc = read([BAR.format(p=97, n=76, e=54, r="2.94"), "{", '    "step": 76,', "}",
                *RANKS, BAR.format(p=99, n=77, e=57, r="2.89")])
    assert steps(doc) == (76, 77)


def test_a_bar_of_other_counts_is_not_joined_to_the_lines() -> None:
    # negative: an evaluation-sized bar at 10/20 shares no step with the lines' 77
    doc = read([BAR.format(p=50, n=10, e=54, r="2.94").replace("/78", "/20"), *RANKS])
    assert steps(doc) == (77, 77)


# -- InternLM (fresh6 H09): the logger's `file.py:N in func --` names code -----------------------
INTERNLM = ("2023-07-10 14:26:28,977\tINFO train.py:317 in record_current_batch_training_metrics"
            " -- tflops=188.02533140299252,step={n},loss=5.459033012390137,tgs (tokens/gpu/second)"
            "=4233.73,lr=7.6e-06,loss_scale=65536.0,num_consumed_tokens=4849664,fwd_bwd_time=3.72")


def test_a_logger_location_is_not_what_the_line_does() -> None:
    assert steps(read([INTERNLM.format(n=36)])) == (36, 36)


def test_a_line_that_says_it_records_is_still_no_progress() -> None:
    # negative: outside a logger's location, `recording` still says the line is no step
    (r,) = readings(["Recording step=36, loss=5.4"])
    assert not r.progress


# -- Acme's TerminalLogger (fresh6 H19): the learner's steps, not the actors' frames -------------
ACME = "I0925 18:52:{s} 140563283464576 terminal.py:91] [{who}] Actor Episodes = {ae} | " \
       "Actor Steps = {a} | Evaluator Episodes = 2 | Evaluator Steps = 1530 | " \
       "Learner Steps = 2 | Learner Time Elapsed = 10.830 | Steps Per Second = 94.689"


def test_actor_and_evaluator_steps_are_no_training_steps() -> None:
    doc = read([ACME.format(s="06.416487", who="Learner", ae=1, a=825),
                ACME.format(s="10.536827", who="Actor", ae=2, a=1678)])
    assert steps(doc) == (2, 2)


def test_a_learner_or_plain_step_counter_stays_the_step() -> None:
    # negative: a step with no actor/evaluator before it is still the counter
    doc = read([f"Steps = {n} | Loss = 0.5" for n in (10, 20, 30)])
    assert steps(doc) == (10, 30)
