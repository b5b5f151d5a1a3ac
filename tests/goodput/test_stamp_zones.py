"""ISO 8601 / RFC 3339 stamps with an explicit UTC offset: the offset decides the instant, so a
daylight-saving change is neither an hour's hang nor a clock going back (newcomer finding 1:
`2024-03-31T01:59:50+01:00` then `2024-03-31T03:00:00+02:00`, 10 s apart, read as a 3600 s hang
and goodput 0.21 instead of 0.83). Each case with a negative beside it."""

from __future__ import annotations

import calendar

import pytest

from gpuslo.goodput.logs.clock import Clock
from gpuslo.goodput.logs.stamps import learn_shapes
from tests.goodput.test_log_classes import read, steps


def _utc(text: str) -> float:
    return float(calendar.timegm(tuple(int(x) for x in text.split(",")) + (0, 0, 0)))


def _loop(stamps: list[str]) -> list[str]:
    # a hand-written PyTorch loop under logging's ISO format (`%(asctime)s` replaced by
    # `datetime.now().astimezone().isoformat(timespec="seconds")`), a save every 4 steps
    lines = []
    for i, stamp in enumerate(stamps, 1):
        lines.append(f"{stamp} INFO step {i} loss {3 - i / 100:.3f}")
        if i % 4 == 0:
            lines.append(f"{stamp} INFO saved checkpoint to /ckpt/step_{i}.pt")
    return lines


SPRING = ["2024-03-31T01:59:20+01:00", "2024-03-31T01:59:30+01:00", "2024-03-31T01:59:40+01:00",
          "2024-03-31T01:59:50+01:00", "2024-03-31T03:00:00+02:00", "2024-03-31T03:00:10+02:00",
          "2024-03-31T03:00:20+02:00", "2024-03-31T03:00:30+02:00", "2024-03-31T03:00:40+02:00"]
AUTUMN = ["2024-10-27T02:59:20+02:00", "2024-10-27T02:59:30+02:00", "2024-10-27T02:59:40+02:00",
          "2024-10-27T02:59:50+02:00", "2024-10-27T02:00:00+01:00", "2024-10-27T02:00:10+01:00",
          "2024-10-27T02:00:20+01:00", "2024-10-27T02:00:30+01:00", "2024-10-27T02:00:40+01:00"]


@pytest.mark.parametrize("stamps", [SPRING, AUTUMN], ids=["spring", "autumn"])
def test_a_dst_change_in_offset_stamps_is_ten_seconds(stamps: list[str]) -> None:
    doc = read(_loop(stamps))
    assert steps(doc) == (1, 9)
    assert doc["span_s"] == pytest.approx(80.0)
    assert doc["step_time_s"]["median"] == pytest.approx(10.0)
    assert not doc["hangs"]
    assert not any("goes back" in note for note in doc["notes"]), doc["notes"]


def test_the_offset_forms_of_iso_8601_give_one_instant() -> None:
    want = _utc("2024,3,31,0,59,50")
    for text in ("2024-03-31T01:59:50+01:00 INFO step 1", "2024-03-31T01:59:50+0100 INFO step 1",
                 "2024-03-30T19:59:50-05:00 INFO step 1", "2024-03-31T00:59:50Z INFO step 1",
                 "2024-03-31 06:29:50.000+05:30 INFO step 1"):
        shape = learn_shapes([text])[0]
        found = shape.regex.search(text)
        assert found is not None and Clock().seconds(found.groupdict()) == pytest.approx(want)


def test_a_stamp_without_an_offset_stays_as_printed() -> None:
    # negative: no zone printed, no zone group compiled (the per-line work stays as it was)
    text = "2024-03-31 01:59:50,123 - INFO - step 1"
    shape = learn_shapes([text])[0]
    assert "?P<z>" not in shape.regex.pattern
    found = shape.regex.search(text)
    assert Clock().seconds(found.groupdict()) == pytest.approx(_utc("2024,3,31,1,59,50") + 0.123)


def test_a_real_step_back_under_one_offset_is_still_noted() -> None:
    # negative: the same offset printed and the instant an hour earlier: a clock that goes back
    stamps = AUTUMN[:4] + [s.replace("+01:00", "+02:00") for s in AUTUMN[4:]]
    doc = read(_loop(stamps))
    assert any("goes back" in note for note in doc["notes"]), doc["notes"]
