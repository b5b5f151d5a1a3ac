"""A duration that counts down to the counter's N is the time left, whatever its name (pure).

A loop that prints `n/N` and a time left estimates the latter as its pace × the steps left, so
the printed duration falls line after line in step with `N - n` and reads 0 (or less than one
interval's time) at `n = N`. CIRKD's logger prints `Iters: 19860/20000 || … || Cost Time:
4:46:53 || Estimated Time: 0:02:01` … `Iters: 20000/20000 || … || Estimated Time: 0:00:00`
(fresh20 X20): `Estimated` names no word of `roles`' time-left family (`eta`, `remaining`,
`left`), and the 8-9 s between its lines of 10 iterations lie near 121 s / 140 steps × 10, so
the field read as the logging window's time. A step's own time that shrinks (a warm-up) does
not keep a steady ratio to the steps left, nor fall to 0 at the end: it stays a time.

`count_down(reading)` re-reads such a `step_s`/`window_s` field as `remaining`, where the
template has an `n/N` and:
- at least `MIN_RECORDS` records with steps left, the counter rising on each, the duration
  falling on most steps forward (`FALLING`: an estimate from a moving average may tick up);
- its ratio to the steps left steady within `SPREAD` (the loop's pace) on those records, and its
  fall from the first to the last of them that pace × the steps between, within `SPREAD` (a
  steady step time far from N keeps a steady ratio too, but hardly falls);
- where a record is at `n = N`, the duration there 0.
"""

from __future__ import annotations

from gpuslo.goodput.logs.reading import Reading, Role

MIN_RECORDS = 3
SPREAD = 2.0  # the largest per-step-left ratio over the smallest, at most
FALLING = 0.8  # share of consecutive records on which the duration falls, at least
_TIMES = ("step_s", "window_s")


def count_down(reading: Reading) -> None:
    """Re-read a duration counting down to the counter's N as `remaining` (module docstring)."""
    if reading.step is None or reading.total is None:
        return
    fields = reading.template.fields
    steps, totals = fields[reading.step].numbers, fields[reading.total].numbers
    for i, role in list(reading.roles.items()):
        if role.role in _TIMES and _counts_down(steps, totals, fields[i].numbers):
            reading.roles[i] = Role("remaining", role.scale, "falls with the steps left to the "
                                    "counter's N, to 0 at N: time left")


def _counts_down(steps: list, totals: list, durations: list) -> bool:
    """True when `durations` fall with `totals - steps` (see the module docstring)."""
    left: list[tuple[float, float]] = []
    for n, total, d in zip(steps, totals, durations, strict=False):
        if None in (n, total, d):
            continue
        if n >= total:
            if d != 0:
                return False
            continue
        left.append((total - n, d))
    if len(left) < MIN_RECORDS or any(d <= 0 for _, d in left):
        return False
    pairs = list(zip(left, left[1:], strict=False))
    if any(b[0] >= a[0] for a, b in pairs) or sum(b[1] < a[1] for a, b in pairs) < (
            FALLING * len(pairs)):
        return False
    ratios = sorted(d / s for s, d in left)
    pace = ratios[len(ratios) // 2]
    fell, expected = left[0][1] - left[-1][1], pace * (left[0][0] - left[-1][0])
    return ratios[-1] <= SPREAD * ratios[0] and expected / SPREAD <= fell <= expected * SPREAD
