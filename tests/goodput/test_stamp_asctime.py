"""Stamps in C's asctime()/ctime() layout print the year after the time (`%a %b %e %H:%M:%S %Y`:
Python's `time.asctime()`, `dmesg -T`/`--ctime`): `Fri Aug 30 11:43:09 2024` is 2024-08-30, not
a year-less stamp given the year of the file's last change. A number after a year-less stamp is
that year only where the weekday printed agrees with the date it makes: a syslog host or a count
after `Dec  4 16:38:00` stays out of the stamp. Found by newcomer5 (#6,
tests/fixtures/newcomer5/README.md): the log was dated 2026, and so was `report`'s window."""

from __future__ import annotations

import calendar
import os
import shutil

from conftest import REPO

from gpuslo.goodput.logs import analyse_log, load_profiles
from gpuslo.goodput.logs.reader import LogReader
from gpuslo.goodput.logs.stamps import learn_shapes

FIXTURES = REPO / "tests" / "fixtures" / "newcomer5"
WRITTEN = float(calendar.timegm((2026, 12, 7, 12, 0, 0)))  # the file's last change, as found


def _at(year: int, month: int, day: int, hour: int, minute: int, second: int) -> float:
    return float(calendar.timegm((year, month, day, hour, minute, second)))


def _copy(tmp_path, name: str):
    path = tmp_path / name
    shutil.copy(FIXTURES / name, path)
    os.utime(path, (WRITTEN, WRITTEN))
    return path


def test_an_asctime_loop_is_dated_by_the_year_it_prints(tmp_path):
    doc = analyse_log(_copy(tmp_path, "asctime_synthetic.log"), gpus=1).document
    assert not any("print no year" in note for note in doc["notes"]), doc["notes"]
    assert doc["steps"]["first"] == 10 and doc["steps"]["last"] == 100
    assert doc["span_s"] == 90.0 and doc["span_from"] == "timestamps"
    reader = LogReader(load_profiles(), reference=WRITTEN)
    for line in (FIXTURES / "asctime_synthetic.log").read_text().splitlines():
        reader.feed(line)
    parsed = reader.finish()
    assert parsed.first_ts == _at(2024, 8, 30, 11, 0, 10)  # was 2026-08-30 (a Sunday)
    assert parsed.year_assumed is None


def test_dmesg_t_takes_its_year_and_leaves_it_out_of_the_message(tmp_path):
    doc = analyse_log(_copy(tmp_path, "dmesgT_2024.txt")).document
    assert not any("print no year" in note for note in doc["notes"]), doc["notes"]
    (event,) = doc["interruptions"]
    assert event["cause"] == "xid" and event["text"].startswith("NVRM: Xid")  # was "2024] NVRM"


def test_a_number_after_a_yearless_stamp_is_not_its_year():
    """The negatives: syslog's stamp followed by a host that is a number, and an asctime-like
    stamp whose weekday is not the one its number would make (2048-08-30 is a Sunday): both
    stay year-less, their number left in the line."""
    syslog = [f"Dec  4 16:38:00 2031 kernel: step {i}" for i in range(5)]
    (shape,) = learn_shapes(syslog)
    assert not shape.anywhere and "9999" not in shape.label
    assert shape.regex.search(syslog[0]).group(0) == "Dec  4 16:38:00"
    wrong_day = [f"Fri Aug 30 11:43:{i:02d} 2048 tokens step {i}" for i in range(5)]
    (shape,) = learn_shapes(wrong_day)
    assert not shape.anywhere
    assert shape.regex.search(wrong_day[0]).group(0) == "Fri Aug 30 11:43:00"
    right = [f"Fri Aug 30 11:43:{i:02d} 2024 step {i}" for i in range(5)]
    (shape,) = learn_shapes(right)
    assert shape.anywhere and shape.regex.search(right[0])["Y"] == "2024"
    padded = ["Fri Aug  2 11:43:09 2024 step 1"]  # %e: a day below 10 is space-padded
    (shape,) = learn_shapes(padded)
    assert shape.regex.search(padded[0])["Y"] == "2024"
