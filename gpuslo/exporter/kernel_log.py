"""Kernel log evidence: Xid, SXid, fallen-off-the-bus and mlx5 port events, and `inspect`.

Pure: `parse_kernel_log(text, source) -> list[KernelEvent]` (formats and grouping rules in
`kernel_log_parse` and `kernel_log_events`), `looks_like_kernel_log(text)`,
`inspect_kernel_log(text, options, source) -> list[Finding]`. I/O edge: `scan_kernel_log_file`
(a file of any size, read in chunks). A cheap prefilter (`kernel_log_scan`: the needles
`NVRM`, `SXid`, `mlx5` found by compiled literals or numpy word compares) picks the candidate
lines before the full recognisers run.
"""

from __future__ import annotations

import re

from gpuslo.errors import InputError, ParseError
from gpuslo.exporter.kernel_log_parse import KernelEvent, normalise_pci
from gpuslo.exporter.kernel_log_scan import KernelLogScan

__all__ = [
    "KernelEvent",
    "KernelLogScan",
    "inspect_kernel_log",
    "looks_like_kernel_log",
    "normalise_pci",
    "parse_kernel_log",
    "scan_kernel_log_file",
]

CHUNK_BYTES = 1024 * 1024  # small enough that the prefilter's passes stay in the CPU cache


def parse_kernel_log(text: str, source: str = "<kernel log>") -> list[KernelEvent]:
    """Every Xid, SXid, fallen-off-the-bus, mlx5 port-state and driver-load event in `text`, in
    line order (multi-line events once). Raises ParseError when `text` is not text (NUL bytes
    in more than a tenth of it), naming `source`."""
    if not isinstance(text, str):
        raise ParseError(source, "kernel log must be text, not bytes")
    if text.count("\0") * 10 > len(text):
        raise ParseError(source, "binary data, not a kernel log")
    scan = KernelLogScan()
    scan.feed(text)
    return scan.finish()


def scan_kernel_log_file(path: str, chunk_bytes: int = CHUNK_BYTES) -> KernelLogScan:
    """Scan the file at `path` in chunks of about `chunk_bytes` into one reused buffer (any
    size; bytes that are not UTF-8 are replaced). Returns the finished scan; `.finish()` gives
    the events. Raises InputError when the file cannot be read.
    """
    scan = KernelLogScan()
    buffer = bytearray(chunk_bytes)
    filled = 0
    try:
        with open(path, "rb", buffering=0) as handle:
            while True:
                if filled == len(buffer):  # one line longer than the buffer: grow it
                    buffer.extend(bytearray(len(buffer)))
                read = handle.readinto(memoryview(buffer)[filled:])
                if not read:
                    break
                filled += read
                cut = buffer.rfind(b"\n", 0, filled) + 1
                if cut:
                    scan.feed(buffer, cut)
                    buffer[: filled - cut] = buffer[cut:filled]
                    filled -= cut
            scan.feed(buffer, filled)
    except OSError as error:
        raise InputError(path, error.strerror or str(error)) from None
    return scan


_KERNEL_PREFIX = re.compile(
    r"^(?:\d+,\d+,\d+(?:,[^;]*)?;|\s*\[\s*\d+\.\d+\]|\[\w{3} \w{3}\s+\d+ [\d:]+ \d{4}\]"
    r"|\w+\s*:\w+\s*: |.{0,80}?\bkernel: |.{0,40}?\bNVRM: )",
    re.MULTILINE,
)


def looks_like_kernel_log(text: str) -> bool:
    """True when some of the first lines carry a kernel-log prefix (kmsg record, uptime,
    ctime, `kern  :err   :`, syslog/journal `kernel:`) or an NVRM/SXid marker."""
    head = "\n".join(text[:65536].splitlines()[:400])
    if "SXid (" in head or "NVRM: " in head:
        return True
    return len(_KERNEL_PREFIX.findall(head)) >= 1


def kernel_records(text: str) -> int:
    """Lines of `text` that look like kernel-log records (prefix or marker), for the
    `kernel_log_read` inventory finding."""
    return len(_KERNEL_PREFIX.findall(text))


def inspect_kernel_log(text: str, options: object, source: str) -> list:
    """`inspect` findings (list[Finding]) for a kernel log; `options` is InspectOptions. See
    `gpuslo.exporter.kernel_log_findings` (imported here lazily: it imports this module)."""
    from gpuslo.exporter.kernel_log_findings import inspect_kernel_log as inspect

    return inspect(text, options, source)
