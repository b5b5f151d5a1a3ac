"""A rate printed as a mean over its line's window holds the saves printed in that window (pure).

`saves_in_rates(items)`: a progress line that prints a rate and no duration of its own step
(fairseq's `ups`, updates per second of wall time since the meters were last reset: each
`train_inner` interval, each epoch's `end of epoch N (average epoch stats below)` summary) times
its steps by that rate (`steptimes`, source `rate`). Everything the loop did between the line
before it and this one is inside that mean: a checkpoint save printed between them (fairseq
writes `checkpointN.pt` before it prints the epoch's summary) is in it, so its step time is not
a step's. Such a record is kept on the clock (its steps took that time) and out of the step-time
statistics (`warm`), as a window of stamps that held other work is (`windows`). A run's first
record takes the lines before it in the log: they were printed after the previous line of its
loop, which the log does not show. newcomer5 #3: fairseq#2493's epoch-110 summary, `train_ups
0.11` (9.09 s an update) over an epoch whose save took 61.4 s, beside epoch 111's 0.31 (3.2 s,
its stamps 99 s / 31 updates): a median of 6.14 s. A bar's rate (tqdm's EMA of its last steps)
is not such a mean and is left alone; so is a rate whose window shows no save. Some trainers
time their rate over the steps alone (mlx-lm's `It/sec` is steps over the summed step time, the
save outside it: `Iter 50: Saved adapter weights …`, then `Iter 51: … It/sec 0.655` within the
run's 0.3-0.66): a rate whose window held a save is kept out only where it is also outside the
band of the run's other records (more than twice the slowest or under half the fastest, the
warm-up test of `steptimes.warm`), the save's time showing in it; with no other record to
compare, it stays.
"""

from __future__ import annotations

from typing import Any

from gpuslo.goodput.logs.progress import Record
from gpuslo.goodput.logs.story import Save


def saves_in_rates(items: list[Any]) -> None:
    """Mark `warm` each record timed by a windowed rate whose window held a save and whose time
    is out of its run's band (module docstring); `items`: the log's items in order
    (`items.group_events`)."""
    saved, held = False, []
    for item in items:
        if isinstance(item, Save):
            saved = True
        elif isinstance(item, Record):
            if saved and item.source == "rate" and not item.prog.bar and item.step_s:
                held.append(item)
            saved = False
    kept_out = {id(r) for r in held}
    band: dict[int, tuple[float, float]] = {}  # run -> (fastest, slowest) of its other records
    for r in items:
        if isinstance(r, Record) and r.step_s and not r.warm and id(r) not in kept_out:
            low, high = band.get(r.run, (r.step_s, r.step_s))
            band[r.run] = (min(low, r.step_s), max(high, r.step_s))
    for rec in held:
        low, high = band.get(rec.run, (None, None))
        if low is not None and not low / 2 <= rec.step_s <= high * 2:
            rec.warm = True
