"""The prefilter's anchors: the literal strings a kernel-log line must hold to reach the readers.

`ANCHORS` is the one place the candidate set is defined. Every line a recogniser of
`events.EventBuilder` uses holds `NVRM`, `SXid` or `mlx5` (Xid, fallen-off-the-bus and driver
messages are NVRM lines; NVSwitch errors are SXid lines; port events are mlx5 lines), and every
line holding one is read. A reader or fallback that judges other lines (a device name such as
`efa`, an error word) extends the set here, or passes its own to
`KernelLogScan(anchors=...)`; a line holding none of the anchors is never seen by any reader.

Cost (bench/kernel_log_scan.py): with Vectorscan (`needles.Needles`) all anchors are one pass over
every block, as is the newline count; without it each anchor is one `bytes.find` pass, so the scan
is about (len(anchors) + 1) memory passes: a long list of words is better matched by a reader on
the candidate lines than by more anchors.

`CONTEXT_ANCHOR`: a line holding it (an Xid line) brings the `CONTEXT_LINES` lines after it,
which hold no anchor (`MMU Fault: ...`, `Fault is of type ...` continuations).
"""

from __future__ import annotations

import re
from collections.abc import Sequence

ANCHORS: tuple[str, ...] = ("NVRM", "SXid", "mlx5")
CONTEXT_ANCHOR = "Xid ("
CONTEXT_LINES = 2


def check_anchors(anchors: Sequence[str]) -> tuple[str, ...]:
    """`anchors` as a tuple; ValueError for none, an empty one or one spanning lines."""
    out = tuple(anchors)
    if not out or any(not a or "\n" in a for a in out):
        raise ValueError(f"anchors must be non-empty one-line strings, not {out!r}")
    return out


def grep_pattern(anchors: Sequence[str] = ANCHORS) -> str:
    """The `grep -E` pattern (and Python `re` pattern) selecting the same lines as `anchors`."""
    return "|".join(re.escape(a) for a in check_anchors(anchors))
