"""What a progress bar's fields are, from the bar's own layout (pure; `roles` asks).

tqdm draws `{desc}: {percentage}%|{bar}| {n}/{total} [{elapsed}<{remaining}, {rate}]`; a custom
`bar_format` keeps the `%|bar|` and the `n/N` after it and may drop the rest (YOLOv5 v7:
`0/1 22.4G ... 199 640: 100%|██████████| 1849/1849 13:15`, no `<` and no rate). So:

- `is_bar(fields, roles)`: a bar has an elapsed time before `<`/`•`, a `42%|`, or a rate glued
  to its number (`75.75it/s`);
- `after_glyphs(fields, index)`: the `n` of the `n/N` right after a `%|...|` run is the bar's
  own counter; another `n/N` on the line (YOLOv5's epoch `0/1` in its first column) is not;
- `elapsed_after_total(fields, step, total)`: a duration printed right after the bar's `N`
  with no name is its elapsed time (`1849/1849 13:15`; Keras's `100/100 [====] - 142s 1s/step`,
  the epoch's seconds beside a rounded per-step figure), not a step time;
- `inside_one_gap(own, other)`: records that all lie between the same two consecutive records
  of another loop are an inner loop run once inside it (an evaluation's bar);
- `opening_draw(prog)`: a bar drawn at 0 that says no iteration has been timed yet and carries
  nothing else is the bar's creation, not a step 0.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from typing import Any

from gpuslo.goodput.logs.templates import Field

# between a bar's N and its elapsed time: nothing (`1849/1849 13:15`), or Keras's glyphs and
# dash (`100/100 [====] - 142s 1s/step`: tf.keras Progbar prints ` - %.0fs` since the bar began)
_KERAS_GAP = re.compile(r"(?:\[[=>.\x04 ]*\]\s*-)?")
_SECONDS = ("s", "sec")


def _percent_bar(f: Field) -> bool:
    return f.unit == "%" and f.after.lstrip().startswith("|")


def is_bar(fields: list[Field], roles: dict[int, Any]) -> bool:
    """A progress bar (see the module docstring); `roles` by field index (`.role` read)."""
    return any(r.role == "elapsed" and fields[i].kind == "dur" and fields[i].after.lstrip()
               .startswith(("<", "•")) for i, r in roles.items()) or any(
        _percent_bar(f) for f in fields) or any(
        r.role in ("rate_ips", "rate_spi") and fields[i].unit for i, r in roles.items())


def has_glyphs(fields: list[Field]) -> bool:
    """True when the line draws a `%|...|` bar."""
    return any(_percent_bar(f) for f in fields)


def after_glyphs(fields: list[Field], index: int) -> bool:
    """True when field `index` is the first number after a `%|...|` run (the bar's `n`)."""
    return index > 0 and _percent_bar(fields[index - 1])


def elapsed_after_total(fields: list[Field], total: int | None) -> int | None:
    """The index of an unnamed duration printed right after the bar's `N` (or after Keras's
    glyphs `[====] - `), else None."""
    if total is None or total + 1 >= len(fields):
        return None
    nxt = fields[total + 1]
    timed = nxt.kind == "dur" or nxt.unit in _SECONDS
    if not timed or nxt.key or not _KERAS_GAP.fullmatch(fields[total].after.strip()):
        return None
    return nxt.index


NESTING_MIN = 3  # records of the outer loop that make its gaps a loop's


def inside_one_gap(own: list[int], other: list[int]) -> bool:
    """True when every position in `own` (sorted lines or seqs of one loop's records) lies
    between the same two consecutive positions of `other` (sorted, at least NESTING_MIN): an
    inner loop run once inside the other (HF Trainer's end-of-epoch evaluation bar `N/280`,
    drawn with tqdm's cursor-up, between the training bar's `1677/1677` and its final redraw;
    mmcv's `[>>>…] 1/117, 0.6 task/s` test bar between two `iter:` lines). A loop whose
    records fall in several gaps of the other (a bar drawn between every two step lines) is
    not one."""
    if not own or len(other) < NESTING_MIN:
        return False
    at = bisect_left(other, own[0])
    return 0 < at < len(other) and own[-1] < other[at]


def inner_total(steps: dict[tuple[str, int], list[int]], seqs: dict[tuple[str, int], list[int]],
                family: str, total: int) -> bool:
    """True when the bars of `total` in `family` (each n's first draw, `steps`, by (family, N))
    all lie in one gap of another N's bars of that family (every draw, `seqs`): an inner loop
    drawn once inside it (`inside_one_gap`)."""
    return any(inside_one_gap(steps[(family, total)], other)
               for (f, n), other in seqs.items() if f == family and n != total)


_UNTIMED = ("?it/s", "?s/it")  # tqdm's rate before the first iteration is timed
_BAR_ROLES = ("step", "total", "elapsed", "remaining")


def opening_draw(prog: Any) -> bool:
    """True for a bar's draw at n = 0 whose rate is printed as unknown (`?it/s`: tqdm prints it
    until the first iteration is timed) and that carries no value of its own: no field but the
    bar's (`0%`, `n/N`, its clocks) and nothing glued after it on its line (`Prog.glued`). Such
    a draw is the bar's creation, before any step ran (verl's `Training Progress:   0%|  |
    0/3746 [00:00<?, ?it/s]`, Ultralytics' `0/500 [00:00<?, ?it/s]`), not a step 0; a draw at
    0 that carries the step's values is one (stylegan2-pytorch's `0/90000 [00:00<?, ?it/s]G:
    1.51 | D: 0.21 | …`), and so is a bar that prints a rate (rich's `0/1250 0:00:00 • -:--:--
    0.00it/s`)."""
    matcher = prog.matcher
    if not prog.bar or prog.printed != 0 or prog.glued or matcher is None:
        return False
    tpl = matcher.reading.template
    if not any(mark in tpl.text for mark in _UNTIMED):
        return False
    roles = matcher.reading.roles
    return all(roles[i].role in _BAR_ROLES or f.unit == "%" for i, f in enumerate(tpl.fields)
               if i in roles)
