"""Step-counter classes the second fresh batch (fresh2) showed missing, each read on hand-varied
lines that are not a case's own, with a negative beside it: a similar line that must not be
read that way."""

from __future__ import annotations

from tests.goodput.test_log_classes import read, steps


def _printed(doc: dict) -> tuple[int | None, int | None]:
    return doc["steps"]["printed_first"], doc["steps"]["printed_last"]


# -- a range counter `[a-b]`: the batches since the last report, the step is the upper end ------
def test_a_bracketed_range_counter_is_read_at_its_upper_end() -> None:
    # hand-varied (MXNet Speedometer style, another epoch, stride 20, other metric names)
    lines = [f"INFO:root:Epoch[3] Batch [{n - 20}-{n}]\tSpeed: {410.5 + n / 100:.2f} samples/sec"
             f"\tAccuracy={0.7 + n / 10000:.4f}\tcross-entropy={2.1 - n / 10000:.4f}"
             for n in (220, 240, 260)]
    assert _printed(read(lines)) == (220, 260)


def test_a_counter_followed_by_a_spaced_dash_is_not_a_range() -> None:
    # negative: ` - ` separates a value from the next field; the counter itself is the step
    lines = [f"Epoch 2 Batch {n} - acc {0.9 + n / 10000:.4f}" for n in (40, 60, 80)]
    assert _printed(read(lines)) == (40, 80)


# -- a global counter logged as a whole float beats a bar's n/N ---------------------------------
def _lightning_bar(n: int, glob: str) -> str:
    return (f"Epoch 1: {n * 100 // 300:3d}%|{'█' * (n // 30)}| {n}/300 [01:{n // 10:02d}<02:00,"
            f"  2.50it/s, loss=0.12, v_num=3, global_step={glob}]")


def test_a_whole_float_global_step_is_the_step() -> None:
    # hand-varied: the bar counts batches of epoch 1 from 1, global_step is the 0-based step
    lines = [_lightning_bar(n, f"{299 + n}.0") for n in (100, 200, 290)]
    assert steps(read(lines)) == (399, 589)


def test_a_global_step_in_exponent_form_is_rounded_not_a_count() -> None:
    # negative: tqdm's three significant figures (`4.5e+2`) are not a counter; the bar's n is
    lines = [_lightning_bar(n, f"{(299 + n) / 100:.2g}e+2") for n in (100, 200, 290)]
    assert _printed(read(lines)) == (100, 290)


# -- a named counter repeated by ranks on consecutive lines, beside a bar's n/N ------------------
def _rank_bars(step: int) -> list[str]:
    return [f"Training Epoch: 1/2, step {step}/30 completed (loss: 0.{k}12): 100%|{'█' * 40}| "
            f"30/30 [01:00<00:00,  2.00s/it]" for k in range(3)]


def test_a_named_step_repeated_by_ranks_beats_the_bars_n() -> None:
    # hand-varied: three ranks print the finished epoch bar; `step 29/30` is 0-based
    assert _printed(read(_rank_bars(29))) == (29, 29)


def test_a_constant_named_step_on_lines_far_apart_is_not_a_counter() -> None:
    # negative: the same constant `step` on lines far apart in time is a setting, not a count
    lines = [f"2024-01-01 10:{m:02d}:00 INFO {line}"
             for m, line in zip((0, 10, 20), _rank_bars(29), strict=True)]
    assert _printed(read(lines)) == (30, 30)


# -- Marian's abbreviated update counter `Up.` --------------------------------------------------
def test_marians_up_counter_is_the_step_and_dates_its_save() -> None:
    # hand-varied: another epoch, disp-freq 500, another model path
    lines = [f"[2020-03-0{i + 1} 10:00:00] Ep. 2 : Up. {n} : Sen. {n * 431:,} : Cost 3.{i}1 : "
             f"Time 120.5{i}s : 12000.0 words/s : L.r. 3.0000e-04"
             for i, n in enumerate((4000, 4500, 5000))]
    lines.append("[2020-03-04 10:00:01] Saving model weights and runtime parameters to "
                 "/data/run/model.npz")
    doc = read(lines)
    assert steps(doc) == (4000, 5000)
    assert [s["step"] for s in doc["checkpoint_saves"]] == [5000]


def test_a_validators_up_line_is_not_progress() -> None:
    # negative: Marian's `[valid]` lines repeat the update; they are evaluation, not steps
    lines = [f"[2020-03-0{i + 1} 10:00:00] [valid] Ep. 2 : Up. {n} : perplexity : 4{i}.1 : "
             "new best" for i, n in enumerate((4000, 4500, 5000))]
    assert steps(read(lines)) == (None, None)


# -- a line that prints the step again between two saves: the loop went on, two saves ----------
def _two_saves_at(step: int, repeat: str, path: str) -> list[str]:
    return [f"Step {step} is a validation step; computing metrics on validation set",
            f"acc: 0.91{step % 7}, loss: 0.2{step % 5}",
            "Accuracy on validation set improved. Saving best-val checkpoint.",
            "Saving checkpoint at:", f"/scratch/exp7/checkpoints/best-{path}",
            repeat, "Saving checkpoint at:", f"/scratch/exp7/checkpoints/{path}"]


def test_a_repeated_step_line_between_two_saves_parts_them() -> None:
    # hand-varied (vak-style loop, other steps and files): best model, then the periodic save
    lines = []
    for step in (1500, 1750):
        lines += [f"Step {step} is a checkpoint step.", "Saving checkpoint at:",
                  "/scratch/exp7/checkpoints/ckpt.pt"]
    lines += _two_saves_at(2000, "Step 2000 is a checkpoint step.", "ckpt.pt")
    doc = read(lines)
    assert [s["step"] for s in doc["checkpoint_saves"]] == [1500, 1750, 2000, 2000]


def test_save_lines_with_no_step_line_between_stay_one_save() -> None:
    # negative: the best-model words and the path of the same save, no step printed between
    lines = []
    for step in (1500, 1750):
        lines += [f"Step {step} is a checkpoint step.", "Saving checkpoint at:",
                  "/scratch/exp7/checkpoints/ckpt.pt"]
    lines += _two_saves_at(2000, "Checkpoint directory is ready.", "ckpt.pt")
    doc = read(lines)
    assert [s["step"] for s in doc["checkpoint_saves"]] == [1500, 1750, 2000]


def test_a_save_naming_its_step_printed_by_two_handlers_stays_one_save() -> None:
    # negative: two logging handlers print the step line and the save (its step named) twice
    lines = [f"step {n} | loss 0.{n % 9}" for n in (100, 200)]
    lines += ["step 300 | loss 0.3", "Saving checkpoint at step 300"] * 2
    doc = read(lines)
    assert [s["step"] for s in doc["checkpoint_saves"]] == [300]


# -- epoch summaries that give a time are the steps of a log with no step line, from two on -----
def _epochs(epochs: tuple[int, ...]) -> list[str]:
    out = []
    for e in epochs:
        out += [f"2022-05-0{e}T09:{e}{k}:00Z INFO     Epoch {e} {loop}: Loaded the first "
                f"minibatch of data in 0.{e}{k} sec." for k, loop in enumerate(("training",
                                                                              "validation"))]
        out += [f"2022-05-0{e}T09:{e}{2 + k}:00Z INFO     Epoch {e} {loop} took {20.5 + e - k:.2f}"
                f"sec, of which waiting for data took 0.{e}1 sec total."
                for k, loop in enumerate(("training", "validation"))]
    return out + ["2022-05-05T09:00:00Z INFO     Saving latest checkpoint..."]


def test_two_timed_epoch_summaries_are_the_steps_and_date_the_save() -> None:
    # hand-varied (InnerEye-style runner, other epochs and times): the epoch lines of both loops
    # share the summary's `Epoch <n>` opening; the training summaries are the steps
    doc = read(_epochs((3, 4)))
    assert steps(doc) == (3, 4)
    assert [s["step"] for s in doc["checkpoint_saves"]] == [4]


def test_one_timed_epoch_summary_is_not_a_count() -> None:
    # negative: a single training summary (then the save) is no count of steps
    assert steps(read(_epochs((3,)))) == (None, None)
