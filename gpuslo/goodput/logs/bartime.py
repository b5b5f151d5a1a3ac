"""A progress bar printed at a record's step times that record (pure).

Trainers that log a dict or JSON record every few steps also draw a bar of the same steps, and
a log captures the bar where a message ends its line: PaddleNLP's Trainer prints `{'loss':
0.1252, 'learning_rate': 4e-05, 'global_step': 200, 'epoch': 2.67}` and then ` 33%|████▋ |
200/600 [01:11<01:58,  3.37it/s][2022-03-25 16:41:50,060] [    INFO] - ***** Running
Evaluation *****`. The records are the training progress (they are many, the bar is seen
once) and give no time; the bar's rate is the time of that step. A bar's counter counts its
own loop, so it times a record only where its `n` is the step of the record just before it
(200 after `'global_step': 200`): an evaluation bar (`25/25`) or an epoch's bar at another count
times nothing.

The same holds for a line of another family that prints the step just recorded with a duration
of that step: NVIDIA DeepLearningExamples' BERT TF2 loop logs `Step: 23 Lr 8.0872e-06 Loss scale
32768`, then `Train Step: 23/90  / loss = 11.3046875 / time = 0.134 sec` (its own step time,
where the stamps between records also hold the checkpoint written every step).

`bar_timers(families, chosen) -> list[Matcher]` the bars of the families not read as progress
that give a rate, when the progress families are lines that give no time of their own
(`learn`); `fits(found, last)` whether a timing record may give its time to the progress
record `last` (`reader.LogReader`): a timing line with no counter always does (`learn`), a bar
only at `last`'s step and when `last` has no time of its own; `epoch_bar_anew(prev, rec,
last_elapsed, start)` whether the bar of record `rec` (`progress.Record`) was drawn anew for
its epoch although its job-wide counter went on (`progress._runs`); `since_start(records,
timers)` the bar records timed only by their bar's mean since it began, in a bar whose captures
also give spans (kept out of the step-time statistics, `progress`).
"""

from __future__ import annotations

from typing import Any

from gpuslo.goodput.logs.matchers import Matcher, Prog, compile_reading
from gpuslo.goodput.logs.roles import Reading

_RATES = ("rate_ips", "rate_spi")
_TIMES = ("step_s", "window_s", "smoothed_s", "line_s", "elapsed") + _RATES
FAMILY = "timing:bar"


def bar_timers(families: dict[str, list[Reading]], chosen: list[str]) -> list[Matcher]:
    """The bars that may time the progress records (see the module docstring)."""
    progress = [r for name in chosen for r in families[name]]
    if not progress or any(r.bar for r in progress) or any(
            role.role in _TIMES for r in progress for role in r.roles.values()):
        return []
    out = []
    for name, readings in families.items():
        for reading in readings if name not in chosen else []:
            kinds = _RATES if reading.bar else _RATES + ("step_s",)
            if reading.step is not None and any(
                    role.role in kinds for role in reading.roles.values()):
                out.append(compile_reading(reading, FAMILY))
    return out


def fits(found: Prog, last: Prog | None) -> bool:
    """Whether the timing record `found` may time the progress record `last` (None: no record
    yet): see the module docstring."""
    if found.family != FAMILY:
        return True
    if last is None or found.printed != last.printed:
        return False
    last.complete()
    return all(getattr(last, name) is None for name in
               ("step_s", "window_s", "smoothed_s", "line_s", "elapsed", "rate_s"))


def epoch_bar_anew(prev: Any, rec: Any, last_elapsed: float | None, start: int | None
                   ) -> bool:
    """A bar of the next epoch whose elapsed rose far less than the job-wide counter it prints
    (under the square root of the counter's growth since the bar began, where one bar would
    grow in proportion): each epoch's bar is drawn anew from 0 s and began where the last one
    ended (Tianshou's `Epoch #2: 10001it [00:04, …, gradient_step=2000, …]` after `Epoch #1:
    10001it [00:05, …, gradient_step=1000, …]`: 4 s for gradient steps 1000 .. 2000)."""
    if prev is None or not (rec.prog.bar and prev.prog.bar) or rec.prog.elapsed is None or (
            not last_elapsed) or start is None or rec.printed <= prev.printed or (
            rec.epoch is None or prev.epoch is None or rec.epoch <= prev.epoch):
        return False
    ran, more = prev.glob - start, rec.glob - start
    return ran > 0 and rec.prog.elapsed / last_elapsed < (more / ran) ** 0.5


def since_start(records: list[Any], timers: list[Any]) -> list[int]:
    """Indexes of the bar records timed by their bar's mean since it began (`progress`, source
    `elapsed` with no span) in a bar whose captures also give spans: the mean holds the bar's
    start (its first batch, the data loader's workers) and stands for the steps only where no
    span measures them (Seed-VC's bar first seen at `29/123 [12:45<…]`, 26.4 s a step since the
    epoch began, then 33.4 s a step between its captures)."""
    spanned = {(r.run, r.bar_start) for r, t in zip(records, timers, strict=False)
               if r.prog.bar and t is not None and r.source == "elapsed"}
    return [i for i, (r, t) in enumerate(zip(records, timers, strict=False))
            if r.prog.bar and t is None and r.source == "elapsed"
            and (r.run, r.bar_start) in spanned]
