"""`exporter --job-log` dates year-less stamps (glog/c10's `I0213 12:07:20.086`, syslog's
`Dec  5 10:00:00`) as `gpuslo goodput` does: the latest year in which the first such stamp is
not after the log's last write (`clock.year_before`), never the year 2000. T14 (torchrun's
elastic agent, real lines) was read by the tailer in 2000 while `gpuslo goodput` read it in
the year its file was written."""

from __future__ import annotations

import calendar
import os
import shutil
from pathlib import Path

from conftest import REPO, SHARED

from gpuslo.exporter.jobs.logs import JobLogTailer, recompute
from gpuslo.goodput.logs import analyse_log
from gpuslo.goodput.logs.clock import year_before

T14 = next((SHARED / "training_logs" / "cases").glob("T14_*.log"))
C04 = next((REPO / "tests" / "data" / "training_logs" / "fresh" / "cases").glob("C04_*.log"))
T03 = next((SHARED / "training_logs" / "cases").glob("T03_*.log"))  # stamps print their year


def _at(year: int, month: int, day: int, hour: int = 0) -> float:
    return float(calendar.timegm((year, month, day, hour, 0, 0)))


def _tailer(tmp_path: Path, log: Path, written: float) -> JobLogTailer:
    """A tailer that has read `log`, copied into `tmp_path` and last written at `written`."""
    path = tmp_path / log.name
    if not path.exists():
        shutil.copy(log, path)
    os.utime(path, (written, written))
    tailer = JobLogTailer([str(path)], tmp_path / "state", default_gpus=1,
                          clock=lambda: _at(2031, 7, 1))  # the clock is not the file's year
    tailer.poll()
    return tailer


def _facts(tailer: JobLogTailer) -> dict:
    (job,) = tailer._jobs
    return tailer.facts(job)


def _last_event_t(tailer: JobLogTailer) -> float:
    ((_, goodput),) = tailer.jobs(10)
    return goodput.last_event_t


def test_year_before_is_the_latest_year_the_date_is_not_after_the_write():
    assert year_before(2, 13, _at(2025, 3, 1)) == 2025
    assert year_before(2, 13, _at(2025, 2, 1)) == 2024  # negative: not after the write
    assert year_before(12, 5, _at(2026, 1, 3)) == 2025
    assert year_before(2, 29, _at(2026, 3, 5)) == 2024  # a Feb 29: the latest leap year


def test_the_tailer_dates_year_less_stamps_by_the_files_last_write_as_goodput_does(tmp_path):
    # real lines: T14 (torchrun, glog `E0213 12:07:20.086000`), C04 (Caffe, `I0509 19:45:41.12`)
    for written, year in ((_at(2025, 6, 1), 2025), (_at(2025, 2, 1), 2024)):
        folder = tmp_path / str(year)
        folder.mkdir()
        notes = _facts(_tailer(folder, T14, written))["notes"]
        assert [n for n in notes if "no year" in n] == [
            n for n in analyse_log(folder / T14.name).document["notes"] if "no year" in n]
        assert any(n.startswith(f"the stamps print no year: {year} assumed") and
                   "the file's last change (2025-0" in n for n in notes), notes
        tailer = _tailer(folder, C04, written)
        by_file = analyse_log(folder / C04.name, gpus=1).events
        assert _last_event_t(tailer) == max(e["t"] for e in by_file)
        assert _at(year, 1, 1) <= _last_event_t(tailer) < _at(year + 1, 1, 1)


def test_a_stamp_that_prints_its_year_keeps_it_whatever_the_file_time(tmp_path):
    # negative: T03's stamps print a year; a file touched in 2031 does not move them
    tailer = _tailer(tmp_path, T03, _at(2031, 1, 1))
    assert not any("no year" in n for n in _facts(tailer)["notes"])
    assert _last_event_t(tailer) == max(e["t"] for e in analyse_log(T03, gpus=1).events)
    assert _last_event_t(tailer) < _at(2031, 1, 1)


def test_a_restarted_tailer_keeps_the_year_it_first_read(tmp_path):
    first = _last_event_t(_tailer(tmp_path, C04, _at(2025, 6, 1)))
    again = _tailer(tmp_path, C04, _at(2027, 6, 1))  # touched later; the same state dir
    assert _last_event_t(again) == first
    assert any("2025 assumed" in n for n in _facts(again)["notes"])


def test_recompute_takes_the_same_reference():
    lines = [(None, line) for line in C04.read_text().splitlines()]
    at = recompute(lines, "c04", 1, reference=_at(2025, 6, 1)).last_event_t
    assert _at(2025, 1, 1) <= at < _at(2026, 1, 1)
