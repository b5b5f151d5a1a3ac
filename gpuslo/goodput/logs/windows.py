"""Step time from the clock between progress records, where a line prints no per-step duration
(pure): wall-clock stamp deltas, or the deltas of a cumulative elapsed time (a bar's `[6:56:13<`,
`spend_time: 03m:04s`, `train_time:`), over the steps between the records.

Order of preference (`steptimes._preferred` applies it per record): a duration the line prints
(per step, per window, per line: read by the roles) first; then the stamps' difference over
a long enough span; then a cumulative elapsed time's difference over a long enough span (for a
bar with no such span, its elapsed time over the steps since the bar began); then an average or
a rate the line prints; last, the stamps' difference over a span too short for their
resolution (`stamps_coarse`); except that a clock longer than the line's own timer on every
clean window, and at most twice it, is the step time (`wholestep`). Stamps a collector wrote
(`stamps.TransportTime`, a line with none of its own) come after every time the trainer printed
(`steptimes._preferred`).

Window rule. A span is measured between two progress records of one *stretch*: consecutive
records of one run (no restart between; for a bar, one bar: its elapsed never goes back) with no
other work between them. Other work shows as more records between two progress records than the
run usually has (`mixed`): an evaluation, a save, an epoch summary and the next epoch's banner,
a test block (Caffe's `Iteration 7000, Testing net` before the 7000 loss line). The usual gap is
the most common one of the run (the smallest of equally common ones); a record whose window held
more is kept on the clock but out of the step-time statistics (its time is not a step's).
A step printed again by a line of another template (an evaluation record of the same step) ends
at that line (`Record.tail`): the next window starts there and holds no evaluation.
Step time = (v_i - v_j) / (step_i - step_j) with v the stamp (or the elapsed time) and j the
latest record of the stretch at least `MIN_SPAN_RESOLUTIONS` × the values' resolution before i
(whole-second stamps: 20 s, so 5 or 6 s between lines printed every 10 steps is not read as
0.5 or 0.6 s a step; millisecond stamps: 20 ms, the previous record). fairseq's `train_inner`
every 100 updates gives 46 s / 100 between its own lines, not across the validation, save and
epoch summary at the epoch's end.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from gpuslo.goodput.logs.matchers import Prog

MIN_SPAN_RESOLUTIONS = 20
LATE_STEPS = 10  # steps a bar ran before the log first shows it, at least, for `_seen_late`
FINE_RESOLUTION_S = 0.001


def resolution(values: list[float], printed: bool = False) -> float:
    """1 s when every value is whole (stamps or elapsed times printed in seconds), else 1 ms;
    coarser where most consecutive values repeat (a clock that ticks more slowly than the
    records come, lines dated by their arrival in batches): the median tick between them.
    `printed`: a clock printed as a number, whose decimals are its resolution, finer than 1 ms
    where every value has more (LightGBM's `2.432232 seconds elapsed`: 1 µs, its iterations
    2 ms apart)."""
    fine = 1.0 if values and all(v == int(v) for v in values) else FINE_RESOLUTION_S
    if printed and fine < 1.0:
        fine = min(fine, _decimals(values))
    ticks = [b - a for a, b in zip(values, values[1:], strict=False) if b > a]
    repeats = sum(1 for a, b in zip(values, values[1:], strict=False) if b == a)
    if ticks and repeats > len(ticks):
        return max(fine, sorted(ticks)[len(ticks) // 2])
    return fine


def _decimals(values: list[float]) -> float:
    """The finest step all `values` are printed in, 1 ms to 1 µs (1 µs when finer still)."""
    for digits in (3, 4, 5, 6):
        scale = 10.0**digits
        if all(abs(v * scale - round(v * scale)) < 1e-3 for v in values):
            return 1.0 / scale
    return 1e-6


def mark_mixed(records: list[Any]) -> list[bool]:
    """Per record, True when its window (since the previous record of its run) held more
    records than the run's usual gap: other work between two steps (see the module docstring).
    A run with one window, or whose windows are all alike, has none."""
    gaps: dict[int, Counter[int]] = {}
    for i, rec in enumerate(records):
        if i and rec.delta:
            gaps.setdefault(rec.run, Counter())[_gap(records[i - 1], rec)] += 1
    usual = {run: min(g for g, n in c.items() if n == max(c.values())) for run, c in gaps.items()}
    return [bool(i and rec.delta and _gap(records[i - 1], rec) > usual[rec.run])
            for i, rec in enumerate(records)]


def _gap(prev: Any, rec: Any) -> int:
    """Records between `prev`'s step and `rec`. The step's window opens at its last line: its
    own, another template's of the same step (`tail`), or the same template printing it again
    with no later stamp (`copied`: TF Model Garden's Orbit logs each `train | step: 160 | …`
    record through absl and once more, unstamped, on stdout, each with its dict of losses,
    fresh23 AA01): the copy's lines are no other work. A copy stamped later (Caffe's
    `Iteration 7000, loss` after its `Iteration 7000, Testing net`, 105 s on) is not one."""
    copied = getattr(prev, "copied", prev.tail.seq)
    copied = copied if copied < rec.prog.since else prev.tail.seq
    return rec.prog.since - max(prev.tail.seq, copied)


def spans(records: list[Any], mixed: list[bool], value: str, bar: bool
          ) -> list[tuple[float, int] | None]:
    """Per record, (seconds, steps) from the latest record of its stretch at least the minimum
    span before it (see the module docstring), None when there is none. `records`: progress
    `Record`s; `value`: "ts" (the record's stamp) or "elapsed" (its cumulative elapsed time);
    `bar`: a bar's elapsed time (a stretch is also one bar: same bar start, elapsed never going
    back), read only between captures that far apart (a bar copied into a log every 120 steps):
    a bar redrawn every step is read by its mean since it began (`steptimes._bar_elapsed`),
    unless the bar began long before the log shows it (`_seen_late`)."""
    vals = [_value(r.prog, value) for r in records]
    # where each step's clock ends: its later line's clock, else its own where that line shows
    # none (Seed-VC's `epoch 7, step 890, …` glued after the bar of that step)
    ends = [_value(r.tail, value) if _value(r.tail, value) is not None else vals[i]
            for i, r in enumerate(records)]
    known = [v for v in vals if v is not None]
    printed = value == "elapsed" and not any(r.prog.bar for r in records)  # a number's decimals
    min_span = MIN_SPAN_RESOLUTIONS * resolution(known, printed)
    out: list[tuple[float, int] | None] = [None] * len(records)
    k = opened = 0
    for i, rec in enumerate(records):
        v, before = vals[i], ends[i - 1] if i else None
        barred = bar and rec.prog.bar
        if v is None or before is None or not rec.delta or v < before or (
                barred and records[i - 1].bar_start != rec.bar_start):
            k = opened = i  # a new stretch (a run's or a bar's first record, a clock gone back)
            continue
        if mixed[i]:  # its own window, other work and all: its time on the clock, not a step's
            out[i] = (v - before, rec.delta) if v - before >= min_span else None
            k = i
            continue
        if barred and not (rec.delta == 1 and _seen_late(records[opened], vals[opened], min_span)):
            k = i - 1
        while k + 1 < i and v - ends[k + 1] >= min_span:  # type: ignore[operator]
            k += 1
        base = ends[k]
        if base is not None and v - base >= min_span and rec.glob > records[k].glob:
            out[i] = (v - base, rec.glob - records[k].glob)
    return out


def _seen_late(rec: Any, first: float | None, min_span: float) -> bool:
    """True when a bar's first capture in the log (`rec`, its elapsed `first`) is `LATE_STEPS`
    or more past where the bar began and already shows `min_span` or more elapsed (a bar begun
    long before the excerpt: STTN's tqdm first seen at `18767/20000 [11:31:24<…`, fresh20 X06):
    its mean since it began holds steps the log does not show, so its captures one step apart
    (`spans` asks) are read over spans of `min_span` between them, as a line's clock. A bar
    seen from its first steps (verl's `1/3746 [00:36<…` after its opening draw: a slow first
    step), or captured far apart (RVT's `248it`, `297it`, `344it`, `144434it`, fresh19 W12:
    each span between two captures is theirs), is read as before."""
    return first is not None and first >= min_span and (
        rec.glob - (rec.bar_start or 0) >= LATE_STEPS)


def _value(prog: Prog, value: str) -> float | None:
    return prog.ts if value == "ts" else prog.elapsed
