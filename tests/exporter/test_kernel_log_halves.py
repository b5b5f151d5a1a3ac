"""A large kernel log scanned in two halves at once (`halves.scan_halves`, issue 30) is the scan
front to back: the same events, line numbers, counts, fallback lines and cut-off last line, at
every split point (an Xid's continuation lines in the second half included), and when the child
fails. Small files stay serial. The GPU lines are real: an Xid 31 whose message continues over
three physical lines (shared/corpus/kernel_log_lines.txt, NVSentinel's design 014), an Xid 79.
"""

from __future__ import annotations

import os
from functools import partial

import pytest

from gpuslo.exporter.evidence.kernel_log import halves, read
from gpuslo.exporter.policy.unrecognised import ERROR_LITERALS, ERROR_WORDS

_received = halves._received

LOG = (
    "[  365.969000] usb 1-1: new high-speed USB device number 2 using xhci_hcd\n"
    "NVRM: Xid (PCI:0000:b5:00): 31, pid=2079991, name=pt_main_thread, Ch 00000007, intr "
    "00000000. \n"
    "MMU Fault: ENGINE GRAPHICS GPCCLIENT_T1_6 faulted @ 0x7f5a_e7504000. \n"
    "Fault is of type FAULT_PDE ACCESS_TYPE_VIRT_READ\n"
    "[  366.000000] nvme nvme0: I/O 12 QID 3 timeout, aborting\n"
    "[  366.100000] mlx5_core 0000:0c:00.0: mlx5_port_module_event:1131:(pid 0): Port module "
    "event: module 0, Cable unplugged\n"
    "[  366.200000] mlx5_core 0000:0c:00.0 ibp12s0: Link DOWN\n"
    "[  366.300000] NVRM: Xid (PCI:0000:02:00): 79, pid='<unknown>', name=<unknown>, GPU has "
    "fallen off the bus.\n"
    "[  366.400000] systemd[1]: Started Daily apt download activities.\n"
)


def state(scan) -> tuple:
    return (scan.finish(), scan.records, scan.matched, scan.fed, scan.extra_lines,
            scan.unterminated)


def scanned(path, middle=None, monkeypatch=None, **kwargs) -> tuple:
    """The scan's state, serial (middle None) or split at `middle`."""
    options = dict(extra=ERROR_WORDS, extra_literals=ERROR_LITERALS, **kwargs)
    if middle is None:
        return state(read.scan_kernel_log_file(str(path), **options))
    monkeypatch.setattr(read, "can_halve", lambda size: True)
    monkeypatch.setattr(read, "split_point", lambda path, size: middle)
    return state(read.scan_kernel_log_file(str(path), halves=True, **options))


@pytest.mark.parametrize("complete_lines", [True, False])
@pytest.mark.parametrize("tail", ["", "[  366.5] NVRM: Xid (PCI:0000:03:00): 6"])
def test_every_split_point_gives_the_serial_scan(tmp_path, monkeypatch, complete_lines, tail):
    path = tmp_path / "kern.log"
    path.write_text(LOG * 3 + tail)
    data = path.read_bytes()
    serial = scanned(path, complete_lines=complete_lines, chunk_bytes=97)
    assert serial[0] and serial[4], "the log must hold events and fallback lines"
    cuts = [i + 1 for i, byte in enumerate(data) if byte == ord("\n") and i + 1 < len(data)]
    for middle in cuts:
        with monkeypatch.context() as patch:
            split = scanned(path, middle, patch, complete_lines=complete_lines, chunk_bytes=97)
        assert split == serial, f"split at byte {middle}"


def test_the_xid_continuations_across_the_split_are_read(tmp_path, monkeypatch):
    """Split just after the Xid line: its two continuation lines are the child's first lines."""
    path = tmp_path / "kern.log"
    path.write_text(LOG)
    middle = LOG.index("MMU Fault")
    split = scanned(path, middle, monkeypatch)
    xid = next(event for event in split[0] if event.code == 31)
    assert xid.lines == 3 and split == scanned(path)


def test_a_failed_child_leaves_the_parent_to_scan_the_rest(tmp_path, monkeypatch):
    path = tmp_path / "kern.log"
    path.write_text(LOG * 5)
    monkeypatch.setattr(halves, "_child", lambda *args: os._exit(3))
    assert scanned(path, len(LOG) * 2, monkeypatch) == scanned(path)


def test_small_files_threaded_processes_and_one_cpu_stay_serial(monkeypatch):
    assert not halves.can_halve(halves.HALVES_MIN_BYTES - 1)
    monkeypatch.setattr(halves, "_cpus", lambda: 2)
    assert halves.can_halve(halves.HALVES_MIN_BYTES) == (
        __import__("threading").active_count() == 1
    )
    monkeypatch.setattr(halves, "_cpus", lambda: 1)
    assert not halves.can_halve(halves.HALVES_MIN_BYTES)


def test_the_split_is_after_a_newline_or_nowhere(tmp_path):
    path = tmp_path / "kern.log"
    path.write_bytes(b"a" * 10 + b"\n" + b"b" * 10 + b"\n" + b"c" * 3)
    assert halves.split_point(str(path), 24) == 22
    path.write_bytes(b"a" * 10 + b"\n" + b"b" * 13)
    assert halves.split_point(str(path), 24) is None  # one line holds the second half


def file_scan_options() -> dict:
    return {"complete_lines": True, "extra": ERROR_WORDS, "extra_literals": ERROR_LITERALS}


def test_an_early_child_is_claimed_by_the_scan_with_its_options(tmp_path, monkeypatch):
    path = tmp_path / "kern.log"
    path.write_text(LOG * 40)
    serial = state(read.scan_kernel_log_file(str(path), **file_scan_options()))
    monkeypatch.setattr(halves, "can_halve", lambda size: True)
    received = []
    monkeypatch.setattr(halves, "_received", lambda child: received.append(child.middle)
                        or _received(child))
    assert halves.prestart(str(path), partial(read.file_scanner, **file_scan_options()))
    split = read.scan_kernel_log_file(str(path), halves=True, **file_scan_options())
    assert state(split) == serial and received and not halves._early
    # the child took the larger part: it started before the parent's imports
    assert 0 < received[0] < path.stat().st_size // 2


def test_an_early_child_with_other_options_or_a_changed_file_is_not_used(tmp_path, monkeypatch):
    path = tmp_path / "kern.log"
    path.write_text(LOG * 40)
    monkeypatch.setattr(halves, "can_halve", lambda size: True)
    monkeypatch.setattr(read, "can_halve", lambda size: False)  # no second child: serial
    options = file_scan_options()
    assert halves.prestart(str(path), partial(read.file_scanner))  # no fallback pattern
    other = read.scan_kernel_log_file(str(path), halves=True, **options)
    assert state(other) == state(read.scan_kernel_log_file(str(path), **options))
    assert halves.prestart(str(path), partial(read.file_scanner, **options))
    with path.open("a") as handle:  # the file grows after the child started
        handle.write(LOG)
    grown = read.scan_kernel_log_file(str(path), halves=True, **options)
    assert state(grown) == state(read.scan_kernel_log_file(str(path), **options))
    assert not halves._early


def test_an_unclaimed_early_child_is_stopped(tmp_path, monkeypatch):
    path = tmp_path / "kern.log"
    path.write_text(LOG * 40)
    monkeypatch.setattr(halves, "can_halve", lambda size: True)
    assert halves.prestart(str(path), partial(read.file_scanner))
    child = halves._early[str(path)]
    halves.discard(str(path))
    assert not halves._early
    with pytest.raises(ChildProcessError):  # reaped
        os.waitpid(child.pid, 0)
    assert not halves.prestart(str(tmp_path / "missing"), partial(read.file_scanner))
