"""The kernel-log prefilter: find candidate lines fast, feed only those to the recognisers.

Candidate lines hold an anchor (`anchors.ANCHORS`: `NVRM`, `SXid`, `mlx5`, the one place the set
is defined and extended); which NVRM lines matter is the driver-message catalogue's call
(`gpuslo.exporter.policy`), not the prefilter's. Each Xid line brings the two lines after it (MMU
fault continuations). The anchors are found with `find` over the whole block (bytes from a file,
or str): CPython's fast search, one pass per anchor, a Python step only per hit; newlines are
counted once over each block with `count`, so line numbers are exact. No third-party library:
`gpuslo inspect` on a log loads neither numpy nor pandas (tests/test_startup.py).
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Sequence

from gpuslo.exporter.evidence.kernel_log.anchors import (
    ANCHORS,
    CONTEXT_ANCHOR,
    CONTEXT_LINES,
    check_anchors,
    grep_pattern,
)
from gpuslo.exporter.evidence.kernel_log.events import EventBuilder
from gpuslo.exporter.evidence.kernel_log.parse import KernelEvent

# The grep pattern the benchmark compares against (`grep -E`): it selects every candidate line.
GREP_PATTERN_TEXT = grep_pattern(ANCHORS)


class _Chunk:
    """buf[:limit] (str, bytes or bytearray) with the primitives the prefilter needs."""

    def __init__(self, buf, limit: int, anchors: Sequence[str]) -> None:
        self.buf, self.limit = buf, limit
        self.is_bytes = not isinstance(buf, str)

        def cast(text: str):
            return text.encode() if self.is_bytes else text

        self.newline, self.xid = cast("\n"), cast(CONTEXT_ANCHOR)
        self.anchors = tuple(cast(anchor) for anchor in anchors)

    def positions(self) -> list[int]:
        """Offsets where an anchor starts, sorted: one `find` pass per anchor."""
        found: list[int] = []
        buf, limit = self.buf, self.limit
        for anchor in self.anchors:
            position = buf.find(anchor, 0, limit)
            while position != -1:
                found.append(position)
                position = buf.find(anchor, position + 1, limit)
        return sorted(found) if len(self.anchors) > 1 else found

    def count_newlines(self, start: int, end: int) -> int:
        """Newlines in buf[start:end]."""
        return self.buf.count(self.newline, start, end)

    def line_bounds(self, position: int) -> tuple[int, int]:
        """(start, end) of the line holding `position`; end excludes the newline."""
        end = self.buf.find(self.newline, position, self.limit)
        return self.buf.rfind(self.newline, 0, position) + 1, self.limit if end == -1 else end

    def holds_anchor(self, line) -> bool:
        """True when `line` (a slice of buf) holds an anchor."""
        return any(anchor in line for anchor in self.anchors)


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
    `finish()` for the events. `anchors` are the prefilter's (default `anchors.ANCHORS`). Counts
    `records` (lines), `matched` (lines holding an anchor: `grep -E -c` of `grep_pattern`,
    for the benchmark) and `fed` (bytes fed: a copy fed the bytes after them goes on as one
    scan of the whole); `unterminated` holds a last line a file reader left out because its
    newline had not arrived (bytes, b"" when none). With `extra` (a pattern, ASCII), the lines it
    finds are kept too, whatever the anchors, in the same single pass (`extra_lines`: (number,
    line)): the device-and-severity fallback reads a log (a FIFO too) once. `extra_literals`
    (ASCII) are strings one of which every line `extra` finds holds, ASCII case ignored: on bytes
    the lines holding one are found with `find` over the lowered block and `extra` runs on those
    lines only (a case-insensitive alternation behind `\b`, run over every byte, went at 7 MB/s:
    bench/kernel_log_scan.py)."""

    def __init__(self, anchors: Sequence[str] = ANCHORS, extra: re.Pattern | None = None,
                 extra_literals: Sequence[str] = ()) -> None:
        self.anchors = check_anchors(anchors)
        self.extra = extra
        self.extra_literals = tuple(literal.lower().encode("ascii") for literal in extra_literals)
        self.extra_bytes = re.compile(extra.pattern.encode(), extra.flags & ~re.UNICODE) if (
            extra is not None
        ) else None
        self.extra_lines: list[tuple[int, str]] = []
        self.builder = EventBuilder()
        self.records = 0
        self.matched = 0
        self.fed = 0  # bytes (characters, for str) fed: where a resumed scan goes on
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

    def feed(self, chunk: str | bytes | bytearray, limit: int | None = None) -> None:
        """Scan chunk[:limit] (default all of it), which ends at a line boundary or at the end
        of the input."""
        limit = len(chunk) if limit is None else limit
        if not limit:
            return
        self.fed += limit
        view = _Chunk(chunk, limit, self.anchors)
        if self.extra is not None:
            self._extra(view, self._next_line)
        for number, line in self._lines(view):
            if view.holds_anchor(line):
                self.matched += 1
            text = line.decode("utf-8", errors="replace") if view.is_bytes else line
            self.builder.feed(number, text.rstrip("\r"))

    def _extra(self, chunk: _Chunk, first: int) -> None:
        """Keep the lines of `chunk` (starting at line `first`) that `extra` finds."""
        if chunk.is_bytes and self.extra_literals:
            self._extra_by_literals(chunk, first)
            return
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

    def _extra_by_literals(self, chunk: _Chunk, first: int) -> None:
        """`_extra` on bytes: the lines holding an extra literal (ASCII case ignored), then
        `extra` on each of them; the same lines, in order."""
        lowered = bytes(chunk.buf[: chunk.limit]).lower()
        starts: set[int] = set()
        for literal in self.extra_literals:
            position = lowered.find(literal)
            while position != -1:
                start, end = chunk.line_bounds(position)
                starts.add(start)
                position = lowered.find(literal, end + 1)
        number, position = first, 0
        for start in sorted(starts):
            end = lowered.find(b"\n", start)
            end = chunk.limit if end == -1 else end
            if self.extra_bytes.search(chunk.buf, start, end) is None:
                continue
            number += chunk.count_newlines(position, start)
            position = start
            text = bytes(chunk.buf[start:end]).decode("utf-8", errors="replace")
            self.extra_lines.append((number, text.rstrip("\r")))

    def finish(self) -> list[KernelEvent]:
        """The events of everything fed."""
        return self.builder.finish()
