"""Issue 30, detection: a followed kernel-log file is judged in process from the xid run's resume
(`gpuslo.exporter.xid_fast`). The fast path gives the whole-file run's answer on real excerpts
split anywhere; an appended Xid is counted once across both paths, a run that answers late
included; a rotated, truncated, broken or timed-out source is left to the isolated run (fail
closed). Corpora: shared/corpus/cases and tests/data/corpus/dev/cases (never a holdout), the
real H200 node's dmesg and dmesg -T."""

from __future__ import annotations

import dataclasses
import os
from pathlib import Path

import pytest
import yaml

from gpuslo import names
from gpuslo.errors import GpusloError
from gpuslo.exporter.checks.base import CheckContext
from gpuslo.exporter.checks.xid import XidCheck, judge_scan
from gpuslo.exporter.checks.xid_file import FileResume, resume_scan
from gpuslo.exporter.policy.xid import load_policy
from gpuslo.exporter.runner import Runner
from gpuslo.exporter.server import Exporter
from gpuslo.exporter.state import CounterCarry
from gpuslo.exporter.xid_fast import FastXid

HERE = Path(__file__).resolve().parent
SHARED = HERE.parent.parent.parent / "shared"
FOLDERS = (SHARED / "corpus", HERE.parent / "data" / "corpus" / "dev")
NOW = 1000.0
XID_79 = ("[ 5000.000000] NVRM: Xid (PCI:0000:00:06): 79, pid=0, name=python, "
          "GPU has fallen off the bus.\n")
XID_13 = "[ 5001.000000] NVRM: Xid (PCI:0000:00:07): 13, pid=12, name=python, Graphics Exception\n"


def kernel_log_cases() -> list[Path]:
    cases = []
    for folder in FOLDERS:
        expected = folder / "expected.yaml"
        if expected.is_file():
            for entry in yaml.safe_load(expected.read_text()):
                if entry.get("kind") == "kernel-log":
                    cases.append(folder / "cases" / entry["case"])
    demo = HERE.parent.parent / "gpuslo" / "data" / "demo" / "h200"  # the real H200's, packaged
    return [*cases, demo / "dmesg.txt", demo / "dmesg-T.txt"]


CASES = [p for p in kernel_log_cases() if p.is_file()]


def context(tmp: Path, log: Path) -> CheckContext:
    return CheckContext(kernel_log=log, kmsg_path=tmp / "no-kmsg", state_dir=tmp / "state",
                        procfs=tmp / "proc", clock=lambda: NOW)


def whole(tmp: Path, log: Path):
    """The whole-file run's output, or the error it raises."""
    try:
        return XidCheck().run(context(tmp, log))
    except GpusloError as error:
        return type(error)


def splits(lines: list[bytes]) -> list[int]:
    """Every line boundary of a short excerpt; about twenty spread over a long one."""
    if len(lines) <= 60:
        return list(range(len(lines) + 1))
    return sorted({round(i * len(lines) / 20) for i in range(21)} | {len(lines) - 1})


def test_the_cases_are_there():
    assert len(CASES) >= 20 and all(p.is_file() for p in kernel_log_cases()[-3:])


@pytest.mark.parametrize("path", CASES, ids=lambda p: f"{p.parent.parent.name}/{p.name[:40]}")
def test_resumed_judgment_is_the_whole_file_run(path, tmp_path):
    """Split anywhere: the run on the first part, resumed over the rest, is the run on all."""
    data = path.read_bytes()
    lines = data.splitlines(keepends=True)
    log = tmp_path / "kern.log"
    log.write_bytes(data)
    expected = whole(tmp_path, log)
    policy = load_policy(None)
    compared = 0
    for cut in splits(lines):
        log.unlink()
        log.write_bytes(b"".join(lines[:cut]))
        first = whole(tmp_path, log)
        resume = None if isinstance(first, type) else first.resume
        with log.open("ab") as handle:
            handle.write(b"".join(lines[cut:]))
        if resume is None:  # the first part alone is no kernel log: nothing to go on from
            continue
        resumed = resume_scan(resume, NOW)
        if resumed is None:  # declined: only where the whole run fails (fail closed)
            assert isinstance(expected, type), f"declined at line {cut}"
            continue
        output = judge_scan(resumed[0], str(log), policy, resume.family, NOW)
        assert not isinstance(expected, type), f"resumed at line {cut} past a {expected}"
        assert output.results == expected.results, f"split at line {cut}"
        assert output.facts == expected.facts, f"split at line {cut}"
        assert resumed[1] == expected.resume.offset
        compared += 1
    assert compared or isinstance(expected, type)  # a kernel log is resumed somewhere


# --- both paths in one exporter -------------------------------------------------------------


class Rig:
    """An exporter whose cycle is the runner's snapshot, the xid answers fed by hand (`answer`,
    as the isolated run would deliver them, late ones included)."""

    def __init__(self, tmp: Path, log: Path) -> None:
        self.tmp, self.log, self.check = tmp, log, XidCheck()
        self.runner = Runner([self.check], context(tmp, log), node="n1")
        (tmp / "state").mkdir(exist_ok=True)
        self.exporter = Exporter(self.runner.snapshot, None, CounterCarry(tmp / "state"))
        self.exporter.fast = FastXid(self.runner, None, clock=lambda: NOW)

    def run(self):
        return self.check.run(context(self.tmp, self.log))

    def answer(self, output) -> None:
        """The run's answer arrives, then the exporter's cycle publishes it."""
        self.runner._record(self.check, NOW, ("ok", output))
        self.exporter.run_checks()

    def total(self) -> int:
        return sum(self.exporter.snapshot.xid_events.values())

    def xid(self, scope: str) -> str | None:
        found = [r.status for r in self.exporter.snapshot.results if r.scope == scope]
        return found[0] if found else None


GPU_06, GPU_07 = "pci:00000000:00:06.0", "pci:00000000:00:07.0"


@pytest.fixture
def rig(tmp_path) -> Rig:
    log = tmp_path / "kern.log"
    log.write_bytes(CASES[-2].read_bytes())  # the real H200 dmesg
    rig = Rig(tmp_path, log)
    rig.answer(rig.run())
    return rig


def test_an_appended_xid_is_published_at_once_and_counted_once(rig):
    before = rig.total()
    with rig.log.open("a") as handle:
        handle.write(XID_79)
    assert rig.exporter.publish_xid()
    assert rig.total() == before + 1 and rig.xid(GPU_06) == names.STATUS_FAIL
    rig.answer(rig.run())  # the periodic run reads the whole file again
    assert rig.total() == before + 1 and rig.xid(GPU_06) == names.STATUS_FAIL
    assert rig.exporter.publish_xid() and rig.total() == before + 1  # a wake with nothing new


def test_a_run_that_answers_after_the_fast_path_takes_nothing_back(rig):
    before = rig.total()
    late = rig.run()  # scanned before the append, answers after the fast path published it
    with rig.log.open("a") as handle:
        handle.write(XID_79)
    assert rig.exporter.publish_xid() and rig.total() == before + 1
    rig.answer(late)
    assert rig.total() == before + 1 and rig.xid(GPU_06) == names.STATUS_FAIL
    with rig.log.open("a") as handle:
        handle.write(XID_13)
    rig.answer(late)  # brought up to the end of the file before it is published
    assert rig.total() == before + 2


def test_a_late_run_of_a_rotated_file_keeps_what_was_published(rig):
    before = rig.total()
    late = rig.run()
    with rig.log.open("a") as handle:
        handle.write(XID_79)
    assert rig.exporter.publish_xid() and rig.total() == before + 1
    rig.log.rename(rig.tmp / "kern.log.1")  # rotated: a new file at the path
    rig.log.write_text("[    1.000000] Linux version 6.8.0\n" + XID_13)
    assert not rig.exporter.publish_xid()  # another inode: the isolated run judges it
    rig.answer(late)  # the old file's answer, older than what was published
    assert rig.total() == before + 1 and rig.xid(GPU_06) == names.STATUS_FAIL
    assert rig.runner._next_due["xid"] == 0.0  # made due at once
    rig.answer(rig.run())  # the new file: its Xid is new, nothing of the old one counted again
    assert rig.total() == before + 2 and rig.xid(GPU_06) is None


def test_a_truncated_file_is_left_to_the_isolated_run(rig):
    before = rig.total()
    rig.log.write_text("[    1.000000] Linux version 6.8.0\n" + XID_79)  # same inode, shorter
    assert not rig.exporter.publish_xid()
    rig.answer(rig.run())
    assert rig.xid(GPU_06) == names.STATUS_FAIL and rig.total() == before + 1


def test_a_head_no_longer_a_kernel_log_fails_closed(tmp_path):
    log = tmp_path / "kern.log"
    log.write_text("[    1.000000] Linux version 6.8.0\n")
    rig = Rig(tmp_path, log)
    rig.answer(rig.run())
    with log.open("ab") as handle:  # binary in the first 64 KiB, then an Xid (a NUL run alone
        # is copytruncate's padding, skipped and read past: test_kernel_log's NUL tests)
        handle.write(b"\xff\xfe" * 2048 + b"\n" + XID_79.encode())  # bytes that are not UTF-8
    assert not rig.exporter.publish_xid()
    rig.runner._record(rig.check, NOW, ("parse_error", "binary data, not a kernel log"))
    rig.exporter.run_checks()
    assert rig.xid("node") == names.STATUS_UNKNOWN
    assert rig.runner.resume["xid"] is None and not rig.exporter.publish_xid()


def test_a_run_that_timed_out_is_not_papered_over(rig):
    rig.runner._record(rig.check, NOW, ("check_timeout", "no answer within 10 s; killed"))
    rig.exporter.run_checks()
    with rig.log.open("a") as handle:
        handle.write(XID_79)
    assert not rig.exporter.publish_xid()  # no resume: the wake makes the run due instead
    assert rig.xid("node") == names.STATUS_UNKNOWN


def test_a_vanished_or_flooded_file_declines(tmp_path, monkeypatch):
    log = tmp_path / "kern.log"
    log.write_text("[    1.000000] Linux version 6.8.0\n")
    resume = XidCheck().run(context(tmp_path, log)).resume
    assert isinstance(resume, FileResume) and resume.offset == log.stat().st_size
    monkeypatch.setattr("gpuslo.exporter.checks.xid_file.MAX_RESUME_BYTES", 100)
    with log.open("a") as handle:
        handle.write(XID_79 * 2)
    assert resume_scan(resume, NOW) is None
    os.unlink(log)
    assert resume_scan(resume, NOW) is None


def test_the_resume_crosses_the_runners_child_process(tmp_path):
    """The real isolated run: its answer carries the resume the fast path goes on from."""
    log = tmp_path / "kern.log"
    log.write_text("[    1.000000] Linux version 6.8.0\n")
    (tmp_path / "state").mkdir()
    picklable = dataclasses.replace(context(tmp_path, log), clock=None)  # sent to the child
    runner = Runner([XidCheck()], picklable, node="n1")
    exporter = Exporter(runner.cycle, None, CounterCarry(tmp_path / "state"))
    exporter.fast = FastXid(runner, None, clock=lambda: NOW)
    try:
        exporter.run_checks()
        assert isinstance(runner.resume["xid"], FileResume)
        with log.open("a") as handle:
            handle.write(XID_79)
        assert exporter.publish_xid()
        assert sum(exporter.snapshot.xid_events.values()) == 1
        runner.make_due("xid")
        exporter.run_checks()
        assert sum(exporter.snapshot.xid_events.values()) == 1
    finally:
        runner.close()


def test_a_restart_before_the_counters_are_saved_counts_the_xid_once(rig):
    """The fast path leaves the save to the loop; a kill before it loses and doubles nothing,
    as the file's total is read again from the last saved (total, reading) pair."""
    before = rig.total()
    with rig.log.open("a") as handle:
        handle.write(XID_79)
    assert rig.exporter.publish_xid() and rig.total() == before + 1
    restarted = Rig(rig.tmp, rig.log)  # the carry as saved by the last cycle
    restarted.answer(restarted.run())
    assert restarted.total() == before + 1


def test_the_runner_keeps_a_resume_only_with_the_checks_own_answer(tmp_path):
    log = tmp_path / "kern.log"
    log.write_text("[    1.000000] Linux version 6.8.0\n")
    rig = Rig(tmp_path, log)
    good = rig.run()
    rig.runner._record(rig.check, NOW, ("ok", good))
    assert rig.runner.resume["xid"] is good.resume
    malformed = dataclasses.replace(good, results=[dataclasses.replace(r, check="other")
                                                   for r in good.results])
    rig.runner._record(rig.check, NOW, ("ok", malformed))  # the runner's tool_error instead
    assert rig.runner.resume["xid"] is None
    assert not rig.runner.replace_results("xid", good.resume, good.results, good.facts)


def test_no_fast_path_once_the_whole_file_run_has_stopped(rig):
    """A stuck loop leaves the xid results to go stale; the fast path does not refresh them."""
    beat = rig.runner.heartbeats["xid"]
    rig.runner.heartbeats["xid"] = dataclasses.replace(beat, last_run=NOW - 3 * 30.0 - 1)
    with rig.log.open("a") as handle:
        handle.write(XID_79)
    assert not rig.exporter.publish_xid()


def test_a_line_cut_mid_write_is_resumed_whole(tmp_path):
    """The run stops before a last line without its newline; the fast path reads it whole (an
    Xid 63, never the Xid 6 of its first half), as the next whole-file run does."""
    log = tmp_path / "kern.log"
    head = "[    1.000000] Linux version 6.8.0\n"
    xid_63 = "[  100.000000] NVRM: Xid (PCI:0000:18:00): 63, pid=1, name=python, Row Remapper\n"
    cut = xid_63.index("): 6") + len("): 6")
    log.write_text(head + xid_63[:cut])
    resume = XidCheck().run(context(tmp_path, log)).resume
    assert resume.offset == len(head)
    assert resume_scan(resume, NOW)[1] == len(head)  # still mid-line: nothing new to judge
    with log.open("a") as handle:
        handle.write(xid_63[cut:])
    scan, offset = resume_scan(resume, NOW)
    output = judge_scan(scan, str(log), load_policy(None), resume.family, NOW)
    expected = XidCheck().run(context(tmp_path, log))
    assert output.facts == expected.facts and offset == log.stat().st_size
    assert output.facts[0].xid_events == {("00000000:18:00.0", "63", "warn"): 1}
