"""When a step counter that goes back is a relaunch and when a new phase of one process, read on
the fresh14 first-contact batch's real lines, each with a negative from a real log that must
stay as it was read: a per-epoch counter numbered only by epoch marker lines (pygcn, Q01), a
new trial of the same process (SUBLIME, Q15), and Keras `fit` called again on the same model
(Q16); against GateNet's and AdvancedEAST's relaunches (fresh5 G28, fresh8 K02).
"""

from __future__ import annotations

from gpuslo.goodput.logs import load_profiles
from gpuslo.goodput.logs.assemble import assemble
from gpuslo.goodput.logs.reader import parse_lines

PROFILES = load_profiles()


def read(lines: list[str]) -> dict:
    parsed = parse_lines(lines, PROFILES)
    return assemble(parsed, job="t", gpus=1, checkpoint_step=PROFILES.checkpoint_step).document


# -- pygcn (Miao-er/gcn_graph_classification log/train.log, fresh14 Q01) ------------------------
def _pygcn_epoch(epoch: int, minute: int) -> list[str]:
    lines = [f"[2022-06-26 21:{minute:02d}:04,162]Epoch: {epoch:04d}"]
    for k, it in enumerate(range(20, 160, 20)):
        lines.append(f"[2022-06-26 21:{minute:02d}:{7 + 3 * k:02d},242]iter:{it:04d} "
                     f"loss_train: 1.1332 acc_train: 0.6875 time: 0.1688s")
    lines += [f"[2022-06-26 21:{minute:02d}:29,030]this epoch:", "loss= 0.8673 accuracy= 0.7422"]
    return lines


def test_a_counter_that_starts_again_under_each_new_epoch_line_is_per_epoch() -> None:
    doc = read(_pygcn_epoch(1, 43) + _pygcn_epoch(2, 44) + _pygcn_epoch(3, 45))
    assert doc["restarts"] == []
    steps = doc["steps"]
    assert (steps["epoch_first"], steps["epoch_last"]) == (1, 3)
    # numbered on across the epochs: 7 prints of 20 iterations each, three epochs
    assert (steps["global_first"], steps["global_last"]) == (20, 460)


def test_a_counter_that_starts_again_under_the_same_epoch_line_is_not_per_epoch() -> None:
    # negative: `Epoch: 0001` printed again (a relaunch) and the counter back at 20: no epoch
    # rose, so the fall is not an epoch's (a per-epoch reading would hide the relaunch)
    doc = read(_pygcn_epoch(1, 43) + _pygcn_epoch(1, 44))
    assert len(doc["restarts"]) == 1


# -- SUBLIME (yliuhz/SUBLIME scripts/train.log, fresh14 Q15) -------------------------------------
SUBLIME = [
    "2023-06-28 15:38:31,702 - INFO - Epoch 03998 | CL Loss 3.9304",
    "2023-06-28 15:38:31,747 - INFO - Epoch 03999 | CL Loss 3.9180",
    "2023-06-28 15:38:31,797 - INFO - Epoch 04000 | CL Loss 3.9097",
    "2023-06-28 15:38:32,700 - INFO - Trial: 1",
    "2023-06-28 15:38:32,701 - INFO - Best val ACC: 0.8140000104904175",
    "2023-06-28 15:38:32,701 - INFO - Best test ACC: 0.8280000686645508",
    "2023-06-28 15:38:33,142 - INFO - Epoch 00001 | CL Loss 7.9036",
    "2023-06-28 15:38:33,202 - INFO - Epoch 00002 | CL Loss 7.9038",
    "2023-06-28 15:38:33,262 - INFO - Epoch 00003 | CL Loss 7.8914",
    "2023-06-28 15:38:33,313 - INFO - Epoch 00004 | CL Loss 7.7906",
]


def test_a_new_trial_a_second_after_the_last_is_a_new_phase_not_a_restart() -> None:
    doc = read(SUBLIME)
    assert doc["restarts"] == [] and doc["interruptions"] == []
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (3998, 4004)
    assert any("new phase of the same process" in n for n in doc["notes"])


def test_a_counter_back_at_one_a_minute_later_is_still_a_restart() -> None:
    # negative: the same lines, the next trial's first line 60 s later: a process could have
    # been launched again in that time, so the fall stays a restart
    lines = SUBLIME[:6] + [line.replace("15:38:33", "15:39:33") for line in SUBLIME[6:]]
    assert len(read(lines)["restarts"]) == 1


# -- Keras 1 fit called three times (KyotoSunshine/CNN-for-handwritten-kanji, fresh14 Q16) -------
def _fit(epochs: range, total: int, stop: int | None = None) -> list[str]:
    lines = ["Train on 400000 samples, validate on 10000 samples"]
    for e in epochs:
        lines.append(f"Epoch {e}/{total}")
        if stop is not None and e == epochs[-1]:
            lines.append(f"Epoch {stop:05d}: early stopping")
        lines.append(f"{3080 + e}s - loss: 0.5444 - acc: 0.8463 - val_loss: 0.2883 - "
                     "val_acc: 0.9247")
    return lines


def test_fit_called_again_after_its_n_or_early_stopping_is_a_new_phase() -> None:
    doc = read(_fit(range(1, 11), 10) + _fit(range(1, 10), 10, stop=8) + _fit(range(1, 7), 10))
    assert doc["restarts"] == []
    # one process's epochs add up: 10 + 9 + 6, the early-stopping line no epoch of its own
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (1, 25)


def test_a_fit_cut_short_then_counting_from_one_is_a_restart() -> None:
    # negative: the first fit stops at epoch 4 of 10 with no end line, no clock: nothing says
    # it was over, so the counter back at 1 stays a relaunch
    assert len(read(_fit(range(1, 5), 10) + _fit(range(1, 4), 10))["restarts"]) == 1


# -- real relaunches that start their counter again (fresh5 G28, fresh8 K02) --------------------
GATENET = [
    "[iter 49999], [total loss 0.03794],[loss1 0.01949],[loss1 0.01845],[lr 0.0000001101169] ",
    "[iter 50000], [total loss 0.03843],[loss1 0.01973],[loss1 0.01870],[lr 0.0000000590102] ",
    "{'iter_num': 100000, 'train_batch_size': 4, 'last_iter': 0, 'lr': 0.001, 'snapshot': '50000'}",
    "",
    "[iter 1], [total loss 0.04253],[loss1 0.02118],[loss1 0.02136],[lr 0.0010000000000] ",
    "[iter 2], [total loss 0.04250],[loss1 0.02117],[loss1 0.02133],[lr 0.0009999910000] ",
]


def test_a_counter_back_at_one_with_no_sign_the_run_was_over_is_a_restart() -> None:
    assert len(read(GATENET)["restarts"]) == 1


KERAS_RESUMED = [
    "Epoch 14/40",
    "225/225 [==============================] - 26s 115ms/step - loss: 0.5337 - val_loss: 0.8109",
    "",
    "Epoch 00014: val_loss did not improve from 0.80084",
    "Epoch 00014: early stopping",
    "Epoch 6/40",
    "225/225 [==============================] - 31s 138ms/step - loss: 0.8283 - val_loss: 0.8632",
    "Epoch 7/40",
    "225/225 [==============================] - 26s 114ms/step - loss: 0.7802 - val_loss: 0.8330",
]


def test_a_fit_after_early_stopping_that_starts_mid_way_is_a_restart() -> None:
    # `Epoch 6/40` after early stopping: a new run resumed with initial_epoch, not a phase
    # that counts from its beginning
    assert len(read(KERAS_RESUMED)["restarts"]) == 1


# -- csm-1b LoRA fine-tuning relaunched after a completed run (fresh13 P07) --------------------
_CSM = "2025-05-08 21:{} - __main__ - INFO - {}"
CSM = [_CSM.format(t, m) for t, m in (
    ("16:27,380", "Starting epoch 11/13"),
    ("18:23,114", "Saved checkpoint to finetuned_model\\checkpoint-epoch-11"),
    ("18:23,114", "Starting epoch 12/13"),
    ("20:32,106", "Saved checkpoint to finetuned_model\\checkpoint-epoch-12"),
    ("20:32,106", "Starting epoch 13/13"),
    ("22:19,978", "Saved checkpoint to finetuned_model\\checkpoint-epoch-13"),
    ("24:02,596", "Finetuning completed successfully!"),
    ("29:34,688", "Loading CSM model: sesame/csm-1b"),
    ("30:53,414", "Starting finetuning process"),
    ("31:31,437", "Starting epoch 1/13"),
    ("33:31,437", "Starting epoch 2/13"),
)]


def test_a_counter_back_at_one_long_after_a_completed_run_is_a_restart() -> None:
    # the run reached 13/13 and said so, but the next epoch 1 comes 11 minutes later, longer
    # than any epoch took: time enough for a new process, so the fall stays a restart
    doc = read(CSM)
    assert len(doc["restarts"]) == 1
    assert not any("new phase" in n for n in doc["notes"])
