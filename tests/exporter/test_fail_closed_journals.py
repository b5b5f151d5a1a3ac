"""Issue 12, journals in the exporter: FIFOs refused unopened, counters never go down (high-water
marks, truncation reported), no partial sums after a restart, limits, errors counted by reason,
and reading off the check thread."""

from __future__ import annotations

import os
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
from exporter.test_collector_node import samples

from gpuslo import names
from gpuslo.errors import InputError
from gpuslo.exporter.jobs.journals import JournalTailer
from gpuslo.exporter.server import Exporter
from gpuslo.exporter.snapshot import NodeSnapshot
from gpuslo.goodput import compute_goodput, parse_journal
from gpuslo.goodput.journal import encode_line, event


def write_journal(path: Path, steps: int, t0: float = 1_000_000.0, start: bool = True) -> None:
    """A job on 8 GPUs: job_start, then `steps` x (60 s of steps and a checkpoint)."""
    with path.open("a") as handle:
        if start:
            handle.write(encode_line(event("job_start", t0, job=path.stem, node="n", gpus=8)))
        for n in range(1, steps + 1):
            t = t0 + 60 * n
            handle.write(encode_line(event("steps", t, step=n, first_step=n, first_t=t, count=1)))
            handle.write(encode_line(event("checkpoint", t, step=n)))


def productive(tailer: JournalTailer) -> dict[str, float]:
    return {job: g.gpu_seconds["productive"] for job, g in tailer.jobs(100)}


def test_a_fifo_named_jsonl_is_refused_without_opening_it(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "stuck.jsonl")
    write_journal(tmp_path / "ok.jsonl", 2)
    problems: list = []
    tailer = JournalTailer(tmp_path, problems.append)
    poller = threading.Thread(target=tailer.poll, daemon=True)
    poller.start()
    poller.join(5)
    assert not poller.is_alive(), "polling a FIFO blocked the tailer"
    assert productive(tailer) == {"ok": 120 * 8}
    assert tailer.errors["not_regular_file"] == 1
    assert [p.source for p in problems] == [str(tmp_path / "stuck.jsonl")]


def test_a_malformed_line_is_counted_and_later_lines_still_count(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    write_journal(path, 1)
    with path.open("a") as handle:
        handle.write('{"v": 1, "t": 1000100, "event": {}}\n')
    write_journal(path, 3, t0=1_000_060.0, start=False)
    tailer = JournalTailer(tmp_path, lambda p: None)
    tailer.poll()
    events, _ = parse_journal(path.read_bytes(), str(path))
    assert productive(tailer) == {"j": compute_goodput(events).gpu_seconds["productive"]} != {
        "j": 60 * 8
    }
    assert tailer.errors["parse_error"] == 1


def test_every_bad_line_counts_once_across_polls_whatever_its_kind(tmp_path: Path) -> None:
    """Issue 25 #12: ten bad lines (four kinds) were one error; each is counted, across polls
    and with an over-long line among them, and each kind is still reported only once."""
    path = tmp_path / "j.jsonl"
    write_journal(path, 1)
    bad = ["not json", '{"v": 1, "t": 1000100, "event": {}}', "{", '{"v": 9}', "[]"]
    problems: list = []
    tailer = JournalTailer(tmp_path, problems.append)
    with path.open("a") as handle:
        handle.write("\n".join(bad) + "\n")
    tailer.poll()
    assert tailer.errors["parse_error"] == 5
    with path.open("a") as handle:
        handle.write("\n".join(bad) + "\n" + "x" * (2 << 20) + "\n")
    tailer.poll()
    tailer.poll()  # nothing new: nothing counted twice
    assert tailer.errors["parse_error"] == 10 and tailer.errors["line_too_long"] == 1
    assert len(problems) == len({p.detail for p in problems}) < 10
    assert productive(tailer) == {"j": 60 * 8}


def test_a_truncated_journal_is_reported_not_re_read(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    write_journal(path, 10)
    tailer = JournalTailer(tmp_path, lambda p: None, state_dir=tmp_path / "state")
    tailer.poll()
    before = productive(tailer)["j"]
    with path.open("r+") as handle:
        handle.truncate(200)
    tailer.poll()
    assert productive(tailer)["j"] == before == 10 * 60 * 8
    assert tailer.errors["truncated"] == 1


def test_after_a_restart_no_partial_sums_and_no_counter_below_its_high_water_mark(
    tmp_path: Path,
) -> None:
    path = tmp_path / "j.jsonl"
    write_journal(path, 400)  # about 100 KB read 4 KB at a time (16 MB in production)
    first = JournalTailer(tmp_path, lambda p: None, state_dir=tmp_path / "state")
    first.poll()
    full = productive(first)["j"]
    assert full == 400 * 60 * 8
    restarted = JournalTailer(tmp_path, lambda p: None, state_dir=tmp_path / "state",
                              chunk_bytes=4096)
    restarted.poll()
    assert productive(restarted) == {"j": full}  # whole, never the first chunk's sums
    path.write_bytes(path.read_bytes()[: len(path.read_bytes()) // 2])  # rewritten shorter
    os.replace(path, tmp_path / "x")  # and replaced by a new file (new inode)
    (tmp_path / "x").rename(path)
    again = JournalTailer(tmp_path, lambda p: None, state_dir=tmp_path / "state")
    again.poll()
    assert productive(again) == {"j": full}  # the persisted mark holds it up


def test_a_line_longer_than_the_limit_is_skipped_without_holding_it(tmp_path: Path) -> None:
    path = tmp_path / "j.jsonl"
    write_journal(path, 1)
    with path.open("a") as handle:
        handle.write('{"v": 1, "pad": "' + "x" * 300_000)  # no newline yet: a writer mid-line
    tailer = JournalTailer(tmp_path, lambda p: None, chunk_bytes=4096)
    tailer.poll()
    assert tailer._tails["j"].partial == b""  # not buffered beyond the limit
    with path.open("a") as handle:
        handle.write('"}\n')
    write_journal(path, 2, t0=1_000_060.0, start=False)
    tailer.poll()
    assert productive(tailer) == {"j": 180 * 8}
    assert tailer.errors["line_too_long"] == 1


def test_more_journals_than_the_limit_are_reported(tmp_path: Path) -> None:
    for n in range(5):
        write_journal(tmp_path / f"job-{n}.jsonl", 1)
    tailer = JournalTailer(tmp_path, lambda p: None, max_journals=3)
    tailer.poll()
    assert len(tailer.jobs(100)) == 3 and tailer.errors["too_many_journals"] == 1


def test_a_missing_journal_dir_is_an_error_at_start(tmp_path: Path) -> None:
    with pytest.raises(InputError):
        JournalTailer(tmp_path / "nope")
    done = subprocess.run(
        [sys.executable, "-m", "gpuslo", "exporter", "--once", "--journal-dir",
         str(tmp_path / "nope"), "--state-dir", str(tmp_path / "state"),
         "--path.sysfs", str(tmp_path / "nosys")],
        capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "nope" in done.stderr


def test_journal_errors_are_exported_by_reason(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "stuck.jsonl")
    tailer = JournalTailer(tmp_path, lambda p: None)
    snapshot = NodeSnapshot(node="n", taken_at=time.time())
    exporter = Exporter(lambda: snapshot, tailer)
    exporter.poll_journals()
    s = samples(exporter.exposition().decode())
    errors = {dict(k)["reason"]: v for (n, k), v in s.items() if n == "gpuslo_journal_errors_total"}
    assert errors == {**dict.fromkeys(names.JOURNAL_ERROR_REASONS, 0.0), "not_regular_file": 1.0}


class _SlowTailer(JournalTailer):
    def poll(self) -> None:  # 50,000 journals on a slow disk: one poll takes seconds
        time.sleep(3)


def test_journal_reading_never_delays_the_check_loop(tmp_path: Path) -> None:
    cycles: list[float] = []

    def cycle() -> NodeSnapshot:
        cycles.append(time.monotonic())
        return NodeSnapshot(node="n", taken_at=time.time())

    exporter = Exporter(cycle, _SlowTailer(tmp_path))
    stop = threading.Event()
    threads = [threading.Thread(target=exporter.loop, args=(stop, 0.1), daemon=True),
               threading.Thread(target=exporter.journal_loop, args=(stop, 0.1), daemon=True)]
    for thread in threads:
        thread.start()
    time.sleep(2)
    stop.set()
    assert len(cycles) >= 10, f"only {len(cycles)} check cycles in 2 s"


def test_a_newline_in_a_journal_name_cannot_forge_a_log_line(tmp_path: Path, caplog) -> None:
    """Issue 25 #9: the exporter logged journal names as they are, so a name holding a newline
    wrote a second, forged line into its log. Names are logged as their repr."""
    forged = "x\n2026-12-04 00:00:00 INFO gpuslo: all GPUs healthy"
    (tmp_path / f"{forged}.jsonl").write_text("{}\n")
    write_journal(tmp_path / "bad-line.jsonl", 1)
    with (tmp_path / "bad-line.jsonl").open("a") as handle:
        handle.write("not json\n")
    tailer = JournalTailer(tmp_path)
    with caplog.at_level("WARNING", logger="gpuslo.exporter.jobs.journals"):
        tailer.poll()
    messages = [r.getMessage() for r in caplog.records]
    assert len(messages) == 2 and all("\n" not in m for m in messages), messages
    assert any(repr(str(tmp_path / forged) + ".jsonl") in m for m in messages), messages
    assert tailer.errors["bad_name"] == 1 and tailer.errors["parse_error"] == 1
