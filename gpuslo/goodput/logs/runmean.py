"""A line's time per step that is the running mean since the epoch began, undone into each
window's own time (pure): `undo_running_means(records)`.

ClearerVoice-Studio's trainer prints `Train Epoch: 0/100 Step: 10/965 | 2.057s/batch | …`,
then `1.407s/batch` at step 20, `1.191` at 30, … `0.862` at 160 (fresh C14): the seconds per
batch averaged over every batch of the epoch so far, the first batches' warm-up included, so
the printed figure falls like 1/n towards the steady time. The sum it averages, mean × n,
grows by the window's own time: window = (a_k·n_k − a_(k−1)·n_(k−1)) / (n_k − n_(k−1)).

Read so only for a line's own printed time with no elapsed time beside it (a tqdm bar's rate
is an EMA, its mean measured from the elapsed: `steptimes`) of one
template, one run and one epoch whose counter (from the epoch's start: a per-epoch `n/N`)
rises on every record, at least MIN_RECORDS of them, when the printed figure falls on at
least FALLING of the pairs and every undone window is positive and varies (after the first,
standard deviation over mean) under half as much as the printed figures: a mean over a growing
count undoes into a steady time (C14: 0.755-0.92 s, 6 % against 15 %), a warm-up the lines
print window by window into a dip and a climb about as varied as the figures themselves.
"""

from __future__ import annotations

from statistics import mean, pstdev
from typing import Any

MIN_RECORDS = 6
FALLING = 0.8
_OWN = ("step_s", "rate", "smoothed_s", "bar_mean")


def _variation(values: list[float]) -> float:
    """Coefficient of variation (population standard deviation over the mean)."""
    return pstdev(values) / mean(values) if len(values) >= 2 and mean(values) else 0.0


def _runs(records: list[Any]) -> list[list[Any]]:
    """Stretches of records of one template, run and epoch, per-epoch counter rising."""
    out: list[list[Any]] = []
    for rec in records:
        last = out[-1][-1] if out else None
        if last is not None and last.prog.matcher is rec.prog.matcher and last.run == rec.run \
                and last.epoch == rec.epoch and rec.printed > last.printed:
            out[-1].append(rec)
        else:
            out.append([rec])
    return out


def _undone(run: list[Any]) -> list[float] | None:
    """The windows' own times of `run`, None when it is no running mean (module docstring)."""
    if len(run) < MIN_RECORDS or any(r.prog.elapsed is not None or r.source not in _OWN
                                     or not r.step_s
                                     or r.total is None or r.epoch is None for r in run):
        return None
    means = [r.step_s for r in run]
    pairs = list(zip(means, means[1:], strict=False))
    if sum(b < a for a, b in pairs) < FALLING * len(pairs):
        return None
    windows = [(b.step_s * b.printed - a.step_s * a.printed) / (b.printed - a.printed)
               for a, b in zip(run, run[1:], strict=False)]
    if min(windows) <= 0 or _variation(windows[1:]) * 2 >= _variation(means[1:]):
        return None
    return windows


def undo_running_means(records: list[Any]) -> None:
    """Each record after a running mean's first gets its window's own time (`runmean`)."""
    for run in _runs(records):
        windows = _undone(run)
        if windows is None:
            continue
        for rec, window in zip(run[1:], windows, strict=True):
            rec.step_s, rec.source = window, "running_mean"
            rec.dur = window * (rec.delta or 1)
