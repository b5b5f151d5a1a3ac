"""The clock of log records' wall-clock stamps: a stamp layout's match (`stamps.StampShape`,
learnt by `stamps.learn_shapes`) turned into Unix seconds (float, UTC), the date carried forward.

`Clock.seconds(groups)` turns a match into Unix seconds: UTC as printed when the stamp gives no
zone (most logs do not); an ISO 8601 / RFC 3339 §5.6 offset printed right after the time
(`2024-03-31T01:59:50+01:00`, `-0500`, `Z`: group `z`, only in a layout learnt with one, so other
layouts pay nothing) decides the instant; a 12-hour clock's meridiem after the time (`11:51:00 PM`,
`%I:%M:%S %p`: group `p`, likewise only in a layout learnt with one) sets the hour (12 AM is 0,
12 PM is 12), so a daylight-saving change (`01:59:50+01:00` then
`03:00:00+02:00`, 10 s apart) is neither an hour's gap nor a clock going back. A stamp without a
year (glog's `I0213 12:07:20.086`, syslog's `Dec 4 16:38:00`) takes the year of the last full
stamp; with none, the year is inferred from the clock's `reference` (when the log was last
written: its file's modification time, or now for a pipe), the latest year in which the first
such stamp is not after it (`year_before`; `Clock.assumed_year`, which the reader says in a note),
and it rolls over when the month goes back more than six (December to January); without a
reference (a caller that gives none; `gpuslo goodput` and the exporter's job-log tailer always
give one), `REFERENCE_YEAR`. A time of day alone takes the last full date and rolls over at
midnight. The clock never goes back silently: a stamp more than `BACK_TOLERANCE_S` before the
latest one is a clock step back (a pasted older run, an NTP or time-zone change); it is noted with
its line, and the clock keeps counting from the latest time (every later stamp is shifted by the
step), so a day back cannot halve the span. After `MAX_BACK_STEPS` such steps the stamps are
declared unreliable
(`Clock.unreliable`) and the reader times the log from its step times instead.
"""

from __future__ import annotations

import calendar
from dataclasses import dataclass, field
from datetime import UTC, datetime

import gpuslo.goodput.logs.unixtime as unixtime
from gpuslo.goodput.logs.stamps import _MONTHS, MAX_YEAR, MIN_YEAR, REFERENCE_YEAR

BACK_TOLERANCE_S = 60.0  # ranks interleave their lines; a minute back is still one clock
MAX_BACK_STEPS = 3


@dataclass
class Clock:
    """Stamp matches → Unix seconds, carrying year and date forward and never going back (see
    the module docstring). `back_steps`: (line, seconds) of every step back; `year_first`: the
    year first inferred (None: none was)."""

    year: int | None = None
    reference: float | None = None  # Unix seconds the log was last written, for a year-less date
    assumed_year: int | None = None  # the year inferred for year-less dates from `reference`
    day_start: float | None = None
    last: float | None = None
    offset: float = 0.0
    back_steps: list[tuple[int, float]] = field(default_factory=list)
    year_first: int | None = None
    # midnight (Unix seconds) of the first stamp that prints its year: `first_dated` as read,
    # `ahead` as the reader's head sample showed it before the year-less stamps above it
    first_dated: float | None = None
    ahead: float | None = None
    _month: int = 0  # the month of the last year-less date, for the roll-over
    _midnights: dict[tuple[int, int, int], float] = field(default_factory=dict, repr=False,
                                                          compare=False)

    @property
    def unreliable(self) -> bool:
        """True after MAX_BACK_STEPS steps back: the stamps do not order the log."""
        return len(self.back_steps) >= MAX_BACK_STEPS

    def seconds(self, g: dict[str, str | None], line: int = 0) -> float | None:
        """Unix seconds of a stamp's named groups; None when they are not a valid date."""
        raw = self._raw(g)
        return None if raw is None else self.carry(raw, line)

    def carry(self, raw: float, line: int = 0) -> float:
        """Unix seconds of a stamp read as `raw`: shifted by the steps back so far, a new step
        back noted (see the module docstring)."""
        value = raw + self.offset
        if self.last is not None and value < self.last - BACK_TOLERANCE_S:
            self.back_steps.append((line, round(self.last - value, 3)))
            self.offset += self.last - value
            value = self.last
        self.last = value if self.last is None else max(self.last, value)
        return value

    def _raw(self, g: dict[str, str | None]) -> float | None:
        unix = unixtime.seconds(g)
        if unix is not None:
            self.day_start = unix - unix % 86400.0
            return unix
        try:
            hour, minute, sec = int(g["H"] or 0), int(g["M"] or 0), int(g["S"] or 0)
            frac = float("0." + g["f"]) if g.get("f") else 0.0
            if g.get("p"):  # 12-hour clock: 12 AM is 0, 12 PM is 12 (C's `%I %p`)
                if not 1 <= hour <= 12:
                    return None
                hour = hour % 12 + (12 if (g["p"] or "")[0] in "Pp" else 0)
            if hour > 23 or minute > 59 or sec > 60:
                return None
            tod = hour * 3600 + minute * 60 + sec + frac
            printed = year = _year(g)  # the year the stamp prints, or None
            if g.get("md"):
                md = g["md"] or ""
                month, day = int(md[:-2]), int(md[-2:])
            elif g.get("d"):
                month = _MONTHS.get((g.get("b") or "").lower()[:3]) or int(g.get("m") or 0)
                day = int(g["d"] or 0)
            else:
                return self._time_of_day(tod)
            if year is None:
                year = self.year or self._yearless(month, day)
            else:
                self.year = year
            if not (1 <= month <= 12 and 1 <= day <= 31 and MIN_YEAR <= year <= MAX_YEAR):
                return None
            midnight = self._midnight(year, month, day)
            if self.first_dated is None and printed is not None:
                self.first_dated = midnight
            zone = g.get("z")
            east = _zone_seconds(zone) if zone else 0.0
        except (KeyError, ValueError, OverflowError, TypeError):
            return None
        self.day_start = midnight
        return midnight + tod - east

    def _yearless(self, month: int, day: int) -> int:
        """The year of a date printed without one and no full stamp before it (see the module
        docstring): the latest in which it is not after the log's first full stamp when the
        head showed one (`ahead`: TF 1.x's absl `W0522 00:53:00.436580 …` warnings above its
        C++ `2021-05-22 00:53:00.437019: I tensorflow/…` lines), else its `reference`."""
        if not 1 <= month <= 12 or (self.reference is None and self.ahead is None):
            return REFERENCE_YEAR
        if self.assumed_year is None and self.ahead is not None:
            self.assumed_year = year_before(month, day, self.ahead + 86399.0)
        elif self.assumed_year is None:
            self.assumed_year = self.year_first = year_before(month, day, self.reference)
        elif month < self._month - 6:  # December, then January: a new year
            self.assumed_year += 1
        self._month = month
        return self.assumed_year

    def _midnight(self, year: int, month: int, day: int) -> float:
        """Unix seconds of a day's midnight (UTC), remembered: a log's lines share few days."""
        key = (year, month, day)
        midnight = self._midnights.get(key)
        if midnight is None:
            midnight = float(calendar.timegm((year, month, day, 0, 0, 0)))
            if len(self._midnights) >= 4096:
                self._midnights.clear()
            self._midnights[key] = midnight
        return midnight

    def _time_of_day(self, tod: float) -> float:
        if self.day_start is None:
            self.day_start = float(calendar.timegm((REFERENCE_YEAR, 1, 1, 0, 0, 0)))
        value = self.day_start + tod
        if self.last is not None and value + self.offset < self.last - 43200:  # past midnight
            self.day_start += 86400.0
            value += 86400.0
        return value


def year_before(month: int, day: int, reference: float) -> int:
    """The year of a date printed without one (`month` 1-12, `day`): the latest year in which
    it is not after `reference` (Unix seconds, when the log was last written: its file's
    modification time, or now for a pipe), so `Dec  5` in a log last written on 2026-01-03 is
    2025 and on 2026-12-06 is 2026; a Feb 29 takes the latest leap year. Pure: the one rule
    `gpuslo goodput` and the exporter's job-log tailer date year-less stamps by."""
    ref = datetime.fromtimestamp(reference, UTC)
    year = ref.year - ((month, day) > (ref.month, ref.day))
    while (month, day) == (2, 29) and not calendar.isleap(year):
        year -= 1  # a Feb 29 was printed in a leap year
    return year


def _year(g: dict[str, str | None]) -> int | None:
    if g.get("Y"):
        return int(g["Y"] or 0)
    if g.get("y"):
        return 2000 + int(g["y"] or 0)
    return None


_ZONES: dict[str, float] = {}


def _zone_seconds(zone: str) -> float:
    """Seconds east of UTC of an ISO 8601 offset (`+01:00`, `-0500`, `Z`), read by the standard
    library's `%z` (which takes all three forms), remembered: a log prints few offsets.
    Raises ValueError for a malformed offset (the caller's stamp is then not a valid date)."""
    known = _ZONES.get(zone)
    if known is None:
        delta = datetime.strptime(zone, "%z").utcoffset()
        known = _ZONES[zone] = delta.total_seconds() if delta is not None else 0.0
    return known
