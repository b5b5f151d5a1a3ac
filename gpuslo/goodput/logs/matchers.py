"""A learnt template compiled into one regex, and the progress records it reads (pure).

`compile_reading(reading, family) -> Matcher`: the template becomes an anchored regex (literal
text escaped, each run of spaces or bar glyphs a gap that also takes `█▏`, `━`, `[=====>...]`,
numbers and durations as the masker found them), cut after the last field that has a role, so a
line with more trailing fields, or one cut short after them, still matches. A literal word of
the template is the prefilter: a record without it is never given to the regex. Per record the
work is the prefilter, one `match`, and a float or int per field with a role.

`Matcher.read(text, line, seq, ts, rank) -> Prog | None`: the progress record of a line (a
`Prog`: step, total, epoch and the times its fields give, in seconds), or None. A step read at
the upper end of a range `[a-b]` (`counters.range_end`) also gives its lower end (`range_from`).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from gpuslo.goodput.logs.counters import range_end
from gpuslo.goodput.logs.eta import eta_rate
from gpuslo.goodput.logs.roles import Reading, Role
from gpuslo.goodput.logs.tokens import BAR, DATE, DUR, NUM, clock_seconds, number, parts_seconds

_NUM = r"[-+]?(?:\d{1,3}(?:,\d{3})+(?![\d.])|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?[kKMGT]?|nan|NaN|inf"
_DUR = (r"(?:\d{1,4} days?, |\d{1,4}-)?\d{1,3}:\d\d(?::\d\d)?(?:\.\d+)?"
        r"|\d{1,4}(?:d|h|m|min) ?\d{1,4}(?:\.\d+)?(?:h|m|min|s|ms)(?: \d{1,4}(?:\.\d+)?(?:m|s|ms))?"
        r"(?: \d{1,4}ms)?"
        r"|\d{1,4} (?:days?|hours?|minutes?)"
        r"(?: \d{1,4}(?:\.\d+)? (?:hours?|minutes?|seconds?)){1,3}")
_DATE = r"\d{4}[-/]\d\d[-/]\d\dT?(?:[ T]?\d\d:\d\d(?::\d\d)?(?:[.,]\d+)?)?"
_GAP = r"\s*"
_LETTER = re.compile(r"[^\W\d_]")
_BAR = r"(?:[█▉▊▋▌▍▎▏━─╸╺╾╼■□▓▒░#\s]{0,400}|#{0,400}[1-9] {0,400}|\[[=>.\s-]{0,300}\])"
_PATTERN = {NUM: _NUM, DUR: _DUR, DATE: _DATE}
_COUNTS = ("step", "total", "epoch", "range_from")
MAX_SECONDS = 1e7  # about 115 days: a longer step, window or elapsed time is a misread
MAX_VALUE = 1e12  # a step, epoch or duration beyond this is not one (`1E0213` is a glued stamp)
_TIMES = ("elapsed", "step_s", "window_s", "smoothed_s", "line_s", "rate_ips", "rate_spi",
          "remaining")  # the time left: a drawn bar's pace where it gives no rate (`eta`)


class Prog:
    """One progress record. `printed` the step as printed, `total` its N, `epoch` the epoch
    printed on the line; times in seconds (None when the line does not give them): `step_s`
    per step, `window_s` for the steps since the previous record, `smoothed_s` an average per
    step, `line_s` this line's part of a step, `elapsed` since the bar or run began, `rate_s`
    seconds per iteration from a rate; `family` the progress family, `bar` a progress bar;
    `range_from` the lower end of a range the step is the upper end of (`Batch [a-b]`)."""

    __slots__ = ("line", "seq", "ts", "rank", "printed", "total", "epoch", "family", "bar",
                 "step_s", "window_s", "smoothed_s", "line_s", "elapsed", "rate_s", "matcher",
                 "found", "since", "parts", "glued", "range_from", "held")

    def __init__(self, line: int, seq: int, ts: float | None, rank: str | None,
                 printed: int = 0, family: str = "", bar: bool = False,
                 matcher: Matcher | None = None, found: re.Match[str] | Found | None = None
                 ) -> None:  # (the fast path gives all of them: each slot set once)
        self.line, self.seq, self.ts, self.rank = line, seq, ts, rank
        self.since = seq  # the first record this one stands for (`fast.thin` merges records)
        self.printed: int = printed
        self.total: int | None = None
        self.epoch: int | None = None
        self.family = family
        self.bar = bar
        self.step_s: float | None = None
        self.window_s: float | None = None
        self.smoothed_s: float | None = None
        self.line_s: float | None = None
        self.elapsed: float | None = None
        self.rate_s: float | None = None
        self.matcher: Matcher | None = matcher
        self.found: re.Match[str] | Found | None = found  # a fast match not yet read (`complete`)
        self.parts: Any = None  # durations printed once per step before it (`perstep.Parts`)
        self.glued = False  # values printed after it on its line (`bars.opening_draw`)
        self.range_from: int | None = None  # `a` of a range `[a-b]` read at `b`
        self.held = False  # its time is a window's that held other work (`windowlines`)

    def complete(self) -> Prog:
        """Read the fields of a fast match (done once, when the record is used)."""
        if self.found is not None and self.matcher is not None:
            found, self.found = self.found, None
            self.matcher.fill(self, found)
        return self


class Found:
    """A match of a fast regex known without running it: the spans (by group name, `""` the
    whole match) that the regex gave on another line of the same digit-masked shape
    (`fast.FastPath.block`), read on this line. Answers `group` and `end` as a `re.Match`."""

    __slots__ = ("text", "spans")

    def __init__(self, text: str, spans: dict[str, tuple[int, int]]) -> None:
        self.text, self.spans = text, spans

    def group(self, name: str) -> str | None:
        """The text of group `name`, None when the group took no part in the match."""
        start, end = self.spans[name]
        return None if start < 0 else self.text[start:end]

    def end(self, name: str = "") -> int:
        """Where group `name` (or the whole match) ends."""
        return self.spans[name][1]


def spans_of(found: re.Match[str]) -> dict[str, tuple[int, int]]:
    """The spans a `Found` answers from: each named group's, and the whole match's under `""`."""
    return {"": found.span(), **{name: found.span(name) for name in found.re.groupindex}}


@dataclass
class Matcher:
    """A compiled progress or epoch-marker template (see the module docstring)."""

    regex: re.Pattern[str]
    anchor: str
    fields: list[tuple[str, str, float, str]]  # (group, role, scale, kind)
    family: str
    bar: bool
    epoch_marker: bool
    reading: Reading
    hits: int = 0
    _fast: re.Pattern[str] | None = None
    _whole: re.Pattern[str] | None = None  # the whole template, uncut (`whole`)
    step_group: str | None = None  # the regex group of the step counter
    literals: tuple[str, ...] = ()  # the template's literal runs: a match holds every one
    drawn: bool = False  # the template draws a bar's glyphs (`[====>....]`, `█▏`)
    maskable: bool = False  # no ASCII digit in the template: see `fast.FastPath.block`

    def __post_init__(self) -> None:
        self.step_group = next((g for g, role, _, _ in self.fields if role == "step"), None)
        self.drawn = BAR in self.reading.template.text
        # the regex then tells the ten ASCII digits apart nowhere (only \d, [^\n] and classes
        # that hold all ten or none), so a line's match depends on where its digits are, not
        # on which they are
        self.maskable = not any(ch in "0123456789" for ch in self.reading.template.text)

    def read(self, text: str, line: int, seq: int, ts: float | None,
             rank: str | None) -> Prog | None:
        """The progress record of `text`, None when the template does not match it."""
        if self.anchor and self.anchor not in text:
            return None
        found = self.regex.match(text)
        if found is None or self.step_group is not None and step_value(
                found.group(self.step_group) or "x") is None:
            return None  # (a step that is no whole number: another printer's row of the shape)
        prog = Prog(line, seq, ts, rank)
        prog.family, prog.bar, prog.matcher = self.family, self.bar, self
        self.fill(prog, found)
        return prog

    def fill(self, prog: Prog, found: re.Match[str]) -> None:
        """Set `prog`'s counts and times from a match of this template."""
        left = None
        for group, role, scale, kind in self.fields:
            raw = found.group(group)
            value = _value(raw, kind) if raw is not None else None
            if value is None or abs(value) > MAX_VALUE:
                continue
            if role == "remaining":
                left = value * scale
                continue
            if role in _COUNTS:
                if value != int(value):
                    continue
                if role == "step":
                    prog.printed = int(value)
                elif role == "range_from":
                    prog.range_from = int(value)
                elif role == "total":
                    prog.total = int(value)
                else:
                    prog.epoch = int(value)
            elif role == "rate_ips":  # the scale: items a step (`throughput`), else 1
                prog.rate_s = scale / value if value > scale / MAX_SECONDS else None
            elif role == "rate_spi":
                prog.rate_s = value * scale if 0 < value * scale <= MAX_SECONDS else None
            elif getattr(prog, role) is None and (value > 0 or role == "elapsed") and (
                    value * scale <= MAX_SECONDS):
                setattr(prog, role, value * scale)
        eta_rate(prog, left, self.drawn)
        self.hits += 1

    def fast(self) -> re.Pattern[str]:
        """The template as a regex on a whole physical line: anything (a launcher prefix, a
        stamp, a logger's name) in a `_pre` group, then the template."""
        if self._fast is None:
            self._fast = re.compile(r"(?P<_pre>[^\n]{0,200}?)" + self.regex.pattern[1:])
        return self._fast

    def whole(self, text: str) -> bool:
        """Whether `text` fits this template to its end, every literal word of it (the matcher
        itself is cut after its last field with a role, so `epoch: 2 step: 62, loss is 2.2` and
        `epoch: 2 acc: 0.40, best acc is 0.40` both match an `epoch: <n>` cut; see `own_line`)."""
        if self._whole is None:
            self._whole = re.compile(_pattern(self.reading.template.text) + r"\s*$")
        return self._whole.match(text) is not None

    def step_of(self, found: re.Match[str]) -> int | None:
        """The step a fast match prints (the rest is read later, `fill`)."""
        if self.step_group is None:
            return None
        return step_value(found.group(self.step_group))


def own_line(progress: Prog, marker: Matcher, text: str) -> bool:
    """Whether a record both an epoch marker and an epoch-lines-as-steps template match is the
    progress template's own line: it fits that template whole and not the marker's, and that
    template prints each epoch once, rising, at least twice (two epochs make a count; one epoch
    line is no count of steps, and a line printed many times an epoch, `Epoch 2 - Batch loss:
    0.41` every 5 batches, fresh12 O13, times batches it does not number). MindSpore's
    LossMonitor `epoch: 2 step: 62, loss is 2.2144` is the steps beside its evaluation callback's
    `epoch: 2 acc: 0.4040, best acc is 0.4040` marker (fresh22 Z12); both cut to `epoch: <n>`."""
    own = progress.matcher
    if own is None or own is marker or own.reading.step is None:
        return False
    seen = own.reading.template.fields[own.reading.step].known()
    once = len(seen) >= 2 and all(b > a for a, b in zip(seen, seen[1:], strict=False))
    return once and own.whole(text) and not marker.whole(text)


def _pattern(text: str) -> str:
    """A template's regex to its end, every value unnamed (`Matcher.whole`)."""
    pieces = ["^", _GAP]
    for ch in text:
        pieces.append(f"(?:{_PATTERN[ch]})" if ch in _PATTERN else _GAP if ch == " " else
                      _BAR if ch == BAR else re.escape(ch))
    return "".join(pieces)


def step_value(raw: str) -> int | None:
    """The step of a step group's text (`Matcher.step_of`)."""
    if raw.isdigit():
        return int(raw)
    value = _value(raw, NUM)
    return int(value) if value is not None and value == int(value) and abs(
        value) <= MAX_VALUE else None


def _value(raw: str, kind: str) -> float | None:
    if kind == NUM:
        if len(raw) <= 15 and raw.isdigit() and raw.isascii():
            return float(raw)  # a plain count, as `number` reads it (no comma, suffix or inf)
        suffix = raw[-1] if raw[-1] in "kKMGT" else ""
        return number(raw[:-1] if suffix else raw, suffix)
    if ":" in raw:
        return clock_seconds(raw)
    return parts_seconds(raw)


def _anchor(text: str) -> str:
    pieces = [p for p in re.split(r"[\x01\x02\x03\x04\s]+", text) if len(p) >= 2]
    words = [p for p in pieces if re.search(r"[A-Za-z]{2}", p)]
    return max(words or pieces or [""], key=len)


def compile_reading(reading: Reading, family: str) -> Matcher:
    """The matcher of a progress (or epoch-marker) template (see the module docstring)."""
    text = reading.template.text
    used = {i: r for i, r in reading.roles.items()
            if i is not None and r.role in _COUNTS + _TIMES}  # a role learnt on no field: none
    step = reading.step
    if step and range_end(reading.template.fields, step - 1) == step:
        used[step - 1] = Role("range_from", why="the lower end of the step's range")
    bare = not _LETTER.search(text)  # a bare row of numbers: matched whole, every value
    last = len(reading.template.fields) if bare else max(used) if used else -1
    pieces, fields, index, cut = ["^", _GAP], [], 0, len(text)
    literals, run = [], ""
    for pos, ch in enumerate(text):
        if index > last and (ch in _PATTERN or ch == " "):  # after the last field: its unit only
            cut = pos
            break
        if ch in _PATTERN or ch in (" ", BAR):
            literals, run = literals + [run] if run else literals, ""
        else:
            run += ch
        if ch in _PATTERN:
            role: Role | None = used.get(index)
            if role is not None:
                group = f"g{index}"
                pieces.append(f"(?P<{group}>{_PATTERN[ch]})")
                fields.append((group, role.role, role.scale, ch))
            else:
                pieces.append(f"(?:{_PATTERN[ch]})")
            index += 1
        elif ch == " ":
            pieces.append(_GAP)
        elif ch == BAR:
            pieces.append(_BAR)
        else:
            pieces.append(re.escape(ch))
    regex = re.compile("".join(pieces) + (r"\s*$" if bare else ""))
    literals += [run] if run else []
    return Matcher(regex, _anchor(text[:cut]), fields, family, reading.bar,
                   reading.epoch_marker, reading,
                   literals=tuple(sorted({lit for lit in literals if len(lit) >= 2}, key=len)))
