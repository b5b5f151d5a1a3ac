"""A model-summary header whose rows and totals are not in the log is one line, not a table that
swallows the log (newcomer 2 finding 8: one stamped Lightning `[stamp]   | Name  | Type  |
Params` line, rows cut, made every later line a table row: "no progress lines", rc 1).
Each case with a negative beside it."""

from __future__ import annotations

from gpuslo.goodput.logs.summary import in_tables
from tests.goodput.test_log_classes import read, steps

HEADER = "  | Name  | Type       | Params"


def _lightning(header: bool) -> list[str]:
    lines = ["[2026-11-03 10:00:00] GPU available: True (cuda), used: True"]
    if header:
        lines.append(f"[2026-11-03 10:00:05] {HEADER}")
    for i in range(1, 13):
        second = 5 + 100 * i
        lines.append(f"[2026-11-03 10:{second // 60:02d}:{second % 60:02d}] Epoch 0: step {50 * i}"
                     " train_loss=2.31")
        if i % 4 == 0:
            lines.append(f"[2026-11-03 10:{second // 60:02d}:{second % 60:02d}] Epoch 0, global "
                         f"step {50 * i}: 'val_loss' reached 2.10000 (best 2.10000), saving model"
                         f" to '/ckpt/epoch=0-step={50 * i}.ckpt' as top 1")
    return lines


def test_a_lone_stamped_header_leaves_the_steps_read() -> None:
    with_header, without = read(_lightning(True)), read(_lightning(False))
    assert steps(with_header) == steps(without) == (50, 600)
    assert with_header["span_s"] == without["span_s"]


def test_a_lone_header_is_one_line_of_table() -> None:
    texts = [HEADER, "Epoch 0: step 50 train_loss=2.31", "Epoch 0: step 100 train_loss=2.31"]
    assert in_tables(texts) == {0}


def test_rows_without_totals_stay_in_the_table() -> None:
    # negative: Lightning's rows (as many `|` as the header) and its rules are the table's, up
    # to the first line that is no row (a tqdm bar has other `|`s)
    texts = [HEADER, "-" * 40, "0 | model | Sequential | 1.2 K", "1 | loss  | MSELoss    | 0",
             "-" * 40, "Epoch 0:  50%|█████     | 50/100 [00:10<00:10,  5.00it/s]"]
    assert in_tables(texts) == {0, 1, 2, 3, 4}


def test_a_table_with_totals_ends_at_its_totals() -> None:
    # negative: the totals still close a table (its rows need not look alike: Keras wraps names)
    texts = [" Layer (type)                Output Shape              Param #",
             " max_pooling2d (MaxPooling2  (None, 13, 13, 32)        0",
             " D)", "Total params: 320", "Epoch 1/5"]
    assert in_tables(texts) == {0, 1, 2, 3}
