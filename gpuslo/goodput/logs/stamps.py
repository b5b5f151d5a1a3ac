"""Wall-clock stamps of log records: their layouts, learnt on the sample.

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

The clock that turns a match into Unix seconds, carrying the date and never going back, is
`clock.Clock`.
"""

from __future__ import annotations

import calendar
import re
from dataclasses import dataclass
from datetime import datetime

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
