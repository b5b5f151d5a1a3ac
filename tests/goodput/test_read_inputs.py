"""How a training log reaches the reader (`goodput.logs.read`): standard input named `-`, a
UTF-16 log with its byte-order mark, and lines far longer than MAX_LINE_BYTES."""

from __future__ import annotations

import codecs
import json
import os
import subprocess
import sys
from pathlib import Path

from conftest import REPO, SHARED

from gpuslo.config_file import BINARY_DATA
from gpuslo.goodput.logs import analyse_log
from gpuslo.goodput.logs.read import ReadStats, read_lines

CASES = SHARED / "training_logs" / "cases"
T07 = next(CASES.glob("T07_*.log"))


def _gpuslo(args: list[str], stdin) -> subprocess.CompletedProcess:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    return subprocess.run([sys.executable, "-m", "gpuslo", *args], stdin=stdin,
                          capture_output=True, text=True, timeout=120, env=env)


def test_a_dash_reads_standard_input_as_the_file_does():
    file_done = _gpuslo(["goodput", "--format", "json", str(T07)], None)
    by_file = json.loads(file_done.stdout)
    with T07.open("rb") as handle:
        done = _gpuslo(["goodput", "--format", "json", "-"], handle)
    # T07 shows no save: unknown, exit 1, by file and by pipe alike (newcomer4 finding 9)
    assert done.returncode == file_done.returncode == 1, done.stderr
    by_stdin = json.loads(done.stdout)
    assert by_stdin.pop("file") == "<stdin>"
    by_file.pop("file")
    assert by_stdin == by_file


def test_a_dash_twice_or_a_closed_stdin_is_one_line_exit_2():
    with T07.open("rb") as handle:
        twice = _gpuslo(["goodput", "-", "-"], handle)
    assert twice.returncode == 2 and "more than once" in twice.stderr
    closed = _gpuslo(["goodput", "-"], subprocess.DEVNULL)
    assert closed.returncode == 1 and "<stdin>: framework not named by its lines" in closed.stdout
    # serving-log saves standard input and reads it like a file (newcomer8 F6): an empty one
    # is `unknown`, "empty file", exit 1, as for a file
    serving = _gpuslo(["serving-log", "-"], subprocess.DEVNULL)
    assert serving.returncode == 1 and serving.stderr == ""
    doc = json.loads(serving.stdout)
    assert (doc["file"], doc["reason"]) == ("<stdin>", "empty file: nothing to read")


def test_a_trace_on_standard_input_is_named_stdin(tmp_path):
    trace = REPO / "gpuslo" / "data" / "demo" / "stepfun" / "fault_trace.json"
    with trace.open("rb") as handle:
        done = _gpuslo(["report", "--trace", "-", "--trace-format", "stepfun", "--format",
                        "json", "--out", str(tmp_path / "out")], handle)
    assert done.returncode == 0 and "(<stdin>)" in done.stdout, done
    report = json.loads((tmp_path / "out" / "report.json").read_text())
    assert report["provisioned_gpu_hours"] > 0


T03 = next(CASES.glob("T03_*.log"))  # Megatron-DeepSpeed: saves printed, GPU-seconds given


def test_report_reads_a_training_log_on_standard_input_as_the_file(tmp_path):
    # real lines (the shared T03 log), piped as `gpuslo goodput -` reads them
    by_file = _gpuslo(["report", "--training-log", str(T03), "--gpus", "8", "--format",
                       "json", "--out", str(tmp_path / "file")], None)
    assert by_file.returncode == 0, by_file.stderr
    with T03.open("rb") as handle:
        done = _gpuslo(["report", "--training-log", "-", "--gpus", "8", "--format", "json",
                        "--out", str(tmp_path / "stdin")], handle)
    assert done.returncode == 0, done.stderr
    file_report = json.loads((tmp_path / "file" / "report.json").read_text())
    stdin_report = json.loads((tmp_path / "stdin" / "report.json").read_text())
    assert stdin_report["goodput_ratio"] == file_report["goodput_ratio"] is not None
    assert stdin_report["job_gpu_hours"] == file_report["job_gpu_hours"]


def test_report_on_an_empty_or_binary_stdin_is_one_line_exit_2(tmp_path):
    # negative: nothing to read, or control bytes, is one named line, never a made-up report
    empty = _gpuslo(["report", "--training-log", "-", "--gpus", "8", "--out",
                     str(tmp_path / "e")], subprocess.DEVNULL)
    assert empty.returncode == 2 and empty.stderr.count("\n") == 1
    assert empty.stderr.startswith("gpuslo report: error: <stdin>: ") and "empty" in empty.stderr
    binary = tmp_path / "bin"
    binary.write_bytes(bytes(range(32)) * 128)
    with binary.open("rb") as handle:
        done = _gpuslo(["report", "--training-log", "-", "--gpus", "8", "--out",
                        str(tmp_path / "b")], handle)
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert f"<stdin>: no training log to report on (none gives GPU-seconds): {BINARY_DATA}" \
        in done.stderr
    assert not (tmp_path / "b").exists()
    binary.write_bytes(bytes(4096))  # NULs alone are padding: nothing was written, and said so
    with binary.open("rb") as handle:
        done = _gpuslo(["report", "--training-log", "-", "--gpus", "8", "--out",
                        str(tmp_path / "n")], handle)
    assert done.returncode == 2 and done.stderr.count("\n") == 1
    assert "no progress lines" in done.stderr and "4096 NUL byte(s) of padding" in done.stderr


def test_report_refuses_stdin_named_twice(tmp_path):
    # negative: a second `-` would read nothing; the same one line as `goodput - -`
    with T03.open("rb") as handle:
        twice = _gpuslo(["report", "--training-log", "-", "--training-log", "-", "--gpus", "8",
                         "--out", str(tmp_path / "t")], handle)
    assert twice.returncode == 2 and "more than once" in twice.stderr


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


def test_a_utf16_log_with_its_bom_reads_as_the_utf8_one(tmp_path):
    """Windows PowerShell 5's `Tee-Object` (and `>`) write UTF-16 LE with a byte-order mark and
    CRLF: it was read as a binary file (every other byte NUL)."""
    text = T07.read_text()
    plain = analyse_log(T07).document
    for name, data in (("le", codecs.BOM_UTF16_LE + text.replace("\n", "\r\n")
                        .encode("utf-16-le")),
                       ("be", codecs.BOM_UTF16_BE + text.encode("utf-16-be")),
                       ("32", text.encode("utf-32"))):
        path = tmp_path / f"{name}.log"
        path.write_bytes(data)
        stats = ReadStats()
        assert list(read_lines(path, stats)) == text.splitlines(), name
        assert stats.encoding in ("utf-16", "utf-32") and stats.bytes == len(data)
        doc = analyse_log(path).document
        assert doc["status"] == plain["status"] and doc["steps"] == plain["steps"], name
        assert doc["read"]["progress_lines"] == plain["read"]["progress_lines"] > 0, name
        assert doc["step_time_s"] == plain["step_time_s"], name


def test_control_bytes_after_a_bom_are_still_a_binary_file(tmp_path):
    """The bad-file contract (tests/test_bad_files.py: binary is `unknown`, exit 1) holds when
    a binary file happens to open with a UTF-16 mark."""
    path = tmp_path / "bom.bin"
    path.write_bytes(codecs.BOM_UTF16_LE + bytes(range(32)) * 2 * 64)
    stats = ReadStats()
    assert list(read_lines(path, stats)) == [] and stats.binary
    doc = analyse_log(path).document
    assert doc["status"] == "unknown" and doc["not_read"] == [BINARY_DATA]


def test_inspect_reads_a_utf16_kernel_log(tmp_path):
    case = SHARED / "corpus" / "cases" / "002_xid45-secondary-to-xid149-xid145.txt"
    path = tmp_path / "dmesg-utf16.txt"
    path.write_bytes(case.read_text().encode("utf-16"))
    said = {}
    for file in (case, path):
        done = _gpuslo(["inspect", "--format", "json", str(file)], None)
        said[file] = [{k: v for k, v in f.items() if k != "file" and k != "message"}
                      for f in json.loads(done.stdout)["findings"]]
    assert said[case] == said[path] and len(said[case]) > 1


def test_nul_padding_is_skipped_and_the_rest_of_the_log_read(tmp_path):
    """A tester's repro (newcomer12 F8): logrotate's `copytruncate` leaves the truncated length
    as leading NULs (64 KiB here), a crash mid-write a 4 KiB NUL block between two lines. Both
    were "binary file: not read"; a NUL run is padding: skipped, noted, the rest read."""
    text = T07.read_text()
    plain = analyse_log(T07).document
    lines = text.splitlines(keepends=True)
    half = len(lines) // 2
    for name, data, run in (
            ("copytruncate", b"\0" * 65536 + text.encode(), 65536),
            ("crash", "".join(lines[:half]).encode() + b"\0" * 4096
             + "".join(lines[half:]).encode(), 4096),
            ("all-nul first chunk", b"\0" * (3 << 20) + text.encode(), 3 << 20)):
        path = tmp_path / "padded.log"
        path.write_bytes(data)
        stats = ReadStats()
        assert [x for x in read_lines(path, stats) if x] == text.splitlines(), name
        assert not stats.binary and stats.nul_bytes == run and stats.nul_runs >= 1, name
        doc = analyse_log(path).document
        assert doc["status"] == plain["status"] and doc["steps"] == plain["steps"], name
        assert any(f"{run} NUL byte(s) of padding" in n for n in doc["not_read"]), name


def test_random_bytes_and_unmarked_utf16_stay_binary(tmp_path):
    """Negatives: random bytes (about 10 % control bytes, most of the rest not UTF-8) were read
    as text; UTF-16 without its byte-order mark has single NULs between characters, which are
    not padding. Both are binary; a Latin-1 log (undecodable bytes, no control bytes) is text."""
    import random

    rng = random.Random(12)
    for name, data in (("random", bytes(rng.randrange(256) for _ in range(5000))),
                       ("utf-16 no bom", T07.read_text().encode("utf-16-le"))):
        path = tmp_path / "x.bin"
        path.write_bytes(data)
        stats = ReadStats()
        assert list(read_lines(path, stats)) == [] and stats.binary, name
        assert analyse_log(path).document["not_read"] == [BINARY_DATA], name
    latin = tmp_path / "latin1.log"
    latin.write_bytes(T07.read_text().replace("loss", "lössé").encode("latin-1"))
    doc = analyse_log(latin).document  # read (no save in T07: its goodput is unknown)
    assert BINARY_DATA not in doc["not_read"] and doc["read"]["progress_lines"] > 0
