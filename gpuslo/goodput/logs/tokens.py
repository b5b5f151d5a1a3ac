"""Values in a log record and the record's template (pure): the masker of the shape learner.

`values(text) -> list[Value]` finds every value a record prints, left to right: numbers (signs,
decimals, exponents, `5,856` thousands separators, `11.5K`/`85.8G` suffixes, `nan`, also glued
to a unit as an undefined time prints it: modded-nanogpt's first `step_avg:nanms`, a 0/0; a number
glued after other word characters is no value, except a counter glued to `step_`/`iter_`:
Tianxiaomo/pytorch-YOLOv4's `Train step_320: loss : …`), clock
durations (`00:18`, `4:42:54`, `1-07:27:33`, `13 days, 20:46:14`), compound durations (`1h 54m
53s`, `02m 16s 175ms`, tensorpack's spelled `3 minutes 43 seconds`) and dates (`2024-04-06
02:59:36`, masked but not given roles). Each
`Value` carries its text span, its kind, its number (seconds for durations), a unit written
right after it (`ms`, `it/s`, `s/it`, `GiB`) and the key printed before it (`elapsed time per
iteration (ms)`, `'loss'`, `step`) - the name the role inference reads.

`template(text, found) -> str` is the record with every value replaced by a placeholder
(`\\x01` number, `\\x02` duration, `\\x03` date), progress-bar glyphs (`█▏`, `━`,
`[====>...]`, tqdm's ascii `#####8`: `ASCII_BAR`) one `\\x04` and runs of spaces folded, so
that the lines one `print` statement writes share one template.

Why our own masker and not drain3 (evaluated 2025-12 on the shared corpus and the H200 logs,
drain3 0.9.11 from PyPI): drain3 splits on whitespace and masks whole tokens, so `[00:57<1:22:40,`
and `75.75it/s]` become one `<*>` each and the numbers inside lose their position and unit;
its similarity threshold merges the train and eval bars of one log or splits one tqdm bar into
a cluster per percentage (seen on T10), and it adds two dependencies (jsonpickle, cachetools).
At about 100k lines/s it would also be too slow per line; it would only ever run on the sample.
A regex masker gives typed fields with units and keys, which is what role inference needs, and
compiles back into one regex per template for the per-line match.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace

NUM, DUR, DATE, BAR = "\x01", "\x02", "\x03", "\x04"
PLACEHOLDERS = NUM + DUR + DATE
_SUFFIX = {"k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9, "T": 1e12}
_NUMBER = r"[-+]?(?:\d{1,3}(?:,\d{3})+(?![\d.])|\d+)(?:\.\d+)?(?:[eE][-+]?\d+)?"
_VALUE = re.compile(
    r"(?P<date>\d{4}[-/]\d\d[-/]\d\dT?(?:[ T]?\d\d:\d\d(?::\d\d)?(?:[.,]\d+)?)?)"
    r"|(?P<hms>(?<![\w.:])(?:\d{1,4} days?, |\d{1,4}-)?\d{1,3}:\d\d(?::\d\d)?(?:\.\d+)?(?![\w:]))"
    r"|(?P<dhms>(?<![\w.])\d{1,4}(?:d|h|m|min) ?\d{1,4}(?:\.\d+)?(?:h|m|min|s|ms)"
    r"(?: \d{1,4}(?:\.\d+)?(?:m|s|ms))?(?: \d{1,4}ms)?(?![\w/])"
    r"|(?<![\w.])\d{1,4} (?:days?|hours?|minutes?)"
    r"(?: \d{1,4}(?:\.\d+)? (?:hours?|minutes?|seconds?)){1,3}(?!\w))"
    r"|(?P<num>(?:(?<![\w.])|(?<=(?<![A-Za-z])[Ss]tep_)|(?<=(?<![A-Za-z])[Ii]ter_))"
    rf"{_NUMBER}|(?<![\w.])(?:nan|NaN|inf)(?=(?:ms|%)?(?!\w)))"
    r"(?P<sfx>[kKMGT](?![A-Za-z]))?(?P<unit>[A-Za-z%µ]{1,8}(?:/[A-Za-z]{1,6})?)?"
)
# tqdm's `ascii=True` bar (charset ` 123456789#`): full cells `#`, then the partial cell as a
# digit, padded with blanks, between the percentage's `%|` and the closing `|` (AllenNLP's
# `loss: 0.0882 ||:  58%|#####8    | 4573/7882 [21:50<11:54,  4.63it/s]`, fresh21 Y12): the
# digit is a glyph of the bar, no value. A digit between bars not opened by `%|` (a table's
# `|8|`) stays a value.
ASCII_BAR = re.compile(r"(?<=%\|)#{0,400}[1-9] {0,400}(?=\|)")
_GLYPHS = re.compile(ASCII_BAR.pattern + r"|(?<=\|)[█▉▊▋▌▍▎▏ ]{1,400}(?=\|)|[█▉▊▋▌▍▎▏━─╸╺╾╼■□▓▒░#]+"
                     r"|\[[=>.\s-]{3,}\]|\[[=>.\s-]{0,200}>[=>.\s-]{0,200}\]")
_SPACES = re.compile(r"\s+")
_KEY = re.compile(r"([A-Za-z_][\w/@.()' -]{0,60}?)\s*[:=]?\s*['\"]?\s*$")
_DUR_PART = re.compile(r"(\d+(?:\.\d+)?)\s?(days?|d|h|min|ms|m|s)")
_DUR_SECONDS = {"d": 86400.0, "day": 86400.0, "days": 86400.0, "h": 3600.0, "m": 60.0,
                "min": 60.0, "s": 1.0, "ms": 1e-3}


@dataclass(frozen=True, slots=True)
class Value:
    """One value of a record. kind: `num`, `dur` (a duration written as a clock or in h/m/s
    parts; `number` is seconds) or `date`; `text` the printed text; `number` None for `nan`
    and dates; `unit` what is glued after a number (`ms`, `it/s`); `key` the words before it;
    `after` the text after it up to the next value (a unit written apart: `57.126 sec/step`);
    `start`/`end` its span in the record; `integer` True for a number without a fraction."""

    kind: str
    text: str
    number: float | None
    unit: str
    key: str
    after: str
    start: int
    end: int
    integer: bool


def number(text: str, suffix: str = "") -> float | None:
    """`5,856` → 5856.0, `11.5` with suffix `K` → 11500.0; None for nan/inf or no number."""
    try:
        value = float(text.replace(",", ""))
    except ValueError:
        return None
    if value != value or value in (float("inf"), float("-inf")):
        return None
    return value * _SUFFIX.get(suffix, 1.0)


def clock_seconds(text: str) -> float | None:
    """`00:18` → 18, `4:42:54` → 16974, `1-07:27:33` and `13 days, 20:46:14` with their days."""
    days = 0.0
    if "day" in text:
        head, _, text = text.partition(",")
        days = float(head.split()[0])
        text = text.strip()
    elif "-" in text:
        head, _, text = text.partition("-")
        days = float(head)
    seconds = 0.0
    for part in text.split(":"):
        try:
            seconds = seconds * 60 + float(part)
        except ValueError:
            return None
    return seconds + days * 86400


def parts_seconds(text: str) -> float:
    """`1h 54m 53s` → 6893, `02m 16s 175ms` → 136.175."""
    return sum(float(n) * _DUR_SECONDS[u] for n, u in _DUR_PART.findall(text))


_QUALIFIER = re.compile(r"(?<=[A-Za-z])\([A-Za-z]+\)$")


def _key(prefix: str) -> str:
    """The name printed before a value: the last words of `prefix` up to a separator, without
    the `:`/`=` and quotes that join it to the value; '' when an opening bracket comes last."""
    tail = _GLYPHS.sub(" ", prefix).rstrip(" \t'\":=-")
    if tail[-1:] in ("[", "(", "{"):  # `Epoch [12]`, `Epoch: [1]`: the word before the bracket;
        # `epoch: {1/300}`: a format string that wraps every value in braces (fresh22 Z20)
        tail = _QUALIFIER.sub("", tail[:-1].rstrip(" \t'\":="))  # `Epoch(train)  [3]`
        if not tail[-1:].isalpha():
            return ""
    if not tail or tail[-1] in "([{<|/•":
        return ""
    tail = re.split(r"\s{2,}|[|,;{}\[\]]|\s-\s|\t", tail)[-1]
    found = _KEY.search(tail)
    return (found.group(1) if found else tail).strip(" '\":=")


# a count noun glued after an integer names it (ESPnet2's reporter, espnet2/train/reporter.py:
# `f"{epoch}epoch:{key}:{start}-{end}batch"`, `1epoch:train:6376-6750batch: iter_time=…`): the
# epoch and the batch, not the words printed before them (`INFO: 1epoch`, `train:6376-6750batch`)
_GLUED_NAMES = {"epoch", "batch", "step", "iter"}


def values(text: str) -> list[Value]:
    """Every value of `text`, left to right (see the module docstring)."""
    out: list[Value] = []
    last = 0
    matches = list(_VALUE.finditer(text))
    if "%|" in text and (bar := ASCII_BAR.search(text)) is not None:
        matches = [m for m in matches if not bar.start() <= m.start() < bar.end()]
    for i, m in enumerate(matches):
        kind = m.lastgroup if m.lastgroup in ("date", "hms", "dhms") else "num"
        if m.group("date"):
            kind, num = "date", None
        elif m.group("hms"):
            kind, num = "dur", clock_seconds(m.group("hms"))
        elif m.group("dhms"):
            kind, num = "dur", parts_seconds(m.group("dhms"))
        else:
            num = number(m.group("num"), m.group("sfx") or "")
        nxt = matches[i + 1].start() if i + 1 < len(matches) else len(text)
        core = m.group("num") or ""
        unit = m.group("unit") or "" if kind == "num" else ""
        key = unit if unit in _GLUED_NAMES and core.isdigit() else _key(text[last:m.start()])
        out.append(Value(kind, m.group(0), num, unit, key, text[m.end():nxt][:40], m.start(),
                         m.end(), kind == "num" and "." not in core and "e" not in core.lower()
                         and core.lower() not in ("nan", "inf") and not m.group("sfx")))
        last = m.end()
    return _paired_names(out)


# `time (data): 0.326 (0.002)`: two names, the second in brackets, for two values printed the
# same way (BasicSR's `time (data): {iter_time:.3f} ({data_time:.3f})`, basicsr/utils/logger.py)
_PAIRED_NAME = re.compile(r"^(?P<outer>[A-Za-z_][\w ]*?)\s*\((?P<inner>[A-Za-z_]\w*)\)$")
_UNIT_NAMES = {"ms", "s", "sec", "secs", "seconds", "min", "mins", "h", "hr", "us", "t", "%"}


def _paired_names(out: list[Value]) -> list[Value]:
    """Name each of two values printed as `A (B): a (b)` by its own name: `a` is `A`'s and the
    bracketed `b` is `B`'s (BasicSR's `time (data): 0.326 (0.002)`: the iteration's time, then
    the data loading's; not one value named `time (data)` and one unnamed). A bracketed unit
    (`elapsed time per iteration (ms): 1234.5`) or open_clip's `(t)` (time) names no value
    of its own; a bracket that is no lone value after the first (`(0.002, 3)`) pairs nothing."""
    for i in range(len(out) - 1):
        first, second = out[i], out[i + 1]
        found = _PAIRED_NAME.match(first.key)
        if found is None or found.group("inner").lower() in _UNIT_NAMES or second.key or (
                first.after.strip() != "(" or not second.after.lstrip().startswith(")")):
            continue
        out[i] = replace(first, key=found.group("outer"))
        out[i + 1] = replace(second, key=found.group("inner"))
    return out


def template(text: str, found: list[Value] | None = None) -> str:
    """The record's template (see the module docstring)."""
    found = values(text) if found is None else found
    pieces: list[str] = []
    last = 0
    for v in found:
        pieces.append(text[last:v.start])
        mark = NUM if v.kind == "num" else DUR if v.kind == "dur" else DATE
        pieces.append(mark + (v.unit if v.kind == "num" else ""))
        last = v.end
    pieces.append(text[last:])
    shape = _GLYPHS.sub(" " + BAR + " ", "".join(pieces))
    return _SPACES.sub(" ", shape).strip()
