"""Wall-clock stamps of log records: shapes learnt on the sample, a clock that carries the date.

`learn_shapes(texts) -> list[StampShape]` looks at the head of each sample record for a date and
time in any common layout (`2024-04-06 02:59:36`, `10/17/2025 16:31:56`, `[05/10 04:48:34]`,
`24-02-24T13:38:44`, `2017-09-26:07:44:49` (MXNet's and Sockeye's datefmt), `Dec  4 16:38:00`,
`[05:19:47.352788]`, `INFO 09-15 14:42:21`, torchlight's `[03.24.23|09:56:11]`, date and
time joined by a bar: ST-GCN, fresh14 Q08) and has
python-dateutil (a well-kept general parser) read one example of each layout, to learn which
digits are the year, month and day and whether the day comes first. Each layout becomes one
compiled regex with named groups, so per record the work is one `search` on the head and
integer arithmetic, never a general date parser. glog/c10 stamps (`I0811 21:54:55.531340`,
`[E602 11:17:52.185]`: level letter, month not zero-padded, no year) and tensorpack's
(`[0807 19:57:18 @base.py:285]`: month and day, no year, the source file) are known layouts
that dateutil cannot read.
A bare Unix time that ends the records (`unixtime`: OneFlow's `samples/s: 2161.654
1605777750.5480015`) is a layout too, looked for at a record's end after those at its head.

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
import re
from dataclasses import dataclass, field
from datetime import UTC, datetime

from dateutil import parser as dateutil_parser

import gpuslo.goodput.logs.unixtime as unixtime

MIN_YEAR, MAX_YEAR = 1971, 2099  # the journal's clock range; other years are misreads


class TransportTime(float):
    """When the transport recorded a line (a collector's stamp: `kubectl logs --timestamps`, a
    CRI file, journald; `LogReader.feed(line, ts)`), Unix seconds: a float that keeps where it
    came from, so a step time measured on it ranks below every time the trainer printed itself
    (`steptimes._preferred`). Arithmetic on it gives a plain float."""

    __slots__ = ()
REFERENCE_YEAR = 2000  # a leap year, so a year-less Feb 29 still parses
BACK_TOLERANCE_S = 60.0  # ranks interleave their lines; a minute back is still one clock
MAX_BACK_STEPS = 3
_MONTHS = {m: i for i, m in enumerate(
    ("jan", "feb", "mar", "apr", "may", "jun", "jul", "aug", "sep", "oct", "nov", "dec"), 1)}
# an ISO 8601 / RFC 3339 §5.6 UTC offset right after the time (`+01:00`, `-0500`, `Z`)
_ZONE = r"(?:Z|[+-](?:[01]\d|2[0-3]):?[0-5]\d)(?![\w:])"
_TIME = r"(?P<H>\d{1,2}):(?P<M>\d\d):(?P<S>\d\d)(?:[.,](?P<f>\d{1,9}))?"
# a 12-hour clock's meridiem after the time (`%I:%M:%S %p`: `11:51:00 PM`, Python logging's and
# Windows/.NET's US layout); group `p`, only in a layout learnt with one
_MERIDIEM = r" ?(?:[AaPp][Mm])(?!\w)"
_DATE_CANDIDATE = re.compile(
    r"(?:(?P<date>\d{4}[-/.]\d{1,2}[-/.]\d{1,2}|\d{1,2}[-/.]\d{1,2}[-/.]\d{2,4}|\d{1,2}[-/]\d{1,2}"
    r"|(?:[A-Z][a-z]{2},? )?[A-Z][a-z]{2,8}\.? {1,2}\d{1,2}(?:,? \d{4})?"
    r"|\d{1,2} [A-Z][a-z]{2,8} \d{4})"
    r"(?:[ T_|]|, )|\d{4}-\d\d-\d\d:)\d{1,2}:\d\d:\d\d(?:[.,]\d{1,9})?(?:" + _ZONE + "|" + _MERIDIEM
    + "|" + r" \d{4}(?![\w:.,/-]))?")
# C's asctime()/ctime() and `dmesg -T`/`--ctime` print the year after the time
# (`%a %b %e %H:%M:%S %Y`: `Fri Aug 30 11:43:09 2024`); a number there is that year only where the
# printed weekday agrees with the date it makes (`_asctime_year`)
_AFTER_TIME_YEAR = re.compile(r"(?<=\d) (?P<Y>\d{4})$")
_ASCTIME = re.compile(r"(?P<a>[A-Za-z]{3})[a-z]*,? (?P<b>[A-Za-z]{3})[a-z]*\.? {1,2}(?P<d>\d{1,2}) "
                      r"\d{1,2}:\d\d:\d\d(?:[.,]\d{1,9})? (?P<Y>\d{4})$")
_WEEKDAYS = ("mon", "tue", "wed", "thu", "fri", "sat", "sun")
# MXNet/Sockeye's datefmt `%Y-%m-%d:%H:%M:%S`; torchlight's `[%m.%d.%y|%H:%M:%S]` (ST-GCN)
_SEP = r"[ T_|]|, |(?<=\d{4}-\d\d-\d\d):"
_TIME_ONLY = re.compile(r"^\[?\d\d:\d\d:\d\d(?:[.,]\d{1,9})?\]?")
_GLOG = re.compile(r"^\[?[IWEF](?P<md>\d{3,4}) " + _TIME
                   + r"(?: +\d{1,20})?(?: [\w./-]{1,120}:\d{1,6}\])? ?")
# tensorpack's logger: `[0807 19:57:18 @base.py:285]` (datefmt `%m%d %H:%M:%S`, the source after @)
_TENSORPACK = re.compile(r"^\[(?P<md>\d{4}) " + _TIME + r" @[\w./-]{1,120}:\d{1,6}\] ?")
HEAD = 72  # characters of a record searched for its stamp


@dataclass(frozen=True)
class StampShape:
    """One stamp layout: `regex` searched in a record's first HEAD characters (named groups
    Y or y, m or b, d, md, H, M, S, f); `label` says the layout (`YYYY-MM-DD HH:MM:SS`);
    `anywhere` False when the stamp must open the record (layouts without a full date); `tail`
    True for a Unix time that ends the record (`unixtime`: searched at its end, groups unix,
    unix_f)."""

    regex: re.Pattern[str]
    label: str
    anywhere: bool
    tail: bool = False


GLOG = StampShape(_GLOG, "glog/c10 LMMDD HH:MM:SS (no year)", False)
TENSORPACK = StampShape(_TENSORPACK, "tensorpack [MMDD HH:MM:SS @file:line] (no year)", False)
TIME_OF_DAY = StampShape(re.compile(r"^\[?" + _TIME + r"\]?:? ?"), "HH:MM:SS (time of day)",
                         False)
UNIX_TAIL = StampShape(unixtime.TAIL, unixtime.LABEL, True, tail=True)
UNIX_HEAD = StampShape(unixtime.HEAD, unixtime.HEAD_LABEL, False)


def _layout(span: str) -> str:
    """A stamp's layout: digits as 9, names as A, a meridiem as `P` (AM and PM are one layout)."""
    span = re.sub(r"(?<=\d)( ?)[AaPp][Mm]$", r"\1P", span)
    return re.sub(r"\d", "9", re.sub(r"[A-Za-z]{3,9}", "A", span))


_ORDERS = {3: (("Y", "m", "d"), ("m", "d", "Y"), ("d", "m", "Y")), 2: (("m", "d"), ("d", "m"))}


def _names(runs: list[str], stamp: datetime) -> list[str] | None:
    """Which run of a date is the year (`Y`, or `y` when two digits), month (`m`, `b` for a
    name) and day: the first usual order whose values are the ones dateutil read."""
    if any(r.isalpha() for r in runs):  # `Dec  4`, `4 Dec 2023`, `Mon Dec  4`
        return ["b" if r.isalpha() and r.lower()[:3] in _MONTHS else "" if r.isalpha()
                else "Y" if len(r) == 4 else "d" for r in runs]
    want = {"Y": stamp.year, "m": stamp.month, "d": stamp.day}
    for order in _ORDERS.get(len(runs), ()):
        if all(int(r) == want[n] or (n == "Y" and len(r) == 2 and int(r) == want[n] % 100)
               for r, n in zip(runs, order, strict=True)):
            return ["y" if n == "Y" and len(r) == 2 else n
                    for r, n in zip(runs, order, strict=True)]
    return None


def _asctime_year(spans: list[str]) -> bool:
    """True when every span (`Fri Aug 30 11:43:09 2024`) is asctime's layout: a weekday, a month
    name, a day, the time, then a year whose date falls on the weekday printed (C's `%a %b %e
    %H:%M:%S %Y`, `dmesg -T`). A number after a year-less stamp that is not such a year (a
    syslog host, a count; a weekday that disagrees) is not read as one."""
    for span in spans[:200]:
        found = _ASCTIME.match(span)
        if found is None or found["a"].lower() not in _WEEKDAYS:
            return False
        month = _MONTHS.get(found["b"].lower())
        year, day = int(found["Y"]), int(found["d"])
        try:
            weekday = calendar.weekday(year, month or 0, day)
        except (ValueError, calendar.IllegalMonthError):
            return False
        if not MIN_YEAR <= year <= MAX_YEAR or _WEEKDAYS[weekday] != found["a"].lower():
            return False
    return True


def _shape_for(span: str, dayfirst: bool, spans: list[str] | None = None) -> StampShape | None:
    """Read `span` with dateutil and compile its layout into a StampShape (None: not a date).
    A year after the time is part of the layout where `spans` (all of its layout, default
    `span` alone) are asctime's (`_asctime_year`); otherwise the number is left out."""
    after = _AFTER_TIME_YEAR.search(span)
    if after is not None and not _asctime_year(spans or [span]):
        span, after = span[:after.start()], None
    year_after = "" if after is None else r" (?P<Y>\d{4})"
    if after is not None:
        span = span[:after.start()]
    try:
        spaced = re.sub(r"^(\d{4}-\d\d-\d\d):", r"\1 ", span.replace("_", " ").replace("|", " "))
        stamp = dateutil_parser.parse(spaced, dayfirst=dayfirst,
                                      default=datetime(REFERENCE_YEAR, 1, 1))
    except (ValueError, OverflowError):
        return None
    time_at = re.search(r"(?:" + _SEP + r")\d{1,2}:\d\d:\d\d", span)
    if time_at is None:
        return None
    date_part = span[:time_at.start()]
    runs = re.findall(r"\d+|[A-Za-z]{3,9}", date_part)
    names = _names(runs, stamp)
    if names is None or "d" not in names or not ({"m", "b"} & set(names)):
        return None
    pieces, pos = [], 0
    for name, run in zip(names, re.finditer(r"\d+|[A-Za-z]{3,9}", date_part), strict=True):
        pieces.append(re.escape(date_part[pos:run.start()]))
        body = r"[A-Za-z]{3,9}" if run.group().isalpha() else r"\d{1,4}"
        pieces.append(f"(?P<{name}>{body})" if name else body)
        pos = run.end()
    pieces.append(re.escape(date_part[pos:]))
    sep = re.match(r"[ T_:|]|, ", time_at.group(0)).group(0)
    regex = "".join(pieces) + ("[ T_]" if sep in (" ", "T", "_") else re.escape(sep)) + _TIME
    if re.search(r"\d" + _ZONE + "$", span):  # only a layout that prints an offset pays for it
        regex += f"(?P<z>{_ZONE})"
    elif re.search(r"\d" + _MERIDIEM + "$", span):  # nor one with a meridiem
        regex += _MERIDIEM.replace("(?:", "(?P<p>", 1)
    regex += year_after
    return StampShape(re.compile(regex), _layout(span) + (" 9999" if year_after else ""),
                      bool({"Y", "y"} & set(names)) or bool(year_after))


def _candidate(text: str) -> str | None:
    head = text[:HEAD]
    found = _DATE_CANDIDATE.search(head)
    if found is None:
        return None
    before = head[:found.start()]
    if re.search(r"\d", before) and not re.fullmatch(r"\[?[\w|.:\-]{0,60}\]? ?", before):
        return None
    span = found.group(0)
    after = _AFTER_TIME_YEAR.search(span)
    if after is not None and _ASCTIME.match(span) is None:  # only asctime's layout may end so
        span = span[:after.start()]
    return span


def learn_shapes(texts: list[str]) -> list[StampShape]:
    """The stamp layouts of a sample of records (see the module docstring), most used first."""
    seen: dict[str, list[str]] = {}
    glog = time_only = tensorpack = 0
    for text in texts:
        if _GLOG.match(text):
            glog += 1
            continue
        if _TENSORPACK.match(text):
            tensorpack += 1
            continue
        span = _candidate(text)
        if span is None:
            if _TIME_ONLY.match(text):
                time_only += 1
            continue
        seen.setdefault(_layout(span), []).append(span)
    shapes: list[tuple[int, StampShape]] = []
    for spans in seen.values():
        dayfirst = _dayfirst(spans)
        shape = _shape_for(spans[0], dayfirst, spans)
        if shape is not None:
            shapes.append((len(spans), shape))
    shapes.sort(key=lambda x: -x[0])
    out = [s for _, s in shapes]
    if glog:
        out.append(GLOG)
    if tensorpack:
        out.append(TENSORPACK)
    if time_only:
        out.append(TIME_OF_DAY)
    if unixtime.recurs(texts):
        out.append(UNIX_TAIL)
    if not out and unixtime.recurs(texts, unixtime.HEAD):  # no other clock: one opens them
        out.append(UNIX_HEAD)
    return out


def _dayfirst(spans: list[str]) -> bool:
    """True when a `NN/NN/YYYY` layout has a first field above 12 in some line (day first)."""
    for span in spans[:200]:
        found = re.match(r"(\d{1,2})[-/.](\d{1,2})[-/.]\d{2,4}", span)
        if found and int(found.group(1)) > 12:
            return True
    return False


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
            year = _year(g)
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
            if self.first_dated is None and _year(g) is not None:
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

