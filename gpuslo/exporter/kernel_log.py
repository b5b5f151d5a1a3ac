"""Kernel log evidence: Xid, SXid, fallen-off-the-bus and mlx5 port events, and `inspect`.

Pure: `parse_kernel_log(text, source) -> list[KernelEvent]` (formats and grouping rules in
`kernel_log_parse` and `kernel_log_events`), `looks_like_kernel_log(text)`,
`inspect_kernel_log(text, options, source) -> list[Finding]`. I/O edge: `scan_kernel_log_file`
(a file of any size, read in chunks). A cheap prefilter (`str.find`/`bytes.find` of `NVRM`,
`SXid`, `mlx5`, `fallen off the bus`) picks candidate lines (and the two after each, for
continuations) before the full recognisers run, so a scan keeps pace with `grep`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from gpuslo.errors import InputError, ParseError
from gpuslo.exporter.kernel_log_events import EventBuilder
from gpuslo.exporter.kernel_log_parse import KernelEvent, normalise_pci

__all__ = [
    "KernelEvent",
    "KernelLogScan",
    "inspect_kernel_log",
    "looks_like_kernel_log",
    "normalise_pci",
    "parse_kernel_log",
    "scan_kernel_log_file",
]

NEEDLES = ("NVRM", "SXid", "mlx5", "fallen off the bus")
CONTEXT_LINES = 2  # lines after a candidate fed too (MMU fault continuations)
CHUNK_BYTES = 64 * 1024 * 1024
# The grep pattern the benchmark compares against, as Python: lines it matches are `matched`.
GREP_PATTERN = re.compile(r"NVRM: (Xid|GPU)|SXid|fallen off the bus")


def _candidate_spans(buf, needles, newline) -> list[tuple[int, int]]:
    """Sorted, merged (start, end) spans of the lines holding a needle plus CONTEXT_LINES after.

    Works on `str` and `bytes` alike; `end` excludes the newline.
    """
    starts: set[int] = set()
    for needle in needles:
        position = buf.find(needle)
        while position != -1:
            start = buf.rfind(newline, 0, position) + 1
            starts.add(start)
            end = buf.find(newline, position)
            position = -1 if end == -1 else buf.find(needle, end)
    spans: list[tuple[int, int]] = []
    for start in sorted(starts):
        end = start
        for _ in range(CONTEXT_LINES + 1):
            end = buf.find(newline, end)
            if end == -1:
                end = len(buf)
                break
            end += 1
        end = end - 1 if end and buf[end - 1 : end] == newline else end
        if spans and start <= spans[-1][1] + 1:
            spans[-1] = (spans[-1][0], max(spans[-1][1], end))
        else:
            spans.append((start, end))
    return spans


def _lines(buf, spans, newline, first_line: int) -> Iterator[tuple[int, object]]:
    """(1-based line number, line) for every line inside `spans`."""
    position, number = 0, first_line
    for start, end in spans:
        number += buf.count(newline, position, start)
        for offset, line in enumerate(buf[start:end].split(newline)):
            yield number + offset, line
        number += buf.count(newline, start, end)
        position = end


class KernelLogScan:
    """Streaming scan: `feed(chunk)` whole-line chunks of str or bytes in order, then `finish()`.

    Counts `records` (lines) and `matched` (lines `GREP_PATTERN` matches, for the benchmark).
    """

    def __init__(self) -> None:
        self.builder = EventBuilder()
        self.records = 0
        self.matched = 0
        self._next_line = 1

    def feed(self, chunk: str | bytes) -> None:
        """Scan one chunk that ends at a line boundary (or the end of the input)."""
        if not chunk:
            return
        is_bytes = isinstance(chunk, bytes)
        newline = b"\n" if is_bytes else "\n"
        needles = tuple(n.encode() for n in NEEDLES) if is_bytes else NEEDLES
        for number, line in _lines(chunk, _candidate_spans(chunk, needles, newline), newline,
                                   self._next_line):  # fmt: skip
            text = line.decode("utf-8", errors="replace") if is_bytes else line
            text = text.rstrip("\r")
            if GREP_PATTERN.search(text):
                self.matched += 1
            self.builder.feed(number, text)
        lines = chunk.count(newline) + (0 if chunk.endswith(newline) else 1)
        self.records += lines
        self._next_line += lines

    def finish(self) -> list[KernelEvent]:
        """The events of everything fed."""
        return self.builder.finish()


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
    """Scan the file at `path` in chunks of about `chunk_bytes` (any size; bytes that are not
    UTF-8 are replaced). Returns the finished scan; `.finish()` gives the events.

    Raises InputError when the file cannot be read.
    """
    scan = KernelLogScan()
    try:
        with open(path, "rb") as handle:
            carry = b""
            while block := handle.read(chunk_bytes):
                block = carry + block
                cut = block.rfind(b"\n") + 1
                carry = block[cut:] if cut else block
                scan.feed(block[:cut] if cut else b"")
            scan.feed(carry)
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
