"""A progress line's stamp read from where it sits in a prefix of a known shape, each date and
hour worked out once (pure).

The fast path (`fast.FastPath._prefix`) reads the stamp of every progress line's prefix: a regex
`search`, `groupdict` and `clock.Clock.seconds` per line, about half of a stamped line's cost
(torchtitan's `[rank0]:[titan] 2025-06-16 22:31:32,322 - root - INFO - `). Lines whose prefixes
have one digit-masked shape (every ASCII digit `0`) hold their stamp's fields at the same places
when the stamp's regex tells no digit from another (`digit_blind`: only `\\d`, classes and
quantifiers such as `{1,4}`: its match then depends on where the digits are, not on which), so
`StampSpans.of` takes the spans of the first such line's match, and `StampSpans.read` reads a
later line by slicing: the text from the stamp's start to its hour is the key of a date and
hour already worked out by the `Clock` (`learn`), and only the minute, seconds and fraction are
read.

Exact: the value is `midnight + (hour * 3600 + minute * 60 + second + fraction)`, the same float
operations as `Clock._raw`, and the clock's state changes as `_raw` changes it (`year`,
`day_start`), then `Clock.carry` (steps back, the latest time) as for any stamp. Only layouts
with a printed year (`Y`, `y`), month (`m`, `b`) and day (`d`) are read this way: a year-less
date (`md`, syslog's `Dec  4`) or a time of day alone depends on the clock's state, not only on
its text, and a Unix time (`unix`) is not a prefix's. A minute above 59, a second above 60 and
any stamp the clock refuses go the whole way (`read` answers None).
"""

from __future__ import annotations

import re

from gpuslo.goodput.logs.clock import Clock
from gpuslo.goodput.logs.stamps import StampShape

_BLIND = re.compile(r"\{\d+(?:,\d*)?\}|\\d")
MAX_HOURS = 1024  # dates and hours remembered per prefix shape (a log's lines share few)


def digit_blind(pattern: str) -> bool:
    """True when `pattern` names no ASCII digit of its own: once its `\\d` and counted
    quantifiers are set aside, no `0`-`9` is left (a class `[0-9]`, a literal `1` or an escape
    `\\x31` makes it False: conservative)."""
    return not any(ch in "0123456789" for ch in _BLIND.sub("", pattern))


class StampSpans:
    """Where a prefix shape's stamp fields sit (module docstring); `hours`: the key text
    (stamp start to the end of its hour) -> (hour * 3600, midnight, year)."""

    __slots__ = ("start", "hour_end", "minute", "sec", "frac", "hours")

    def __init__(self, start: int, hour_end: int, minute: tuple[int, int], sec: tuple[int, int],
                 frac: tuple[int, int]) -> None:
        self.start, self.hour_end, self.minute, self.sec = start, hour_end, minute, sec
        self.frac = frac
        self.hours: dict[str, tuple[int, float, int]] = {}

    @staticmethod
    def of(stamp: StampShape, found: re.Match[str]) -> StampSpans | None:
        """The spans of `found` (`stamp`'s match on a prefix), None where `stamp` cannot be read
        this way (module docstring)."""
        names = stamp.regex.groupindex
        if (stamp.tail or "unix" in names or "md" in names or not {"H", "M", "S", "d"} <= set(
                names) or not {"Y", "y"} & set(names) or not {"m", "b"} & set(names)
                or not digit_blind(stamp.regex.pattern)):
            return None
        hour_end = found.end("H")
        dated = [found.span(n) for n in ("Y", "y", "m", "b", "d", "H") if n in names]
        if any(start >= 0 and not (found.start() <= start and end <= hour_end)
               for start, end in dated) or found.start("M") < hour_end:
            return None  # a date field after the hour: not this layout
        if any(not any(found.span(n)[0] >= 0 for n in group if n in names)
               for group in (("Y", "y"), ("m", "b"), ("d",))):
            return None  # a year, month or day the match left out: not a full date
        frac = found.span("f") if "f" in names else (-1, -1)
        return StampSpans(found.start(), hour_end, found.span("M"), found.span("S"), frac)

    def read(self, pre: str, clock: Clock, line: int) -> float | None:
        """Unix seconds of the stamp in `pre` (a prefix of this shape) when its date and hour
        are known, else None (then `learn` after the clock read it)."""
        hour = self.hours.get(pre[self.start:self.hour_end])
        if hour is None:
            return None
        minute = int(pre[self.minute[0]:self.minute[1]])
        sec = int(pre[self.sec[0]:self.sec[1]])
        if minute > 59 or sec > 60:
            return None
        base, midnight, year = hour
        start, end = self.frac
        tod = base + minute * 60 + sec + (float("0." + pre[start:end]) if start >= 0 else 0.0)
        clock.year, clock.day_start = year, midnight
        return clock.carry(midnight + tod, line)

    def learn(self, found: re.Match[str], clock: Clock) -> None:
        """Remember the date and hour of `found` (this shape's match on a prefix), which the
        clock has just read (its `day_start` and `year` are the stamp's)."""
        if (found.start() != self.start or found.end("H") != self.hour_end
                or clock.day_start is None or clock.year is None):
            return
        if len(self.hours) >= MAX_HOURS:
            self.hours.clear()
        self.hours[found.string[self.start:self.hour_end]] = (int(found.group("H")) * 3600,
                                                              clock.day_start, clock.year)
