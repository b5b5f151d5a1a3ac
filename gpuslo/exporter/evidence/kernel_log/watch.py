"""Follow the kernel log between check runs, so a fatal Xid is judged in about a second instead of
at the next 30 s check.

The watcher is only an accelerator: it never judges anything itself. When a new kernel-log record
holds a GPU marker (`NVRM`, `Xid` (SXid too), `nvidia-nvswitch`, an NVIDIA module's frame) it calls
`on_marker()`: for a file the exporter judges the appended records in process from where the
xid run stopped
(`gpuslo.exporter.xid_fast`), otherwise (or when that declines) it makes the `xid` check due at
once; the `xid` check still reads, classifies and persists its cursor as on every run, and still
runs at its interval when the watcher sees nothing or cannot run (then the watcher logs why and
stops; nothing else changes). Sources:
- `/dev/kmsg`: opened non-blocking, positioned at the end, woken by poll(2); a ring-buffer
  overrun (EPIPE) also wakes the check, which reports the lost records.
- a kernel-log file (`--kernel-log`): woken by inotify (`inotify.open_inotify`) when the file
  changes, and in any case every `poll_s` (where inotify is not there, that polling is all);
  appended bytes are scanned; a file that shrinks (truncated) or is replaced (rotated: another
  inode at the path, watched anew) is followed from its start.
"""

from __future__ import annotations

import errno
import logging
import os
import re
import select
import threading
from collections.abc import Callable
from pathlib import Path

from gpuslo.exporter.evidence.kernel_log.inotify import FileNotify, open_inotify

log = logging.getLogger(__name__)
# ` [nvidia`: a stack frame in an NVIDIA module, as an oops in the driver prints (`splats`).
GPU_MARKER = re.compile(rb"NVRM|Xid|nvidia-nvswitch| \[nvidia|_nv\d{3,8}rm\+0x")
READ_BYTES = 65536


def has_gpu_marker(data: bytes) -> bool:
    """True when `data` (kernel-log records) mentions the NVIDIA driver or an NVSwitch."""
    return GPU_MARKER.search(data) is not None


class KernelLogWatcher:
    """A daemon thread following `path` (a /dev/kmsg-like device when `is_kmsg`, else a file).

    Args:
        path: what to follow.
        on_marker: called (from the watcher thread) when new records hold a GPU marker.
        is_kmsg: follow with poll(2) from the end instead of polling the file size.
        poll_s: how often a file's size is checked, and the poll(2) timeout (seconds).
    """

    def __init__(
        self, path: Path, on_marker: Callable[[], None], is_kmsg: bool, poll_s: float = 0.2
    ) -> None:
        self.path, self.on_marker, self.is_kmsg, self.poll_s = (
            Path(path),
            on_marker,
            is_kmsg,
            poll_s,
        )
        self.stop = threading.Event()
        self.notified = False  # following a file by inotify (else by polling)
        self.ready = threading.Event()  # set once a file's starting position is taken
        self.thread = threading.Thread(
            target=self._run, name="gpuslo-kernel-log-watch", daemon=True
        )

    def start(self) -> KernelLogWatcher:
        """Start following; returns self."""
        self.thread.start()
        return self

    def close(self) -> None:
        """Stop following (returns within about `poll_s`)."""
        self.stop.set()
        self.thread.join(timeout=5)

    def _run(self) -> None:
        try:
            self._follow_kmsg() if self.is_kmsg else self._follow_file()
        except OSError as error:
            log.warning(
                "not following %s (%s): Xids are judged at the xid check's interval",
                self.path,
                error,
            )

    def _follow_kmsg(self) -> None:
        fd = os.open(self.path, os.O_RDONLY | os.O_NONBLOCK)
        try:
            os.lseek(fd, 0, os.SEEK_END)
            poller = select.poll()
            poller.register(fd, select.POLLIN)
            while not self.stop.is_set():
                if poller.poll(int(self.poll_s * 1000)) and self._drain_kmsg(fd):
                    self.on_marker()
        finally:
            os.close(fd)

    @staticmethod
    def _drain_kmsg(fd: int) -> bool:
        """Read every pending record; True when one holds a GPU marker or records were lost."""
        found = False
        while True:
            try:
                record = os.read(fd, READ_BYTES)
            except BlockingIOError:
                return found
            except OSError as error:
                if error.errno == errno.EPIPE:  # overrun: the xid check counts what was lost
                    found = True
                    continue
                raise
            if not record:
                return found
            found = found or has_gpu_marker(record)

    def _follow_file(self) -> None:
        stat = self.path.stat()
        position, inode = stat.st_size, stat.st_ino
        notify = open_inotify(self.path)
        self.notified = notify is not None
        self.ready.set()
        try:
            while not self.stop.is_set():
                self.notified = notify is not None
                if notify is None:
                    self.stop.wait(self.poll_s)
                else:
                    notify.wait(self.poll_s)
                try:
                    stat = self.path.stat()
                except FileNotFoundError:  # rotated away, the new file not there yet: poll
                    notify, inode = _rewatch(notify, None), None
                    continue
                if stat.st_ino != inode:  # rotated: a new file at the path, read from its start
                    position, inode = 0, stat.st_ino
                    notify = _rewatch(notify, self.path)
                position = self._read_new(position, stat.st_size)
        finally:
            if notify is not None:
                notify.close()

    def _read_new(self, position: int, size: int) -> int:
        """Scan bytes [position, size) of the file (from 0 when it shrank); the new position."""
        if size < position:
            position = 0
        if size == position:
            return position
        with self.path.open("rb") as handle:
            handle.seek(position)
            data = handle.read(size - position)
        if has_gpu_marker(data):
            self.on_marker()
        return position + len(data)


def _rewatch(notify: FileNotify | None, path: Path | None) -> FileNotify | None:
    """Close `notify`; a new one on `path` (None: none, the caller polls)."""
    if notify is not None:
        notify.close()
    return None if path is None else open_inotify(path)


def watched_source(kernel_log: Path | None, kmsg_path: Path) -> tuple[Path, bool] | None:
    """What the xid check reads first, as (path, is_kmsg); None when neither is there (journalctl
    and dmesg are only polled)."""
    if kernel_log is not None:
        return (kernel_log, False) if kernel_log.is_file() else None
    return (kmsg_path, True) if kmsg_path.exists() else None
