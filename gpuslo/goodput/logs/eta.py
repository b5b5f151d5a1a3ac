"""Seconds per step from a drawn bar's time left, where the bar prints no rate (pure).

A progress bar that draws its glyphs and prints only the time left (Keras's Progbar before an
epoch ends: ` 78/100 [======>....] - ETA: 12s - loss: …`) still says its pace: Keras computes
the ETA as its mean time per step since the bar began × the steps left (`Progbar.update`:
`eta = time_per_unit * (self.target - current)`), and tqdm as the steps left / its rate. So
ETA / (N - n) is the bar's seconds per step, its mean so far. Printed in whole seconds it is
coarse (12 s over 22 steps: ±4 %), so it is a rate, the reader's last choice of step time
(`progress`), and only for a bar with no rate of its own and steps still left.

`eta_rate(prog, remaining, drawn)` sets `prog.rate_s` from it where that holds.
"""

from __future__ import annotations

from typing import Any


def eta_rate(prog: Any, remaining: float | None, drawn: bool) -> None:
    """Set `prog.rate_s` (a `matchers.Prog`) to `remaining` seconds / the steps left, where the
    line draws a bar (`drawn`), gives no rate and has steps left; else leave it."""
    if not drawn or remaining is None or remaining <= 0 or prog.rate_s is not None:
        return
    if prog.total is None or prog.total <= prog.printed:
        return
    prog.rate_s = remaining / (prog.total - prog.printed)
