"""Sample records grouped by template, with what each numeric field did across the group (pure).

`group(records) -> list[Template]`: records (`SampleRecord`: line, text, stamp, rank) that share a
template (`tokens.template`) form one `Template`, in order of first appearance. Consecutive
identical texts (a line printed by two handlers or ranks) are kept once. Each value position
becomes a `Field` holding its key, unit, the text after it and its numbers across the group, so
role inference (`roles`) can ask whether it rises by a steady stride, resets, or stays put.
A template's values are by position: the records of one template print the same fields in the
same order, which is what makes them one template. A template with no letter (a bare row of
numbers) is keyed by which of its values are integers too: ColBERT's `[Mar 29, 16:33:54] 970
5.343…` (batch index, loss) and another process's unstamped `0.214… 4.118…` pairs interleaved
with them are two printers, not one (fresh13 P17).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from statistics import median

from gpuslo.goodput.logs.tokens import Value, template, values


def readable(template: str) -> str:
    """A template with its placeholders written out (`<n>` a number, `<d>` a duration, `<date>`
    a date, `<bar>` a progress bar's glyphs): what `--explain` and every label built from a
    template's text print, never the control characters that stand for them."""
    return (template.replace("\x01", "<n>").replace("\x02", "<d>").replace("\x03", "<date>")
            .replace("\x04", "<bar>"))

MAX_TEMPLATES = 4000  # distinct templates kept from one sample; the rest are counted only
MAX_VALUES = 2000  # values per field kept for role inference
BURST_S = 1.0  # records of one template stamped within this are copies of one record
MAX_READ_PER_SHAPE = 200  # records of one digit-masked shape whose values are read; the rest
_EXPONENT = re.compile(r"[-+]?[\d.,]+[eE][-+]?\d")
# strftime's `%H:%M:%S` (torch_xla test_utils.now(): `Time=22:00:10`); `str(timedelta)` and
# tqdm print an elapsed time's hours unpadded (`0:12:34`, `1:02:03`)
_OF_DAY = re.compile(r"(?:[01]\d|2[0-3]):[0-5]\d:[0-5]\d(?:\.\d+)?$")
_DIGITS = re.compile(r"\d+")  # are counted only (reading values costs ~1 ms a long line)
_LETTER = re.compile(r"[^\W\d_]")


@dataclass(frozen=True, slots=True)
class SampleRecord:
    """One record of the learning sample: physical line, text (prefixes and stamp removed),
    stamp (Unix seconds or None), the rank/host its prefix named."""

    line: int
    text: str
    ts: float | None
    rank: str | None


@dataclass
class Field:
    """One value position of a template across its records."""

    index: int
    kind: str
    key: str
    unit: str
    after: str
    numbers: list[float | None] = field(default_factory=list)
    integer: bool = True
    rounded: bool = False  # printed in exponent form (`3.2e+4`: tqdm's 3 significant figures)
    # every value a zero-padded `HH:MM:SS` under 24 h: strftime's `%H:%M:%S`, a time of day
    of_day: bool = False

    def known(self) -> list[float]:
        """The numbers this field printed, `nan` left out."""
        return [n for n in self.numbers if n is not None]

    def rising(self) -> float:
        """Share of consecutive pairs that do not go down (1.0 when fewer than two values)."""
        seen = self.known()
        pairs = list(zip(seen, seen[1:], strict=False))
        return sum(b >= a for a, b in pairs) / len(pairs) if pairs else 1.0

    def constant(self) -> bool:
        """True when every printed number is the same."""
        return len(set(self.known())) <= 1

    def one_digit_apart(self) -> bool:
        """True when the values span at most one unit of their last printed digit and some
        two in a row are equal (ESPnet2's per-window mean `train_time=0.013`, `0.013`, `0.014`,
        `0.014`, dev B25): a steady value that rounding moves, no clock rising with the work. Only a
        number printed with a fraction (a mean at fixed decimals) is so read."""
        seen = self.known()
        if self.kind != "num" or self.integer or len(seen) < 3 or not any(
                a == b for a, b in zip(seen, seen[1:], strict=False)):
            return False  # a clock printed whole (a bar's `00:05`, `00:04`: fresh7 J05) stays
        places = max(len(repr(n).partition(".")[2].rstrip("0")) if "e" not in repr(n) else 9
                     for n in seen)
        return max(seen) - min(seen) <= 10.0 ** -places * 1.0001

    def stride(self) -> float | None:
        """Median positive difference between consecutive values, None when none rose."""
        seen = self.known()
        ups = [b - a for a, b in zip(seen, seen[1:], strict=False) if b > a]
        return median(ups) if ups else None


@dataclass
class Template:
    """Records sharing one template: `text` the template, `example` its first record,
    `lines`/`stamps` per record, `fields` per value position."""

    text: str
    example: str
    fields: list[Field]
    lines: list[int] = field(default_factory=list)
    stamps: list[float | None] = field(default_factory=list)
    ranks: set[str | None] = field(default_factory=set)

    @property
    def count(self) -> int:
        """Records of this template in the sample."""
        return len(self.lines)

    def copies(self) -> bool:
        """True when the records are one burst of copies: consecutive lines stamped within
        `BURST_S` (every rank printing the same progress line without a rank prefix, its
        timings a little apart: scepter's `iter: [10/500]` four times in 90 ms), or with no
        stamp at all (llama-recipes' finished `step 49/50` bar from four FSDP ranks on four
        consecutive lines). A counter constant over such records still counts; one constant
        over lines far apart does not."""
        stamps = [t for t in self.stamps if t is not None]
        return self.count >= 2 and self.lines[-1] - self.lines[0] == self.count - 1 and (
            not stamps or len(stamps) == self.count and max(stamps) - min(stamps) <= BURST_S)

    def add(self, record: SampleRecord, found: list[Value]) -> None:
        """Add one record's values (same template, so same positions)."""
        self.lines.append(record.line)
        self.stamps.append(record.ts)
        self.ranks.add(record.rank)
        for f, v in zip(self.fields, found, strict=False):
            if len(f.numbers) < MAX_VALUES:
                f.numbers.append(v.number)
            f.integer = f.integer and (v.integer or v.number is None)
            f.rounded = f.rounded or v.kind == "num" and bool(_EXPONENT.match(v.text))
            f.of_day = f.of_day and bool(_OF_DAY.match(v.text))


def group(records: list[SampleRecord]) -> list[Template]:
    """The templates of `records` (see the module docstring)."""
    by_text: dict[str, Template] = {}
    by_digits: dict[str, tuple[Template, int]] = {}
    previous: tuple[str, str | None] | None = None
    for record in records:
        if not record.text.strip():
            continue
        if previous == (record.text, record.ts and round(record.ts)):
            continue
        previous = (record.text, record.ts and round(record.ts))
        digits = _DIGITS.sub("0", record.text)
        known = by_digits.get(digits)
        if known is not None and known[1] >= MAX_READ_PER_SHAPE:  # enough values seen
            known[0].lines.append(record.line)
            known[0].stamps.append(record.ts)
            continue
        found = values(record.text)
        shape = template(record.text, found)
        key = shape if _LETTER.search(shape) else shape + "\x00" + "".join(
            "i" if v.integer else "f" for v in found)  # a bare row: its kinds of number too
        tpl = by_text.get(key)
        if tpl is None:
            if len(by_text) >= MAX_TEMPLATES:
                continue
            fields = [Field(i, v.kind, v.key, v.unit, v.after, [], v.kind == "num",
                            of_day=v.kind == "dur") for i, v in enumerate(found)]
            tpl = by_text[key] = Template(shape, record.text, fields)
        tpl.add(record, found)
        by_digits[digits] = (tpl, (known[1] if known else 0) + 1)
    return list(by_text.values())
