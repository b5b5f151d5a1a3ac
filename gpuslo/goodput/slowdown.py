"""Sustained slowdowns of a job against its own steady state: the one rule (pure) that the goodput
calculator, the exporter, the SLO engine and the training-log reader share.

Input is the job's logged intervals in order (a coalesced `steps` event of the journal, one log
line of a training log): the steps it covers and their mean step time in seconds. The rule, with
the SLO spec fields (`gpuslo.slo_spec`) that set it:

- **reference** — the job's own steady state: the median step time of its steady intervals so far.
  The first `reference_intervals` intervals (`slowdown_reference_intervals`, 3) seed it — the
  warm-up window; a median of three ignores one compile-heavy first interval — and every later
  interval at or below threshold × reference joins it; the last `reference_window` (50) steady
  intervals are kept, so the reference follows a slow drift but never a crawl. A caller that knows
  the reference of the job's configuration (an earlier run) may pass it instead: it then stays
  fixed.
- **slow interval** — step time above `threshold` × reference (`slowdown_threshold`, 1.03).
- **slowdown** — at least `min_intervals` consecutive slow intervals (`slowdown_min_intervals`, 2),
  against the reference in force when the run began. A shorter run — one eval, checkpoint or
  profiler-dump interval — is a spike: not a slowdown, and it does not move the reference.
- **lost seconds** (per GPU) — Σ (step time − reference) × steps over the slow intervals of a
  slowdown; the `slowdown` badput category is that × GPUs. **ratio** — median step time of the
  slowdown's intervals / reference.

Two ways in, one rule: `sustained_slowdowns(intervals, ...)` for a whole series (the log reader
of `gpuslo goodput` should call it rather than keep its own copy), and `SlowdownTracker`, the
same rule as a fold over intervals as they arrive, which the calculator uses so the split is
decided when a step's time is recorded, before a checkpoint commits it (counters never go down).
`gpuslo.goodput.slowdown_batch` is the tracker's batch form over many journals at once (the SLO
engine's); tests/test_goodput_slowdown_batch.py holds it equal to the tracker's fold.
The defaults match the training-log issue's first detector (threshold 1.03, two intervals, three
reference intervals, a window of 50). Its source, issue 15 ("The crawl"): a reference per job
and configuration, its own steady state, and a shift lasting at least two consecutive logged
intervals; shared T01's fact is `ratio_after_over_before` 1.052 (after over the steady intervals
*before* it). So the reference is never a median taken in hindsight over a whole log, which
would see intervals that came later and make the journal's fold, the exporter and the report
disagree: a job whose intervals vary among themselves by more than `threshold` reads that
noise as slowdowns against the reference of the moment (a Megatron window of 774-869 ms,
tests/goodput/test_slowdown_reference.py), and wants a higher threshold, not another rule.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from statistics import median

DEFAULT_THRESHOLD = 1.03
DEFAULT_MIN_INTERVALS = 2
DEFAULT_REFERENCE_INTERVALS = 3
DEFAULT_REFERENCE_WINDOW = 50

__all__ = [
    "Interval",
    "Observation",
    "Slowdown",
    "SlowdownRule",
    "SlowdownTracker",
    "sustained_slowdowns",
]


@dataclass(frozen=True)
class SlowdownRule:
    """The rule's parameters. Raises ValueError (naming the field) for a threshold not above 1,
    interval counts below 1, or a window shorter than the warm-up."""

    threshold: float = DEFAULT_THRESHOLD
    min_intervals: int = DEFAULT_MIN_INTERVALS
    reference_intervals: int = DEFAULT_REFERENCE_INTERVALS
    reference_window: int = DEFAULT_REFERENCE_WINDOW

    def __post_init__(self) -> None:
        if not self.threshold > 1.0:
            raise ValueError(f"threshold must be above 1, got {self.threshold!r}")
        for name in ("min_intervals", "reference_intervals", "reference_window"):
            if getattr(self, name) < 1:
                raise ValueError(f"{name} must be at least 1, got {getattr(self, name)!r}")
        if self.reference_window < self.reference_intervals:
            raise ValueError("reference_window must be at least reference_intervals")


@dataclass(frozen=True)
class Interval:
    """Steps `first_step..last_step` took `step_s` seconds each (the mean over them)."""

    first_step: int
    last_step: int
    step_s: float

    @property
    def steps(self) -> int:
        """How many steps the interval covers (at least 1)."""
        return max(self.last_step - self.first_step + 1, 1)


@dataclass(frozen=True)
class Slowdown:
    """A sustained slowdown from `from_step` to `to_step` over `intervals` logged intervals.

    ratio = median_s / reference_s; extra_s = seconds per GPU it cost against the reference
    (Σ (step time − reference) × steps)."""

    from_step: int
    to_step: int
    ratio: float
    reference_s: float
    median_s: float
    intervals: int
    extra_s: float


@dataclass(frozen=True)
class Observation:
    """What one interval is, as `SlowdownTracker.observe` decides it.

    kind: `warmup` (seeding the reference), `steady`, `unmeasured` (no step time), `held` (slow,
    the run not yet long enough: keep its extra seconds aside), `confirmed` (the run just became a
    slowdown: the held extra seconds and this one's are slowdown) or `slow` (a confirmed run goes
    on). released: an unconfirmed run ended before this interval (its held seconds were a spike).
    extra_s: this interval's (step time − reference) × steps, seconds per GPU (0 unless slow).
    """

    kind: str
    extra_s: float = 0.0
    released: bool = False
    reference_s: float = 0.0


@dataclass
class SlowdownTracker:
    """The rule as a fold: feed intervals in order with `observe`; `end_run` when the series is
    cut (a restart, the job's end): an unconfirmed run is then a spike. Pure, no clock."""

    rule: SlowdownRule = field(default_factory=SlowdownRule)
    reference: float | None = None
    steady: list[float] = field(default_factory=list)
    run: int = 0
    run_reference: float = 0.0

    def current_reference(self) -> float | None:
        """The reference step time now (seconds), None while warming up."""
        if self.reference is not None:
            return self.reference
        if len(self.steady) < self.rule.reference_intervals:
            return None
        return median(self.steady[-self.rule.reference_window:])

    def end_run(self) -> bool:
        """End the current run; True when it was unconfirmed (its held seconds were a spike)."""
        unconfirmed = 0 < self.run < self.rule.min_intervals
        self.run = 0
        return unconfirmed

    def observe(self, step_s: float | None, steps: int) -> Observation:
        """Classify one interval of `steps` steps at `step_s` seconds each (None: not measured)."""
        if step_s is None or steps < 1 or not step_s >= 0:
            return Observation("unmeasured")
        reference = self.run_reference if self.run else self.current_reference()
        if reference is None or reference <= 0:
            if self.reference is None:
                self.steady.append(step_s)
            return Observation("warmup")
        if step_s <= self.rule.threshold * reference:
            released = self.end_run()
            if self.reference is None:
                self.steady.append(step_s)
                del self.steady[: -self.rule.reference_window]
            return Observation("steady", released=released, reference_s=reference)
        self.run += 1
        self.run_reference = reference
        extra = (step_s - reference) * steps
        if self.run < self.rule.min_intervals:
            kind = "held"
        else:
            kind = "confirmed" if self.run == self.rule.min_intervals else "slow"
        return Observation(kind, extra, reference_s=reference)


def sustained_slowdowns(
    intervals: Iterable[Interval],
    reference: float | None = None,
    threshold: float = DEFAULT_THRESHOLD,
    min_intervals: int = DEFAULT_MIN_INTERVALS,
    reference_intervals: int = DEFAULT_REFERENCE_INTERVALS,
    reference_window: int = DEFAULT_REFERENCE_WINDOW,
) -> list[Slowdown]:
    """Every sustained slowdown in `intervals` (in order), by the module's rule; `reference`
    (seconds) fixes the reference instead of learning it. Raises ValueError for bad parameters
    (see `SlowdownRule`). The training-log reader should call this too, so a log and a journal
    of the same job give the same slowdowns."""
    rule = SlowdownRule(threshold, min_intervals, reference_intervals, reference_window)
    tracker = SlowdownTracker(rule, reference=reference)
    found: list[Slowdown] = []
    run: list[Interval] = []

    def close() -> None:
        if len(run) >= rule.min_intervals:
            ref = tracker.run_reference
            slow = median(x.step_s for x in run)
            extra = sum((x.step_s - ref) * x.steps for x in run)
            found.append(Slowdown(run[0].first_step, run[-1].last_step, slow / ref, ref, slow,
                                  len(run), extra))
        run.clear()

    for interval in intervals:
        seen = tracker.observe(interval.step_s, interval.steps)
        if seen.kind in ("held", "confirmed", "slow"):
            run.append(interval)
        elif seen.kind != "unmeasured":  # an interval without a step time neither ends nor extends
            close()
    close()
    return found
