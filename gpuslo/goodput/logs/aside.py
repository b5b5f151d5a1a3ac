"""Timing lines set apart: a step's time printed on a line of its own, beside its progress (pure).

Some loops print the step (or iteration) on one line and its time on another, with no counter:

- a duration of the iteration just printed, at the end of its block (DeepRM's Theano policy
  gradient: `Iteration: \\t 3`, eight metric lines, then `Elapsed time\\t 100.70 seconds`);
- a cumulative time since the loop began, under each step line (StyleTTS 2's `Epoch [1/75],
  Step [110/464], Loss: …` then `Time elasped: 196.28`; its deltas over the steps between are the
  step time, as a bar's elapsed);
- a named per-step time inside the block of values a step prints (Coqui TTS's trainer:
  `--> STEP: 49/377 -- GLOBAL_STEP: 370050` then `| > step_time: 0.55960  (0.62170)`).

`set_apart(reading, epochs=False) -> bool` says whether a template (`roles.Reading`) is such a
line: no step counter and no epoch (an epoch's time is not a step's), not an evaluation's, at
most `MAX_VALUES` values, one of them a per-step, smoothed or cumulative duration not named for
an epoch; printed at least twice, or once when its name says per step (`step_time`). Where the
epochs are the steps (`epochs`: a log with epoch lines and no step lines), a duration named for
the epoch is the step's time (nnU-Net's `epoch:  3`, its metrics, then `This epoch took
632.03 s`). `learn` reads them only where the progress lines give no time of their own (no
duration, rate or clock), as it reads lines of a rate with no counter (`global_step/sec`).

`give(found, target, after=False)`: the times of a timing record (a `matchers.Prog`) given to
the progress record it belongs to (`reader` picks it: the one above when that has none yet, else
the next); each time only where the target has none. A timing line printed `after` its record
ends that record's step: its stamp is the record's when the record has none (nnU-Net's
unstamped `epoch:  1`, its stamped `This epoch took 634.08 s` ten lines below).
"""

from __future__ import annotations

from typing import Any

from gpuslo.goodput.logs.roles import EPOCH_WORDS, NOT_PROGRESS_HEAD, PER_STEP_HINTS, Reading, words

MAX_VALUES = 3
DURATIONS = ("step_s", "smoothed_s", "elapsed")
TIMES = ("step_s", "smoothed_s", "elapsed", "rate_s")
PROGRESS_TIMES = {"step_s", "window_s", "smoothed_s", "line_s", "elapsed", "rate_ips",
                  "rate_spi"}


def set_apart(reading: Reading, epochs: bool = False) -> bool:
    """A timing line of durations set apart (see the module docstring); `epochs`: the log's
    steps are its epochs."""
    tpl = reading.template
    if reading.step is not None or reading.epoch is not None or reading.epoch_marker or (
            len(tpl.fields) > MAX_VALUES):
        return False
    timed = [i for i, r in reading.roles.items() if r.role in DURATIONS]
    if len(timed) != 1:
        return False
    key = tpl.fields[timed[0]].key
    if (set(words(key)) & EPOCH_WORDS and not epochs) or NOT_PROGRESS_HEAD.search(
            tpl.text + " " + key):
        return False
    per_step = any(h in key.lower() for h in PER_STEP_HINTS)
    if tpl.count < 2 and not per_step:
        return False
    reading.why = "a timing line set apart: its duration is the time of the progress beside it"
    return True


def untimed(progress: list[Any]) -> bool:
    """True when no progress matcher (`matchers.Matcher`) reads a time of its own."""
    return not any(r.role in PROGRESS_TIMES for m in progress for r in m.reading.roles.values())


def times(found: Any) -> bool:
    """True when a timing record gives any time."""
    return any(getattr(found, name) is not None for name in TIMES)


def give(found: Any, target: Any, after: bool = False) -> None:
    """Each time of `found` that `target` lacks (both `matchers.Prog`); `after`: `found` was
    printed after `target` (its stamp ends the step)."""
    for name in TIMES:
        if getattr(target, name) is None and getattr(found, name) is not None:
            setattr(target, name, getattr(found, name))
    if after and target.ts is None:
        target.ts = found.ts
