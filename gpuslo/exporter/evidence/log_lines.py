"""Lines of a log for the device-and-severity fallback: which lines a reader claims, and the
lines a pattern finds in a text (evidence; the pattern and the judging are
`gpuslo.exporter.policy.unrecognised`'s). A kernel-log file is not read twice for it: its scan
keeps the pattern's lines in the same pass (`kernel_log.scan.KernelLogScan.extra_lines`).

A line is claimed when the kernel-log reader (`kernel_log.read.CLAIMED_LINE`), the fabric-manager
reader or the host-engine reader reads it: the fallback then leaves it to that reader, so one
line is never judged twice, whatever readers share a text (a journal holds kernel and
nv-fabricmanager lines).
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator

from gpuslo.exporter.evidence import fabricmanager, hostengine
from gpuslo.exporter.evidence.kernel_log.read import CLAIMED_LINE

Skip = Callable[[str], bool]


def claimed(line: str) -> bool:
    """True when the kernel-log, fabric-manager or host-engine reader reads `line`."""
    return (
        CLAIMED_LINE.search(line) is not None
        or fabricmanager.claims_line(line)
        or hostengine.claims_line(line)
    )


def matching_lines(
    text: str, pattern: re.Pattern, skip: Skip | None = None, first: int = 1
) -> Iterator[tuple[int, str]]:
    """(number, line) of the lines of `text` where `pattern` is found, by one pass of the pattern
    over the whole text (a large log is not split line by line); a line `skip` accepts is left
    out. `first` is the number of the text's first line."""
    number, position, last = first, 0, -1
    for match in pattern.finditer(text):
        start = text.rfind("\n", 0, match.start()) + 1
        if start <= last:
            continue  # a second match on a line already taken
        number += text.count("\n", position, start)
        position = last = start
        end = text.find("\n", match.end())
        line = text[start : len(text) if end < 0 else end]
        if skip is None or not skip(line):
            yield number, line
