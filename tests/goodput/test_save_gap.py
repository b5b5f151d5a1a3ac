"""A save with no time of its own, bounded by the stamps of the progress lines around it
(`gaps.Gaps._save_gap`): Megatron prints `saving checkpoint at iteration N to ...` and
`successfully saved checkpoint at iteration N to ...` unstamped, between stamped iteration lines,
and no timer where `--log-timers` is off; the pause beyond the step time was booked productive.

Real lines: Megatron-LM 2024's stamped iteration lines (dev A14, its three whole lines verbatim,
then its last with the iteration and stamp advanced by its own 5.5 s step) and Megatron's save
pair from the BigScience tr1-13B chronicles (../shared/training_logs T03, its iteration number
set to the step saved). A hang stays a hang (tests/goodput/test_hang_time.py too); a gap that may
hold anything else (an eval's line, a validation that chose the save, a stamped save line that
places it) is left as it was.
"""

from __future__ import annotations

import re
from datetime import datetime, timedelta
from pathlib import Path

import pytest

from tests.goodput.test_log_classes import read

REPO = Path(__file__).resolve().parents[2]
A14 = next((REPO / "tests/data/training_logs/dev/cases").glob("A14_*.log"))
T03 = next((REPO.parent / "shared/training_logs/cases").glob("T03_*.log"))
T08 = next((REPO.parent / "shared/training_logs/cases").glob("T08_*.log"))
STAMP = re.compile(r"\[(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d)\]")
STEP_S = 5.5
SAVED_AT = 48


def _iterations() -> list[str]:
    """A14's three whole lines (43-45; its fourth is cut in the source), then 46-54 from its
    last whole line, 5.5 s apart."""
    real = [x for x in A14.read_text().splitlines() if "elapsed time per iteration (ms)" in x]
    last = real[-1]
    t = datetime.strptime(STAMP.search(last).group(1), "%Y-%m-%d %H:%M:%S")
    made = []
    for k, step in enumerate(range(46, 55), start=1):
        line = STAMP.sub(f"[{(t + timedelta(seconds=round(k * STEP_S))):%Y-%m-%d %H:%M:%S}]",
                         last)
        made.append(re.sub(r"iteration +45/", f"iteration       {step}/", line))
    return real + made


def _save_lines(step: int) -> list[str]:
    """T03's save pair, its iteration number set to `step`."""
    pair = [x for x in T03.read_text().splitlines() if "saved checkpoint" in x
            or x.startswith("saving checkpoint")]
    assert len(pair) == 2
    return [re.sub(r"iteration +\d+", f"iteration {step:>7}", x) for x in pair]


def _shifted(line: str, seconds: int) -> str:
    t = datetime.strptime(STAMP.search(line).group(1), "%Y-%m-%d %H:%M:%S")
    return STAMP.sub(f"[{t + timedelta(seconds=seconds):%Y-%m-%d %H:%M:%S}]", line)


def _log(pause_s: int, between: list[str] | None = None) -> list[str]:
    """The iteration lines with `between` (default: the save of step 48) after iteration 48,
    and every later stamp `pause_s` later."""
    lines, out = _iterations(), []
    for line in lines:
        step = int(re.search(r"iteration +(\d+)/", line).group(1))
        out.append(_shifted(line, pause_s) if step > SAVED_AT else line)
        if step == SAVED_AT:
            out += _save_lines(SAVED_AT) if between is None else between
    return out


def _bounded(doc: dict) -> list[str]:
    return [n for n in doc["notes"] if "upper bound" in n]


def test_the_lines_are_real() -> None:
    assert " [2024-04-06 02:59:36] iteration       43/     100 |" in _iterations()[0]
    assert _save_lines(48)[0].startswith("saving checkpoint at iteration      48 to /gpfs")
    assert "successfully saved checkpoint at iteration      48" in _save_lines(48)[1]


def test_a_save_bounded_by_stamps_is_checkpoint_save_at_most_with_a_note() -> None:
    """60 s more between iterations 48 and 49 than its 5.5 s step, the save between: about
    60 s x 8 GPUs are checkpoint_save (the reference is the median printed step time), not
    productive; the save's own seconds stay unknown, the note says it is an upper bound."""
    doc, before = read(_log(60), gpus=8), read(_log(0), gpus=8)
    seconds = doc["goodput"]["gpu_seconds"]
    assert seconds["checkpoint_save"] == pytest.approx(60 * 8, abs=8 * 1.5)
    assert before["goodput"]["gpu_seconds"]["checkpoint_save"] == 0.0
    assert doc["checkpoint_saves"] == [{"step": 48, "seconds": None, "line": 7}]
    assert len(_bounded(doc)) == 1 and "save of step 48" in _bounded(doc)[0]
    assert doc["hangs"] == [] and seconds["other"] == 0.0
    assert seconds["productive"] == pytest.approx(
        before["goodput"]["gpu_seconds"]["productive"], abs=8 * 1.5)


def test_negative_the_same_gap_with_no_save_stays_as_it_was() -> None:
    doc = read(_log(60, between=[]), gpus=8)
    assert doc["goodput"]["gpu_seconds"]["checkpoint_save"] == 0.0 and not _bounded(doc)


def test_negative_a_hang_with_a_save_inside_stays_a_hang() -> None:
    """An hour with the save inside: a stall (these lines print their own step time, so the
    stamps' jump past it is the silent stall `_jump` books), `other` as before, not a save."""
    doc = read(_log(3600), gpus=8)
    assert any("jump 3600" in n for n in doc["notes"])
    assert doc["goodput"]["gpu_seconds"]["checkpoint_save"] == 0.0 and not _bounded(doc)
    assert doc["goodput"]["gpu_seconds"]["other"] == pytest.approx(3600 * 8, abs=8 * 6)


def test_negative_a_pause_within_the_steps_own_variation_is_not_a_save() -> None:
    doc = read(_log(3), gpus=8)  # 3 s: under a step (5.5 s)
    assert doc["goodput"]["gpu_seconds"]["checkpoint_save"] == 0.0 and not _bounded(doc)


def test_negative_another_line_in_the_gap_may_be_what_took_the_time() -> None:
    """Megatron's validation line before the save: the gap holds the evaluation too."""
    evaluated = ["-" * 20, " validation loss at iteration 48 | lm loss value: 1.82E+00 | "
                 "lm loss PPL: 6.17E+00 |", "-" * 20, *_save_lines(SAVED_AT)]
    doc = read(_log(60, between=evaluated), gpus=8)
    assert doc["goodput"]["gpu_seconds"]["checkpoint_save"] == 0.0 and not _bounded(doc)


def test_negative_nanogpts_eval_then_save_is_not_booked_as_a_save() -> None:
    """T08: `step 3000: train loss …, val loss …` then `saving checkpoint to out`, and
    iteration 3000 35.4 s later: the eval and the save share the gap (its README says so)."""
    doc = read(T08.read_text().splitlines(), gpus=8)
    assert doc["goodput"]["gpu_seconds"]["checkpoint_save"] == 0.0 and not _bounded(doc)


def test_negative_a_save_a_validation_metric_chose_is_noted_not_booked() -> None:
    """Lightning's ModelCheckpoint line (`_update_best_and_save`'s format, as NeMo prints it):
    a validation ran before the save, in the same gap."""
    chosen = [f"Epoch 0, global step {SAVED_AT}: 'val_loss' reached 1.82599 (best 1.82599), "
              "saving model to '/results/checkpoints/megatron_gpt--val_loss=1.83-step=48.ckpt' "
              "as top 3"]
    doc = read(_log(60, between=chosen), gpus=8)
    assert doc["goodput"]["gpu_seconds"]["checkpoint_save"] == 0.0 and not _bounded(doc)
    assert any("validation metric chose the save" in n for n in doc["notes"])
    monitored = [chosen[0].replace("'val_loss'", "'reduced_train_loss'")]
    doc = read(_log(60, between=monitored), gpus=8)  # a training metric: no validation
    assert doc["goodput"]["gpu_seconds"]["checkpoint_save"] == pytest.approx(60 * 8, abs=12)


def test_negative_a_stamped_save_line_is_placed_by_its_stamp_not_by_this_rule() -> None:
    stamped = [f" [2024-04-06 03:00:03] {x.strip()}" for x in _save_lines(SAVED_AT)]
    doc = read(_log(60, between=stamped), gpus=8)
    assert not _bounded(doc)
