"""The iteration counter glued after a samples bracket `[n/N (p%)]` (pure).

`glued_after_share(fields) -> int | None`: the index of an unnamed integer printed right after
the `)]` of an `n/N (p%)` bracket with nothing between (CosFace_pytorch's main.py
`'Train Epoch: {} [{}/{} ({:.0f}%)]{}, Loss: …'.format(epoch, batch_idx * len(data),
len(train_loader.dataset), 100. * batch_idx / len(train_loader), batch_idx, …)`:
`Train Epoch: 1 [51200/490871 (10%)]100, Loss: 24.182110`), None when there is none.
The bracket is the PyTorch MNIST example's, whose `n` counts samples (`batch_idx *
len(data)`), so the glued integer is the iteration counter when both rise on every record, the
bracket's `n` by a whole multiple (over 1) of the integer's stride (the batch size: 512 here),
and `p` is `n/N` in percent. A bracket with no glued integer, or one whose numbers do not keep
that proportion, is left to `counters`.
"""

from __future__ import annotations

from gpuslo.goodput.logs.templates import Field

SHARE_SLACK = 1.5  # percentage points: `p` is printed rounded (`{:.0f}%`)


def glued_after_share(fields: list[Field]) -> int | None:
    """The index of the iteration counter glued after `[n/N (p%)]` (module docstring)."""
    for i in range(3, len(fields)):
        f, share, total, done = fields[i], fields[i - 1], fields[i - 2], fields[i - 3]
        if f.key or f.unit or not f.integer or share.after != ")]" or share.unit != "%":
            continue
        if not done.after.strip().startswith("/") or not total.after.strip().startswith("("):
            continue
        if _proportional(done, total, share) and _strided(done, f):
            return i
    return None


def _proportional(done: Field, total: Field, share: Field) -> bool:
    """`p` is `100 n / N` on every record, within the rounding of `p`."""
    rows = list(zip(done.numbers, total.numbers, share.numbers, strict=False))
    return bool(rows) and all(
        None not in (n, t, p) and t > 0 and abs(100.0 * n / t - p) <= SHARE_SLACK  # type: ignore
        for n, t, p in rows)


def _strided(done: Field, counter: Field) -> bool:
    """Both rise on every record, `n` by the same whole multiple (over 1) of the counter's rise."""
    a, b = done.numbers, counter.numbers
    if len(a) < 2 or len(a) != len(b) or None in a or None in b:
        return False
    ratios = set()
    for k in range(1, len(a)):
        dn, dc = a[k] - a[k - 1], b[k] - b[k - 1]  # type: ignore[operator]
        if dn <= 0 or dc <= 0 or dn % dc:
            return False
        ratios.add(dn // dc)
    return len(ratios) == 1 and min(ratios) > 1
