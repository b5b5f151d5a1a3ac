"""The kernel-log prefilter: find candidate lines fast, feed only those to the recognisers.

Candidate lines hold an anchor (`anchors.ANCHORS`: `NVRM`, `Xid`, `mlx5`, ` [nvidia`, `rm+0x`, the
one place the set is defined and extended); which NVRM lines matter is the driver-message
catalogue's call (`gpuslo.exporter.policy`), not the prefilter's. Each Xid line brings the two
lines after it (MMU fault continuations). A kernel splat's header lines (`anchors.SPLAT_HEADERS`)
are candidates where an NVIDIA frame may use them: anywhere in a block holding one, and in every
block's last `anchors.HEADER_LOOKBACK_LINES` lines (`find` over those bytes only). Bytes blocks (a
file) are searched by `needles.Needles`: every anchor and the fallback's pattern in one Vectorscan
pass when the `hyperscan` package is installed, else one `find` pass per literal; str by `find`. A
Python step runs only per hit and per line found; newlines are counted once over each block with
`count`, so line numbers are exact. `gpuslo inspect` on a log loads neither numpy nor pandas
(tests/test_startup.py).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from functools import lru_cache
from typing import TYPE_CHECKING

from gpuslo.config_file import without_nul_padding
from gpuslo.exporter.evidence.kernel_log.anchors import (
    ANCHORS,
    CONTEXT_ANCHOR,
    CONTEXT_LINES,
    FRAME_ANCHORS,
    SPLAT_HEADERS,
    check_anchors,
    grep_pattern,
)
from gpuslo.exporter.evidence.kernel_log.lookback import HeaderLookback
from gpuslo.needles import Needles

if TYPE_CHECKING:  # the recognisers load when first fed (`builder`), not with the scan
    from gpuslo.exporter.evidence.kernel_log.events import EventBuilder
    from gpuslo.exporter.evidence.kernel_log.parse import KernelEvent

# The grep pattern the benchmark compares against (`grep -E`): it selects every candidate line.
GREP_PATTERN_TEXT = grep_pattern(ANCHORS)


class _Chunk:
    """buf[:limit] (str, bytes or bytearray) with the primitives the prefilter needs."""

    def __init__(self, buf, limit: int, anchors: tuple[str, ...]) -> None:
        self.buf, self.limit = buf, limit
        self.is_bytes = not isinstance(buf, str)
        self.newline, self.xid, self.anchors, self.frames = _literals(anchors, self.is_bytes)

    def positions(self) -> list[int]:
        """Offsets where an anchor starts, sorted: one `find` pass per anchor (str chunks; bytes
        chunks are searched by `needles.Needles`)."""
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

    def framed(self, spans: list[tuple[int, int]]) -> bool:
        """True when one of `spans` (the candidate lines) holds an NVIDIA frame anchor (` [nvidia`,
        `rm+0x`): one `find` per span and anchor, however many anchors its lines hold."""
        buf = self.buf
        return any(buf.find(frame, start, end) != -1
                   for frame in self.frames for start, end in spans)

    def tail_start(self, lines: int) -> int:
        """The offset where the last `lines` lines of buf[:limit] start (0: it holds fewer)."""
        position = self.limit
        for _ in range(lines + 1):
            position = self.buf.rfind(self.newline, 0, position)
            if position == -1:
                return 0
        return position + 1

    def header_hits(self, start: int) -> list[int]:
        """Offsets where a splat header literal starts in buf[start:limit], unsorted."""
        found: list[int] = []
        buf, limit = self.buf, self.limit
        for header in SPLAT_HEADERS:  # rare: only for a block holding a frame, and a tail
            literal = header.encode() if self.is_bytes else header
            position = buf.find(literal, start, limit)
            while position != -1:
                found.append(position)
                position = buf.find(literal, position + 1, limit)
        return found


@lru_cache(maxsize=16)
def _literals(anchors: tuple[str, ...], is_bytes: bool) -> tuple:
    """(newline, `CONTEXT_ANCHOR`, `anchors`, `FRAME_ANCHORS`) as bytes or str: made once, not
    per block."""

    def cast(text: str):
        return text.encode() if is_bytes else text

    return (cast("\n"), cast(CONTEXT_ANCHOR), tuple(cast(anchor) for anchor in anchors),
            tuple(cast(anchor) for anchor in FRAME_ANCHORS))


def _candidate_starts(chunk: _Chunk, hits: list[int]) -> dict[int, int]:
    """{line start: context lines after it} for every line holding an anchor hit (`hits`:
    sorted offsets inside anchors)."""
    starts: dict[int, int] = {}
    line_end = -1
    for position in hits:
        if position <= line_end:
            continue  # a second needle on a line already judged
        line_start, line_end = chunk.line_bounds(position)
        context = CONTEXT_LINES if chunk.buf.find(chunk.xid, line_start, line_end) != -1 else 0
        starts[line_start] = max(starts.get(line_start, 0), context)
    return starts


def _spans(chunk: _Chunk, hits: list[int], carried: int = 0) -> tuple[list[tuple[int, int]], int]:
    """Sorted, merged (start, end) spans of candidate lines and their context lines, and how many
    context lines run past the chunk's end (the next chunk's first lines). `carried` is that
    count from the previous chunk."""
    spans: list[tuple[int, int]] = []
    starts = _candidate_starts(chunk, hits)
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


def _line_starts(chunk: _Chunk, hits: list[int]) -> list[int]:
    """The starts of the lines holding `hits` (sorted offsets), once each, in order."""
    starts: list[int] = []
    line_end = -1
    for position in hits:
        if position > line_end:
            line_start, line_end = chunk.line_bounds(position)
            starts.append(line_start)
    return starts


def _numbers(chunk: _Chunk, first: int, starts: list[int]) -> tuple[dict[int, int], int]:
    """({line start: its line number} for the sorted `starts`, the number of the line after the
    chunk), the chunk's first line being number `first`: each newline counted once (`count`)."""
    numbers: dict[int, int] = {}
    position, number = 0, first
    for start in starts:
        number += chunk.count_newlines(position, start)
        position = start
        numbers[start] = number
    number += chunk.count_newlines(position, chunk.limit)
    if chunk.buf[chunk.limit - 1 : chunk.limit] != chunk.newline:
        number += 1  # a last line without its newline
    return numbers, number


class KernelLogScan:
    """Streaming scan: `feed(chunk, limit)` whole-line chunks of str or bytes in order, then
    `finish()` for the events. `anchors` are the prefilter's (default `anchors.ANCHORS`). Counts
    `records` (lines), `matched` (lines holding an anchor: `grep -E -c` of `grep_pattern`,
    for the benchmark) and `fed` (bytes fed: a copy fed the bytes after them goes on as one
    scan of the whole); `unterminated` holds a last line a file reader left out because its
    newline had not arrived (bytes, b"" when none). With `extra` (a pattern, ASCII, matching
    within one line), the lines it finds are kept too, whatever the anchors, in the same single
    pass (`extra_lines`: (number, line)): the device-and-severity fallback reads a log (a FIFO
    too) once. `extra_literals` (ASCII) are strings one of which every match of `extra` starts
    with, ASCII case ignored: the pure search looks for them first (`needles.Needles`).

    Bytes chunks are searched by `needles.Needles` (Vectorscan when installed, one pass for every
    anchor and `extra`; else `find` per literal; `vectorscan=False` forces the latter), str chunks
    by `find` and `extra.finditer`; either way only the lines found are cut and decoded, and
    newlines are counted once per chunk for the line numbers."""

    def __init__(self, anchors: Sequence[str] = ANCHORS, extra: re.Pattern | None = None,
                 extra_literals: Sequence[str] = (), *, vectorscan: bool = True) -> None:
        self.anchors = check_anchors(anchors)
        self.extra = extra
        self.extra_bytes = re.compile(extra.pattern.encode(), extra.flags & ~re.UNICODE) if (
            extra is not None
        ) else None
        literals = tuple(literal.encode("ascii") for literal in extra_literals)
        self.needles = Needles(tuple(a.encode() for a in self.anchors), self.extra_bytes, literals,
                               use_vectorscan=vectorscan)
        self.extra_lines: list[tuple[int, str]] = []
        self._builder: EventBuilder | None = None
        self.records = 0
        self.matched = 0
        self.fed = 0  # bytes (characters, for str) fed: where a resumed scan goes on
        self.unterminated = b""
        self._next_line = 1
        self._carried = 0  # context lines the previous chunk's last Xid still wants
        self.lookback = HeaderLookback()  # splat headers an NVIDIA frame may look back to

    @property
    def builder(self) -> EventBuilder:
        """The recognisers the lines found are fed to, made when first used: a scan made before
        `gpuslo inspect` forks its second half (`halves.prestart`) does not import them (their
        regular expressions and dataclasses), and the child feeds a recorder instead."""
        if self._builder is None:
            from gpuslo.exporter.evidence.kernel_log.events import EventBuilder

            self._builder = EventBuilder()
        return self._builder

    @builder.setter
    def builder(self, builder) -> None:
        self._builder = builder

    def _hits(self, chunk: _Chunk) -> tuple[list[int], list[int]]:
        """(anchor hits, extra hits) of the chunk: sorted offsets inside the lines found."""
        if chunk.is_bytes:
            return self.needles.search(chunk.buf, chunk.limit)
        extra = [] if self.extra is None else [
            m.start() for m in self.extra.finditer(chunk.buf, 0, chunk.limit)
        ]
        return chunk.positions(), extra

    def feed(self, chunk: str | bytes | bytearray, limit: int | None = None) -> None:
        """Scan chunk[:limit] (default all of it), which ends at a line boundary or at the end
        of the input."""
        limit = len(chunk) if limit is None else limit
        if not limit:
            return
        self.fed += limit
        view = _Chunk(chunk, limit, self.anchors)
        anchor_hits, extra_hits = self._hits(view)
        spans, carried = _spans(view, anchor_hits, self._carried)
        framed = view.framed(spans)
        if framed:  # a splat through an NVIDIA module: its header lines too (`lookback`)
            self.feed_lookback()
            anchor_hits = sorted(anchor_hits + view.header_hits(0))
            spans, carried = _spans(view, anchor_hits, self._carried)
        self._carried = carried
        extra_starts = _line_starts(view, extra_hits)
        starts = sorted({start for start, _ in spans}.union(extra_starts))
        numbers, next_line = _numbers(view, self._next_line, starts)
        self._keep_extra(view, extra_starts, numbers)
        for start, end in spans:
            for offset, line in enumerate(view.buf[start:end].split(view.newline)):
                if view.holds_anchor(line):
                    self.matched += 1
                text = line.decode("utf-8", errors="replace") if view.is_bytes else line
                if "\0" not in text:
                    self.builder.feed(numbers[start] + offset, text.rstrip("\r"))
                    continue
                # NUL padding (logrotate copytruncate): the records are what it leaves
                for record in without_nul_padding(text).split("\n"):
                    self.builder.feed(numbers[start] + offset, record.rstrip("\r"))
        self.records += next_line - self._next_line
        self._next_line = next_line
        self.lookback.keep(view, framed, next_line - 1)

    def feed_lookback(self) -> None:
        """Feed the recognisers the splat header lines of the blocks scanned since the last one
        holding an NVIDIA frame (`lookback`): before a block that holds one, and before the
        lines of a file's second half joined to this scan (`halves.join`)."""
        for number, line in self.lookback.pending(
            lambda tail: _Chunk(tail, len(tail), self.anchors)
        ):
            self.builder.feed(number, line)

    def _keep_extra(self, chunk: _Chunk, starts: list[int], numbers: dict[int, int]) -> None:
        """Keep the lines at `starts` where `extra` matches, with their numbers."""
        pattern = self.extra_bytes if chunk.is_bytes else self.extra
        for start in starts:
            end = chunk.line_bounds(start)[1]
            if pattern.search(chunk.buf, start, end) is None:
                continue  # a literal or a hit whose line holds no match
            line = chunk.buf[start:end]
            text = bytes(line).decode("utf-8", errors="replace") if chunk.is_bytes else line
            self.extra_lines.append((numbers[start], text.rstrip("\r")))

    def finish(self) -> list[KernelEvent]:
        """The events of everything fed."""
        return self.builder.finish()
