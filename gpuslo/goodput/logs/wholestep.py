"""The clock over a trainer's own timer where the timer leaves part of each step out (pure).

A progress line's own duration (a per-step time, a window's, a line's part of a step:
`progress` 4.a) is what the trainer chose to time: lufficc/SSD's `Cost: 5.54s` is
`time.time() - tic` over 10 iterations with `tic` taken after the logging; PaddleGAN's
`batch_cost: 1.13305 sec` averages the loader and train step over the interval, not the
visualisation and logging done at each print. The stamps between the same lines (`windows`:
consecutive records of one run with no other work between, over a span of at least 20 × the
stamps' resolution) measure everything the steps held the GPUs for: 5.95 s per 10 iterations
(SSD, millisecond stamps) and 13 s per 10 (PaddleGAN, whole seconds over 20 s spans). Goodput
counts GPU time, so where the clock of a run's clean windows is longer than its own timer, but
at most `MAX_RATIO` times it, the clock is the step time of the records it measures.

Where the clock is more than `MAX_RATIO` times the timer, the windows hold other work every time
(TensorFlow's `time = 0.134 sec` with a checkpoint written between every two `Step:` lines, 4.79
s apart): the timer stays the step's, the same factor that tells a warm-up from a step
(`steptimes.warm`). Where the clock is no longer than the timer (a timer rounded up, an average
over more than the window), the timer stays. A stamp the transport wrote (a collector's,
`stamps.TransportTime`) is no clock of the trainer's (`steptimes._preferred`), nor is a bar's
elapsed (its own mean, `progress` 4.c); a line's cumulative elapsed time is (`windows`).

`prefer_clock(records, walls, timers, mixed) -> None` sets `step_s` and `source` of the records it
re-times (`source` "stamps" or "elapsed", as `steptimes._preferred` names the clock's times).
"""

from __future__ import annotations

from typing import Any

from gpuslo.goodput.logs.stamps import TransportTime

ELAPSED_MIN_S = 20.0  # a bar's elapsed time read as its clock spans at least this (whole s)

MAX_RATIO = 2.0  # the clock over the timer beyond which the windows hold other work
OWN_PART = ("step_s", "window_s", "window_rate", "line_s")  # a line's own timer (progress 4.a)

Span = tuple[float, int] | None


def _span(rec: Any, wall: Span, timer: Span) -> tuple[Span, str]:
    """(seconds, steps) of the record's clean window on the trainer's clock, and its source:
    the stamps, else a line's cumulative elapsed time, else a bar's elapsed time since it began
    (over at least `ELAPSED_MIN_S`: its clock prints whole seconds)."""
    if wall is not None and not isinstance(rec.prog.ts, TransportTime):
        return wall, "stamps"
    if timer is not None:
        return timer, "elapsed"
    p = rec.prog
    if p.bar and p.elapsed is not None and p.elapsed >= ELAPSED_MIN_S and (
            rec.bar_start is not None and rec.glob > rec.bar_start):
        return (p.elapsed, rec.glob - rec.bar_start), "elapsed"
    return None, ""


def _own_seconds(records: list[Any], i: int, steps: int) -> float | None:
    """Seconds the records' own timers give the `steps` steps ending at record `i` (the clock's
    span, `windows.spans`), None where one of them gives none."""
    total, counted, j = 0.0, 0, i
    while counted < steps and j >= 0:
        rec = records[j]
        if rec.source not in OWN_PART or not rec.step_s:
            return None
        delta = rec.delta or steps - counted  # a run's first record: the steps before it
        total, counted, j = total + rec.step_s * delta, counted + delta, j - 1
    return total if counted == steps else None


def prefer_clock(records: list[Any], walls: list[Span], timers: list[Span], mixed: list[bool]
                 ) -> None:
    """Re-time each run's records by the clock where it shows the timer leaves part of the step
    out (module docstring): every clean window of the run is longer on the clock than the timers
    of its steps add up to, and the run's clock at most `MAX_RATIO` times its timer. `walls`,
    `timers`: `windows.spans` of the stamps and of the elapsed times; `mixed`:
    `windows.mark_mixed` (a window that held other work is no step's)."""
    found: dict[int, list[tuple[int, float, float, tuple[float, str]]]] = {}
    for i, rec in enumerate(records):
        if mixed[i] or rec.source not in OWN_PART:
            continue
        span, source = _span(rec, walls[i], timers[i])
        own = _own_seconds(records, i, span[1]) if span is not None else None
        if span is not None and own is not None:
            found.setdefault(rec.run, []).append((i, span[0], own, (span[0] / span[1], source)))
    for windows in found.values():
        longer = all(seconds > own for _, seconds, own, _ in windows)
        ratio = sum(seconds for _, seconds, _, _ in windows) / sum(o for _, _, o, _ in windows)
        if longer and ratio <= MAX_RATIO:
            for i, _, _, clock in windows:
                records[i].step_s, records[i].source = clock
