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
