"""inotify(7) on one file, through libc with ctypes: a follower blocks in poll(2) until the file
changes instead of checking its size every fraction of a second (issue 30: a fatal Xid written
to a followed kernel log reaches /metrics in tens of milliseconds).

`open_inotify(path) -> FileNotify | None`: None where inotify is not there (not Linux, no libc
symbol, the watch limit reached: `inotify_add_watch` ENOSPC) or the path cannot be watched; the
caller then polls. Events are drained and not interpreted: any change wakes the caller, which
looks at the file itself (size, inode), so a missed or coalesced event costs nothing. Source:
linux/inotify.h for the flag values (stable kernel ABI since 2.6.27).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import select
from pathlib import Path

IN_MODIFY = 0x002
IN_ATTRIB = 0x004
IN_CLOSE_WRITE = 0x008
IN_MOVE_SELF = 0x800
IN_DELETE_SELF = 0x400
IN_NONBLOCK = os.O_NONBLOCK
IN_CLOEXEC = os.O_CLOEXEC
MASK = IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVE_SELF | IN_DELETE_SELF
READ_BYTES = 4096


def _libc():
    """libc with inotify_init1 and inotify_add_watch, or None."""
    name = ctypes.util.find_library("c")
    try:
        libc = ctypes.CDLL(name or "libc.so.6", use_errno=True)
        libc.inotify_init1.argtypes = [ctypes.c_int]
        libc.inotify_add_watch.argtypes = [ctypes.c_int, ctypes.c_char_p, ctypes.c_uint32]
    except (OSError, AttributeError):
        return None
    return libc


class FileNotify:
    """An inotify descriptor watching one file; `wait(timeout_s)` blocks until it changes."""

    def __init__(self, fd: int) -> None:
        self.fd = fd
        self.poller = select.poll()
        self.poller.register(fd, select.POLLIN)

    def wait(self, timeout_s: float) -> bool:
        """Block until the file changes or `timeout_s` passes; True when it changed (every
        pending event is drained)."""
        if not self.poller.poll(max(0, int(timeout_s * 1000))):
            return False
        while True:
            try:
                if not os.read(self.fd, READ_BYTES):
                    return True
            except BlockingIOError:
                return True

    def close(self) -> None:
        os.close(self.fd)


def open_inotify(path: Path) -> FileNotify | None:
    """A `FileNotify` on `path`, or None when inotify cannot watch it (see the module)."""
    libc = _libc()
    if libc is None:
        return None
    fd = libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
    if fd < 0:
        return None
    if libc.inotify_add_watch(fd, os.fsencode(path), MASK) < 0:
        os.close(fd)
        return None
    return FileNotify(fd)
