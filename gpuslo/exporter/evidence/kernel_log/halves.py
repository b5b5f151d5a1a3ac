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

Serial when halving cannot help or is unsafe (`can_halve`): a file under `HALVES_MIN_BYTES`, one
CPU to run on, no `os.fork`, or another thread running in this process (a forked child of a
threaded process may deadlock on a lock held by a thread it does not have). When the child fails
(killed, out of memory) the parent scans the second half itself: the result is the same, slower.
"""

from __future__ import annotations

import atexit
import contextlib
import os
import pickle
import signal
import stat
import sys
from collections.abc import Callable

from gpuslo.exporter.evidence.kernel_log.anchors import CONTEXT_LINES
from gpuslo.exporter.evidence.kernel_log.scan import KernelLogScan

HALVES_MIN_BYTES = 32 * 1024 * 1024  # below this the fork (~1-3 ms) and the join cost more
# `prestart`: the bytes of scan the parent's start-up after the fork is worth (its imports, the
# detectors on the head, the policy), less the child's set-up: the child, started that much
# earlier, takes that much more of the file (never less than half, at most 7/8). CPU of each
# process on 210 MB (bench/kernel_log_scan.py, 2026-12-06, load 11): with no head start the
# parent 0.34 s, the child 0.07 + 0.15 s; 96 MB: 0.29 s against 0.07 + 0.22 s; 140 MB: 0.26 s
# against 0.07 + 0.25 s. 2026-12-07 (load 12-13), the fork ~0.02 s sooner (no recogniser or
# dataclass imported before it): 96 MB: the parent 0.285-0.291 s against 0.053-0.056 +
# 0.202-0.206 s; 120 MB: 0.276-0.295 s against 0.054-0.066 + 0.221-0.232 s. Round 13, the
# parent's start-up ~0.025 s shorter (no PyYAML, subprocess or xml.etree), medians of 9 at load
# 15: 105 MB: the parent 0.276 s against 0.299 s (forked + child); 95 MB: 0.281 against 0.288;
# 85 MB: 0.293 against 0.283.
START_HANDICAP_BYTES = 90_000_000
# ... plus this share of the file: the parent also joins the child's lines and judges every
# event, work that grows with the file (1074 MB, a fixed 120 MB: the parent 0.87 s against
# 0.05 + 0.73 s, 2026-12-07, load 5.5).
START_HANDICAP_SHARE = 0.07
_SPLIT_READ = 64 * 1024

# (handle positioned at the part's start, scan) -> None: feeds the scan the part's whole lines
# (`read._scan_chunks` with its `complete_lines`).
ScanPart = Callable[[object, KernelLogScan], None]
# () -> (a new scan, its ScanPart, the key of its options): what a child scans with.
Setup = Callable[[], tuple[KernelLogScan, ScanPart, tuple]]


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
    """True when a regular file of `size` bytes may be scanned in halves in this process: large
    enough, `os.fork` there, this process on one thread and allowed on two CPUs or more."""
    if size < HALVES_MIN_BYTES or not hasattr(os, "fork") or _cpus() < 2:
        return False
    threading = sys.modules.get("threading")
    return threading is None or threading.active_count() == 1


def _cpus() -> int:
    """The CPUs this process may run on (its affinity where the platform says, else all)."""
    if hasattr(os, "sched_getaffinity"):
        return len(os.sched_getaffinity(0))
    return os.cpu_count() or 1


def split_point(path: str, size: int, at: int | None = None) -> int | None:
    """The offset just past the first newline at or after `at` (default `size // 2`), None when
    there is none before the end (one line holds the rest)."""
    with open(path, "rb", buffering=0) as handle:
        position = size // 2 if at is None else at
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


class Child:
    """A forked child scanning from `middle` to the end; its result comes through `fd`. `key`
    names the scan options the result must have been made with (`read.file_scanner`);
    `identity`: (device, inode, size, mtime) of the file when the child started. A plain class,
    not a dataclass: `dataclasses` (and the `inspect` module it imports, ~8 ms) would load
    before `gpuslo inspect` forks, on both processes' paths."""

    __slots__ = ("fd", "identity", "key", "middle", "pid")

    def __init__(self, pid: int, fd: int, middle: int, key: tuple = (), identity: tuple = ()):
        self.pid, self.fd, self.middle, self.key, self.identity = pid, fd, middle, key, identity

    def __repr__(self) -> str:
        return f"Child(pid={self.pid}, fd={self.fd}, middle={self.middle})"


def fork_child(path: str, middle: int, setup: Setup, key: tuple = ()) -> Child:
    """Fork a child that scans `path` from `middle` with the scan `setup()` gives (run in the
    child) and sends the result back."""
    read_fd, write_fd = os.pipe()
    pid = os.fork()
    if pid == 0:  # pragma: no cover - the child exits before coverage writes
        os.close(read_fd)
        _child(path, middle, setup, write_fd)
    os.close(write_fd)
    return Child(pid, read_fd, middle, key)


def _child(path: str, start: int, setup: Setup, out: int) -> None:
    """In the forked child: scan from `start` to the end, write the result to `out`, exit."""
    code = 1
    try:
        scan, scan_part, key = setup()
        scan.builder = _Recorder()
        with open(path, "rb", buffering=0) as handle:
            handle.seek(start)
            scan_part(handle, scan)
        context = first_lines(path, start, min(CONTEXT_LINES, scan.records))
        payload = (key, scan.builder.lines, scan.records, scan.matched, scan.fed,
                   scan.extra_lines, scan.unterminated, context)
        with os.fdopen(out, "wb") as pipe:
            pickle.dump(payload, pipe, protocol=pickle.HIGHEST_PROTOCOL)
        code = 0
    finally:
        os._exit(code)  # no atexit, no flush of the parent's buffers


def _received(child: Child) -> tuple | None:
    """The child's result, None when it failed or scanned with other options than `key`."""
    with os.fdopen(child.fd, "rb") as pipe:
        data = pipe.read()
    _, status = os.waitpid(child.pid, 0)
    if not os.WIFEXITED(status) or os.WEXITSTATUS(status) != 0:
        return None
    try:
        payload = pickle.loads(data)  # noqa: S301 - our own child's bytes, through our own pipe
    except (pickle.UnpicklingError, EOFError, ValueError):
        return None
    return payload[1:] if payload[0] == child.key else None


def join(scan: KernelLogScan, payload: tuple) -> None:
    """Feed `scan` (the first half scanned) the second half's lines as one scan would."""
    lines, records, matched, fed, extra_lines, unterminated, context = payload
    offset = scan.records
    scan.feed_lookback()  # splat headers at the first half's end a frame after it may look back to
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


def scan_halves(handle, scan: KernelLogScan, child: Child, scan_part: ScanPart) -> KernelLogScan:
    """Scan the file open as `handle` (at its start) up to `child.middle` into `scan` here while
    `child` scans the rest; returns `scan` holding both (the rest scanned here when the child
    failed)."""
    try:
        scan_part(_Bounded(handle, child.middle), scan)
    finally:
        payload = _received(child)
    if payload is None:  # the child failed: the second half here, the same result
        handle.seek(child.middle)
        scan_part(handle, scan)
    else:
        join(scan, payload)
    return scan


_early: dict[str, Child] = {}  # path -> the child `prestart` forked for it, not yet claimed


def prestart(path: str, setup: Setup) -> bool:
    """Fork the child that scans the second part of `path` now, before the caller's own
    start-up (`gpuslo inspect`: its detectors, policy and the detection of the file's head),
    so that the child's scan overlaps it; `read.scan_kernel_log_file(halves=True)` claims it.
    The child takes the larger part (`START_HANDICAP_BYTES` and `START_HANDICAP_SHARE` of
    the file more, at most 7/8); `setup` runs in it.
    Nothing is forked (False) for a file that would not be halved; a child nobody claims is
    killed at exit or by `discard`. Whether the file is a kernel log is not known yet: the
    child's result is used only if the caller then scans it with the same options (the key) and
    the file has not changed (device, inode, size, mtime)."""
    try:
        status = os.stat(path)
    except OSError:
        return False
    if not stat.S_ISREG(status.st_mode) or not can_halve(status.st_size) or path in _early:
        return False
    size = status.st_size
    handicap = START_HANDICAP_BYTES + int(START_HANDICAP_SHARE * size)
    middle = split_point(path, size, max(size // 8, (size - handicap) // 2))
    if middle is None:
        return False
    setup()  # once before the fork: its Vectorscan database, compiled once, serves both processes
    child = fork_child(path, middle, setup)
    child.identity = _identity(status)
    if not _early:
        atexit.register(discard)
    _early[path] = child
    return True


def _identity(status: os.stat_result) -> tuple:
    return (status.st_dev, status.st_ino, status.st_size, status.st_mtime_ns)


def claim(path: str, status: os.stat_result, key: tuple) -> Child | None:
    """The child `prestart` forked for `path` (now `status`), expected to have scanned with the
    options `key`; None when there is none or the file changed since (that child is stopped)."""
    child = _early.pop(path, None)
    if child is None:
        return None
    if child.identity != _identity(status):
        _stop(child)
        return None
    child.key = key
    return child


def discard(path: str | None = None) -> None:
    """Stop the unclaimed child started for `path` (every one when None)."""
    for name in list(_early) if path is None else [path]:
        child = _early.pop(name, None)
        if child is not None:
            _stop(child)


def _stop(child: Child) -> None:
    with contextlib.suppress(ProcessLookupError):  # already gone
        os.kill(child.pid, signal.SIGKILL)
    os.waitpid(child.pid, 0)
    os.close(child.fd)
