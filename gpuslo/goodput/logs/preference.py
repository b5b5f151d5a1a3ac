"""Which of a progress family's templates is tried first on a record (pure).

A matcher's regex is cut after the last field that has a role (`matchers.compile_reading`), so a
template that reads only the counter matches every line that opens like it: mlx-lm's save line
`Iter <n>: Saved adapter weights to …` (a step, no time) also matches its report lines `Iter
<n>: Train loss <n>, Learning Rate <n>, It/sec <n>, …`, and the reader, taking the first matcher
that reads a record, would lose their rate. The templates of one family are therefore tried in
the order of preference of the times they give (`progress` module docstring, 4.a-e): a per-step
duration, a window's, a line's part of a step, a cumulative elapsed time, an average, a rate
(`It/sec`, `s/it`); then those that give no time. A duration counts only when it is named: an
unnamed one's meaning (a step's, a window's, an epoch's time) is a guess (TensorFlow's `loss =
4.26, step = 100 (124.394 sec)` is the time of the 100 steps since the last line, and the
`global_step/sec` lines beside it time the steps), so it gives its template no precedence; a
rate names itself by its unit (`3.37it/s`). Among equals, the order they were learnt in.

`by_preference(readings) -> list[Reading]` that order (a stable sort; the families' own order,
and so which family a record belongs to, is the caller's and does not change).
"""

from __future__ import annotations

from gpuslo.goodput.logs.roles import Reading

# steptimes._preferred's order of the times a line itself prints; both rates are one rank
TIME_ORDER = ("step_s", "window_s", "line_s", "elapsed", "smoothed_s", "rate")


def _time_rank(role: str, named: bool) -> int | None:
    name = "rate" if role in ("rate_ips", "rate_spi") else role
    if name not in TIME_ORDER or not (named or name == "rate"):
        return None
    return TIME_ORDER.index(name)


def rank(reading: Reading) -> int:
    """The rank of the best time the template gives (len(TIME_ORDER) when none): lower is
    tried first."""
    fields = reading.template.fields
    ranks = [k for i, r in reading.roles.items()
             if (k := _time_rank(r.role, bool(fields[i].key))) is not None]
    return min(ranks, default=len(TIME_ORDER))


def by_preference(readings: list[Reading]) -> list[Reading]:
    """`readings` in the order their matchers are tried (see the module docstring)."""
    return sorted(readings, key=rank)
