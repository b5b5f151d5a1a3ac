"""Kernel log evidence: Xid, SXid, fallen-off-the-bus, driver-message, mlx5 port and kernel-splat
events, and `inspect`.

Pure: `parse_kernel_log(text, source) -> list[KernelEvent]` (formats and grouping rules in
`kernel_log_parse` and `kernel_log_events`), `looks_like_kernel_log(text)`,
`check_kernel_log_head(head, source)`; the findings `inspect` draws from them are
`gpuslo.exporter.inspect.kernel_log`.
I/O edge: `scan_kernel_log_file` (a file of any size, read in chunks; with `require_kernel_log`
its first `HEAD_BYTES` must look like a kernel log, so any file is judged in the same one pass).
A cheap prefilter (`scan.KernelLogScan`: the anchors of
`anchors.ANCHORS`, `NVRM`, `Xid`, `mlx5`, a splat's header and NVIDIA frame literals, and a
fallback's pattern, found over 1 MiB blocks in one
Vectorscan pass, or by `bytes.find` without it: `needles.Needles`) picks the candidate lines
before the full recognisers run.
"""

from __future__ import annotations

import os
import re
import stat
from collections.abc import Callable
from functools import partial
from typing import TYPE_CHECKING

from gpuslo.config_file import without_nul_padding
from gpuslo.errors import InputError, ParseError
from gpuslo.exporter.evidence.kernel_log.anchors import BARE_XID_HEAD, XID_HEAD
from gpuslo.exporter.evidence.kernel_log.halves import (
    Child,
    can_halve,
    claim,
    fork_child,
    scan_halves,
    split_point,
)
from gpuslo.exporter.evidence.kernel_log.scan import KernelLogScan

if TYPE_CHECKING:
    from gpuslo.exporter.evidence.kernel_log.parse import KernelEvent

__all__ = [
    "GPU_MARKER",
    "KernelEvent",
    "KernelLogScan",
    "check_kernel_log_head",
    "looks_like_kernel_log",
    "parse_kernel_log",
    "scan_kernel_log_file",
    "scan_kernel_log_text",
]


def __getattr__(name: str):
    """`KernelEvent`, re-exported when asked for: the events' module (its regular expressions and
    dataclasses) loads with the recognisers, not with the scan `gpuslo inspect` forks early."""
    if name == "KernelEvent":
        from gpuslo.exporter.evidence.kernel_log.parse import KernelEvent

        return KernelEvent
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")

# A line that may be (part of) a GPU event: a cut-off last line holding one is never read as
# healthy (the check waits for its newline; inspect says it was incomplete). ` [nvidia`: a stack
# frame in an NVIDIA module (a kernel splat's, `splats`).
GPU_MARKER = re.compile(r"NVRM|S?Xid|nvidia-nvswitch| \[nvidia|_nv\d{3,8}rm\+0x")
# Blocks large enough that a Python step per block is nothing, small enough to stay in the
# CPU's cache across the prefilter's passes (Vectorscan's and the newline count; without it one
# per anchor and literal): 1 MiB took ~20% less CPU than 4 MiB on the pure path, the same with
# Vectorscan (bench file, 2026-12-06).
CHUNK_BYTES = 1024 * 1024
HEAD_BYTES = 64 * 1024  # enough of a file's start to tell a kernel log from anything else


def scan_kernel_log_text(text: str, source: str = "<kernel log>") -> KernelLogScan:
    """`text` scanned as `scan_kernel_log_file` scans a file (`.records` counts its lines,
    `.finish()` gives the events). Raises ParseError when `text` is not text (NUL bytes in more
    than a tenth of it once NUL padding, a `copytruncate` gap, is removed; or padding alone),
    naming `source`."""
    if not isinstance(text, str):
        raise ParseError(source, "kernel log must be text, not bytes")
    read = without_nul_padding(text)  # a copytruncate gap is padding, not binary data
    if read.count("\0") * 10 > len(read) or (len(read) < len(text) and not read.strip()):
        raise ParseError(source, "binary data, not a kernel log")  # or NUL padding alone
    scan = KernelLogScan()
    scan.feed(read)
    return scan


def parse_kernel_log(text: str, source: str = "<kernel log>") -> list[KernelEvent]:
    """Every Xid, SXid, fallen-off-the-bus, driver-message, mlx5 port-state and driver-load
    event in `text`, in line order (multi-line events once). Raises ParseError when `text` is
    not text (NUL bytes in more than a tenth of it), naming `source`."""
    return scan_kernel_log_text(text, source).finish()


def scan_kernel_log_file(
    path: str,
    chunk_bytes: int = CHUNK_BYTES,
    *,
    require_kernel_log: bool = False,
    complete_lines: bool = False,
    extra: re.Pattern | None = None,
    extra_literals: tuple[str, ...] = (),
    halves: bool = False,
) -> KernelLogScan:
    """Scan the file at `path` in chunks of about `chunk_bytes` into one reused buffer (any
    size; bytes that are not UTF-8 are replaced). Returns the finished scan; `.finish()` gives
    the events. Raises InputError when the file cannot be read; with `require_kernel_log`,
    ParseError when its first `HEAD_BYTES` are not a kernel log (`check_kernel_log_head`). The
    file is read once, front to back (a FIFO works too).

    With `complete_lines` (a log that is still being written) a last line without its newline
    is not scanned: it is kept in `scan.unterminated` (bytes) and waits for the next read, so
    the first half of `Xid ...: 63` is never taken for an Xid 6.

    `extra`: a pattern whose lines the same pass keeps (`KernelLogScan.extra_lines`), found
    through `extra_literals` when given (see `KernelLogScan`).

    `halves`: a large regular file is scanned in two halves at once, the second by a forked
    child process (`halves.scan_halves`: the same scan, on two cores), where that is safe.
    """
    setup = partial(file_scanner, chunk_bytes, complete_lines, extra, tuple(extra_literals))
    scan, scan_part, key = setup()
    try:
        with open(path, "rb", buffering=0) as handle:
            head = _read_head(handle) if require_kernel_log else b""
            if require_kernel_log:
                check_kernel_log_head(head, path)
            child = _second_half(path, handle, setup, key) if halves else None
            if child is not None:
                handle.seek(0)
                return scan_halves(handle, scan, child, scan_part)
            buffer = bytearray(max(chunk_bytes, len(head)))
            buffer[: len(head)] = head
            _scan_chunks(handle, buffer, len(head), scan, complete_lines)
    except OSError as error:
        raise InputError(path, error.strerror or str(error)) from None
    return scan


def file_scanner(
    chunk_bytes: int = CHUNK_BYTES,
    complete_lines: bool = False,
    extra: re.Pattern | None = None,
    extra_literals: tuple[str, ...] = (),
) -> tuple[KernelLogScan, Callable[[object, KernelLogScan], None], tuple]:
    """(a new scan, `scan_part(handle, scan)` feeding it a raw handle's whole lines from where it
    stands, the key of these options) for `scan_kernel_log_file`'s options: what each half of a
    file scanned in halves runs, the key telling the parent the child's part was scanned alike."""

    def scan_part(handle, part: KernelLogScan) -> None:
        _scan_chunks(handle, bytearray(chunk_bytes), 0, part, complete_lines)

    pattern = None if extra is None else (extra.pattern, extra.flags)
    key = (chunk_bytes, complete_lines, pattern, tuple(extra_literals))
    return KernelLogScan(extra=extra, extra_literals=extra_literals), scan_part, key


def _second_half(path: str, handle, setup, key: tuple) -> Child | None:
    """The child scanning the second half of the file open as `handle`: the one `gpuslo
    inspect` started early for it (`halves.prestart`), else a new one; None when the file is
    scanned whole here (not a regular file, too small, unsafe: `halves.can_halve`)."""
    status = os.fstat(handle.fileno())
    if not stat.S_ISREG(status.st_mode):
        return None
    early = claim(path, status, key)
    if early is not None or not can_halve(status.st_size):
        return early
    middle = split_point(path, status.st_size)
    return None if middle is None else fork_child(path, middle, setup, key)


def _read_head(handle) -> bytes:
    """Up to `HEAD_BYTES` from the start of `handle` (short reads of pipes are continued)."""
    head = bytearray()
    while len(head) < HEAD_BYTES:
        data = handle.read(HEAD_BYTES - len(head))
        if not data:
            break
        head += data
    return bytes(head)


def _fill(handle, buffer: bytearray, filled: int) -> tuple[bytearray, int, int]:
    """Read into buffer[filled:] until it holds a whole line (or the input ends); returns
    (buffer, possibly grown for a line longer than it, bytes held, end of the last whole
    line: 0 when none)."""
    while True:
        if filled == len(buffer):  # one line longer than the buffer: grow it
            buffer = buffer + bytearray(len(buffer))
        with memoryview(buffer) as view:
            read = handle.readinto(view[filled:])
        filled += read or 0
        cut = buffer.rfind(b"\n", 0, filled) + 1
        if cut or not read:
            return buffer, filled, cut


def _scan_chunks(
    handle, buffer: bytearray, filled: int, scan: KernelLogScan, complete_lines: bool = False
) -> None:
    """Feed `scan` whole lines: buffer[:filled] first, then the rest of `handle`; the last line
    without a newline too unless `complete_lines` (then it is `scan.unterminated`). One buffer,
    reused: the partial last line of a block moves to its front for the next."""
    while True:
        buffer, filled, cut = _fill(handle, buffer, filled)
        if not cut:
            break
        scan.feed(buffer, cut)
        buffer[: filled - cut] = buffer[cut:filled]
        filled -= cut
    if complete_lines:  # buffer[:filled] holds no newline: a line still being written
        scan.unterminated = bytes(buffer[:filled])
    else:
        scan.feed(buffer, filled)


def check_kernel_log_head(head: bytes, source: str) -> None:
    """Raise ParseError naming `source` unless `head` (a file's first bytes) is the start of a
    kernel log: empty, blank, binary (NULs or bytes that are not UTF-8 in more than a tenth of
    it) and text without a kernel-log prefix in its first lines (`looks_like_kernel_log`) are
    not (pure). NUL padding (a run of 4 or more NULs: what logrotate's `copytruncate` leaves at
    the start of a log still being written, `config_file.without_nul_padding`) is not judged:
    the text after it is (the scan skips it too, `scan.KernelLogScan.feed`)."""
    text = without_nul_padding(head.decode("utf-8", errors="replace"))
    if not text.strip():
        raise ParseError(source, "empty: not a kernel log, nothing to judge the GPUs by")
    if (text.count("\0") + text.count("\ufffd")) * 10 > len(text):
        raise ParseError(source, "binary data, not a kernel log")
    if not looks_like_kernel_log(text):
        raise ParseError(
            source, f"not a kernel log: no kernel-log record in its first {HEAD_BYTES // 1024} KiB"
        )


# The prefixes of a kernel-log record: /dev/kmsg, uptime (and `dmesg -d`'s `<delta>`), ctime
# (`dmesg -T`), reltime (`dmesg -H` / `-e`: `[Mar 6 21:34]`, `[  +0.000123]`), delta alone
# (`[<    0.000123>]`), ISO (`--time-format iso`), `kern  :err   :` (`-x`), syslog or journal
# `kernel:`, a bare NVRM line. `inspect_parts` extends it to other system-log lines.
# Spaces and tabs only, never `\s`: under re.MULTILINE a `\s*` crosses newlines, and a file of
# blank lines made every search quadratic (80,000 blank lines: 21 s in `inspect`).
KERNEL_PREFIX_PATTERN = (
    r"\d+,\d+,\d+(?:,[^;]*)?;|[ \t]*\[[ \t]*\d+\.\d+(?:[ \t]*<[^>\]]*>)?\]"
    r"|\[\w{3} \w{3}[ \t]+\d+ [\d:]+ \d{4}\]|\[\w{3} ?\d{1,2} \d\d:\d\d\]|\[[ \t]*\+\d+\.\d+\]"
    r"|\[<[ \t]*\d+\.\d+>\]|\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d[,.]\d+[+-]\d\d:\d\d "
    r"|\w+[ \t]*:\w+[ \t]*: |.{0,80}?\bkernel: |.{0,40}?\bNVRM: "
)
_KERNEL_PREFIX = re.compile(f"^(?:{KERNEL_PREFIX_PATTERN})", re.MULTILINE)
_XID_HEAD = re.compile(XID_HEAD)
_TAGLESS_XID = re.compile(f"{BARE_XID_HEAD}PCI:", re.MULTILINE)


# The lines the kernel-log reader claims: every NVRM and SXid line goes to the recognisers and the
# driver-message catalogue, an Xid continuation or fallen-off-the-bus line joins its event, an
# mlx5 `Link STATE` line is a port state. The PCI core's `pci D:B:D.F: BAR N: failed to assign`
# / `no space for` lines are its resource allocation while it enumerates the bus (it retries, and
# prints `assigned` for the BARs it places): not a device fault of their own -- a GPU whose BAR
# stays unusable is reported by the driver ("This PCI I/O region assigned to your NVIDIA device is
# invalid", driver_messages.yaml) or by lspci as `<unassigned>` (fresh7 919: 28 such lines in a
# healthy HGX H100 boot log, bridges' windows and expansion ROMs). Other lines are left to the
# device-and-severity fallback (`gpuslo.exporter.policy.unrecognised`).
CLAIMED_LINE = re.compile(
    r"NVRM|SXid|Xid \(|fallen off the bus|mlx5_core.{0,120}\bLink [A-Za-z]"
    r"|\bpci [0-9a-fA-F]{4}:[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]: BAR \d+: "
    r"(?:failed to assign|no space for)\b"
)


def looks_like_kernel_log(text: str) -> bool:
    """True when some of the first lines carry a kernel-log prefix (kmsg record, uptime,
    ctime, `kern  :err   :`, syslog/journal `kernel:`) or an NVRM/SXid marker, or an Xid record
    in any punctuation (`anchors.XID_HEAD`: `NVRM Xid (PCI:...) : 32` with no prefix) or without
    its NVRM tag where a message starts (`anchors.BARE_XID_HEAD`: `Xid (PCI:...): 79, ...`)."""
    head = "\n".join(text[:65536].splitlines()[:400])
    if "SXid (" in head or "NVRM: " in head or _XID_HEAD.search(head) or _TAGLESS_XID.search(head):
        return True
    return len(_KERNEL_PREFIX.findall(head)) >= 1


def kernel_records(text: str) -> int:
    """Lines of `text` that look like kernel-log records (prefix or marker), for the
    `kernel_log_read` inventory finding."""
    return len(_KERNEL_PREFIX.findall(text))
