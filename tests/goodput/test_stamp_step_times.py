"""Step time from wall-clock stamps and cumulative elapsed fields, where a line prints no
per-step duration (progress.py's order of preference and window rule): each class read on
hand-varied lines that are not a first-contact case's own, with a negative beside it."""

from __future__ import annotations

import pytest

from gpuslo.goodput.logs.stamps import learn_shapes
from tests.goodput.test_log_classes import read, steps


def _median(doc: dict) -> float | None:
    return doc["step_time_s"]["median"]


# -- `%Y-%m-%d:%H:%M:%S`: MXNet's and Sockeye's datefmt joins date and time with a colon -------
def test_a_date_joined_to_its_time_by_a_colon_is_a_stamp() -> None:
    # hand-varied (MXNet Module.fit's Speedometer under a datefmt of `%Y-%m-%d:%H:%M:%S`):
    # batches every 40, 50 or 52 seconds apart; the speed is samples/sec, not a step rate
    stamps = ["2019-03-04:22:10:05", "2019-03-04:22:10:55", "2019-03-04:22:11:45",
              "2019-03-04:22:12:37", "2019-03-04:22:13:27"]
    lines = [f"[{s}:INFO:root:log] Epoch[2] Batch [{100 * (i + 1)}]\tSpeed: 210.{i} "
             f"samples/sec\taccuracy=0.71{i}" for i, s in enumerate(stamps)]
    doc = read(lines)
    assert steps(doc) == (100, 500)
    assert _median(doc) == pytest.approx(0.5)


def test_a_colon_joined_clock_with_no_year_first_date_is_not_a_stamp() -> None:
    # negative: a counter with three colons (`step 12:30:40:10`) and a day-first date with a
    # colon are not the `%Y-%m-%d:%H:%M:%S` layout
    assert learn_shapes(["step 12:30:40:10 loss 0.3", "04-03-2019:22:10:05 loss 0.3"]) == []
