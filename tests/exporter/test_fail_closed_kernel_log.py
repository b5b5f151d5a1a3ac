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
    return output.facts[0].xid_events


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


# --- kill -9 with partial lines and a policy change ----------------------------------------------
def _start_exporter(tmp: Path, log: Path, policy: Path, port: int):
    import subprocess
    import sys

    return subprocess.Popen(
        [sys.executable, "-m", "gpuslo", "exporter", "--listen", f"127.0.0.1:{port}",
         "--kernel-log", str(log), "--policy", str(policy), "--interval", "0.3",
         "--state-dir", str(tmp / "state"), "--path.sysfs", str(tmp / "nosys"),
         "--path.procfs", str(tmp / "proc")],
        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)


def _xid_total(text: str) -> float:
    from exporter.test_collector_node import samples

    return sum(v for (name, _), v in samples(text).items() if name == "gpuslo_xid_events_total")


def _free_port() -> int:
    import socket

    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def test_kill_9_with_partial_lines_and_a_policy_change_counts_each_written_event_once(
    tmp_path: Path,
) -> None:
    import signal
    import subprocess
    import sys
    import time

    import requests

    log = tmp_path / "kern.log"
    log.write_text(HEAD)
    policies = [tmp_path / "warn.yaml", tmp_path / "fatal.yaml"]
    policies[0].write_text("xid:\n  default:\n    63: {class: warn, action: reset_gpu}\n")
    policies[1].write_text("xid:\n  default:\n    63: {class: fatal, action: drain_and_reset}\n"
                           "    13: {class: warn, action: restart_app}\n")
    xid_13 = XID_63.replace("): 63, pid", "): 13, pid")
    written, pending = 0, ""
    for round_ in range(4):
        port = _free_port()
        child = _start_exporter(tmp_path, log, policies[round_ % 2], port)
        try:
            deadline = time.monotonic() + 60
            with log.open("a") as handle:
                handle.write(pending)  # the other half of the line cut at the last kill
                handle.flush()
                for n in range(5):
                    line = XID_63 if n % 2 else xid_13
                    handle.write(line[:CUT])
                    handle.flush()
                    time.sleep(0.05)
                    handle.write(line[CUT:])
                    handle.flush()
                    written += 1
                pending = XID_63[CUT:]
                handle.write(XID_63[:CUT])  # killed with this line half written
                written += 1
            while True:
                assert time.monotonic() < deadline, "the exporter never counted the events"
                try:
                    text = requests.get(f"http://127.0.0.1:{port}/metrics", timeout=2).text
                    if _xid_total(text) >= written - 1:
                        break
                except requests.RequestException:
                    pass
                time.sleep(0.1)
            assert _xid_total(text) == written - 1  # the half line is not counted
        finally:
            child.send_signal(signal.SIGKILL)
            child.wait(10)
    with log.open("a") as handle:
        handle.write(pending)
    done = subprocess.run(
        [sys.executable, "-m", "gpuslo", "exporter", "--once", "--kernel-log", str(log),
         "--policy", str(policies[0]), "--state-dir", str(tmp_path / "state"),
         "--path.sysfs", str(tmp_path / "nosys"), "--path.procfs", str(tmp_path / "proc")],
        capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    assert _xid_total(done.stdout) == written == 24


def test_the_kmsg_cursor_is_locked_while_another_process_advances_it(tmp_path: Path) -> None:
    """`gpuslo check` as root and the exporter share the cursor: one waits for the other."""
    import fcntl
    import threading
    import time

    from gpuslo.errors import DeadlineExceeded
    from gpuslo.exporter.checks.xid_cursor import STATE_FILE

    kmsg = tmp_path / "kmsg"
    kmsg.write_text("6,1,1000,-;hello\n3,2,100000000,-;" + XID_63.split("] ", 1)[1])
    (tmp_path / "state").mkdir()
    context = CheckContext(kmsg_path=kmsg, state_dir=tmp_path / "state", procfs=tmp_path / "proc",
                           timeout_s=1.0, clock=lambda: 1000.0)
    with open(tmp_path / "state" / f"{STATE_FILE}.lock", "w") as held:
        fcntl.flock(held, fcntl.LOCK_EX)  # the other process, mid-read
        started = time.monotonic()
        try:
            XidCheck().run(context)
        except DeadlineExceeded as error:
            assert "lock" in str(error) and "0.5 s" in str(error)
        else:
            raise AssertionError("read the cursor while another process held it")
        assert time.monotonic() - started < 2
        threading.Timer(0.2, lambda: fcntl.flock(held, fcntl.LOCK_UN)).start()
        output = XidCheck().run(context)  # waits for the release, then reads
    assert _xids(output) == {("00000000:18:00.0", "63", "warn"): 1}
    assert _xids(XidCheck().run(context)) == {("00000000:18:00.0", "63", "warn"): 1}  # no recount
