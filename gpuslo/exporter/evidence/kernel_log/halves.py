"""A large kernel-log file scanned in two halves at once, joined into the one scan a front-to-back
read gives: the same lines fed to the recognisers in the same order with the same numbers, the
same `records`, `matched`, `extra_lines` and `unterminated` (I/O edge; used by
`read.scan_kernel_log_file(halves=True)`, which `gpuslo inspect` of a large log asks for).

The second half (from the first line that starts at or after the middle byte) is scanned by a
forked child process, the first by this process; the child sends back the lines it would feed the
recognisers (`_Recorder`), its counts and its first `CONTEXT_LINES` lines (an Xid line at the end
of the first half brings them), and this process feeds them after its own, renumbered. A process,
not a thread: the scan's newline count (`bytes.count`) holds the GIL, and python-hyperscan calls
back into Python on every match, so two threads wait on each other (a thread beside Vectorscan's
pass gained nothing, bench/kernel_log_scan.py 2026-12-06).

Serial (None from `scan_halves`) when halving cannot help or is unsafe: a file under
`HALVES_MIN_BYTES`, no `os.fork`, or another thread running in this process (a forked child of a
threaded process may deadlock on a lock held by a thread it does not have). When the child fails
(killed, out of memory) the parent scans the second half itself: the result is the same, slower.
"""

from __future__ import annotations

import os
import pickle
import sys
from collections.abc import Callable

from gpuslo.exporter.evidence.kernel_log.anchors import CONTEXT_LINES
from gpuslo.exporter.evidence.kernel_log.scan import KernelLogScan

HALVES_MIN_BYTES = 32 * 1024 * 1024  # below this the fork (~1-3 ms) and the join cost more
_SPLIT_READ = 64 * 1024

# (handle positioned at the part's start, scan) -> None: feeds the scan the part's whole lines
# (`read._scan_chunks` with its `complete_lines`).
ScanPart = Callable[[object, KernelLogScan], None]


class _Recorder:
    """Stands in for the recognisers (`EventBuilder`) in the child: keeps the lines fed."""

    def __init__(self) -> None:
        self.lines: list[tuple[int, str]] = []

    def feed(self, number: int, line: str) -> None:
        self.lines.append((number, line))


class _Bounded:
    """A raw file handle that reads no further than byte `end` (the first half)."""

    def __init__(self, handle, end: int) -> None:
        self.handle, self.end = handle, end

    def readinto(self, view) -> int:
        left = self.end - self.handle.tell()
        if left <= 0:
            return 0
        with memoryview(view) as whole, whole[: min(len(whole), left)] as part:
            return self.handle.readinto(part)


def can_halve(size: int) -> bool:
    """True when a regular file of `size` bytes may be scanned in halves in this process."""
    if size < HALVES_MIN_BYTES or not hasattr(os, "fork"):
        return False
    threading = sys.modules.get("threading")
    return threading is None or threading.active_count() == 1


def split_point(path: str, size: int) -> int | None:
    """The offset just past the first newline at or after `size // 2`, None when there is none
    before the end (one line holds the second half)."""
    with open(path, "rb", buffering=0) as handle:
        position = size // 2
        handle.seek(position)
        while data := handle.read(_SPLIT_READ):
            newline = data.find(b"\n")
            if newline != -1:
                end = position + newline + 1
                return end if end < size else None
            position += len(data)
    return None


def first_lines(path: str, start: int, count: int) -> list[str]:
    """The first `count` lines from byte `start`, as the scan feeds them (decoded, `\\r` cut)."""
    data = b""
    with open(path, "rb", buffering=0) as handle:
        handle.seek(start)
        while data.count(b"\n") < count and (more := handle.read(_SPLIT_READ)):
            data += more
    lines = data.split(b"\n")[:count]
    return [line.decode("utf-8", errors="replace").rstrip("\r") for line in lines]


def _child(path: str, start: int, scan: KernelLogScan, scan_part: ScanPart, out: int) -> None:
    """In the forked child: scan from `start` to the end, write the result to `out`, exit."""
    code = 1
    try:
        scan.builder = _Recorder()
        with open(path, "rb", buffering=0) as handle:
            handle.seek(start)
            scan_part(handle, scan)
        context = first_lines(path, start, min(CONTEXT_LINES, scan.records))
        payload = (scan.builder.lines, scan.records, scan.matched, scan.fed, scan.extra_lines,
                   scan.unterminated, context)
        with os.fdopen(out, "wb") as pipe:
            pickle.dump(payload, pipe, protocol=pickle.HIGHEST_PROTOCOL)
        code = 0
    finally:
        os._exit(code)  # no atexit, no flush of the parent's buffers


def _received(pid: int, fd: int) -> tuple | None:
    """The child's payload, None when it failed."""
    with os.fdopen(fd, "rb") as pipe:
        data = pipe.read()
    _, status = os.waitpid(pid, 0)
    if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
        return None
    try:
        return pickle.loads(data)  # noqa: S301 - our own child's bytes, through our own pipe
    except (pickle.UnpicklingError, EOFError, ValueError):
        return None


def join(scan: KernelLogScan, payload: tuple) -> None:
    """Feed `scan` (the first half scanned) the second half's lines as one scan would."""
    lines, records, matched, fed, extra_lines, unterminated, context = payload
    offset = scan.records
    wanted = {number: line for number, line in lines}
    for number, line in enumerate(context[: scan._carried], 1):  # noqa: SLF001 - same package
        wanted.setdefault(number, line)  # the lines an Xid at the end of the first half brings
    for number in sorted(wanted):
        scan.builder.feed(offset + number, wanted[number])
    scan.records += records
    scan.matched += matched
    scan.fed += fed
    scan.extra_lines += [(offset + number, line) for number, line in extra_lines]
    scan.unterminated = unterminated
    scan._next_line = offset + records + 1  # noqa: SLF001
    scan._carried = 0  # noqa: SLF001 - the end of the input


def scan_halves(path: str, handle, middle: int, scan: KernelLogScan,
                make_scan: Callable[[], KernelLogScan], scan_part: ScanPart) -> KernelLogScan:
    """Scan `path`: with `handle` (at its start) up to `middle` into `scan` in this process, from
    `middle` into a fresh `make_scan()` in a forked child; returns `scan` holding both."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child exits before coverage writes
        os.close(read_fd)
        _child(path, middle, make_scan(), scan_part, write_fd)
    os.close(write_fd)
    try:
        scan_part(_Bounded(handle, middle), scan)
    finally:
        payload = _received(pid, read_fd)
    if payload is None:  # the child failed: the second half here, the same result
        handle.seek(middle)
        scan_part(handle, scan)
    else:
        join(scan, payload)
    return scan
