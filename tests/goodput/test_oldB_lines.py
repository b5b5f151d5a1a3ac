"""Line classes the older first-contact halves' misses (fresh11 to fresh21, issue 23) showed
misread, each on a case's real lines (tests/data/training_logs/<half>/cases, the SOURCES file of
its batch) with a negative beside it: a similar line that must not be read that way."""

from __future__ import annotations

from gpuslo.goodput.logs.roles import read_template
from gpuslo.goodput.logs.templates import SampleRecord, group
from tests.goodput.batch_lines import read


def _roles(lines: list[str]) -> dict[str, str]:
    """{field name: role} of the one template `lines` make."""
    (tpl,) = group([SampleRecord(k, text, None, None) for k, text in enumerate(lines, 1)])
    reading = read_template(tpl)
    return {f.key: reading.roles[f.index].role for f in tpl.fields}


# -- HF Trainer + DeepSpeed 0.14.2 (fresh15 R03, CqGao112/CN-Mini-Phi3 sft.log, SOURCES_r.md) ---
R03_EVAL = ["{'eval_loss': 4.831025123596191, 'eval_runtime': 103.6796, 'eval_samples_per_second': "
            "1241.073, 'eval_steps_per_second': 5.179, 'epoch': 0.21}",
            "{'eval_loss': 4.739313125610352, 'eval_runtime': 103.4445, 'eval_samples_per_second': "
            "1243.894, 'eval_steps_per_second': 5.191, 'epoch': 0.41}"]
R03 = ["[2025-02-16 16:20:08,701] [INFO] [logging.py:96:log_dist] [Rank 0] step=0, skipped=0, "
       "lr=[0.0], mom=[(0.9, 0.999)]",
       "{'loss': 4.8797, 'grad_norm': 0.1686164289712906, 'learning_rate': 6.666666666666667e-07, "
       "'epoch': 0.0}",
       "{'loss': 4.877, 'grad_norm': 0.16130860149860382, 'learning_rate': 6.666666666666667e-06, "
       "'epoch': 0.04}",
       R03_EVAL[0]]


def test_an_evaluations_rate_of_steps_times_no_training_step() -> None:
    # `eval_steps_per_second` counts the evaluation's batches: R03 read it as the time of the
    # DeepSpeed set-up's `step=0` (0.193 s a step, where the run took about 13 s a step)
    assert _roles(R03_EVAL)["eval_steps_per_second"] == "metric"
    assert _roles(["val_it/s: 12.5 val_loss: 0.31", "val_it/s: 12.7 val_loss: 0.30"])[
        "val_it/s"] == "metric"
    assert read(R03)["step_time_s"]["median"] is None


def test_a_training_rate_of_steps_still_times_the_steps() -> None:
    # negative: the same rate named for training (clu's `steps_per_second`, HF's
    # `train_steps_per_second`) stays a rate
    clu = ["[1500] steps_per_second=2.0, loss=0.3", "[1600] steps_per_second=2.5, loss=0.2"]
    assert _roles(clu)["steps_per_second"] == "rate_ips"
    assert _roles(["{'train_steps_per_second': 0.076, 'epoch': 1.99}",
                   "{'train_steps_per_second': 0.075, 'epoch': 2.99}"])[
        "train_steps_per_second"] == "rate_ips"
    lines = [f"[{n}] steps_per_second=4.0, loss=0.{n // 100}" for n in range(100, 600, 100)]
    assert abs(read(lines)["step_time_s"]["median"] - 0.25) < 1e-6
