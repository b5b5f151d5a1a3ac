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
  of another loop are an inner loop run once inside it (an evaluation's bar); `now_and_then`:
  an inner loop run again and again in a few of another bar's gaps;
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
_KERAS_DRAWN = re.compile(r" \[=*[>=]?\.*\] - ")
_SECONDS = ("s", "sec")
_XLUA_DRAWN = re.compile(r" [=>.]+\] ")  # the rest of xlua's glyph run after its `n/N`


def _percent_bar(f: Field) -> bool:
    return f.unit == "%" and f.after.lstrip().startswith("|")


def is_bar(fields: list[Field], roles: dict[int, Any]) -> bool:
    """A progress bar (see the module docstring); `roles` by field index (`.role` read)."""
    return any(r.role == "elapsed" and fields[i].kind == "dur" and fields[i].after.lstrip()
               .startswith(("<", "•")) for i, r in roles.items()) or any(
        _percent_bar(f) for f in fields) or any(
        r.role in ("rate_ips", "rate_spi") and fields[i].unit for i, r in roles.items())


def _bare_percent(fields: list[Field], index: int) -> bool:
    """True when field `index` is tqdm's percentage with its glyphs gone and its `n/N [e<r` right
    after it: a bar copied out of a notebook's HTML widget keeps only the text (Colab, ultralytics/
    yolov3 2020: `0/299 15.8G ... 608:  63% 34/54 [00:42<00:25,  1.26s/it]`)."""
    if index + 3 >= len(fields) or fields[index].unit != "%" or fields[index].after.strip():
        return False
    n, total, elapsed = fields[index + 1:index + 4]
    return (n.integer and n.after.strip() == "/" and total.integer and not n.key
            and total.after.strip() == "[" and elapsed.after.lstrip().startswith("<"))


def has_glyphs(fields: list[Field]) -> bool:
    """True when the line draws a `%|...|` bar (or shows one whose glyphs were lost:
    `_bare_percent`)."""
    return any(_percent_bar(f) or _bare_percent(fields, f.index) for f in fields)


def keras_drawn(fields: list[Field], index: int) -> bool:
    """True when field `index` is the `n` of an `n/N` drawn by Keras's Progbar: tf.keras
    `Progbar.update` writes `'%{numdigits}d/%d [' % (current, target)`, then `=` runs, `>` and
    `.` up to its width, `]`, then ` - ETA: …` or ` - 3s …` (keras/utils/generic_utils.py). The
    glyphs are drawn only by a bar, so its `n` counts the steps even from one or two lines (a
    run killed at its second bar state, fresh16 S12)."""
    if index + 1 >= len(fields) or fields[index].after.strip() != "/":
        return False
    total = fields[index + 1]
    return total.kind == "num" and total.integer and bool(_KERAS_DRAWN.match(total.after))


def xlua_drawn(fields: list[Field], index: int) -> bool:
    """True when field `index` is the `n` of an `n/N` that Lua Torch's xlua.progress draws over
    the middle of its glyph run: it writes ` [`, `=` up to the share done, `>`, `.` to its width,
    `] `, then ` Tot: 6h54m | Step: 81ms` (` ETA: ` while running), then backspaces to the bar's
    centre and writes ` n/N ` there (torch/xlua init.lua `progress`; ResMatch's `[=====
    301998/301998 =====>]  Tot: 6h54m | Step: 81ms`, fresh23 AA10). So a glyph run closed by `]`
    right after the `N`, never opened after it, marks the bar's own counter, even on one line."""
    if index + 1 >= len(fields) or fields[index].after.strip() != "/":
        return False
    total = fields[index + 1]
    return total.kind == "num" and total.integer and bool(_XLUA_DRAWN.match(total.after))


def after_glyphs(fields: list[Field], index: int) -> bool:
    """True when field `index` is the first number after a `%|...|` run (the bar's `n`), or
    after a percentage whose glyphs were lost (`_bare_percent`)."""
    return index > 0 and (_percent_bar(fields[index - 1]) or _bare_percent(fields, index - 1))


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


def now_and_then(draws: dict[tuple[str, int], list[tuple[int, int]]], family: str,
                 total: int) -> bool:
    """True when the bars of `total` in `family` ((seq, n) of every draw, by (family, N)) start
    again (their n goes back) two or more times, each run inside one gap between the steps (each
    n's first draw: the outer bar is redrawn at its n as the inner closes) of another N's bar
    whose n never goes back (or after its last step: a final evaluation), and those runs fill
    under half of that bar's steps: an evaluation loop run now and then between training steps
    (TRL's DPO log, fresh15 R08: the unnamed eval bar `0/68 … 68/68` after steps 50, 100 and 150
    of the unnamed `n/160` training bar, and once more after `160/160`). A first run the log
    opens inside (its first draw mid-way) may lie before that bar's first step: the tail of an
    evaluation begun before the excerpt (TRL's SFT log, fresh18 V14: `979/984` … `984/984`,
    then `1600/1755` … `1755/1755`, then a final `0/984` … `984/984`); a run ends at its last
    n's first draw (`_last_step`).
    An unnamed per-epoch bar run in every gap of an unnamed epochs bar (`1/3`, `2/3`, `3/3`)
    fills them all: it is the steps, not an inner loop."""
    own = draws[(family, total)]
    runs = [k for k in range(1, len(own)) if own[k][1] < own[k - 1][1]]
    if not runs:  # one run: `inside_one_gap`
        return False
    starts = [own[0][0]] + [own[k][0] for k in runs]
    ends = [_last_step(own, k) for k in runs] + [_last_step(own, len(own))]
    tail = own[0][1] > 1  # the log opens inside the first run: before the bar, its tail
    for (f, n), other in draws.items():
        if f != family or n == total or len(other) < NESTING_MIN or any(
                b[1] < a[1] for a, b in zip(other, other[1:], strict=False)):
            continue
        seqs = [seq for k, (seq, n) in enumerate(other) if k == 0 or n != other[k - 1][1]]
        gaps = [bisect_left(seqs, a) for a in starts]
        if len(set(gaps)) == len(gaps) and all(
                (at > 0 or (k == 0 and tail)) and at == bisect_left(seqs, b)
                for k, (at, b) in enumerate(zip(gaps, ends, strict=True))) and (
                2 * len(gaps) < len(seqs)):
            return True
    return False


def _last_step(own: list[tuple[int, int]], k: int) -> int:
    """The seq of the first draw of the last n before `own[k]` (a run's end): the redraws of
    its final n (`leave=True` drawing `984/984` once more after the outer bar moved) are no
    steps of it."""
    j = k - 1
    while j > 0 and own[j - 1][1] == own[j][1]:
        j -= 1
    return own[j][0]


# tqdm's rate before the first iteration is timed, in the bar's unit (`?it/s`, `?s/it`,
# `? examples/s` with `unit="examples"`: datasets' map and TRL's formatting bars)
_UNTIMED = re.compile(r"\?\s?[A-Za-z]+/s\b|\?s/[A-Za-z]+")
_BAR_ROLES = ("step", "total", "elapsed", "remaining")


def opening_draw(prog: Any) -> bool:
    """True for a bar's draw at n = 0 whose rate is printed as unknown (`?it/s`: tqdm prints it
    until the first iteration is timed; `? examples/s` in a bar's own unit) and that carries no
    value of its own: no field but the bar's (`0%`, `n/N`, its clocks) and nothing glued after it on
    its line (`Prog.glued`). Such a draw is the bar's creation, before any step ran (verl's
    `Training Progress:   0%|  | 0/3746 [00:00<?, ?it/s]`, Ultralytics' `0/500 [00:00<?, ?it/s]`),
    not a step 0; a draw at 0 that carries the step's values is one (stylegan2-pytorch's `0/90000
    [00:00<?, ?it/s]G: 1.51 | D: 0.21 | …`), and so is a bar that prints a rate (rich's `0/1250
    0:00:00 • -:--:-- 0.00it/s`)."""
    matcher = prog.matcher
    if not prog.bar or prog.printed != 0 or prog.glued or matcher is None:
        return False
    tpl = matcher.reading.template
    if not _UNTIMED.search(tpl.text):
        return False
    roles = matcher.reading.roles
    return all(roles[i].role in _BAR_ROLES or f.unit == "%" for i, f in enumerate(tpl.fields)
               if i in roles)


PER_CALL_TOTALS = 3  # distinct totals a family of finished bars shows at least (`per_call`)


def per_call(progress: list[Any]) -> set[str]:
    """Bar families that are one loop a bar: every draw is a finished bar (n = N), at least
    `PER_CALL_TOTALS` different N, and no N drawn by half the bars (TrackNetV4 calls Keras 3's
    `fit` once per video clip: `15/15 ━━━ 1s 53ms/step`, `18/18 …`, `183/183 …`, each bar printed
    once when its loop ends, fresh16 S03). Their counter is no run-wide step and no N is the
    training's usual one: each bar is a whole loop, none another loop's. A family whose bars are
    seen mid-way (n < N), or whose bars mostly share one N (Keras's `100/100` each epoch, an
    evaluation's `20/20` between), is not one."""
    totals: dict[str, list[int]] = {}
    unfinished: set[str] = set()
    for p in progress:
        if p.bar and p.total is not None:
            totals.setdefault(p.family, []).append(p.total)
            if p.printed != p.total:
                unfinished.add(p.family)
    return {f for f, ns in totals.items() if f not in unfinished
            and len(set(ns)) >= PER_CALL_TOTALS and 2 * max(map(ns.count, set(ns))) < len(ns)}


def reset_draw(prog: Any, before: Any) -> bool:
    """True for a bar's draw at n = 0 with its rate unknown (`?it/s`) right after the same
    family's draw at its N: tqdm's `reset()` for the bar's next pass (Lightning resets its
    epoch bar before it renames it: `Epoch 0: 100% 2/2 [...]`, then `Epoch 0:   0% 0/2 [00:00<?,
    ?it/s, loss=2.29, v_num=0, val_acc=0.166]`, then `Epoch 1:   0% 0/2 …`, fresh16 S14). The
    values it carries are the last pass's (tqdm keeps the postfix across a reset), so it counts
    no step, unlike a first draw at 0 that prints its own (`opening_draw`). `before`: the
    family's previous record, or None."""
    if before is None or not prog.bar or prog.printed != 0 or prog.matcher is None:
        return False
    done = before.total is not None and before.printed == before.total
    return done and prog.total == before.total and bool(
        _UNTIMED.search(prog.matcher.reading.template.text))

