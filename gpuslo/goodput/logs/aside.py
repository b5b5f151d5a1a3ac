"""Timing lines set apart: a step's time printed on a line of its own, beside its progress (pure).

Some loops print the step (or iteration) on one line and its time on another, with no counter:

- a duration of the iteration just printed, at the end of its block (DeepRM's Theano policy
  gradient: `Iteration: \\t 3`, eight metric lines, then `Elapsed time\\t 100.70 seconds`);
- a cumulative time since the loop began, under each step line (StyleTTS 2's `Epoch [1/75],
  Step [110/464], Loss: …` then `Time elasped: 196.28`; its deltas over the steps between are the
  step time, as a bar's elapsed);
- a named per-step time inside the block of values a step prints (Coqui TTS's trainer:
  `--> STEP: 49/377 -- GLOBAL_STEP: 370050` then `| > step_time: 0.55960  (0.62170)`);
- a cumulative time that starts again with each epoch (ASGL-SNN's `Epoch [0/300], Step
  [100/390], Loss: …` then `Time elasped: 15.82`, 30.27, 44.82, back to 15.84 at the next
  epoch's step 100): its values climb, by a multiple of the first, and each fall goes back near
  where they began; read as `elapsed` (a clock gone back starts a new stretch, `windows`), not
  as one step's time (30 s where a step takes 0.145 s);
- a cumulative time among memory readings (a PINN trainer's `Memory Usage -> CPU: 946.27 MB,
  GPU Allocated: 19.18 MB, GPU Reserved: 326.00 MB, Elapsed Time: 29.49 seconds` under each
  `----Iteration: 1000----` banner): sizes and shares are no values of time, and are not
  counted against `MAX_VALUES`.

`set_apart(reading, epochs=False) -> bool` says whether a template (`roles.Reading`) is such a
line: no step counter and no epoch (an epoch's time is not a step's), not an evaluation's, at
most `MAX_VALUES` values besides sizes and shares (`SIZE_UNITS`), one of them a per-step,
smoothed or cumulative duration not named for an epoch; printed at least twice, or once when its
name says per step (`step_time`). Where the epochs are the steps (`epochs`: a log with epoch
lines and no step lines), a duration named for the epoch is the step's time (nnU-Net's
`epoch:  3`, its metrics, then `This epoch took 632.03 s`). `learn` reads them only where the
progress lines give no time of their own (no duration, rate or clock), as it reads lines of a
rate with no counter (`global_step/sec`).

`give(found, target, after=False)`: the times of a timing record (a `matchers.Prog`) given to
the progress record it belongs to (`reader` picks it: the one above when that has none yet, else
the next); each time only where the target has none. A timing line printed `after` its record
ends that record's step: its stamp is the record's when the record has none (nnU-Net's
unstamped `epoch:  1`, its stamped `This epoch took 634.08 s` ten lines below).
"""

from __future__ import annotations

import re
from typing import Any

from gpuslo.goodput.logs.roles import (
    EPOCH_WORDS,
    NOT_PROGRESS_HEAD,
    PER_STEP_HINTS,
    Reading,
    Role,
    words,
)

MAX_VALUES = 3
# units of a memory size or a share, printed beside a timing line's duration (not counted)
SIZE_UNITS = {"b", "kb", "mb", "gb", "tb", "kib", "mib", "gib", "tib", "%"}
SAWTOOTH_CLIMBS = 2  # climbs before each fall, at least, in a clock restarted per epoch
SAWTOOTH_GROWTH = 2.0  # the largest value over the smallest, at least, for a clock
SAWTOOTH_BACK = 0.5  # a fall ends within this share of the smallest value of its kind
DURATIONS = ("step_s", "smoothed_s", "elapsed")
TIMES = ("step_s", "smoothed_s", "elapsed", "rate_s")
PROGRESS_TIMES = {"step_s", "window_s", "smoothed_s", "line_s", "elapsed", "rate_ips",
                  "rate_spi"}


def set_apart(reading: Reading, epochs: bool = False) -> bool:
    """A timing line of durations set apart (see the module docstring); `epochs`: the log's
    steps are its epochs."""
    tpl = reading.template
    values = [f for f in tpl.fields if not is_size(f)]
    if reading.step is not None or reading.epoch is not None or reading.epoch_marker or (
            len(values) > MAX_VALUES):
        return False
    timed = [i for i, r in reading.roles.items() if r.role in DURATIONS]
    if len(timed) != 1:
        return False
    key = tpl.fields[timed[0]].key
    if (set(words(key)) & EPOCH_WORDS and not epochs) or NOT_PROGRESS_HEAD.search(
            _head(tpl.text, key)):
        return False
    per_step = any(h in key.lower() for h in PER_STEP_HINTS)
    if tpl.count < 2 and not per_step:
        return False
    reading.why = "a timing line set apart: its duration is the time of the progress beside it"
    role = reading.roles[timed[0]]
    if role.role == "step_s" and not per_step and sawtooth(tpl.fields[timed[0]].known()):
        reading.roles[timed[0]] = Role("elapsed", role.scale, "climbs and goes back to where it "
                                       "began: a clock started again with each epoch")
    return True


def is_size(f: Any) -> bool:
    """A memory size or a share (`946.27 MB`, `12%`): its unit, glued or the word after it."""
    after = f.after.split()
    return f.unit.lower() in SIZE_UNITS or bool(after) and after[0].strip(",;|").lower() in (
        SIZE_UNITS)


def _head(text: str, key: str) -> str:
    """The words a timing line is judged by: its text with the sizes' names left out (`Memory
    Usage -> CPU: … MB` beside the time is no head of a memory test)."""
    return re.sub(r"(?i)\bmemory\b", " ", text) + " " + key


def sawtooth(values: list[float]) -> bool:
    """True when `values` (a duration over its records, in order) are a clock that starts again:
    the largest is `SAWTOOTH_GROWTH` × the smallest or more, and each fall comes after
    `SAWTOOTH_CLIMBS` climbs at least and lands near the smallest (`SAWTOOTH_BACK`). A step's
    own time goes up and down around its values; a clock that only climbs is one too (3 values
    at least)."""
    pos = [v for v in values if v > 0]
    if len(pos) < 3 or len(pos) != len(values) or max(pos) < SAWTOOTH_GROWTH * min(pos):
        return False
    low, climbs = min(pos), 0
    for a, b in zip(pos, pos[1:], strict=False):
        if b > a:
            climbs += 1
        elif climbs < SAWTOOTH_CLIMBS or b > low * (1 + SAWTOOTH_BACK):
            return False  # a value that wanders, or a fall that does not go back to the start
        else:
            climbs = 0
    return True


def untimed(progress: list[Any]) -> bool:
    """True when no progress matcher (`matchers.Matcher`) reads a time of its own."""
    return not any(r.role in PROGRESS_TIMES for m in progress for r in m.reading.roles.values())


def times(found: Any) -> bool:
    """True when a timing record gives any time."""
    return any(getattr(found, name) is not None for name in TIMES)


def repeated(found: Any, last: Any) -> bool:
    """True when timing record `found` prints the cumulative time that progress record `last`
    already holds (both `matchers.Prog`): a phase's closing summary printing the clock again (a
    PINN trainer's `=====Adam Final=====` then `… Elapsed Time: 60.12 seconds`, as under
    `Iteration: 2000`). No step ran in between: it times no record (given to the next one, it
    would shift every later time by one record)."""
    return last is not None and found.elapsed is not None and found.elapsed == last.elapsed


def give(found: Any, target: Any, after: bool = False) -> None:
    """Each time of `found` that `target` lacks (both `matchers.Prog`); `after`: `found` was
    printed after `target` (its stamp ends the step)."""
    for name in TIMES:
        if getattr(target, name) is None and getattr(found, name) is not None:
            setattr(target, name, getattr(found, name))
    if after and target.ts is None:
        target.ts = found.ts
