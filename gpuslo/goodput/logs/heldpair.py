"""A pair `a/b` whose `a` holds while `b` rises is no `n/N` (pure): `held_pair(fields) ->
(epoch index, step index) | None`.

WeNet's executor logs `'TRAIN Batch {}/{} loss {:.6f} …'.format(epoch, batch_idx, …)` (wenet/
utils/executor.py, 2023): `TRAIN Batch 4/203700 loss 12.646465 … rank 0`, then `TRAIN Batch
4/203800 …`, fresh C23). In an `n/N` the N is the loop's length and stays while n moves; here
the first number holds and the second rises, so the first is the epoch and the second the
counter. Read so only when the first is a whole number of at least 1 that never changes, the
second takes at least two values, never falls and stays above the first on every record (a
bar's opening draws `0/500`, `0/1000` of two loops keep their n/N).
"""

from __future__ import annotations

from gpuslo.goodput.logs.templates import Field


def held_pair(fields: list[Field]) -> tuple[int, int] | None:
    """(index of the held first number, index of the rising second) of the first such pair."""
    for first, second in zip(fields, fields[1:], strict=False):
        rest = first.after.strip()
        if first.kind != "num" or second.kind != "num" or not (first.integer and second.integer):
            continue
        if not rest.startswith("/") or any(ch.isalpha() for ch in rest[1:]) or second.key:
            continue
        ns, big = first.known(), second.known()
        if len(big) < 2 or len(ns) != len(big) or not first.constant() or ns[0] < 1:
            continue
        if len(set(big)) >= 2 and second.rising() == 1.0 and min(big) > ns[0]:
            return first.index, second.index
    return None
