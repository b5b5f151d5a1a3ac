"""Kernel log evidence: Xid, SXid, fallen-off-the-bus and mlx5 port events, and `inspect`.

Pure: `parse_kernel_log(text, source) -> list[KernelEvent]` (formats and grouping rules in
`kernel_log_parse` and `kernel_log_events`), `looks_like_kernel_log(text)`,
`inspect_kernel_log(text, options, source) -> list[Finding]`. I/O edge: `scan_kernel_log_file`
(a file of any size, read in chunks). A cheap prefilter (`str.find`/`bytes.find` of `NVRM`,
`SXid`, `mlx5`; `NVRM` lines only when they hold an Xid, a GPU line, a driver load or
`fallen off the bus`) picks candidate lines (and the two after each Xid line, for MMU fault
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

NEEDLES = ("NVRM", "SXid", "mlx5")  # every line the recognisers use holds one of these
# An `NVRM` line is a candidate only when it holds one of these (the rest is driver chatter).
NVRM_WANTED = ("NVRM: Xid", "NVRM: GPU", "NVRM: The NVIDIA GPU", "NVRM: loading NVIDIA",
               "fallen off the bus")  # fmt: skip
CONTEXT_LINES = 2  # lines after an Xid line fed too (MMU fault continuations)
CHUNK_BYTES = 1024 * 1024  # small enough that the passes after the first hit the CPU cache
# The grep pattern the benchmark compares against, as Python: lines it matches are `matched`.
GREP_PATTERN = re.compile(r"NVRM: (Xid|GPU)|SXid|fallen off the bus")


class _Alphabet:
    """The needles in the chunk's type (str or bytes)."""

    def __init__(self, is_bytes: bool) -> None:
        def cast(text: str):
            return text.encode() if is_bytes else text

        self.newline = cast("\n")
        # A compiled literal scans with a fast first-character loop (about twice str.find).
        self.needles = tuple(re.compile(re.escape(cast(n))) for n in NEEDLES)
        self.nvrm = self.needles[0]
        self.wanted = tuple(cast(w) for w in NVRM_WANTED)
        self.xid = cast("Xid (")


def _candidate_starts(buf, limit: int, abc: _Alphabet) -> dict[int, int]:
    """{line start: lines of context after it} for every candidate line in buf[:limit]."""
    starts: dict[int, int] = {}
    for needle in abc.needles:
        found = needle.search(buf, 0, limit)
        while found is not None:
            position = found.start()
            end = buf.find(abc.newline, position, limit)
            end = limit if end == -1 else end
            line_start = buf.rfind(abc.newline, 0, position) + 1
            if needle != abc.nvrm or any(buf.find(w, line_start, end) != -1 for w in abc.wanted):
                context = CONTEXT_LINES if buf.find(abc.xid, line_start, end) != -1 else 0
                starts[line_start] = max(starts.get(line_start, 0), context)
            found = needle.search(buf, end, limit)
    return starts


def _candidate_spans(buf, limit: int, abc: _Alphabet) -> list[tuple[int, int]]:
    """Sorted, merged (start, end) spans of the candidate lines (and their context lines) in
    buf[:limit]; works on `str`, `bytes` and `bytearray` alike; `end` excludes the newline."""
    spans: list[tuple[int, int]] = []
    for start, context in sorted(_candidate_starts(buf, limit, abc).items()):
        end = start
        for _ in range(context + 1):
            end = buf.find(abc.newline, end, limit)
            if end == -1:
                end = limit
                break
            end += 1
        end = end - 1 if end > start and buf[end - 1 : end] == abc.newline else end
        if spans and start <= spans[-1][1] + 1:
            spans[-1] = (spans[-1][0], max(spans[-1][1], end))
        else:
            spans.append((start, end))
    return spans


def _lines(buf, spans, newline, first_line: int, counted: list[int]) -> Iterator[tuple[int, object]]:
    """(1-based line number, line) for every line inside `spans`; `counted[0]` ends as the
    offset up to which newlines were counted and `counted[1]` as the newlines before it."""
    position, number = 0, first_line
    for start, end in spans:
        number += buf.count(newline, position, start)
        for offset, line in enumerate(buf[start:end].split(newline)):
            yield number + offset, line
        number += buf.count(newline, start, end)
        position = end
    counted[:] = [position, number - first_line]


class KernelLogScan:
    """Streaming scan: `feed(chunk)` whole-line chunks of str or bytes in order, then `finish()`.

    Counts `records` (lines) and `matched` (lines `GREP_PATTERN` matches, for the benchmark).
    """

    def __init__(self) -> None:
        self.builder = EventBuilder()
        self.records = 0
        self.matched = 0
        self._next_line = 1

    def feed(self, chunk: str | bytes | bytearray, limit: int | None = None) -> None:
        """Scan chunk[:limit] (default all of it), which ends at a line boundary or at the end
        of the input."""
        limit = len(chunk) if limit is None else limit
        if not limit:
            return
        is_bytes = not isinstance(chunk, str)
        abc = _Alphabet(is_bytes)
        spans = _candidate_spans(chunk, limit, abc)
        counted = [0, 0]
        for number, line in _lines(chunk, spans, abc.newline, self._next_line, counted):
            text = line.decode("utf-8", errors="replace") if is_bytes else line
            text = text.rstrip("\r")
            if GREP_PATTERN.search(text):
                self.matched += 1
            self.builder.feed(number, text)
        lines = counted[1] + chunk.count(abc.newline, counted[0], limit)  # each byte counted once
        lines += 0 if chunk[limit - 1 : limit] == abc.newline else 1
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
