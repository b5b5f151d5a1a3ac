"""A line family that prints, with its own per-step duration, each step a bar then draws (pure).

verl's trainer prints one metrics record per step, `step:20 - global_seqlen/min:2304 - … -
timing_s/step:9.97 - … - training/global_step:20 …`, and right after it advances its tqdm bar
to the same step, `Training Progress:   0%| | 20/3746 [03:41<…, 12.02s/it]`. The bar has the
most records and is the job's progress (`learn`); the metric lines fall inside its span, which
would make them another loop's counter. They are the same loop printed twice, and the line's
own duration of the step (`timing_s/step`) is a direct measure that outranks the bar's mean
since it began (`progress` docstring, 4.a over 4.c: the bar's mean holds the warm-up and every
save). Such a family joins the progress; the bar record after each line repeats its step and
counts once (`progress`, duplicates), so each step keeps the line's duration.

`twin(lines, bar) -> bool`: `lines` (a family of `roles.Reading`, no bar) gives a named per-step
duration (`step_s` with a key), and on at least `MIN_PAIRS` of its sampled records the next
record of `bar` (a bar family) draws the step the line printed, never another: a line whose
next bar draws another count (an evaluation's `Step: 3` before an epoch bar's `120/500`) is
not its twin.
"""

from __future__ import annotations

from bisect import bisect_right
from typing import Any

from gpuslo.goodput.logs.glued import counter_values

MIN_PAIRS = 3


def _timed(readings: list[Any]) -> bool:
    return any(role.role == "step_s" and r.template.fields[i].key
               for r in readings for i, role in r.roles.items())


def twin(lines: list[Any], bar: list[Any]) -> bool:
    """Whether the line family `lines` prints, with its own step time, the steps the bar family
    `bar` draws next (see the module docstring)."""
    if not bar or not lines or lines[0].bar or not bar[0].bar or not _timed(lines):
        return False
    mine, drawn = counter_values(lines), counter_values(bar)
    at = sorted(drawn)
    pairs = 0
    for line, value in mine.items():
        k = bisect_right(at, line)
        if k == len(at):
            continue
        if drawn[at[k]] != value:
            return False
        pairs += 1
    return pairs >= MIN_PAIRS
