"""Issue 12, kernel log: only complete records are counted, and the counter carry survives a
policy or GPU-family change without counting an event twice."""

from __future__ import annotations

import os
from pathlib import Path

from gpuslo.exporter.checks.base import CheckContext
from gpuslo.exporter.checks.xid import XidCheck
from gpuslo.exporter.evidence.kernel_log.kmsg import read_kmsg
from gpuslo.exporter.state import CounterCarry

XID_63 = ("[  100.000000] NVRM: Xid (PCI:0000:18:00): 63, pid=2187734, name=python, Row Remapper: "
          "New row (0x0000000e9b9107e0) marked for remapping, reset gpu to activate.\n")
HEAD = "[    1.000000] Linux version 6.8.0 (buildd@lcy02) #1 SMP\n"
CUT = XID_63.index("): 6") + len("): 6")  # "... NVRM: Xid (PCI:0000:18:00): 6" (the 6 of 63)


def _context(tmp: Path, log: Path, **extra) -> CheckContext:
    return CheckContext(kernel_log=log, kmsg_path=tmp / "no-kmsg", state_dir=tmp / "state",
                        procfs=tmp / "proc", clock=lambda: 1000.0, **extra)


def _xids(output) -> dict:
    return output.facts["xid_events"]


def test_trailing_partial_line_of_a_followed_file_waits_for_its_newline(tmp_path: Path) -> None:
    log = tmp_path / "kern.log"
    log.write_text(HEAD + XID_63 + XID_63[:CUT])
    first = _xids(XidCheck().run(_context(tmp_path, log)))
    assert first == {("00000000:18:00.0", "63", "warn"): 1}  # not a fatal Xid 6
    with log.open("a") as handle:
        handle.write(XID_63[CUT:])
    assert _xids(XidCheck().run(_context(tmp_path, log))) == {
        ("00000000:18:00.0", "63", "warn"): 2
    }


def test_an_old_cut_off_gpu_record_is_unknown_not_ignored(tmp_path: Path) -> None:
    """A file that stopped mid-Xid long ago is a cut-off record (parse_error), never healthy."""
    log = tmp_path / "kern.log"
    log.write_text(HEAD + XID_63[:CUT])
    os.utime(log, (0, 0))  # written long before the check's clock
    try:
        XidCheck().run(_context(tmp_path, log))
    except Exception as error:  # noqa: BLE001 - the type is asserted below
        assert type(error).__name__ == "ParseError" and "cut-off" in str(error)
    else:
        raise AssertionError("a cut-off Xid record was taken as a healthy log")


def test_kmsg_file_trailing_partial_record_waits(tmp_path: Path) -> None:
    kmsg = tmp_path / "kmsg"
    record = "3,7,100000000,-;" + XID_63.split("] ", 1)[1]
    kmsg.write_text("6,6,1000,-;hello\n" + record[: record.index("): 6") + 4])
    first = read_kmsg(kmsg, -1)
    assert [r.sequence for r in first.records] == [6]
    with kmsg.open("a") as handle:
        handle.write(record[record.index("): 6") + 4 :])
    second = read_kmsg(kmsg, first.last_sequence)
    assert [r.sequence for r in second.records] == [7] and "): 63," in second.records[0].message


def test_counter_carry_reclassifies_without_double_counting(tmp_path: Path) -> None:
    """7 Xid 63 counted as warn; a restart with a policy that makes 63 fatal reads the same 7
    events from the file: the sum stays 7 (was 14), and new events count under the new class."""
    carry = CounterCarry(tmp_path)
    carry.apply("xid", {("00000000:18:00.0", "63", "warn"): 7})
    carry.save()
    restarted = CounterCarry(tmp_path)
    totals = restarted.apply("xid", {("00000000:18:00.0", "63", "fatal"): 7})
    assert sum(totals.values()) == 7 and totals[("00000000:18:00.0", "63", "warn")] == 7
    totals = restarted.apply("xid", {("00000000:18:00.0", "63", "fatal"): 9})
    assert totals == {("00000000:18:00.0", "63", "warn"): 7, ("00000000:18:00.0", "63", "fatal"): 2}


def test_counter_carry_counts_a_source_restart_once(tmp_path: Path) -> None:
    carry = CounterCarry(tmp_path)
    carry.apply("xid", {("p", "63", "warn"): 5})
    totals = carry.apply("xid", {("p", "63", "warn"): 2})  # a new boot: the source started over
    assert totals == {("p", "63", "warn"): 7}
    totals = carry.apply("xid", {("p", "63", "warn"): 1, ("p", "63", "fatal"): 3})
    assert sum(totals.values()) == 9  # 2 more events on top of the 2 the source already had
