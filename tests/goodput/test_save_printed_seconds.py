"""A save's printed duration is checkpoint time even when its start and end lines share a stamp
(newcomer 2 finding 4: fairseq's `Saving checkpoint to ...`, `Finished saving ...` and `Saved
checkpoint ... (writing took 20.0 seconds)` all at 10:10:20, the step before at 10:10:00: the
output said `checkpoint save at step 1000: 20.0 s` and booked checkpoint_save 0, productive the
whole span). Negatives: stamps that hold more than the printed seconds keep their span; the save
never begins before the step printed before it."""

from __future__ import annotations

import pytest

from tests.goodput.test_log_classes import read


def _t(second: int) -> str:
    return f"2026-11-03 {10 + second // 3600:02d}:{second // 60 % 60:02d}:{second % 60:02d}"


def _fairseq(save_lines: list[tuple[int, str]]) -> list[str]:
    # fairseq_cli.train under its `%(asctime)s | %(levelname)s | %(name)s | %(message)s` format:
    # 100 updates a minute, a save at 1000 updates, training on to 1500
    def inner(t: int, n: int) -> str:
        return (f"{_t(t)} | INFO | train_inner | epoch 001:    {n} / 5000 loss=4.123, nll_loss=2.9"
                f", ppl=7.4, wps=51234, ups=1.67, wpb=30720, bsz=1024, num_updates={n}, lr=0.0005"
                f", gnorm=0.9, loss_scale=64, train_wall=60, gb_free=10.2, wall={t}")
    lines = [f"{_t(0)} | INFO | fairseq_cli.train | task: TranslationTask"]
    lines += [inner(60 * k, 100 * k) for k in range(1, 11)]
    lines += [f"{_t(t)} | INFO | {text}" for t, text in save_lines]
    lines += [inner(620 + 60 * k, 1000 + 100 * k) for k in range(1, 6)]
    return lines


SAVE = "fairseq.trainer | Saving checkpoint to /ckpt/checkpoint_1_1000.pt"
DONE = "fairseq.trainer | Finished saving checkpoint to /ckpt/checkpoint_1_1000.pt"
SAVED = ("fairseq.checkpoint_utils | Saved checkpoint /ckpt/checkpoint_1_1000.pt (epoch 1 @ 1000 "
         "updates, score 4.1) (writing took {} seconds)")


def _gpu_s(doc: dict) -> dict:
    return doc["goodput"]["gpu_seconds"]


def test_printed_seconds_under_one_stamp_are_the_saves() -> None:
    doc = read(_fairseq([(620, SAVE), (620, DONE), (620, SAVED.format("20.0"))]))
    assert _gpu_s(doc)["checkpoint_save"] == pytest.approx(20.0)
    assert doc["checkpoint_saves"][0]["seconds"] == pytest.approx(20.0)


def test_stamps_that_hold_more_keep_their_span() -> None:
    # negative: the start line 30 s before the end: the stamps' 30 s, not the printed 20
    doc = read(_fairseq([(600, SAVE), (630, DONE), (630, SAVED.format("20.0"))]))
    assert _gpu_s(doc)["checkpoint_save"] == pytest.approx(30.0)


def test_a_save_never_begins_before_the_step_before_it() -> None:
    # negative: 90 s printed, but the step before was printed 20 s before the end: 20 s at most
    doc = read(_fairseq([(620, SAVE), (620, DONE), (620, SAVED.format("90.0"))]))
    assert _gpu_s(doc)["checkpoint_save"] == pytest.approx(20.0)
