"""Sustained slowdowns of a job against its own steady state (pure).

Input: the job's logged intervals in order, each `Interval(first_step, last_step, step_s)` —
the steps one log line covers and their time per step in seconds. The reference is the median
step time of the job's own steady intervals so far (at least `min_reference` of them, the last
`window` kept). An interval slower than `threshold` × reference starts a candidate; when at least
`min_intervals` consecutive intervals stay above it, it is a slowdown, with
`ratio = median(step time over the slow intervals) / reference`. A shorter excursion — one eval,
checkpoint or profiler spike — is not a slowdown and does not move the reference either.

Defaults (threshold 1.03, two consecutive intervals, three reference intervals) are parameters so
that an SLO spec can set them.
"""

from __future__ import annotations

from dataclasses import dataclass
from statistics import median

DEFAULT_THRESHOLD = 1.03
DEFAULT_MIN_INTERVALS = 2
DEFAULT_MIN_REFERENCE = 3
DEFAULT_WINDOW = 50


@dataclass(frozen=True)
class Interval:
    """Steps `first_step..last_step` took `step_s` seconds each (the log's mean for them)."""

    first_step: int
    last_step: int
    step_s: float


@dataclass(frozen=True)
class Slowdown:
    """A sustained slowdown: from `from_step` to `to_step`, `ratio` = median step time over it /
    `reference_s`; `extra_s` is the wall time (seconds, per GPU) it cost against the reference."""

    from_step: int
    to_step: int
    ratio: float
    reference_s: float
    median_s: float
    intervals: int
    extra_s: float


def detect_slowdowns(
    intervals: list[Interval],
    threshold: float = DEFAULT_THRESHOLD,
    min_intervals: int = DEFAULT_MIN_INTERVALS,
    min_reference: int = DEFAULT_MIN_REFERENCE,
    window: int = DEFAULT_WINDOW,
) -> list[Slowdown]:
    """Sustained slowdowns in `intervals` (see the module docstring). Raises ValueError for a
    threshold not above 1 or counts below 1."""
    if not threshold > 1.0 or min_intervals < 1 or min_reference < 1 or window < min_reference:
        raise ValueError("threshold must be > 1 and the interval counts at least 1")
    found: list[Slowdown] = []
    steady: list[float] = []
    i = 0
    while i < len(intervals):
        if len(steady) < min_reference:
            steady.append(intervals[i].step_s)
            i += 1
            continue
        reference = median(steady[-window:])
        if intervals[i].step_s <= threshold * reference:
            steady.append(intervals[i].step_s)
            i += 1
            continue
        j = i
        while j < len(intervals) and intervals[j].step_s > threshold * reference:
            j += 1
        run = intervals[i:j]
        if len(run) >= min_intervals and reference > 0:
            slow = median(x.step_s for x in run)
            extra = sum((x.step_s - reference) * (x.last_step - x.first_step + 1) for x in run)
            found.append(Slowdown(run[0].first_step, run[-1].last_step, slow / reference,
                                  reference, slow, len(run), extra))
        i = j
    return found
