"""A save of step S commits the records of steps ≤ S that the log prints after the save's line
(`commits.trailing`), from fresh4 F26's real lines (tf.keras: ModelCheckpoint's line before the
epoch's final bar, whose last print follows the callbacks), with the negatives beside it: a
record of a later step after the save, a save with no step, a counter going back (a restart), a
save before any progress, and a counter that prints 0 (its record of S is the step after).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuslo.goodput.logs import load_profiles
from gpuslo.goodput.logs.assemble import LogGoodput, assemble
from gpuslo.goodput.logs.commits import trailing, zero_based
from gpuslo.goodput.logs.epochs import named_steps
from gpuslo.goodput.logs.items import Save, group_events
from gpuslo.goodput.logs.progress import Record, build_records
from gpuslo.goodput.logs.reader import parse_lines

PROFILES = load_profiles()

# fresh4 F26 (tf.keras 1.x, per-sample bars, epochs 39..44), its 22 lines as printed; they end
#   Epoch 44/5000
#   320/405 [======================>.......] - ETA: 0s - loss: 0.1523
#   Epoch 00044: val_loss improved from 0.28634 to 0.27306, saving model to out/test/…
#   405/405 [==============================] - 0s 891us/sample - loss: 0.1501 - val_loss: 0.2731
F26 = (Path(__file__).resolve().parent.parent / "data" / "training_logs" / "fresh4" / "cases" /
       "F26_tf-keras-locator-modelcheckpoint-saves-overwrite-reducelr-per-sample.log"
       ).read_text().splitlines()
EPOCH_45 = [
    "Epoch 45/5000",
    "320/405 [======================>.......] - ETA: 0s - loss: 0.1493",
    "Epoch 00045: val_loss did not improve from 0.27306",
    "405/405 [==============================] - 0s 750us/sample - loss: 0.1490 - val_loss: 0.2800",
]


def run(lines: list[str]) -> LogGoodput:
    parsed = parse_lines(lines, PROFILES)
    return assemble(parsed, job="t", gpus=1, checkpoint_step=PROFILES.checkpoint_step)


def items_of(lines: list[str]) -> list:
    parsed = parse_lines(lines, PROFILES)
    markers = [(o.seq, int(o.data["epoch"])) for o in parsed.observations if o.kind == "epoch"]
    records, _ = build_records(parsed.progress, markers, named_steps(parsed.observations))
    return group_events(parsed.observations, records, PROFILES.checkpoint_step)


def save_at(items: list) -> tuple[int, Save, Record | None]:
    """The last save of `items`: its index, itself, the last record before it."""
    k = max(i for i, x in enumerate(items) if isinstance(x, Save))
    last = next((x for x in reversed(items[:k]) if isinstance(x, Record)), None)
    return k, items[k], last


def test_the_epochs_final_bar_after_the_save_is_committed() -> None:
    result = run(F26)
    doc, events = result.document, result.events
    assert [s["step"] for s in doc["checkpoint_saves"]] == [16200, 17820]
    goodput = doc["goodput"]  # was: uncommitted 0.361 (epoch 44's bar), goodput 0.778
    assert goodput["uncommitted_gpu_s"] == 0.0 and goodput["goodput"] == 1.0
    assert goodput["gpu_seconds"]["productive"] == pytest.approx(doc["span_s"], abs=0.002)
    checkpoints = [e for e in events if e["event"] == "checkpoint"]
    assert [e["step"] for e in checkpoints] == [16200, 17820]
    assert checkpoints[-1]["t"] == max(e["t"] for e in events)  # at the end of epoch 44's bar
    # each save's own phase stays where its line is (no length printed), before its commit
    save = [e["t"] for e in events if e.get("category") == "checkpoint_save"]
    assert save[0] == save[1] < checkpoints[0]["t"] and save[2] == save[3] < checkpoints[1]["t"]


def test_the_trailing_record_is_found_and_only_it() -> None:
    items = items_of(F26)
    k, save, last = save_at(items)
    found = trailing(items, k, save.step, last)
    assert found is not None and items[found].glob == save.step == 17820
    assert not zero_based(items)


def test_a_record_past_the_save_stays_uncommitted() -> None:
    # negative: epoch 45's bar (steps 17821..18225) after epoch 44's save is not committed by it
    doc = run(F26 + EPOCH_45).document
    assert doc["goodput"]["uncommitted_gpu_s"] == pytest.approx(405 * 750e-6, abs=0.002)
    items = items_of(F26 + EPOCH_45)
    k, save, last = save_at(items)
    found = trailing(items, k, save.step, last)
    assert found is not None and items[found].glob == 17820  # ends before step 18225


def test_a_save_with_no_step_moves_nothing() -> None:
    # negative: where the save's step is unknown (None), no record is taken as its
    items = items_of(F26)
    k, _, last = save_at(items)
    assert trailing(items, k, None, last) is None


# Megatron-style lines (hand-varied): a save at iteration 20, then the counter starts again
MEGATRON = [
    f" iteration       {i}/     100 | consumed samples: {i * 8} | elapsed time per iteration "
    f"(ms): 500.0 | learning rate: 1.0E-04 | lm loss: 5.0E+00 |" for i in (10, 20)
] + ["saving checkpoint at iteration      20 to /ckpt"] + [
    f" iteration       {i}/     100 | consumed samples: {i * 8} | elapsed time per iteration "
    f"(ms): 500.0 | learning rate: 1.0E-04 | lm loss: 5.0E+00 |" for i in (5, 10)
]


def test_a_counter_going_back_after_the_save_is_a_restart_not_its_steps() -> None:
    # negative: steps 5 and 10 after the save at 20 are below the last step (20): a restart
    items = items_of(MEGATRON)
    k, save, last = save_at(items)
    assert save.step == 20 and last is not None and last.glob == 20
    assert trailing(items, k, save.step, last) is None
    doc = run(MEGATRON).document
    assert len(doc["restarts"]) == 1


def test_a_save_before_any_progress_moves_nothing() -> None:
    # negative, holdout B16 (TF Estimator): the save of step 0 is the state the steps begin from;
    # `step = 0` after it is the first step run, not one the save wrote
    lines = ["INFO:tensorflow:Saving checkpoints for 0 into /home/user/model/model.ckpt.",
             "INFO:tensorflow:loss = 96.96749, step = 0",
             "INFO:tensorflow:loss = 4.264659, step = 100 (124.394 sec)"]
    items = items_of(lines)
    k, save, last = save_at(items)
    assert last is None and trailing(items, k, save.step, last) is None
    goodput = run(lines).document["goodput"]  # no clock: by steps
    assert goodput["goodput"] == 0.0 and goodput["steps"]["productive"] == 0


PADDLE = [  # holdout B14 (PaddleDetection, 0-based epochs and iterations), the loss fields cut
    "[08/05 17:38:03] ppdet.engine INFO: Epoch: [5] [700/756] learning_rate: 0.022000 loss: "
    "1.585816 eta: 4 days, 6:21:43 batch_cost: 1.4723 data_cost: 0.0005 ips: 16.3017 images/s",
    "[08/05 17:39:22] ppdet.utils.checkpoint INFO: Save checkpoint: output/ppyoloe_crn_m_300e_coco",
    "[08/05 17:39:38] ppdet.engine INFO: Epoch: [6] [  0/756] learning_rate: 0.022000 loss: "
    "1.617880 eta: 4 days, 6:08:05 batch_cost: 1.5398 data_cost: 0.0004 ips: 15.5864 images/s",
]


def test_a_counter_from_zero_prints_the_step_after_the_save_at_s() -> None:
    # negative: `Epoch: [6] [  0/756]` is global 4536, the save's step (end of epoch 5), but it
    # is the first step of epoch 6: its 16 s stay uncommitted
    items = items_of(PADDLE)
    k, save, last = save_at(items)
    assert save.step == 4536 and zero_based(items)
    assert trailing(items, k, save.step, last) == k + 1
    assert trailing(items, k, save.step, last, from_zero=True) is None
    doc = run(PADDLE).document
    assert doc["goodput"]["uncommitted_gpu_s"] == pytest.approx(16.0, abs=0.5)
