"""Bars drawn once per epoch (newcomer finding 8): Keras 2's final `1875/1875 [====] - 50s
26ms/step` per epoch (each epoch's elapsed counts from its own start, also when two epochs print
the same seconds), and Ultralytics YOLO's `  N/5 … 118/118 [00:45<…]` (the leading n/N is the
epoch: every epoch counted). Hand-varied lines, a negative beside each rule."""

from __future__ import annotations

import pytest

from tests.goodput.test_log_classes import read, steps


def _keras(seconds: list[int]) -> list[str]:
    lines = []
    for e, s in enumerate(seconds, 1):
        lines += [f"Epoch {e}/{len(seconds)}",
                  f"1875/1875 [==============================] - {s}s {s * 1000 // 1875}ms/step "
                  f"- loss: 0.{30 - e} - accuracy: 0.9{e}",
                  f"Epoch {e}: saving model to training_1/cp.ckpt"]
    return lines


def test_keras2_epochs_of_equal_seconds_each_count() -> None:
    doc = read(_keras([60, 50, 50, 50, 50]))
    assert steps(doc) == (1875, 9375)
    assert doc["span_s"] == pytest.approx(260.0, abs=2.0)


def test_a_bar_whose_elapsed_goes_on_is_one_timer() -> None:
    # negative: one epoch's bar captured at 600, 1200, 1875 (its elapsed rises): one timer
    lines = ["Epoch 1/1"] + [
        f"{n}/1875 [{'=' * (30 * n // 1875):<30}] - ETA: {t}s - loss: 0.3" if n < 1875 else
        f"1875/1875 [==============================] - {t}s 27ms/step - loss: 0.29"
        for n, t in ((600, 16), (1200, 32), (1875, 50))]
    doc = read(lines)
    assert doc["span_s"] is None or doc["span_s"] <= 51.0


def _yolo(epochs: int, second_bar: bool = True) -> list[str]:
    # BaseTrainer prints "\n" before each epoch's header row, then the bar, then validation
    lines = ["Ultralytics 8.1.0 🚀 Python-3.10.12 torch-2.1.0+cu121 CUDA:0 (NVIDIA A100-SXM4-80GB, "
             "81051MiB)", "Starting training for 5 epochs..."]
    for e in range(1, epochs + 1):
        lines += ["", "      Epoch    GPU_mem   box_loss   cls_loss   dfl_loss  Instances"
                      "       Size",
                  f"        {e}/{epochs}      3.51G      1.2{e}4      2.345      1.456         32"
                  "        640: 100%|██████████| 118/118 [00:45<00:00,  2.60it/s]"]
        if second_bar:
            lines.append("                 Class     Images  Instances      Box(P          R    "
                         "  mAP50  mAP50-95): 100%|██████████| 5/5 [00:02<00:00,  2.1it/s]")
    return lines


def test_yolo_epoch_bars_count_every_epoch() -> None:
    doc = read(_yolo(5))
    assert steps(doc) == (118, 590)
    assert doc["span_s"] == pytest.approx(225.0, abs=2.0)


def test_a_leading_pair_that_falls_is_not_an_epoch() -> None:
    # negative: a leading n/N that goes down between records (a worker id, not the epoch)
    lines = [f"        {w}/4      3.51G      1.2{i}4      2.345      1.456         32        640: "
             f"100%|██████████| 118/118 [00:45<00:00,  2.60it/s]"
             for i, w in enumerate((3, 1, 4, 2))]
    doc = read(lines)
    assert steps(doc)[1] != 472
