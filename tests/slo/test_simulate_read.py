"""Reading a `gpuslo simulate` directory: the columnar copy beside each CSV.gz
(`gpuslo.slo.simulate.columns`) and the fast reader (`gpuslo.slo.simulate.csv_read`) give the
frames of the general path (`frames.make_frame` over text) value for value and dtype for dtype;
a copy not made from the CSV.gz beside it, or unreadable, is passed over for the CSV.gz, and a
file the fast reader cannot vouch for takes the general path, whose error names the row."""

from __future__ import annotations

import gzip
from unittest import mock

import pandas as pd
import pytest

from gpuslo.cli import main
from gpuslo.errors import ParseError
from gpuslo.slo.simulate import columns, reading
from gpuslo.slo.simulate.csv_read import read_frame_fast


@pytest.fixture(scope="module")
def sim(tmp_path_factory):
    out = tmp_path_factory.mktemp("sim")
    assert main(["simulate", "--nodes", "6", "--days", "2", "--seed", "7", "--fault-rate", "60",
                 "--out", str(out)]) == 0
    return out


def _csv(directory):
    with mock.patch.object(reading, "_read_columns", lambda name, path: None):
        return reading.read_simulation(directory)


def _general(directory):
    with mock.patch.object(reading, "read_frame_fast", lambda name, path: None), \
            mock.patch.object(reading, "_read_columns", lambda name, path: None):
        return reading.read_simulation(directory)


def _assert_same(one, other):
    assert one.keys() == other.keys()
    for name in one:
        pd.testing.assert_frame_equal(one[name], other[name], check_exact=True)


@pytest.mark.parametrize("read", [reading.read_simulation, _csv])
def test_columns_and_fast_reader_give_the_general_paths_frames(sim, read):
    fast, start, end = read(sim)
    slow, start2, end2 = _general(sim)
    assert (start, end) == (start2, end2)
    _assert_same(fast, slow)
    assert len(fast["job_events"]) > 0 and fast["job_events"]["step"].notna().any()


def test_every_csv_has_its_columns_and_they_are_read(sim):
    for path in sim.glob("*.csv.gz"):
        name = path.name.removesuffix(".csv.gz")
        assert reading._read_columns(name, path) is not None, name


@pytest.mark.parametrize("damage", [lambda b: b[:len(b) // 2], lambda b: b"PK" + b[2:][::-1],
                                    lambda b: b""])
def test_an_unreadable_columns_file_is_passed_over_for_the_csv(sim, tmp_path, damage):
    copy = _copy(sim, tmp_path)
    path = copy / f"job_events{columns.SUFFIX}"
    path.write_bytes(damage(path.read_bytes()))
    assert reading._read_columns("job_events", copy / "job_events.csv.gz") is None
    _assert_same(reading.read_simulation(copy)[0], _general(sim)[0])


def test_columns_made_from_other_bytes_are_passed_over(sim, tmp_path):
    copy = _copy(sim, tmp_path)
    _rewrite(copy / "verdicts.csv.gz", lambda t: t.replace(",healthy,", ",unhealthy,", 1))
    assert reading._read_columns("verdicts", copy / "verdicts.csv.gz") is None
    frames = reading.read_simulation(copy)[0]
    _assert_same(frames, _general(copy)[0])
    assert not frames["verdicts"].equals(reading.read_simulation(sim)[0]["verdicts"])


def _copy(sim, tmp_path):
    copy = tmp_path / "sim"
    copy.mkdir()
    for path in sim.glob("*.*"):
        (copy / path.name).write_bytes(path.read_bytes())
    return copy


def _rewrite(path, edit):
    text = gzip.decompress(path.read_bytes()).decode()
    path.write_bytes(gzip.compress(edit(text).encode()))


@pytest.mark.parametrize("frame,edit", [
    ("job_events", lambda t: t.replace(",steps,", ",steps,x", 1)),  # a column shifts: bad count
    ("verdicts", lambda t: t.replace("Z,", "Q,", 1)),  # not a time
])
def test_a_bad_file_is_refused_by_the_fast_reader_and_named_by_the_general_one(
        sim, tmp_path, frame, edit):
    copy = tmp_path / "sim"
    copy.mkdir()
    for path in sim.glob("*.*"):
        (copy / path.name).write_bytes(path.read_bytes())
    _rewrite(copy / f"{frame}.csv.gz", edit)
    assert read_frame_fast(frame, copy / f"{frame}.csv.gz") is None
    with pytest.raises(ParseError) as fast:
        reading.read_simulation(copy)
    with pytest.raises(ParseError) as slow:
        _general(copy)
    assert str(fast.value) == str(slow.value) and fast.value.line is not None


def test_a_count_past_float_precision_takes_the_general_path(sim, tmp_path):
    path = tmp_path / "job_events.csv.gz"
    path.write_bytes((sim / "job_events.csv.gz").read_bytes())
    _rewrite(path, lambda t: t.replace(",steps,", ",steps,9007199254740993", 1))
    assert read_frame_fast("job_events", path) is None


def test_a_value_outside_its_set_is_named_by_validate_on_both_paths(sim, tmp_path):
    copy = tmp_path / "sim"
    copy.mkdir()
    for path in sim.glob("*.*"):
        (copy / path.name).write_bytes(path.read_bytes())
    _rewrite(copy / "verdicts.csv.gz", lambda t: t.replace(",healthy,", ",fine,", 1))
    with pytest.raises(ParseError) as fast:
        reading.read_simulation(copy)
    with pytest.raises(ParseError) as slow:
        _general(copy)
    assert str(fast.value) == str(slow.value) and "fine" in str(fast.value)
