"""Durations on lines of their own that time many steps: a window's or an epoch's time (pure).

`aside` gives a line with no counter and one duration to the progress record beside it, as
that record's time. Some loops print such a line once per several records, timing all the steps
since the last one:

- a bare duration every k records (GaitSet's `model.py` prints `datetime.now() - _time1` every
  1000 iterations, `0:05:05.583864` over ten `iter 78000:, hard_loss_metric=…` records 100
  apart, fresh20 X08): 305.6 s / 1000 = 0.3056 s an iteration, not 305.6 s;
- an epoch's time on a line of its own (StarGAN-VC's `Time Elapsed for This Epoch: 00:02:46`
  after each 146th `Iteration: 0001459, …` record, fresh20 X12): the epoch's steps, counted by
  the counter's advance between two such lines;
- an epoch summary printed once, after a per-epoch counter's `n/N` (Neural-Spectral-Codec's
  `Epoch 1/50 | Loss: 0.9787 | Time: 13635.27s` after `Epoch 1 | Batch 2910/2911`, fresh20
  X04): its epoch's N steps, 13635.27 / 2911 = 4.684 s a batch (an epoch's mean).

A clock since the run began (`elapsed`, LightGBM's `2.432232 seconds elapsed, finished 998
iteration`, fresh7 J09) is no window unless it is named for the epoch (`Time Elapsed for This
Epoch`); a line printed once per step times that step (`aside`); a line of more than
`aside.MAX_VALUES` values besides the epoch, or holding a date (gpustat's `host Sun Oct 16
09:35:18 2022 470.01` between OpenPCDet's records, fresh10 M11), is no window line.

`window_steps(reading, progress) -> int | None`: the steps one record of the timing template
`reading` covers, learnt from the sample (the counter's advance between two of its lines,
steady, with at least two progress records between each two; or, for a line named for the epoch,
the per-epoch counter's N); None where it times one record (printed after each) or where the
sample cannot tell. `learn` reads such a template's duration as `window_s` only where the
progress lines give no time of their own.

`per_step(found, covered, mixed)`: at read time (`reader`), the window's time over the steps
it covered (the counter's advance since the last window line where the reader saw it, else
the learnt count) becomes the `step_s` of each record it covers; a window that held other
work (a save, a restore, a failure or a restart line between two window lines: StarGAN-VC's
epoch with its `save model:` and test block, 187 s against 166 s) is `held`: its time stays
on the clock, out of the step-time statistics (`steptimes`). The records after the last window
line, which no window times, take the last clean window's time per step (`tail`): the pace the
log last showed, as goodput by steps assumes equal step times, so the steps after the last
save count as uncommitted (13 of StarGAN-VC's) and are not dropped from the account.
"""

from __future__ import annotations

import re
from statistics import median
from typing import Any

from gpuslo.goodput.logs.aside import MAX_VALUES, is_size
from gpuslo.goodput.logs.counters import EPOCH_WORDS, words
from gpuslo.goodput.logs.durations import PER_STEP_HINTS
from gpuslo.goodput.logs.notprogress import NOT_PROGRESS_HEAD
from gpuslo.goodput.logs.reading import Reading, Role

MIN_BETWEEN = 2  # progress records between two window lines, at least
MIN_STEPS = 2  # steps between two window lines, at least (one step's time is `aside`'s)
STEADY = 1.1  # the largest advance between window lines over the smallest, at most
SPREAD_MAX = 10_000  # records before a window line given its time per step, at most
_DURATIONS = ("step_s", "elapsed", "window_s", "smoothed_s")
_TIMED = ("step_s", "window_s", "smoothed_s", "line_s", "elapsed", "rate_s")
_DAY = re.compile(r"\b(?:Mon|Tue|Wed|Thu|Fri|Sat|Sun|Jan|Feb|Mar|Apr|May|Jun|Jul|Aug|Sep|Oct|"
                  r"Nov|Dec)\b")
# event kinds that are other work inside a window (an epoch marker is none)
OTHER_WORK = ("save", "restore", "interruption", "restart", "init")


def window_steps(reading: Reading, progress: list[Reading]) -> int | None:
    """Steps one record of `reading` times (see the module docstring); sets the duration's role
    to `window_s` when there are such steps."""
    tpl = reading.template
    if reading.step is not None or reading.epoch_marker or reading.progress or not progress:
        return None
    timed = [i for i, r in reading.roles.items() if r.role in _DURATIONS]
    if len(timed) != 1 or any(h in tpl.fields[timed[0]].key.lower() for h in PER_STEP_HINTS):
        return None
    others = [f for f in tpl.fields if not is_size(f) and f.index not in (reading.epoch, _total(
        reading))]
    if len(others) > MAX_VALUES or _DAY.search(tpl.text):
        return None  # a record of many values, or a date (gpustat's `host Sun Oct 16 09:35:…`)
    if NOT_PROGRESS_HEAD.search(tpl.text + " " + tpl.fields[timed[0]].key):
        return None
    if reading.roles[timed[0]].role == "elapsed" and not _epoch_named(reading):
        return None  # a clock since the run began (LightGBM's `2.43 seconds elapsed`): no window
    points = sorted((line, r.template.fields[r.step].numbers[k], r)
                    for r in progress if r.step is not None
                    for k, line in enumerate(r.template.lines)
                    if k < len(r.template.fields[r.step].numbers))
    steps = _advances(tpl.lines, points) or _epoch_total(reading, points)
    if steps is None:
        return None
    role = reading.roles[timed[0]]
    reading.roles[timed[0]] = Role("window_s", role.scale, f"printed once per {steps} steps: "
                                   "the time of the steps since the last such line")
    reading.why = "a window's time on a line of its own: over the steps it covers"
    return steps


def _advances(lines: list[int], points: list[tuple[int, Any, Reading]]) -> int | None:
    """The counter's steady advance between consecutive `lines`, MIN_BETWEEN records or more
    between each two; None when the sample shows none or they vary."""
    advances = []
    for a, b in zip(lines, lines[1:], strict=False):
        between = [p for p in points if a < p[0] < b]
        before_a = [p for p in points if p[0] < a]
        if len(between) < MIN_BETWEEN:
            return None
        if before_a and None not in (before_a[-1][1], between[-1][1]):
            advances.append(between[-1][1] - before_a[-1][1])
    if not advances or min(advances) < MIN_STEPS or max(advances) > STEADY * min(advances):
        return None
    return int(median(advances))


def _epoch_total(reading: Reading, points: list[tuple[int, Any, Reading]]) -> int | None:
    """For a line named for the epoch (an epoch field, or an epoch word in its text) after the
    records of a per-epoch counter with one steady N: that N."""
    named = _epoch_named(reading)
    before = [p for p in points if p[0] < reading.template.lines[0]]
    if not named or not before:
        return None
    last = before[-1][2]
    if not last.per_epoch or last.total is None:
        return None
    totals = set(last.template.fields[last.total].known())
    return int(min(totals)) if len(totals) == 1 and min(totals) > 1 else None


def _total(reading: Reading) -> int | None:
    """The index of the epoch's N (`Epoch 1/50`), None when none."""
    if reading.epoch is None:
        return None
    nxt = reading.epoch + 1
    role = reading.roles.get(nxt)
    return nxt if role is not None and reading.template.fields[reading.epoch].after.lstrip(
        ).startswith("/") else None


def _epoch_named(reading: Reading) -> bool:
    """An epoch field on the line, or an epoch word in its text (`for This Epoch`)."""
    return reading.epoch is not None or bool(
        {w.lower() for w in words(reading.template.text)} & EPOCH_WORDS)


def per_step(found: Any, covered: int, mixed: bool) -> None:
    """Turn the timing record `found`'s window (a `matchers.Prog`) into its time per step over
    `covered` steps; where the window held other work (`mixed`), that time is `held`: on the
    clock, out of the step-time statistics."""
    window, found.window_s = found.window_s, None
    if window is not None and covered > 0:
        found.step_s, found.held = window / covered, mixed


def tail(progress: list[Any], since: int, pace: float | None) -> None:
    """Give each record after line `since` with no time of its own (`progress`: `Prog`s) the
    time per step `pace` (see the module docstring)."""
    if pace is None:
        return
    for prog in reversed(progress):
        if prog.line <= since:
            break
        prog.complete()
        if all(getattr(prog, name) is None for name in _TIMED):
            prog.step_s = pace
