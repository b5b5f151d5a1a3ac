"""Stamps that print no year (glog/c10's `I0213 12:07:20.086000`, syslog's `Dec  4 16:38:00`):
the year is inferred from when the log was last written and said in a note. T14 (torchrun's
elastic agent) was read in the year 2000, which `gpuslo report` then placed on its calendar."""

from __future__ import annotations

import calendar
import os
import shutil

from conftest import SHARED

from gpuslo.goodput.logs import analyse_log, load_profiles
from gpuslo.goodput.logs.clock import Clock
from gpuslo.goodput.logs.reader import LogReader
from gpuslo.goodput.logs.stamps import REFERENCE_YEAR

T14 = next((SHARED / "training_logs" / "cases").glob("T14_*.log"))


def _at(year: int, month: int, day: int, hour: int = 0) -> float:
    return float(calendar.timegm((year, month, day, hour, 0, 0)))


def test_t14_takes_the_year_of_its_file_and_says_so(tmp_path):
    path = tmp_path / "t14.log"
    shutil.copy(T14, path)
    for written, year in ((_at(2025, 3, 1), 2025), (_at(2025, 2, 1), 2024)):
        os.utime(path, (written, written))  # 02-13 fits 2025-03-01; not 2025-02-01
        doc = analyse_log(path).document
        assert any(note.startswith(f"the stamps print no year: {year} assumed")
                   and "the file's last change (2025-0" in note for note in doc["notes"]), doc
    reader = LogReader(load_profiles(), reference=_at(2025, 3, 1))
    for line in T14.read_text().splitlines():
        reader.feed(line)
    parsed = reader.finish()
    assert parsed.first_ts == _at(2025, 2, 13) + 12 * 3600 + 7 * 60 + 20.086
    assert parsed.year_assumed == 2025


def test_the_year_rolls_over_from_december_to_january():
    clock = Clock(reference=_at(2025, 1, 10))
    dec = clock.seconds({"md": "1231", "H": "23", "M": "59", "S": "00"})
    jan = clock.seconds({"md": "0101", "H": "00", "M": "01", "S": "00"})
    assert dec == _at(2024, 12, 31, 23) + 59 * 60 and jan == _at(2025, 1, 1) + 60
    assert clock.year_first == 2024 and not clock.back_steps


def test_a_full_stamp_wins_and_no_reference_keeps_the_old_year():
    clock = Clock(reference=_at(2025, 6, 1))
    clock.seconds({"Y": "2023", "m": "05", "d": "01", "H": "1", "M": "00", "S": "00"})
    assert clock.seconds({"md": "0502", "H": "1", "M": "00", "S": "00"}) == _at(2023, 5, 2, 1)
    assert clock.year_first is None
    bare = Clock()
    assert bare.seconds({"md": "0502", "H": "1", "M": "00", "S": "00"}) == _at(
        REFERENCE_YEAR, 5, 2, 1)
    leap = Clock(reference=_at(2026, 3, 5))
    assert leap.seconds({"md": "0229", "H": "0", "M": "00", "S": "00"}) == _at(2024, 2, 29)
