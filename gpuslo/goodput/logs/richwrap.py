"""A rich-console record wrapped over several physical lines is one record (pure, stateful).

rich's `RichHandler` lays each record out in columns: the time (or its blank column when the
second has not changed), the level padded to 8 characters and a space, then the message, and
wraps a message longer than the console over further lines indented to the message's column,
every line padded with spaces to the console's width. Colossal-AI's logger (fresh12 O15):

    [04/12/24 17:15:52] INFO     colossalai - colossalai - INFO:
                        INFO     colossalai - colossalai - INFO: Saving model checkpoint to
                                 /home/users/…/ColossalAI/examples/images/dr
                                 eambooth/weight_output/checkpoint-1000

The path, and the step its `checkpoint-1000` names, are the save message's. A line filled to
the console's width was cut inside a word (rich folds a word longer than the line: `…/dr` +
`eambooth/…`) and joins the next with nothing between; a line padded short of the width was
wrapped at a space and joins with one; where the lines are not padded (the width is not known)
every part joins with a space, and a continuation may be of any length. A source marker at the
right edge of the first line (rich's `show_path`, `train_util.py:779`) is left out of a joined
record.

`RichJoin.push(number, line, ts) -> [(number, text, ts, rich)]` the logical lines that physical
line `number` completes (a record's first line's number and transport time; `rich`: a rich
record, whose width is rich's padding, not a terminal's wrap), `flush()` the last one,
`idle()` whether none is being joined. A line that is no rich record's head and no
continuation passes through unchanged; so does a head with no continuation.
"""

from __future__ import annotations

import re

from gpuslo.goodput.logs.columns import MARKER_TAIL, SOURCE_MARKER

# the time column (a bracketed or ISO stamp, or its blanks), the level padded to 8 + a space
_HEAD = re.compile(r"^(?:\[[^\]\n]{5,40}\]|\d{4}-\d\d-\d\d \d\d:\d\d:\d\d|[ ]{8,40}) "
                   r"(?P<level>(?:DEBUG|INFO|WARNING|ERROR|CRITICAL) +)(?=\S)")
LEVEL_WIDTH = 9  # rich's level column: 8 characters and a space
MAX_PARTS = 16  # physical lines one record may span


class RichJoin:
    """The rich-record join (see the module docstring)."""

    def __init__(self) -> None:
        # number, ts, the message's column, the console's width (0: lines not padded)
        self._head: tuple[int, float | None, int, int] | None = None
        self._parts: list[str] = []
        self._full = False  # the last part filled the console's width: cut inside a word

    def idle(self) -> bool:
        return self._head is None

    def push(self, number: int, line: str, ts: float | None
             ) -> list[tuple[int, str, float | None, bool]]:
        """The logical lines physical line `number` completes."""
        if self._head is not None and len(self._parts) < MAX_PARTS and self._continues(line):
            part = line.rstrip()
            self._parts.append(("" if self._full else " ") + part[self._head[2]:])
            self._full = self._head[3] > 0 and len(part) >= self._head[3]
            return []
        out = self.flush()
        found = _HEAD.match(line)
        if found is None or len(found.group("level")) != LEVEL_WIDTH:
            return out + [(number, line, ts, False)]
        padded = len(line.rstrip()) < len(line)  # else the width is not known: no fold seen
        self._head = (number, ts, found.end(), len(line) if padded else 0)
        self._parts, self._full = [line], False
        return out

    def _continues(self, line: str) -> bool:
        """`line` is indented to the message's column (and as wide as the head when padded)."""
        _, _, column, width = self._head  # type: ignore[misc]
        return line[:column].isspace() and len(line) > column and line[column] != " " and (
            not width or len(line) == width)

    def flush(self) -> list[tuple[int, str, float | None, bool]]:
        """The record being joined, if any."""
        if self._head is None:
            return []
        (number, ts, _, _), parts = self._head, self._parts
        self._head, self._parts = None, []
        if len(parts) == 1:
            return [(number, parts[0], ts, True)]
        first = parts[0].rstrip()
        head, tail = first[:-MARKER_TAIL], first[-MARKER_TAIL:]
        first = head + SOURCE_MARKER.sub("", tail)
        return [(number, first + "".join(parts[1:]), ts, True)]
