"""Newcomer 7 F1 and F9 (tests/data/newcomer7/FINDINGS.md), `exporter --job-log`.

F1: `exp/jl/runB/train.log` = `head -c 200000 /dev/urandom` was read as a job
(`gpuslo_job_last_step{job="runB"} 6`), while `gpuslo goodput` on the same file said "binary
file (control bytes, not text): not read". The tailer now asks the same judgement
(`goodput.logs.read.binary_start`): not read, counted (`parse_error`), named once.
F9: a line over the tailer's read (8 MiB; the newcomer's was 50 MiB) was skipped with a log line
but `gpuslo_journal_errors_total{reason="line_too_long"}` stayed 0: now each such line counts
once, and its rest is never read as a line of its own. Random bytes from a seeded generator stand
for /dev/urandom; the readable log is tests/fixtures/newcomer12/hf_crash_restart.log."""

from __future__ import annotations

import random

from conftest import REPO

from gpuslo.cli import main
from gpuslo.config_file import BINARY_DATA
from gpuslo.exporter.jobs import logs as logs_module
from gpuslo.exporter.jobs.log_reading import complete_lines
from gpuslo.exporter.jobs.logs import JobLogTailer
from gpuslo.goodput.logs.read import binary_start

LOG = (REPO / "tests" / "fixtures" / "newcomer12" / "hf_crash_restart.log").read_bytes()
JUNK = random.Random(7).randbytes(200_000)


def runs(tmp_path, **files: bytes):
    for job, data in files.items():
        (tmp_path / "jl" / job).mkdir(parents=True)
        (tmp_path / "jl" / job / "train.log").write_bytes(data)
    return JobLogTailer([str(tmp_path / "jl" / "*" / "train.log")], tmp_path / "state",
                        default_gpus=8, settle_s=0)


def test_f1_random_bytes_are_no_job_and_are_counted(tmp_path, capsys):
    tailer = runs(tmp_path, runA=LOG, runB=JUNK)
    tailer.poll()
    tailer.poll()
    assert tailer.facts("runB")["read"]["lines"] == 0  # a job with no line read, no progress
    assert [job for job, _ in tailer.jobs(10)] == ["runA"]
    assert tailer.errors["parse_error"] == 1  # once per file, not per poll
    # the same judgement as `gpuslo goodput` on the same bytes
    assert binary_start(JUNK)
    assert main(["goodput", str(tmp_path / "jl" / "runB" / "train.log"), "--gpus", "8"]) == 1
    said = capsys.readouterr()
    assert BINARY_DATA in said.out + said.err


def test_f1_negative_a_text_log_and_nul_padding_are_read(tmp_path):
    padded = b"\x00" * 4096 + LOG  # NUL padding before text (a crash's preallocated block)
    assert not binary_start(LOG) and not binary_start(padded) and binary_start(JUNK)
    tailer = runs(tmp_path, runA=LOG, runC=padded)
    tailer.poll()
    assert tailer.facts("runA")["steps"]["last"] == 200
    assert tailer.facts("runC")["steps"]["last"] == 200
    assert set(tailer.errors.values()) == {0}


def test_f9_a_line_longer_than_a_read_is_counted_once_and_its_rest_skipped(tmp_path,
                                                                          monkeypatch):
    monkeypatch.setattr(logs_module, "READ_CHUNK", 64 * 1024)  # 8 MiB in the exporter
    huge = b"step 1 loss 2.0 " + b"x" * (5 * 64 * 1024) + b" step 999 loss 9.0\n"
    tailer = runs(tmp_path, runA=huge + LOG)
    for _ in range(10):
        tailer.poll()
    assert tailer.errors["line_too_long"] == 1
    facts = tailer.facts("runA")
    assert (facts["steps"]["first"], facts["steps"]["last"]) == (1, 200)  # never step 999


def test_f9_negative_a_line_that_fits_is_read_and_not_counted(tmp_path, monkeypatch):
    monkeypatch.setattr(logs_module, "READ_CHUNK", 64 * 1024)
    tailer = runs(tmp_path, runA=b"note " + b"x" * 60_000 + b"\n" + LOG)
    for _ in range(4):
        tailer.poll()
    assert tailer.errors["line_too_long"] == 0
    assert tailer.facts("runA")["steps"]["last"] == 200


def test_complete_lines_pure():
    assert complete_lines(b"a\nb", 0, False, False) == complete_lines(b"a\nb", 5, False, True)
    assert complete_lines(b"a\nb", 0, False, False).data == b"a\n"
    cut = complete_lines(b"xxxx", 0, False, True)
    assert (cut.end, cut.skipping, cut.problem) == (4, True, "line_too_long")
    rest = complete_lines(b"xx\nok\n", 4, True, False)
    assert (rest.end, rest.data, rest.skipping, rest.problem) == (6, b"ok\n", False, "")
    assert complete_lines(b"xxxx", 4, True, True).problem == ""  # the same line: counted once
