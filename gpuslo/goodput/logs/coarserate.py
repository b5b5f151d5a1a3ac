"""A rate printed too coarsely to time a step, where the stamps time the same records (pure).

`coarse_rates(records)` keeps out of the step-time statistics (`Record.warm`) each record timed
by its printed rate alone (`steptimes` source `rate`, no bar) where that rate is printed to one
significant figure or so - half its last digit is more than `COARSE` of it - and the stamps time
another record of the same run and template (source `stamps`, in the statistics) at a step
time inside the rate's rounding. The rate only bounds the step time, the stamps measure it.
TF Model Garden's Orbit controller prints `train | step:    180 | steps/sec:    0.1 | output:`
(`%.1f`): 0.05-0.15 steps a second, 6.7-20 s a step, while its absl stamps 20 steps apart give
373.29 s, 18.66 s a step (fresh23 AA01, google-research-datasets/hiertext#6). The records keep
their rate's time on the clock (`dur`): only the statistics leave them out. A rate printed
finer (TF's `global_step/sec: 3.77893`, tqdm's `1.99it/s`), one the stamps contradict, a bar's
rate, or a log without such stamps keeps the rate as it is.
"""

from __future__ import annotations

from typing import Any

COARSE = 0.2  # half the printed rate's last digit over the rate: `0.1` is 0.5, `0.9` 0.056


def _printed(rec: Any) -> tuple[float, float] | None:
    """(seconds per step at the rate's lower end, at its upper end) where the record is timed
    by a rate printed coarser than `COARSE`, else None. The printed figure is read back from
    `rate_s` (iterations per second: its inverse)."""
    p = rec.prog
    if rec.source != "rate" or p.bar or not p.rate_s or p.matcher is None:
        return None
    roles = [r for r in p.matcher.reading.roles.values() if r.role in ("rate_ips", "rate_spi")]
    if len(roles) != 1:
        return None
    role = roles[0]
    shown = role.scale / p.rate_s if role.role == "rate_ips" else p.rate_s / role.scale
    half = _half_digit(shown)
    if half is None or half / shown <= COARSE:
        return None
    low, high = shown - half, shown + half
    if role.role == "rate_ips":
        return role.scale / high, (role.scale / low if low > 0 else float("inf"))
    return low * role.scale, high * role.scale


def _half_digit(value: float) -> float | None:
    """Half the last printed digit of `value` (0.1 → 0.05, 2 → 0.5); None for more than four
    decimals (no figure printed so: a reciprocal's)."""
    for decimals in range(5):
        if value > 0 and abs(round(value, decimals) - value) <= 1e-9 * max(1.0, value):
            return 0.5 * 10 ** -decimals
    return None


def coarse_rates(records: list[Any]) -> None:
    """Mark `warm` the records timed by a coarse rate the stamps measure (module docstring)."""
    stamped: dict[tuple[int, int], list[float]] = {}
    for rec in records:
        if rec.source == "stamps" and not rec.warm and rec.step_s:
            stamped.setdefault((rec.run, id(rec.prog.matcher)), []).append(rec.step_s)
    if not stamped:
        return
    for rec in records:
        measured = stamped.get((rec.run, id(rec.prog.matcher)))
        bounds = _printed(rec) if measured else None
        if bounds is not None and all(bounds[0] <= s <= bounds[1] for s in measured):
            rec.warm = True
