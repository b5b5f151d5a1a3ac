"""The whole step among a line's timed parts (pure): `sum_of_parts(fields, roles) -> index|None`.

A trainer that times each phase of an iteration and the iteration itself prints them side by
side, every phase named as a time: ESPnet2's reporter (espnet2/train/trainer.py) prints
`iter_time` (the wait for the data iterator), `forward_time`, `backward_time`,
`optim_step_time` and `train_time`, the iteration from its start to the end of its optimizer
step (`1epoch:train:6376-6750batch: iter_time=0.001, forward_time=0.005, …,
optim_step_time=1.949e-04, lr_0=0.100, train_time=0.013`, dev B25). `iter_time` names a time per
step by its wording but is one part; the whole is the duration at least the sum of all the
others on every record, each named as a time. Fewer than three timed parts, or no duration that
covers their sum on every record, gives None: the names decide as before.
"""

from __future__ import annotations

from gpuslo.goodput.logs.counters import words
from gpuslo.goodput.logs.reading import Role
from gpuslo.goodput.logs.templates import Field

_TIMED = ("step_s",)  # a smoothed time is a mean of one of them, no part
# a time named after a larger span than the step (getmusic's `epoch_time: 03s` beside its
# `fbward_time: 0.6s | iter_time: 0.6s`, fresh C15): no whole of one step's parts
_LARGER = {"epoch", "epochs", "total", "spend", "spent", "elapsed", "left", "remaining", "eta",
           "run", "wall", "cumulative"}
_PART = "a part of the step"
MIN_PARTS = 3  # timed parts besides the whole: two could be a step and its data wait
SLACK = 1.001  # rounding of printed sums


def _timed(fields: list[Field], roles: dict[int, Role]) -> list[int]:
    """The durations named as a time (`iter_time`, `forward_time`, …): an unnamed duration or
    one named otherwise (a bar's `[35secs 2.00%(29mins 15secs)]`, holdout A30) is no part."""
    return [i for i, r in roles.items() if (r.role in _TIMED or (
        r.role == "metric" and r.why.startswith(_PART))) and words(fields[i].key)[-1:] == ["time"]]


def sum_of_parts(fields: list[Field], roles: dict[int, Role]) -> int | None:
    """The index of the step_s duration that is at least the sum of the line's other timed
    parts on every record (module docstring), None when no one is or fewer than three parts."""
    timed = _timed(fields, roles)
    if len(timed) < MIN_PARTS + 1:
        return None
    rows = len(fields[timed[0]].numbers)
    if any(len(fields[i].numbers) != rows for i in timed) or not rows:
        return None
    found = []
    for w in timed:
        if roles[w].role != "step_s" or set(words(fields[w].key)) & _LARGER:
            continue
        ok = True
        for r in range(rows):
            parts = [(fields[i].numbers[r], roles[i].scale) for i in timed if i != w]
            whole = fields[w].numbers[r]
            if whole is None or any(n is None for n, _ in parts):
                ok = False
                break
            total = sum(n * s for n, s in parts if n is not None)
            ok = ok and total > 0 and whole * roles[w].scale * SLACK >= total
        if ok:
            found.append(w)
    return found[0] if len(found) == 1 else None
