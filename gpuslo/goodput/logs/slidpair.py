"""An `n/N` whose `n` stays while its `N` rises is `outer/counter`, not a count of a total (pure).

tqdm, Keras and every `n/N` logger print a total that stays; an `N` that rises line after line
while the `n` before it stays is itself the counter, and the `n` the loop around it. CosyVoice's
train_utils.py `log_per_step` prints `'{} Batch {}/{} '.format(tag, epoch, batch_idx + 1)`:
`TRAIN Batch 0/100 loss …`, then `0/200`, `0/400`, … `0/800` (fresh19 W14: epoch 0, batches
100 to 800, every `log_interval` of them). The reading turns round only where the `N` was
printed on at least `MIN_LINES` lines, never falls and rises at least twice, and the `n` is an
integer that never moves: a total that changes once (a dataset reloaded) or an `n` that moves
is left as it was read. A progress bar's `n/N` (tqdm's `{n_fmt}/{total_fmt}`, a rich or Keras
bar) is always its counter over its total: totals that rise there are several bars' (the
per-rank bars of one DeepSpeed job, each with its own length, interleaved: newcomer6 #12,
DeepSpeed#942's `0/61601`, `0/62442`, `0/64146`), never one counter.
"""

from __future__ import annotations

from gpuslo.goodput.logs.reading import Reading, Role
from gpuslo.goodput.logs.templates import Field

MIN_LINES = 3


def _known(numbers: list[float | None]) -> list[float]:
    return [n for n in numbers if n is not None]


def _slid(outer: Field, counter: Field) -> bool:
    lead, seen = _known(outer.numbers), _known(counter.numbers)
    if outer.kind != "num" or counter.kind != "num" or outer.after.strip() != "/" or (
            not outer.integer or not counter.integer or counter.key):
        return False
    if len(seen) < MIN_LINES or len(set(lead)) != 1:
        return False
    rises = sum(b > a for a, b in zip(seen, seen[1:], strict=False))
    return rises >= 2 and not any(b < a for a, b in zip(seen, seen[1:], strict=False))


def turn_slid_pair(reading: Reading) -> bool:
    """Read the rising `N` of an `n/N` as the step and its steady `n` as the epoch (the counter
    counts within it): the pair at the chosen step where one was chosen, else the first such
    pair on the line. True when it did, False (nothing changed) otherwise."""
    if reading.epoch is not None or reading.bar:
        return False
    fields = reading.template.fields
    starts = [reading.step] if reading.step is not None else range(len(fields) - 1)
    found = [i for i in starts if i + 1 < len(fields) and _slid(fields[i], fields[i + 1])]
    if not found:
        return False
    outer, counter = fields[found[0]], fields[found[0] + 1]
    reading.roles[outer.index] = Role("epoch", why="the n of an n/N whose N rises: the loop "
                                      "around the counter")
    reading.roles[counter.index] = Role("step", why="the N of an n/N that rises while its n "
                                        "stays: the counter")
    reading.epoch, reading.step, reading.total, reading.per_epoch = (
        outer.index, counter.index, None, True)
    return True
