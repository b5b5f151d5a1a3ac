"""Classes of step time and save reading that the fresh3 first contact of issue 23 showed
missing, each on real lines (tests/data/training_logs/SOURCES_e.md names where they come from)
with a negative beside it: a similar line that must not be read that way."""

from __future__ import annotations

from gpuslo.goodput.logs.clock import Clock
from gpuslo.goodput.logs.preference import by_preference
from gpuslo.goodput.logs.roles import read_template
from gpuslo.goodput.logs.templates import SampleRecord, group
from gpuslo.goodput.logs.unixtime import recurs, search
from tests.goodput.test_log_classes import read, steps


def median_s(doc: dict) -> float | None:
    return (doc.get("step_time_s") or {}).get("median")


def saves(doc: dict) -> list[int | None]:
    return [s.get("step") for s in doc.get("checkpoint_saves") or []]


# mlx-lm (ml-explore/mlx#1914, fresh3 E01): a save line of the same `Iter <n>:` family first
MLX_SAVE = ("Iter 50: Saved adapter weights to /Users/user/Library/Mobile Documents/com~apple~"
            "CloudDocs/Datastes/MLX/test_Muon/adapters.safetensors and /Users/user/Library/Mobile "
            "Documents/com~apple~CloudDocs/Datastes/MLX/test_Muon/0000050_adapters.safetensors.")
MLX_REPORTS = [
    "Iter 51: Train loss 1.195, Learning Rate 1.000e-05, It/sec 0.655, Tokens/sec 617.362, "
    "Trained Tokens 62975, Peak mem 12.744 GB",
    "Iter 52: Train loss 1.104, Learning Rate 1.000e-05, It/sec 0.438, Tokens/sec 599.338, "
    "Trained Tokens 64344, Peak mem 12.744 GB",
    "Iter 53: Train loss 0.998, Learning Rate 1.000e-05, It/sec 0.603, Tokens/sec 580.070, "
    "Trained Tokens 65306, Peak mem 12.744 GB",
    "Iter 54: Train loss 1.410, Learning Rate 1.000e-05, It/sec 0.296, Tokens/sec 382.980, "
    "Trained Tokens 66598, Peak mem 12.744 GB",
]


# -- the template that gives a time is tried before a shorter one of its family -----------------
def test_a_rate_line_is_read_by_its_own_template_not_by_a_shorter_one_of_its_family() -> None:
    # 1 / It/sec: 1.527, 2.283, 1.658, 3.378 -> median (1.658 + 2.283) / 2
    doc = read([MLX_SAVE, *MLX_REPORTS])
    assert steps(doc) == (50, 54)
    assert median_s(doc) == round((1 / 0.603 + 1 / 0.438) / 2, 6)


def test_templates_are_ordered_by_the_time_they_give_then_by_what_they_read() -> None:
    records = [SampleRecord(1, MLX_SAVE, None, None)] + [
        SampleRecord(i + 2, text, None, None) for i, text in enumerate(MLX_REPORTS)]
    readings = [read_template(t) for t in group(records)]
    ordered = by_preference(readings)
    assert [r.template.count for r in ordered] == [4, 1]  # the rate template first
    assert by_preference(ordered[::-1]) == ordered


def test_an_unnamed_duration_gives_its_template_no_precedence() -> None:
    # negative, hand-varied (TensorFlow Estimator wording): `(250.0 sec)` is the time of the 200
    # steps since the last line; the `global_step/sec` lines beside it time the steps
    lines = ["INFO:tensorflow:loss = 9.5, step = 0", "INFO:tensorflow:global_step/sec: 0.8",
             "INFO:tensorflow:loss = 4.2, step = 200 (250.0 sec)",
             "INFO:tensorflow:global_step/sec: 0.5"]
    assert median_s(read(lines)) == round((1 / 0.8 + 1 / 0.5) / 2, 6)


def test_a_validation_line_of_the_family_does_not_hide_the_rate() -> None:
    # mlx-lm on CUDA (ml-explore/mlx-lm#330, fresh3 E02): `Iter 1: Val loss` first; the median
    # It/sec of the windows is 23.6 (the first, 0.490, is the warm-up)
    lines = ["Iter 1: Val loss 2.936, Val took 5.265s"] + [
        f"Iter {n}: Train loss 2.1, Learning Rate 1.000e-05, It/sec {r}, Tokens/sec 4560.749, "
        f"Trained Tokens 6568, Peak mem 10.588 GB"
        for n, r in ((10, "0.490"), (20, "13.913"), (30, "24.234"), (40, "25.674"),
                     (50, "23.600"))]
    doc = read(lines)
    assert steps(doc) == (1, 50) and median_s(doc) == round(1 / 23.6, 6)


# -- a step line that says a save finished is that save ---------------------------------------
def test_a_step_line_saying_a_save_finished_is_the_save_at_its_step() -> None:
    doc = read([MLX_SAVE, *MLX_REPORTS])
    assert saves(doc) == [50]
    assert doc["goodput"]["goodput"] is not None  # the save is commit evidence


def test_a_step_line_naming_a_saved_metric_or_a_validation_is_no_save() -> None:
    # negative: `saved_tokens` is a metric's name, `Val took` no save at all
    lines = ["Iter 1: Val loss 2.936, Val took 5.265s"] + [
        f"Iter {n}: Train loss 1.1, It/sec 0.5, saved_tokens {n * 100}" for n in range(2, 7)]
    assert saves(read(lines)) == []


# -- a bar printed at a dict record's step times that record ---------------------------------
PADDLENLP = [  # PaddleNLP Trainer (PaddlePaddle/PaddleNLP#1761, fresh3 E04), padding cut
    "{'loss': 0.1077, 'learning_rate': 4.2e-05, 'global_step': 180, 'epoch': 2.4}",
    "{'loss': 0.1355, 'learning_rate': 4.1e-05, 'global_step': 190, 'epoch': 2.53}",
    "{'loss': 0.1252, 'learning_rate': 4e-05, 'global_step': 200, 'epoch': 2.67}",
]
BAR = " 33%|" + "█" * 20 + "▋" + " " * 42 + "| {n}/600 [01:11<01:58,  3.37it/s]"


def test_a_bar_at_the_step_of_the_record_before_it_gives_that_record_its_rate() -> None:
    lines = PADDLENLP + [BAR.format(n=200) + "[2022-03-25 16:41:50,060] [    INFO] - ***** "
                         "Running Evaluation *****"]
    doc = read(lines)
    assert steps(doc) == (180, 200) and median_s(doc) == round(1 / 3.37, 6)


def test_a_bar_at_another_count_times_no_record() -> None:
    # negative: an evaluation-like bar (25/25) after the record at step 200: not its time
    lines = PADDLENLP + [" 100%|██████████| 25/25 [00:05<00:00,  4.75it/s]"]
    assert median_s(read(lines)) is None
    lines = PADDLENLP + [BAR.format(n=199)]
    assert median_s(read(lines)) is None


# -- a bare Unix time that ends the line is its clock -----------------------------------------
ONEFLOW = [  # OneFlow-Benchmark (Oneflow-Inc/oneflow#3874, fresh3 E25)
    "train: epoch 0, iter 100, loss: 6.914170, top_1: 0.001367, top_k: 0.005859, samples/s: "
    "2161.654 1605777750.5480015",
    "train: epoch 0, iter 200, loss: 6.748209, top_1: 0.005964, top_k: 0.019414, samples/s: "
    "2508.846 1605777781.159009",
    "train: epoch 0, iter 300, loss: 6.583309, top_1: 0.011784, top_k: 0.039479, samples/s: "
    "2510.358 1605777811.7522297",
]


def test_a_unix_time_ending_the_lines_is_their_clock() -> None:
    doc = read(ONEFLOW)
    assert steps(doc) == (100, 300)
    # (30.611 s, 30.593 s) / 100 iterations
    assert median_s(doc) == round((1605777811.7522297 - 1605777750.5480015) / 200, 6)
    assert doc["span_s"] == round(1605777811.7522297 - 1605777750.5480015, 3)


def test_the_unix_time_is_read_on_the_clock_as_utc() -> None:
    found = search(ONEFLOW[0])
    assert found is not None
    assert Clock().seconds(found.groupdict()) == 1605777750.5480015  # 2020-11-19 09:22:30 UTC


def test_a_labelled_constant_or_falling_ten_digit_number_is_no_clock() -> None:
    # negatives: a labelled count, a job id printed on every line, a number going back
    labelled = [f"iter {n}, loss: 6.9, tokens: {1605777750 + n * 3000}" for n in (100, 200, 300)]
    assert not recurs(labelled)
    assert median_s(read(labelled)) is None
    constant = [f"iter {n}, loss: 6.9, 12 1605777750" for n in (100, 200, 300)]
    assert not recurs(constant)
    falling = [f"iter {n}, loss: 6.9, 12 {1605777750 - n * 100}" for n in (100, 200, 300)]
    assert not recurs(falling)
    assert recurs([line.split(", loss")[0] + " 0.5 " + line.rsplit(" ", 1)[1]
                   for line in ONEFLOW])
