"""A second look at a template's roles, where the first reading (`roles`) left a class wrong (pure).

`recheck(reading) -> Reading` revisits a `roles.read_template` reading with what only the whole
reading shows (which field is the counter, which others are clocks), and settles the reading
again where a role changed:

- a counter printed first with only spaces after it, right-aligned, its values named after
  them (tinygrad's MLPerf `    3 7.34 s run, 11.8750 loss, …`): the step, as `roles` already
  reads one cut off by `:` or `|` (darknet's ` 69: 145.7, …`); it must rise on every record;
- a time per counted unit glued to its unit name (Keras's Progbar prints `%.0fs/%s`,
  `%.0fms/%s`, `%.0fus/%s` with its `unit_name`, `step` or `sample`: TF 2.0/2.1's
  `405/405 [====] - 0s 829us/sample`): the counter counts that unit, so this is its seconds
  per counted unit, a rate like `134ms/step`, and the bar's whole seconds are its elapsed time;
- a number of seconds that rises, but by less than `MIN_CLOCK_S` per counted step and by under
  `NEAR_CONSTANT` of its value is no clock (a cumulative time grows by the steps' own time): it
  is the per-step time, smoothed (Detectron's median-filtered `"time": "0.239996"`, then
  0.240001, … every 20 iterations); on a line with no counter, one that stays within
  `NEAR_CONSTANT` of one value over three lines or more is each line's own duration (Keras's
  verbose=2 epoch line ` - 498s - loss: …`, 498 s, 498 s, 499 s, …);
- of two cumulative clocks on a line, the one named for training (fairseq's `train_wall`
  beside `wall`, which holds validation and saves too) is the steps' clock; the other is not
  read;
- a number named a clock by the words after it (`2.432232 seconds elapsed`) stays a clock,
  however little it rises.
"""

from __future__ import annotations

import re

from gpuslo.goodput.logs.bars import is_bar
from gpuslo.goodput.logs.durations import line_times
from gpuslo.goodput.logs.roles import (
    CUMULATIVE_WORDS,
    Reading,
    Role,
    _decide,
    _place_counter,
    words,
)
from gpuslo.goodput.logs.templates import Field

MIN_CLOCK_S = 1e-4  # a cumulative clock rises at least this much per step (0.1 ms)
NEAR_CONSTANT = 0.01  # a per-step time's spread over the sample, as a share of its value
_PER_UNIT = re.compile(r"(?i)^(?P<scale>s|ms|us|µs)/(?:sample|step)$")
_SCALE = {"s": 1.0, "ms": 1e-3, "us": 1e-6, "µs": 1e-6}
TRAIN_WORDS = {"train", "training"}
LEAD_MIN_RECORDS = 3
_SECONDS = {"s", "sec", "secs", "second", "seconds", "ms", "min", "mins", "minutes"}


def recheck(reading: Reading) -> Reading:
    """`reading` with the classes of the module docstring read again (changed in place)."""
    changed = _leading_counter(reading) | _per_unit_time(reading)
    changed |= _barely_rising(reading) | _train_clock(reading)
    if changed:
        _settle(reading)
    return reading


def _settle(reading: Reading) -> None:
    """Place the counter, the line times and the verdict again after a role changed."""
    fields = reading.template.fields
    reading.bar = is_bar(fields, reading.roles)
    reading.progress = reading.epoch_marker = False
    _place_counter(reading)
    line_times(reading)
    _decide(reading)


def _leading_counter(reading: Reading) -> bool:
    """The right-aligned counter printed first (see the module docstring)."""
    tpl = reading.template
    fields = tpl.fields
    if reading.step is not None or len(fields) < 3 or tpl.count < LEAD_MIN_RECORDS:
        return False
    first = fields[0]
    if not tpl.text.startswith("\x01") or first.key or first.unit or first.after.strip() or (
            first.kind != "num" or not first.integer):
        return False
    seen = first.known()
    rising = all(b > a for a, b in zip(seen, seen[1:], strict=False))
    if len(seen) < LEAD_MIN_RECORDS or min(seen) < 0 or not rising:
        return False
    named_after = [g for g in fields[1:] if g.after.strip()[:1].isalpha()]
    if len(named_after) < 2 or reading.roles[0].role != "metric":
        return False
    reading.step = 0
    reading.roles[0] = Role("step", why="counter (printed first, right-aligned)")
    return True


def _per_unit_time(reading: Reading) -> bool:
    """Keras's time per counted unit (see the module docstring)."""
    changed = False
    for f in reading.template.fields:
        found = _PER_UNIT.match(f.unit) if f.kind == "num" else None
        if found is None or reading.roles[f.index].role in ("rate_spi", "rate_ips"):
            continue
        unit = f.unit.split("/")[1]
        reading.roles[f.index] = Role("rate_spi", _SCALE[found.group("scale").lower()],
                                      f"seconds per counted {unit} ({f.unit}: Keras's Progbar)")
        changed = True
    return changed


def _barely_rising(reading: Reading) -> bool:
    """A rising time that is no clock: the per-step time, smoothed, or on a line with no counter
    each line's own duration (see the module docstring)."""
    steps = reading.template.fields[reading.step].known() if reading.step is not None else []
    counted = steps[-1] - steps[0] if len(steps) >= 2 else 0
    changed = False
    for i, role in list(reading.roles.items()):
        f = reading.template.fields[i]
        if role.role != "elapsed" or set(words(f.key)) & CUMULATIVE_WORDS or (
                f.kind != "num") or named_after(f):  # a clock printed as one (`23:32`) is one
            continue
        values = f.known()
        if len(values) < 2 or min(values) <= 0 or (
                max(values) - min(values) >= NEAR_CONSTANT * max(values)):
            continue
        rise = (values[-1] - values[0]) * role.scale
        if reading.step is None and len(values) >= LEAD_MIN_RECORDS:
            reading.roles[i] = Role("step_s", role.scale, "stays near one value on lines with "
                                    "no counter: each line's own duration")
            changed = True
        elif counted > 0 and 0 < rise / counted < MIN_CLOCK_S:
            reading.roles[i] = Role("smoothed_s", role.scale, f"rises by under {MIN_CLOCK_S} s a "
                                    "step and stays near one value: a smoothed step time")
            changed = True
    return changed


def named_after(f: Field) -> bool:
    """A number named cumulative by the words right after it, its unit then the name
    (LightGBM's `2.432232 seconds elapsed, finished 998 iteration`: the training time so far,
    rising by 2 ms an iteration)."""
    after = words(f.after)[:2]
    return len(after) == 2 and after[0].lower() in _SECONDS and (
        after[1].lower() in CUMULATIVE_WORDS)


def _train_clock(reading: Reading) -> bool:
    """Of two cumulative clocks, the training one (see the module docstring)."""
    clocks = [i for i, r in reading.roles.items() if r.role == "elapsed"]
    fields = reading.template.fields
    trained = [i for i in clocks if _trains(fields[i])]
    if len(clocks) < 2 or len(trained) != 1:
        return False
    for i in clocks:
        if i not in trained:
            reading.roles[i] = Role("metric", reading.roles[i].scale,
                                    f"a clock of more than training ({fields[trained[0]].key} "
                                    "is the steps' own)")
    return True


def _trains(f: Field) -> bool:
    return bool(set(words(f.key)) & TRAIN_WORDS)
