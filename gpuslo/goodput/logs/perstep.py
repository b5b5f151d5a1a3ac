"""Records that print no step number but come once per step: their durations are step times (pure).

Some loops print a numbered progress line only every N steps and, at every step, a line with no
counter at all that says how long the step's work took (PostTraining-LLM-Small's GRPO loop:
`[timing] sample processed in 14.73s` after each sample's optimizer step, `[step 25] avg_loss=…`
every 25 steps). The numbered lines alone give no step time (no clock, no duration); the
unnumbered lines do, once it is known that each stands for one step. That is read from the lines
themselves: such a record is per step when, between every two numbered records of a run, it is
printed exactly as many times as the counter rose (the gap's stride); per k steps when it is
printed stride / k times in every gap, for one k (a loss line at `idx % 5 == 0`). Where the counts
do not divide the strides steadily, fewer than `MIN_GAPS` gaps show it or a gap holds fewer than
`MIN_COUNT` (one line per numbered record is a timing line beside it, `aside`'s), nothing is
read: the step time stays what the other lines give, or unknown - never a guess.

- `candidate(reading)`: a template that may be such a record (`learn` keeps one,
  `per_step_matcher`):
  no step counter, no epoch, not an evaluation's, a save's or a load's words, and exactly one
  duration, a step's (`step_s`) or one unit of work's (`unit_s`: `sample processed in`,
  `durations.unit_done`); recurring.
- `Parts`: the durations one gap held (the reader fills one per numbered record: `reader`).
- `per_step(records)`: the rule above over the records' gaps. A per-step record's durations are
  the steps' times: each record of the run gets their mean as its step time (source `parts`),
  their sum as its steps' time, and the values themselves for the statistics (`Record.parts`),
  where its own line prints no time (a line's own measure comes first). A per-k-step record's
  duration may be its last step's or its k steps' (the lines do not say which): it is read only
  where its name says it is per step (`step_time`). The first record of a run takes the
  durations before it (the excerpt's or run's lead-in) when they are no more than the steps it
  stands for. Durations after the last numbered record have no record and are not read.
- `first_warm(recs)`: the warm-up test (`steptimes.warm`) of a run whose first record is timed
  by its parts: the first part (the run's first step) against every other part, not the first
  record's mean against the others' means (its lead-in held slow early steps that are steps).
"""

from __future__ import annotations

import re
from typing import Any

from gpuslo.goodput.logs.durations import PER_STEP_HINTS
from gpuslo.goodput.logs.matchers import Matcher, compile_reading
from gpuslo.goodput.logs.reading import Reading, Role

MIN_GAPS = 2  # gaps between numbered records that must all show the count
# lines in every gap: one line per numbered record is `aside`'s (a timing line set apart, its
# time the record's beside it: DeepRM's `Elapsed time 52.5 seconds` under each `Iteration: 3`)
MIN_COUNT = 2
MAX_VALUES = 100_000  # durations kept for the statistics; beyond, every other one is dropped
FAMILY = "per-step"
TIMES = ("step_s", "unit_s")
DURATIONS = ("step_s", "unit_s", "smoothed_s", "window_s", "line_s", "elapsed")
# the words of another loop's or another kind of work's record (an evaluation's samples, a
# save's or load's shards), whose count between steps says nothing of the steps
OTHER_WORK = re.compile(
    r"(?i)\b(?:val|valid\w*|eval\w*|test\w*|predict\w*|inference|sav\w*|checkpoint\w*|restor\w*"
    r"|resum\w*|load\w*|download\w*|warm\w*|epoch\w*)\b")
PROGRESS_TIMES = ("step_s", "window_s", "smoothed_s", "line_s", "elapsed", "rate_ips",
                  "rate_spi")


def candidate(reading: Reading) -> bool:
    """A template that may be a per-step record (see the module docstring)."""
    tpl = reading.template
    if reading.progress or reading.epoch_marker or reading.step is not None or (
            reading.epoch is not None) or tpl.count < 2:
        return False
    timed = [r for r in reading.roles.values() if r.role in DURATIONS]
    if len(timed) != 1 or timed[0].role not in TIMES:
        return False
    keys = " ".join(f.key for f in tpl.fields)
    return not OTHER_WORK.search(tpl.text.replace("\x01", " ") + " " + keys)


def per_step_matcher(readings: list[Reading]) -> tuple[Matcher, bool] | None:
    """(the matcher of the one candidate template, its duration read as `step_s`; whether that
    duration is named per step), None when there is none or more than one (which would be the
    steps' is not known)."""
    found = {r.template.text: r for r in readings if candidate(r)}
    if len(found) != 1:
        return None
    reading = next(iter(found.values()))
    roles = {i: Role("step_s", r.scale, r.why) if r.role in TIMES else r
             for i, r in reading.roles.items()}
    shadow = Reading(reading.template, roles=roles, why=(
        "no counter: each step's time where every gap between numbered lines holds as many as "
        "the counter rose (`perstep`)"))
    named = any(any(h in f.key.lower() for h in PER_STEP_HINTS)
                for i, f in enumerate(reading.template.fields)
                if reading.roles.get(i, Role("")).role in TIMES)
    return compile_reading(shadow, FAMILY), named


class Parts:
    """The durations (seconds) the counted template printed in one gap: `count` and `total`
    exact, `values` kept for the statistics (thinned by the reader past `MAX_VALUES`);
    `named`: the duration is named per step."""

    __slots__ = ("count", "total", "values", "named")

    def __init__(self, named: bool) -> None:
        self.count, self.total, self.values, self.named = 0, 0.0, [], named

    def add(self, seconds: float) -> None:
        self.count += 1
        self.total += seconds
        self.values.append(seconds)


def thin_values(progress: list[Any], pending: Parts | None) -> int:
    """Drop every other kept duration of every record's parts (and the pending ones), when the
    reader holds `MAX_VALUES` of them: the statistics then rest on a sample of them, spread
    over the log as they were; counts and sums stay exact. Returns the values left."""
    left = 0
    for parts in [getattr(p, "parts", None) for p in progress] + [pending]:
        if parts is not None:
            parts.values = parts.values[::2]
            left += len(parts.values)
    return left


class Tally:
    """The reader's count of the candidate's lines (`per_step_matcher`'s matcher and `named`):
    `read` takes a record of that template, printed by the rank that prints the progress (the
    reader's `owner`: (whether known, rank)), into `pending`, the parts of the gap the next
    progress record closes (the reader moves them to it); past `MAX_VALUES` durations kept,
    every other is dropped (`thin_values`)."""

    def __init__(self, matcher: Matcher, named: bool) -> None:
        self.matcher, self.named = matcher, named
        self.pending: Parts | None = None
        self.values = 0

    def read(self, rec: Any, seq: int, ts: float | None, owner: tuple[bool, str | None],
             progress: list[Any]) -> bool:
        """Whether `rec` (a `pipe.Rec`) is a line of the template, counted."""
        if owner[0] and rec.rank != owner[1]:
            return False
        found = self.matcher.read(rec.text, rec.line, seq, ts, rec.rank)
        if found is None or found.step_s is None:
            return False
        if self.pending is None:
            self.pending = Parts(self.named)
        self.pending.add(found.step_s)
        self.values += 1
        if self.values >= MAX_VALUES:
            self.values = thin_values(progress, self.pending)
        return True


def _own_time(rec: Any) -> bool:
    """The record's own line prints a time of its own."""
    matcher = rec.prog.matcher
    return matcher is not None and any(
        r.role in PROGRESS_TIMES for r in matcher.reading.roles.values())


def _steps_per_record(records: list[Any]) -> tuple[int, bool] | None:
    """(k, named): each record stands for k steps, in every gap; None when the counts do not
    say so (see the module docstring)."""
    gaps = [(r.prog.parts.count if r.prog.parts else 0, r.delta) for r in records if r.delta]
    if len(gaps) < MIN_GAPS or any(count < MIN_COUNT for count, _ in gaps):
        return None
    steps = {delta // count if delta % count == 0 else 0 for count, delta in gaps}
    if len(steps) != 1 or 0 in steps:
        return None
    named = any(r.prog.parts.named for r in records if r.prog.parts)
    return steps.pop(), named


def per_step(records: list[Any]) -> None:
    """Time the records by their gaps' per-step durations (see the module docstring)."""
    found = _steps_per_record(records)
    if found is None:
        return
    k, named = found
    if k > 1 and not named:
        return
    for i, rec in enumerate(records):
        parts = rec.prog.parts
        if parts is None or not parts.count or _own_time(rec):
            continue
        steps = rec.delta or _lead_steps(records, i)
        if steps is None or parts.count * k > steps:
            continue  # a lead-in of more records than the steps the first record stands for
        rec.parts = parts.values
        rec.step_s, rec.source, rec.warm = parts.total / parts.count, "parts", False
        rec.dur = rec.step_s * steps


def _lead_steps(records: list[Any], i: int) -> int | None:
    """Steps a run's first record stands for: the next record's stride, else None."""
    nxt = records[i + 1] if i + 1 < len(records) else None
    return nxt.delta if nxt is not None and nxt.delta else None


def first_warm(recs: list[Any]) -> bool:
    """The warm-up test of a run whose first record is timed by its parts (module docstring), a
    run that starts at its beginning (`steptimes.warm` asks): True when it was made here (its
    first part dropped when it is not a full step)."""
    first = recs[0]
    if first.source != "parts" or not first.parts:
        return False
    others = first.parts[1:] + [v for r in recs[1:] for v in (r.parts or [r.step_s] if (
        r.step_s and not r.warm) else [])]
    if others and not (min(others) / 2 <= first.parts[0] <= max(others) * 2):
        first.parts = first.parts[1:] or None
        first.warm = first.parts is None
    return True
