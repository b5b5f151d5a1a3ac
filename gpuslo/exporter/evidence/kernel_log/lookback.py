"""The splat header lines the kernel-log prefilter reads, where an NVIDIA frame may use them.

A kernel splat through an NVIDIA module (`splats`) is read from its NVIDIA frame lines (` [nvidia`,
an anchor) and its header lines (`anchors.SPLAT_HEADERS`: `BUG:`, `cut here`, `[#N]`, ...),
which lie at most `anchors.HEADER_LOOKBACK_LINES` lines before a frame that joins them. Searching
every block for the header literals cost the scan ~17 % more CPU (in Vectorscan's pass) or ~10 %
(`find` over every block's last lines); frames are rare, so `HeaderLookback` searches for headers
only when a block holds a frame (`scan.KernelLogScan.feed`):
- the whole block: its header lines become candidates, in line order;
- the last bytes of the blocks before it (`pending`), which `keep` holds (at most `TAIL_BYTES`,
  the last ones seen: a header a frame looks back to is in them unless its lines average over
  `TAIL_BYTES / HEADER_LOOKBACK_LINES` bytes), their header lines fed before the block's own.
A header line fed more than once, or one no frame uses, changes no event; every header within
`HEADER_LOOKBACK_LINES` lines before a frame is read, so the events are those of every line fed
(tests/exporter/test_kernel_splats.py). Pure: operates on the scan's blocks (`scan._Chunk`).
"""

from __future__ import annotations

from gpuslo.exporter.evidence.kernel_log.anchors import HEADER_LOOKBACK_LINES

TAIL_BYTES = 32 * 1024  # ~270 bytes a line for 120 lines (a kernel log's are ~70-120); one copy


class HeaderLookback:
    """The tail of the blocks scanned since the last block holding a frame (whose header lines
    were all read), its last line's number `tail_last`."""

    def __init__(self) -> None:
        self.tail: bytes | str = b""
        self.tail_last = 0

    def keep(self, chunk, framed: bool, last_line: int) -> None:
        """Remember the chunk just scanned (its last line is number `last_line`): nothing when
        it held a frame (its headers were read), else its last `TAIL_BYTES`."""
        if framed:
            self.tail = b"" if chunk.is_bytes else ""
            return
        end = chunk.limit
        if chunk.is_bytes:
            with memoryview(chunk.buf) as view:  # one copy (a bytearray's slice is one more)
                last = bytes(view[max(0, end - TAIL_BYTES):end])
        else:
            last = chunk.buf[max(0, end - TAIL_BYTES):end]
        self.tail = last if end >= TAIL_BYTES or not self.tail else (self.tail + last)[-TAIL_BYTES:]
        self.tail_last = last_line

    def pending(self, view_of) -> list[tuple[int, str]]:
        """The header lines of the kept tail within its last `HEADER_LOOKBACK_LINES` lines, as
        (number, line) in order, leaving out lines holding an anchor (already candidates);
        `view_of(buf)` makes a `scan._Chunk` of the tail. Forgets the tail."""
        tail, last = self.tail, self.tail_last
        self.tail = tail[:0]
        if not tail:
            return []
        chunk = view_of(tail)
        start = chunk.tail_start(HEADER_LOOKBACK_LINES)
        newline = chunk.newline
        if start == 0 and len(tail) == TAIL_BYTES:
            start = tail.find(newline) + 1  # the first line is cut: not a whole line
        # the line starting at `start` is number `last` less the lines after it
        number = last - tail.count(newline, start) + (1 if tail.endswith(newline) else 0)
        out: list[tuple[int, str]] = []
        line_end = -1
        for position in sorted(chunk.header_hits(start)):
            if position <= line_end:
                continue  # a second literal on a line already taken
            line_start, line_end = chunk.line_bounds(position)
            number += tail.count(newline, start, line_start)  # counted once over the tail
            start = line_start
            line = tail[line_start:line_end]
            if chunk.holds_anchor(line):
                continue
            text = line.decode("utf-8", errors="replace") if isinstance(line, bytes) else line
            out.append((number, text.rstrip("\r")))
        return out
