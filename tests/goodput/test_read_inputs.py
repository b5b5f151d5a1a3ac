"""How a training log reaches the reader (`goodput.logs.read`): standard input named `-`, a
UTF-16 log with its byte-order mark, and lines far longer than MAX_LINE_BYTES."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import REPO, SHARED

from gpuslo.goodput.logs import analyse_log
from gpuslo.goodput.logs.read import ReadStats, read_lines

CASES = SHARED / "training_logs" / "cases"
T07 = next(CASES.glob("T07_*.log"))


def _gpuslo(args: list[str], stdin) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "gpuslo", *args], stdin=stdin,
                          capture_output=True, text=True, timeout=120, env=env)


def test_a_dash_reads_standard_input_as_the_file_does():
    by_file = json.loads(_gpuslo(["goodput", "--format", "json", str(T07)], None).stdout)
    with T07.open("rb") as handle:
        done = _gpuslo(["goodput", "--format", "json", "-"], handle)
    assert done.returncode == 0, done.stderr
    by_stdin = json.loads(done.stdout)
    assert by_stdin.pop("file") == "<stdin>"
    by_file.pop("file")
    assert by_stdin == by_file


def test_a_dash_twice_or_a_closed_stdin_is_one_line_exit_2():
    with T07.open("rb") as handle:
        twice = _gpuslo(["goodput", "-", "-"], handle)
    assert twice.returncode == 2 and "more than once" in twice.stderr
    closed = _gpuslo(["goodput", "-"], subprocess.DEVNULL)
    assert closed.returncode == 1 and "<stdin>: no known framework" in closed.stdout
    twice_read = _gpuslo(["serving-log", "-"], subprocess.DEVNULL)
    assert twice_read.returncode == 2 and "save it to a file" in twice_read.stderr
    assert twice_read.stderr.count("\n") == 1


def test_a_trace_on_standard_input_is_named_stdin(tmp_path):
    trace = REPO / "gpuslo" / "data" / "demo" / "stepfun" / "fault_trace.json"
    with trace.open("rb") as handle:
        done = _gpuslo(["report", "--trace", "-", "--trace-format", "stepfun", "--format",
                        "json", "--out", str(tmp_path / "out")], handle)
    assert done.returncode == 0 and "(<stdin>)" in done.stdout, done
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["provisioned_gpu_hours"] > 0


def test_the_reader_yields_the_same_lines_from_a_path_or_a_dash(tmp_path):
    path = tmp_path / "x.log"
    path.write_bytes(b"a\nb\r\nc")
    assert list(read_lines(path, ReadStats())) == ["a", "b", "c"]
    assert analyse_log(path).document["file"] == str(Path(path))


def _with_long_line(tmp_path, size: int) -> Path:
    """T07 (five Megatron iterations) with one line of `size` bytes after its third line."""
    lines = T07.read_text().splitlines(keepends=True)
    path = tmp_path / f"long-{size}.log"
    path.write_text("".join(lines[:3]) + "x" * size + "\n" + "".join(lines[3:]))
    return path


def test_a_huge_line_is_one_line_cut_once_and_counted_once(tmp_path, monkeypatch):
    """A newcomer's 50 MB line was reported as two lines over 64 KiB and four over the record
    limit: the reader counted a line that outgrew a chunk twice, and the normaliser counted a
    cut every time it cleaned the line (stamp layouts, wrap width, learning sample, the read)."""
    monkeypatch.setattr("gpuslo.goodput.logs.read.CHUNK", 1 << 16)  # the line spans chunks
    plain = analyse_log(T07).document
    for size in (100_000, 3_000_000):
        doc = analyse_log(_with_long_line(tmp_path, size)).document
        assert doc["read"]["lines"] == plain["read"]["lines"] + 1, size
        assert doc["read"]["progress_lines"] == plain["read"]["progress_lines"], size
        assert doc["not_read"] == ["1 line(s) longer than the record limit were cut",
                                   "1 line(s) over 64 KiB: only their start read"], size
        assert doc["steps"] == plain["steps"]
    stats = ReadStats()
    lines = list(read_lines(_with_long_line(tmp_path, 3_000_000), stats))
    assert stats.long_lines == 1 and len(lines) == plain["read"]["lines"] + 1
    assert lines[3] == "x" * (64 * 1024) and lines[4] == T07.read_text().splitlines()[3]
