"""Counters that no name marks: an unnamed epoch and in-epoch counter opening a record (pure).

`unnamed_counter(tpl) -> (epoch, step) | None`: the step field (and the epoch field, or None) of
a template whose counter is named nowhere, where `roles.read_template` finds no named one: a bare
row's first integer (`barerows.bare_row_counter`), a listed one (`barerows.bare_list_counter`),
or an opening pair (`lead_pair`).

`lead_pair(tpl) -> (epoch, step) | None`: a record that opens with two unnamed integers, a blank
between them, and then named values (Learning-to-See-in-the-Dark's train_Sony.py prints
`"%d %d Loss=%.3f Time=%.3f" % (epoch, cnt, …)`: `333 160 Loss=nan Time=0.036`, `333 161 …`, then
`334 1 …`, fresh16 S04). Nothing names the two numbers, so how they behave across the records
says what they are: the second rises within each run of one first value and falls back only
where the first rises, by one; the first never falls and rises at least once. That is an epoch
and a step counted within it; a pair that never shows the reset (one epoch only), or whose
second number falls while the first stays, or whose first jumps, is not read so.

`inner_pair(fields, step) -> int | None`: the same behaviour where both numbers are printed as
unnamed `n/N` pairs side by side (`'%g/%g' % (epoch, epochs - 1), '%g/%g' % (i, nb - 1)` of
ultralytics/yolov3's train.py and of JDE's, which copies it: `     0/29       0/165     0.227 …`
… `     1/29       0/165 …`, fresh22 Z09): the first pair is the epoch and the second counts
the batches within it, where the first n never falls, its N stays, and the second n falls only
where the first rises, by one. A first pair that never rises (one epoch) is constant and never
chosen as the step; one that falls, or jumps, or a second n that falls while the first stays
(two counters of their own) is not read so.
"""

from __future__ import annotations

from gpuslo.goodput.logs.barerows import bare_list_counter, bare_row_counter
from gpuslo.goodput.logs.templates import Field, Template

MIN_RECORDS = 3  # records of the template that make the pair's behaviour a pattern


def lead_pair(tpl: Template) -> tuple[int, int] | None:
    """(epoch field index, step field index) of `tpl` (module docstring), or None."""
    fields = tpl.fields
    if tpl.count < MIN_RECORDS or len(fields) < 3 or not tpl.text.lstrip().startswith("\x01"):
        return None
    first, second, named = fields[0], fields[1], fields[2]
    if first.after != " " or not second.after.startswith(" ") or not named.key or any(
            f.kind != "num" or f.key or not f.integer or f.unit for f in (first, second)):
        return None
    return (0, 1) if epoch_and_count(first, second) else None


def epoch_and_count(epoch: Field, count: Field) -> bool:
    """Whether `count` rises within each run of one `epoch` value and falls back only where
    `epoch` rises, by one, which it does at least once (module docstring)."""
    pairs = list(zip(epoch.numbers, count.numbers, strict=False))
    if any(e is None or n is None for e, n in pairs):
        return False
    rose = False
    for (e0, n0), (e1, n1) in zip(pairs, pairs[1:], strict=False):
        if e1 == e0 and n1 > n0:
            continue
        if e1 == e0 + 1 and n1 <= n0:
            rose = True
            continue
        return False
    return rose


def unnamed_counter(tpl: Template) -> tuple[int | None, int] | None:
    """(epoch field index or None, step field index) of `tpl` (module docstring), or None."""
    if bare_row_counter(tpl):
        return None, 0
    listed = bare_list_counter(tpl)
    return (None, listed) if listed is not None else lead_pair(tpl)


def inner_pair(fields: list[Field], step: int) -> int | None:
    """The index of the second `n/N` when `step` is the first of two unnamed pairs that are an
    epoch and a count within it (module docstring), else None."""
    inner = step + 2
    if inner + 1 >= len(fields):
        return None
    outer, of, count, total = fields[step], fields[step + 1], fields[inner], fields[inner + 1]
    if any(n.key or t.key or n.kind != "num" or t.kind != "num" or not (n.integer and t.integer)
           or n.after.strip() != "/" for n, t in ((outer, of), (count, total))):
        return None
    if of.after.strip() or not of.after or not (of.constant() and total.constant()):
        return None  # (two pairs side by side, each N fixed)
    return inner if epoch_and_count(outer, count) else None
