"""The kernel-log prefilter: find candidate lines fast, feed only those to the recognisers.

Every line a recogniser uses holds `NVRM`, `SXid` or `mlx5`, and every such line is read: which
NVRM lines matter is the driver-message catalogue's call (`gpuslo.exporter.policy`), not the
prefilter's. Each Xid line brings the two lines after it (MMU fault continuations). Two ways to
find the needles, same answer:
- text (`str`): one compiled literal per needle (a fast first-character loop in `re`);
- bytes from a file: numpy compares the buffer as little-endian 16-bit words at both
  alignments against the needles' first two bytes, checks the whole needle at the few hits and
  counts newlines vectorised (a few times faster than the `re` path; numpy comes with pandas).
  Without numpy the `re` path serves bytes too.
Line numbers are exact: newlines are counted once over each chunk.
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from gpuslo.exporter.evidence.kernel_log.events import EventBuilder
from gpuslo.exporter.evidence.kernel_log.parse import KernelEvent

NEEDLES = ("NVRM", "SXid", "mlx5")
CONTEXT_LINES = 2
# The grep pattern the benchmark compares against (`grep -E`), as Python: it selects every line
# the scan reads (the candidate lines); lines it matches are counted in `matched`.
GREP_PATTERN_TEXT = "|".join(NEEDLES)
GREP_PATTERN = re.compile(GREP_PATTERN_TEXT)
_PATTERNS = {
    kind: tuple(re.compile(re.escape(n.encode() if kind else n)) for n in NEEDLES)
    for kind in (False, True)
}


def _numpy():
    try:
        import numpy
    except ImportError:  # pragma: no cover - numpy comes with pandas
        return None
    return numpy


def prepare(buf, limit: int) -> list[int] | None:
    """Offsets where a needle starts in bytes buf[:limit], sorted, by numpy (which releases the
    GIL: `scan_kernel_log_file` runs it in a second thread for the next chunk while this one is
    read and parsed); None without numpy. The buffer must not change until the chunk is fed."""
    np = _numpy()
    if np is None:
        return None
    view = memoryview(buf)[:limit]
    # 16-bit words at both alignments against each needle's first two bytes (half the work of
    # 32-bit words at four), then the whole needle checked at the few hits.
    keys = [int.from_bytes(n[:2].encode(), "little") for n in NEEDLES]
    hits = []
    for alignment in range(2):
        words = np.frombuffer(view, "<u2", count=(limit - alignment) // 2, offset=alignment)
        mask = words == keys[0]
        mask |= words == keys[1]
        mask |= words == keys[2]
        hits.append(np.flatnonzero(mask) * 2 + alignment)
    needles = tuple(n.encode() for n in NEEDLES)
    del words, mask, view  # no export of the buffer outlives the call
    return [p for p in sorted(np.concatenate(hits).tolist()) if buf.startswith(needles, p)]


class _Chunk:
    """buf[:limit] (str, bytes or bytearray) with the primitives the prefilter needs; bytes
    come `prepare`d (needles and newlines found by numpy) when numpy is there."""

    def __init__(self, buf, limit: int, prepared: list[int] | None = None) -> None:
        self.buf, self.limit = buf, limit
        self.is_bytes = not isinstance(buf, str)

        def cast(text: str):
            return text.encode() if self.is_bytes else text

        self.newline, self.xid = cast("\n"), cast("Xid (")
        self.found = prepare(buf, limit) if self.is_bytes and prepared is None else prepared
        numpy = _numpy() if self.found is not None else None
        self.np = numpy
        self.array = numpy.frombuffer(memoryview(buf)[:limit], numpy.uint8) if numpy else None

    def positions(self) -> list[int]:
        """Offsets where a needle starts, sorted."""
        if self.found is not None:
            return self.found
        found = (
            m.start() for p in _PATTERNS[self.is_bytes] for m in p.finditer(self.buf, 0, self.limit)
        )
        return sorted(found)

    def count_newlines(self, start: int, end: int) -> int:
        """Newlines in buf[start:end] (numpy, GIL released, when there)."""
        if self.array is None:
            return self.buf.count(self.newline, start, end)
        return int(self.np.count_nonzero(self.array[start:end] == 10))

    def line_bounds(self, position: int) -> tuple[int, int]:
        """(start, end) of the line holding `position`; end excludes the newline."""
        end = self.buf.find(self.newline, position, self.limit)
        return self.buf.rfind(self.newline, 0, position) + 1, self.limit if end == -1 else end


def _candidate_starts(chunk: _Chunk) -> dict[int, int]:
    """{line start: context lines after it} for every candidate line of the chunk."""
    starts: dict[int, int] = {}
    line_end = -1
    for position in chunk.positions():
        if position <= line_end:
            continue  # a second needle on a line already judged
        line_start, line_end = chunk.line_bounds(position)
        context = CONTEXT_LINES if chunk.buf.find(chunk.xid, line_start, line_end) != -1 else 0
        starts[line_start] = max(starts.get(line_start, 0), context)
    return starts


def _spans(chunk: _Chunk, carried: int = 0) -> tuple[list[tuple[int, int]], int]:
    """Sorted, merged (start, end) spans of candidate lines and their context lines, and how many
    context lines run past the chunk's end (the next chunk's first lines). `carried` is that
    count from the previous chunk."""
    spans: list[tuple[int, int]] = []
    starts = _candidate_starts(chunk)
    if carried:
        starts[0] = max(starts.get(0, -1), carried - 1)
    leftover = 0
    for start, context in sorted(starts.items()):
        end = start
        for taken in range(context + 1):
            end = chunk.buf.find(chunk.newline, end, chunk.limit)
            if end == -1:
                end = chunk.limit
                if chunk.buf[chunk.limit - 1 : chunk.limit] == chunk.newline:
                    leftover = max(leftover, context + 1 - taken)
                break
            end += 1
        end = end - 1 if end > start and chunk.buf[end - 1 : end] == chunk.newline else end
        if spans and start <= spans[-1][1] + 1:
            spans[-1] = (spans[-1][0], max(spans[-1][1], end))
        else:
            spans.append((start, end))
    return spans, leftover


class KernelLogScan:
    """Streaming scan: `feed(chunk, limit)` whole-line chunks of str or bytes in order, then
    `finish()` for the events. Counts `records` (lines) and `matched` (lines `GREP_PATTERN`
    matches, for the benchmark); `unterminated` holds a last line a file reader left out
    because its newline had not arrived (bytes, b"" when none). With `extra` (a pattern, ASCII),
    the lines it finds are kept too, in the same single pass (`extra_lines`: (number, line)):
    the device-and-severity fallback reads a log (a FIFO too) once."""

    def __init__(self, extra: re.Pattern | None = None) -> None:
        self.extra = extra
        self.extra_bytes = re.compile(extra.pattern.encode(), extra.flags & ~re.UNICODE) if (
            extra is not None
        ) else None
        self.extra_lines: list[tuple[int, str]] = []
        self.builder = EventBuilder()
        self.records = 0
        self.matched = 0
        self.unterminated = b""
        self._next_line = 1
        self._carried = 0  # context lines the previous chunk's last Xid still wants

    def _lines(self, chunk: _Chunk) -> Iterator[tuple[int, object]]:
        position, number = 0, self._next_line
        spans, self._carried = _spans(chunk, self._carried)
        for start, end in spans:
            number += chunk.count_newlines(position, start)
            for offset, line in enumerate(chunk.buf[start:end].split(chunk.newline)):
                yield number + offset, line
            number += chunk.count_newlines(start, end)
            position = end
        number += chunk.count_newlines(position, chunk.limit)
        if chunk.buf[chunk.limit - 1 : chunk.limit] != chunk.newline:
            number += 1  # a last line without its newline
        self.records += number - self._next_line
        self._next_line = number

    def feed(
        self, chunk: str | bytes | bytearray, limit: int | None = None, prepared=None
    ) -> None:
        """Scan chunk[:limit] (default all of it), which ends at a line boundary or at the end
        of the input; `prepared` is `prepare(chunk, limit)` when the caller computed it."""
        limit = len(chunk) if limit is None else limit
        if not limit:
            return
        view = _Chunk(chunk, limit, prepared)
        if self.extra is not None:
            self._extra(view, self._next_line)
        for number, line in self._lines(view):
            text = line.decode("utf-8", errors="replace") if view.is_bytes else line
            text = text.rstrip("\r")
            if GREP_PATTERN.search(text):
                self.matched += 1
            self.builder.feed(number, text)
        view.found = view.array = None  # release the buffer before the caller reuses it

    def _extra(self, chunk: _Chunk, first: int) -> None:
        """Keep the lines of `chunk` (starting at line `first`) that `extra` finds."""
        pattern = self.extra_bytes if chunk.is_bytes else self.extra
        number, position, last = first, 0, -1
        for match in pattern.finditer(chunk.buf, 0, chunk.limit):
            start, end = chunk.line_bounds(match.start())
            if start <= last:
                continue
            number += chunk.count_newlines(position, start)
            position = last = start
            line = chunk.buf[start:end]
            text = line.decode("utf-8", errors="replace") if chunk.is_bytes else line
            self.extra_lines.append((number, text.rstrip("\r")))

    def finish(self) -> list[KernelEvent]:
        """The events of everything fed."""
        return self.builder.finish()
