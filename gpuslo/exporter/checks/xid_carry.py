"""The `xid` check's /dev/kmsg carry: a kernel splat split between two reads is one event, judged
once (pure).

A splat is many records the kernel writes one by one (`evidence.kernel_log.splats`: a header,
then within `SPLAT_LINES` lines its NVIDIA frames), so a read can end inside one: the header in
this read, the frames in the next. Read apart, the first half is no event (no NVIDIA frame yet) or
an event whose frames go on, and the second a headerless `trace` (unknown) or a second event for
the same splat. So each read parses the last `CARRY_LINES` records of the earlier reads (the
cursor's `carry`) before its own, as `inspect` reads the whole log, and keeps only what it has
not judged yet:
- an event whose first line is a carried record was judged by an earlier read, unless it is a
  splat whose first record is in no splat judged before (`judged`: the first and last sequence
  of each splat judged while its records are carried): its header was carried, its NVIDIA frames
  are new, so it is judged now, once, whole;
- a splat event whose first record lies inside a splat judged before (the carry began in its
  middle, or its frames go on in this read) is that splat again: dropped.
`CARRY_LINES` is `anchors.HEADER_LOOKBACK_LINES`, the reach of a frame back to its header
(`SPLAT_LINES` + `DIE_LINES` and more).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from gpuslo.exporter.evidence.kernel_log.anchors import HEADER_LOOKBACK_LINES
from gpuslo.exporter.evidence.kernel_log.parse import KernelEvent

CARRY_LINES = HEADER_LOOKBACK_LINES
_SEQUENCE = re.compile(r"^\d+,(\d+),")  # `PRIORITY,SEQUENCE,...;` of a record's line

Span = tuple[int, int]  # (first, last) kmsg sequence of a splat judged


def sequence_of(line: str) -> int:
    """The kmsg sequence of a record line (`KmsgRecord.as_line`); -1 when it has none."""
    match = _SEQUENCE.match(line)
    return int(match.group(1)) if match else -1


def _judged_before(sequence: int | None, judged: Sequence[Span]) -> bool:
    return sequence is not None and any(first <= sequence <= last for first, last in judged)


def fresh_events(
    events: list[KernelEvent], carried: int, judged: Sequence[Span]
) -> list[KernelEvent]:
    """`events` of the carried records (`carried` lines) and this read's, less what an earlier
    read judged (see the module docstring)."""
    return [
        event for event in events
        if event.line > carried or (event.kind == "kernel_splat"
                                    and not _judged_before(event.sequence, judged))
    ]


def next_carry(
    lines: Sequence[str], kept: list[KernelEvent], judged: Sequence[Span]
) -> tuple[tuple[str, ...], tuple[Span, ...]]:
    """The carry after this read (`lines`: the carried lines then this read's) and the spans of
    the splats judged (earlier ones and this read's `kept`) that still reach into it."""
    carry = tuple(lines[-CARRY_LINES:])
    spans = list(judged)
    for event in kept:
        if event.kind == "kernel_splat" and event.sequence is not None:
            end = min(len(lines), event.line + max(event.lines, 1) - 1)
            spans.append((event.sequence, max(event.sequence, sequence_of(lines[end - 1]))))
    start = sequence_of(carry[0]) if carry else 0
    return carry, tuple(sorted({span for span in spans if span[1] >= start}))
