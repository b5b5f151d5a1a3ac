"""Step counters of records that are bare numbers, no word naming any (pure).

`bare_row_counter(tpl) -> bool`: the unnamed integer opening a row of numbers alone counts the
steps where it rises by one steady stride over stamped rows (ColBERT's `970 5.343…`).
`bare_list_counter(tpl) -> int | None`: the one steadily rising integer of a record that is only
a bracketed list of numbers (so-vits-svc's `[2.439, …, 5600, 9.86e-05]`). Nothing names these
counters, so how the numbers behave across the records says which one counts
(`leadpair.unnamed_counter` asks these first). Split out of `counters.py`, whose counters are
found by their names.
"""

from __future__ import annotations

import re

from gpuslo.goodput.logs.templates import Field, Template

_LETTERS = re.compile(r"[^\W\d_]")


def bare_row_counter(tpl: Template) -> bool:
    """The unnamed integer that opens a bare row of numbers (no word on the line: ColBERT's
    `print_message(batch_idx, train_loss)`, `[Mar 29, 16:33:54] 970 5.343118787620297`, fresh13
    P17) is the step counter only where the rows' integers rise by one steady stride, three rows
    or more, stamped, with time passing between them (a loop, not a table printed at once:
    a per-class `0 0.512`, `1 0.433` listing rises by one too, in the same second). Its own
    template group only: another printer's float pairs beside it are another template
    (`templates.group`)."""
    fields = tpl.fields
    if _LETTERS.search(tpl.text) or not tpl.text.lstrip().startswith("\x01") or len(fields) < 2:
        return False
    first = fields[0]
    seen = first.known()
    strides = {b - a for a, b in zip(seen, seen[1:], strict=False)}
    stamps = [t for t in tpl.stamps if t is not None]
    return (first.kind == "num" and first.integer and not first.key and not first.unit
            and len(seen) >= 3 and len(strides) == 1 and min(strides) > 0
            and len(stamps) == len(tpl.stamps) and max(stamps) > min(stamps)
            and all(b >= a for a, b in zip(stamps, stamps[1:], strict=False)))


# a record whose message is a bare bracketed list of numbers, after at most a level word
_BARE_LIST = re.compile(r"\[\x01(?:, \x01){3,}\]\s*$")
_LEVEL_ONLY = re.compile(r"^[\s\x01|:-]*(?:(?:INFO|DEBUG|WARNING|WARN|ERROR)[\s\x01|:-]*)?$")
LIST_MOSTLY_UP = 2 / 3  # share of row-to-row differences that rise (the rest: relaunches)


def bare_list_counter(tpl: Template) -> int | None:
    """The index of the step counter inside a record that is only a bracketed list of unnamed
    numbers (so-vits-svc 3.0's `logger.info([*losses, global_step, lr])`: `2023-02-18
    19:07:57,251  32k  INFO  [2.439, 2.216, 5.347, 18.449, 0.810, 5600, 9.86e-05]`, fresh15
    R18): the one value of the list that is an integer on every row and rises by one steady
    stride (each rise the same; at least two thirds of the row-to-row changes rise, the others
    go back or repeat where the job was relaunched), three rows or more, stamped, with time
    passing. None where no value or more than one does so (which is the step is not settled),
    or where a word other than a level precedes the list (`eval scores [..]`)."""
    found = _BARE_LIST.search(tpl.text)
    stamps = [t for t in tpl.stamps if t is not None]
    if (found is None or not _LEVEL_ONLY.match(tpl.text[:found.start()])
            or len(stamps) != len(tpl.stamps) or len(stamps) < 3 or max(stamps) <= min(stamps)):
        return None
    first = tpl.text[:found.start()].count("\x01")
    hits = [f.index for f in tpl.fields[first:] if _steady_integers(f)]
    return hits[0] if len(hits) == 1 else None


def _steady_integers(f: Field) -> bool:
    """True when `f` is an integer on every row that rises by one stride
    (`bare_list_counter`)."""
    seen = f.known()
    if f.kind != "num" or not f.integer or f.unit or len(seen) < 3 or len(seen) != len(f.numbers):
        return False
    steps = [b - a for a, b in zip(seen, seen[1:], strict=False)]
    ups = {d for d in steps if d > 0}
    return len(ups) == 1 and sum(d > 0 for d in steps) >= LIST_MOSTLY_UP * len(steps)

