"""Line classes the older first-contact halves' misses (fresh11 to fresh21, issue 23) showed
misread, each on a case's real lines (tests/data/training_logs/<half>/cases, the SOURCES file of
its batch) with a negative beside it: a similar line that must not be read that way."""

from __future__ import annotations

from gpuslo.goodput.logs.roles import read_template
from gpuslo.goodput.logs.templates import SampleRecord, group
from tests.goodput.batch_lines import case, read


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


# -- reid-strong-baseline processor (fresh20 X16, ranzcr_clip_catether_line_classifiation
# log/log.txt, SOURCES_x.md): an epoch's summary naming the time per batch ---------------------
def x16_record(stamp: str, epoch: int, n: int, loss: str) -> str:
    return (f"2021-02-10 {stamp} baseline.train INFO: Epoch[{epoch}] Iteration[{n}/3385] Loss: "
            f"{loss}, Acc: 0.909, Base Lr: 3.50e-04")


X16_RECORDS = [("11:16:57,013", 12, 3200, "0.211"), ("11:18:48,883", 12, 3250, "0.211"),
               ("11:20:40,900", 12, 3300, "0.211"), ("11:22:35,787", 12, 3350, "0.211"),
               ("11:25:58,217", 13, 50, "0.198"), ("11:28:07,776", 13, 100, "0.196"),
               ("11:30:17,794", 13, 150, "0.198"), ("11:32:13,446", 13, 200, "0.201")]


def x16(summary: str) -> list[str]:
    """X16's records with `summary` stamped between epoch 12's last and epoch 13's first."""
    lines = [x16_record(*r) for r in X16_RECORDS]
    return [*lines[:4], f"2021-02-10 11:23:54,226 baseline.train INFO: {summary}", *lines[4:]]


def test_a_time_named_per_batch_is_one_batchs_time() -> None:
    # `Time per batch: 2.223[s]` is the epoch's mean batch (processor.py's time_per_batch); it
    # was read as the epoch's time over its 3385 batches (0.000657 s a batch)
    doc = read(x16("Epoch 12 done. Time per batch: 2.223[s] Speed: 3.6[samples/s]"))
    assert 2.1 < doc["step_time_s"]["median"] < 2.4  # the stamps: 112-130 s per 50 batches


def test_an_epochs_time_on_its_summary_still_covers_the_epochs_steps() -> None:
    # negative: the same summary naming the epoch's whole time is no batch's time
    doc = read(x16("Epoch 12 done. Time: 7525.3[s] Speed: 3.6[samples/s]"))
    assert doc["step_time_s"]["median"] < 10


# -- 3D Gaussian Splatting train.py (fresh12 O16, Kangkang-wky/gaussian-splatting
# log/train_backward.log, SOURCES_o.md): stdout's stamped prints flushed after stderr's bar ------
def _save_steps(lines: list[str]) -> list[int]:
    return [s["step"] for s in read(lines)["checkpoint_saves"]]


def test_a_save_worded_as_one_at_a_step_the_run_printed_keeps_its_lower_step() -> None:
    lines = case("fresh12", "O16")
    assert "[ITER 7000] Saving Gaussians [12/01 14:12:34]" in lines
    assert "[ITER 30000] Saving Gaussians [12/01 14:21:47]" in lines
    assert _save_steps(lines) == [7000, 30000]  # was [30000, 30000]


def test_a_lower_named_save_with_no_kin_at_a_printed_step_is_another_counters() -> None:
    # negative: no line of the same wording names a step the bar printed, so `[ITER 7000]`
    # below the bar's first step 29620 stays another counter's (fresh18 V14's script stage):
    # dated as an unnamed save, at the bar's last step
    lines = [t.replace("[ITER 30000] Saving", "[ITER 8000] Saving") for t in case("fresh12", "O16")]
    assert 7000 not in _save_steps(lines)


# -- CrossFit few-shot fine-tuning (fresh19 W15, INK-USC/CrossFit#9, SOURCES_w.md): a tqdm bar
# per epoch of 16 batches, each finished at `00:00` ------------------------------------------------
def _median(lines: list[str]) -> float | None:
    return read(lines)["step_time_s"]["median"]


def test_a_per_epoch_bar_drawn_anew_that_fits_its_clock_times_its_batches() -> None:
    lines = case("fresh19", "W15")
    assert any("| 16/16 [00:00<00:00, 28.30it/s]" in t for t in lines)
    # epochs 19-24's bars were taken for resumed bars' first redraws (no time), leaving epoch
    # 18's 5.55 it/s, whose 2 s hold the evaluation after step 300 (0.18 s a batch)
    assert abs(_median(lines) - 0.0355) < 0.0005


def test_a_bar_whose_steps_do_not_fit_its_clock_is_no_rate_from_zero() -> None:
    # negative: the same bars at 2.00 it/s could not have run 16 batches from 0 in `00:00`
    # (8 s): their rate is no step time, as a resumed bar's first redraws
    lines = [t.replace("28.30it/s", "2.00it/s").replace("28.19it/s", "2.00it/s")
             .replace("28.14it/s", "2.00it/s").replace("28.36it/s", "2.00it/s")
             for t in case("fresh19", "W15")]
    assert abs(_median(lines) - 0.5) > 0.1
