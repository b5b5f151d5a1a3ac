"""12-hour stamps (`%m/%d/%Y %I:%M:%S %p`, Python logging's and Windows/.NET's US layout): the
meridiem sets the hour, 12 AM is 0 and 12 PM is 12 (newcomer 2 finding 2: `11/03/2026 11:51:00
PM` to `11/04/2026 12:10:10 AM` read as a 24 h span with the PM lines dropped as another loop's
counter). Each case with a negative beside it."""

from __future__ import annotations

import calendar

import pytest

from gpuslo.goodput.logs.clock import Clock
from gpuslo.goodput.logs.stamps import learn_shapes
from tests.goodput.test_log_classes import read, steps


def _utc(*parts: int) -> float:
    return float(calendar.timegm(parts + (0,) * (6 - len(parts))))


def _loop(start_h: int, start_m: int, day: int, n: int) -> list[str]:
    # a hand-written loop under logging's `datefmt="%m/%d/%Y %I:%M:%S %p"`, one line a minute
    lines = []
    for i in range(n):
        minute = start_h * 60 + start_m + i
        day_i, minute = day + minute // 1440, minute % 1440
        h24, m = divmod(minute, 60)
        h12, mer = (h24 % 12 or 12), ("PM" if h24 >= 12 else "AM")
        stamp = f"11/{day_i:02d}/2026 {h12:02d}:{m:02d}:00 {mer}"
        lines.append(f"{stamp} INFO Step {20 * (i + 1)}/400, loss=1.23")
        if (i + 1) % 10 == 0:
            lines.append(f"{stamp} INFO Saved checkpoint to /ckpt/step_{20 * (i + 1)}.pt")
    return lines


@pytest.mark.parametrize(("start", "name"), [((23, 51), "midnight"), ((12, 51), "one_pm")])
def test_a_twelve_hour_clock_across_its_turn_is_one_run(start: tuple[int, int], name: str) -> None:
    doc = read(_loop(*start, day=3, n=20))
    assert steps(doc) == (20, 400), name
    assert doc["span_s"] == pytest.approx(19 * 60)  # first to last stamp, 19 minutes (not 24 h)
    assert not any("goes back" in note for note in doc["notes"]), doc["notes"]


@pytest.mark.parametrize(("text", "want"), [
    ("11/04/2026 12:10:10 AM INFO x", _utc(2026, 11, 4, 0, 10, 10)),
    ("11/04/2026 12:10:10 PM INFO x", _utc(2026, 11, 4, 12, 10, 10)),
    ("11/04/2026 01:10:10 pm INFO x", _utc(2026, 11, 4, 13, 10, 10)),
    ("11/04/2026 11:10:10AM INFO x", _utc(2026, 11, 4, 11, 10, 10)),
])
def test_the_meridiem_sets_the_hour(text: str, want: float) -> None:
    shape = learn_shapes([text])[0]
    found = shape.regex.search(text)
    assert found is not None and Clock().seconds(found.groupdict()) == pytest.approx(want)
    assert found.group(0).endswith(("M", "m"))  # removed with the stamp: not in the template


def test_a_thirteenth_hour_with_a_meridiem_is_no_time() -> None:
    # negative: `13:00:00 PM` is not a 12-hour clock's time
    text = "11/04/2026 01:10:10 PM INFO x"
    found = learn_shapes([text])[0].regex.search("11/04/2026 13:10:10 PM INFO x")
    assert found is not None and Clock().seconds(found.groupdict()) is None


@pytest.mark.parametrize("text", ["2026-11-04 14:10:10 INFO x",
                                  "2026-11-04 14:10:10 pm_loss=0.3 step 4",
                                  "2026-11-04 14:10:10 AMP: step 4"])
def test_a_24_hour_stamp_compiles_no_meridiem(text: str) -> None:
    # negative: no meridiem printed (or a word that only opens with one): no group, hour as printed
    shape = learn_shapes([text])[0]
    assert "?P<p>" not in shape.regex.pattern
    found = shape.regex.search(text)
    assert Clock().seconds(found.groupdict()) == pytest.approx(_utc(2026, 11, 4, 14, 10, 10))
