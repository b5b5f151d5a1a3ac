"""Reading a `gpuslo simulate` directory: the fast reader (`gpuslo.slo.simulate.csv_read`) gives
the frames of the general path (`frames.make_frame` over text) value for value and dtype for
dtype, and a file it cannot vouch for takes the general path, whose error names the row."""

from __future__ import annotations

import gzip
from unittest import mock

import pandas as pd
import pytest

from gpuslo.cli import main
from gpuslo.errors import ParseError
from gpuslo.slo.simulate import files
from gpuslo.slo.simulate.csv_read import read_frame_fast


@pytest.fixture(scope="module")
def sim(tmp_path_factory):
    out = tmp_path_factory.mktemp("sim")
    assert main(["simulate", "--nodes", "6", "--days", "2", "--seed", "7", "--fault-rate", "60",
                 "--out", str(out)]) == 0
    return out


def _general(directory):
    with mock.patch.object(files, "read_frame_fast", lambda name, path: None):
        return files.read_simulation(directory)


def test_fast_reader_gives_the_general_paths_frames(sim):
    fast, start, end = files.read_simulation(sim)
    slow, start2, end2 = _general(sim)
    assert (start, end) == (start2, end2) and fast.keys() == slow.keys()
    for name in fast:
        pd.testing.assert_frame_equal(fast[name], slow[name], check_exact=True)
    assert len(fast["job_events"]) > 0 and fast["job_events"]["step"].notna().any()


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
        files.read_simulation(copy)
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
        files.read_simulation(copy)
    with pytest.raises(ParseError) as slow:
        _general(copy)
    assert str(fast.value) == str(slow.value) and "fine" in str(fast.value)
