"""Each progress record's step time, in the order of preference, and the warm-up kept out of the
statistics: stages 4-5 of `progress`'s module docstring (pure).

`step_times(records)` sets each `progress.Record`'s `step_s` (seconds per step, None when
unknown), `source` (what gave it) and `dur` (seconds its steps took) from whichever time the
record's line, its neighbours' clock or its bar give (4.a-f; the clock over a timer that leaves
part of each step out: `wholestep`); `warm(records)` marks each run's
first record that is not a full step (5). `quick(rec)`: a bar that ran from 0 in under a second
(`progress` asks it where a bar began).
"""

from __future__ import annotations

from collections import Counter
from typing import Any

import gpuslo.goodput.logs.epochs as epoch_rules
from gpuslo.goodput.logs.bartime import since_start
from gpuslo.goodput.logs.perstep import first_warm
from gpuslo.goodput.logs.stamps import TransportTime
from gpuslo.goodput.logs.wholestep import ELAPSED_MIN_S, prefer_clock
from gpuslo.goodput.logs.windows import mark_mixed, spans

RUN_MEAN_MIN_S = 2.0  # a bar run's mean step time needs at least this much elapsed time
# step times measured over the window since the previous record: not a step's where the window
# held other work (a step's own printed duration is its own, whatever was printed between)
_SPAN_SOURCES = ("window_s", "window_rate", "stamps", "stamps_coarse", "elapsed_coarse")
FINER = 4  # a figure this many times finer than another of the same time is read instead
MID_WAY_ELAPSED_S = 1.0  # a bar at step n ≥ progress.MID_WAY_MIN_STEP with this little elapsed


def quick(rec: Any) -> bool:
    """True when the bar's n steps at its mean rate (a bar with no time left: Keras's, not
    tqdm's EMA) fit in its elapsed whole seconds: it ran from 0 in under a second (Keras's
    `405/405 [====] - 0s 829us/sample`), it did not resume."""
    p = rec.prog
    if p.rate_s is None or p.matcher is None or any(
            r.role == "remaining" for r in p.matcher.reading.roles.values()):
        return False
    return rec.printed * p.rate_s <= (p.elapsed or 0.0) + MID_WAY_ELAPSED_S



def _rounding(value: float) -> float | None:
    """Relative rounding of a printed figure: half its last decimal over the value (`1` → 0.5,
    0.134 from `134ms` → 0.0037); None when it has more than 4 decimals (a reciprocal of
    `it/s`: its printed digits are not known)."""
    for decimals in range(5):
        if value > 0 and abs(round(value, decimals) - value) <= 1e-9 * max(1.0, value):
            return 0.5 * 10 ** -decimals / value
    return None


def _finer_rate(rec: Any, means: dict[int, bool]) -> bool:
    """True when a bar's printed seconds per step is its mean (a bar with no time left: not
    tqdm's `[elapsed<remaining, rate]`, whose rate is an EMA) and finer than its elapsed whole
    seconds over its steps (Keras's `- 3s 134ms/step`: 134 ms is the bar's time / steps to
    0.4 %, 3 s to 17 %; not `- 142s 1s/step`). `means`: whether a matcher's rate is a mean,
    by the matcher's id (asked once per template, not per record)."""
    p = rec.prog
    if p.rate_s is None or not p.elapsed or p.matcher is None:
        return False
    mean = means.get(id(p.matcher))
    if mean is None:
        roles = p.matcher.reading.roles.values()
        mean = means[id(p.matcher)] = not any(r.role == "remaining" for r in roles)
    rounding = _rounding(p.rate_s) if mean else None
    return rounding is not None and rounding < 0.5 / p.elapsed


def step_times(records: list[Any]) -> None:
    """Each record's step time, in the order of preference of the module docstring."""
    mixed = mark_mixed(records)
    walls = spans(records, mixed, "ts", bar=False)
    timers = spans(records, mixed, "elapsed", bar=True)
    means: dict[int, bool] = {}
    for i, rec in enumerate(records):
        prev = records[i - 1] if i and rec.delta else None
        rec.step_s, rec.source = _preferred(rec, prev, walls[i], timers[i], means)
    for i in _lone_settled(records, timers):
        records[i].step_s, records[i].source = _rate(records[i]), "settled_rate"
    prefer_clock(records, walls, timers, mixed)
    for i, rec in enumerate(records):
        rec.warm = rec.prog.held or mixed[i] and (rec.source in _SPAN_SOURCES or (
            rec.source == "elapsed" and timers[i] is not None))  # not a bar's mean since start
    for i in since_start(records, timers):
        records[i].warm = True
    runs = _bar_run_means(records)
    for i, rec in enumerate(records):
        step_s = runs.get((rec.run, rec.bar_start), rec.step_s) if rec.prog.bar else rec.step_s
        if rec.source in ("rate", "") and rec.prog.bar and step_s is not None and (
                not _finer_rate(rec, means)):
            rec.step_s, rec.source = step_s, "bar_mean"  # a bar's first seconds: its EMA rate
        if step_s is not None:                            # is not settled; the run's mean is
            rec.dur = step_s * (rec.delta or _estimate(records, i))
        elif rec.delta is None and rec.ts is not None:
            rec.dur = _first_by_next(records, i)


def _rate_on_clock(rec: Any) -> bool:
    """True when a bar run's last rate times its steps since it began falls inside its elapsed whole
    seconds (tqdm's `format_interval` truncates: `00:02` is 2.0-2.99 s) on a clock too short for
    its mean to be read (under ELAPSED_MIN_S): the rate is the same mean, finer (Lightning's bar,
    `smoothing=0`: `5/28 [00:02<00:12,  1.91it/s]` is 0.524 s a step, 2.6 s, not 2 / 5 = 0.4).
    A rate that falls outside is an EMA of other steps: the mean stays."""
    p = rec.prog
    if p.rate_s is None or p.elapsed is None or rec.bar_start is None or (
            not 0 < p.elapsed < ELAPSED_MIN_S) or rec.glob <= rec.bar_start:
        return False
    return p.elapsed <= (rec.glob - rec.bar_start) * p.rate_s < p.elapsed + 1.0


def _bar_run_means(records: list[Any]) -> dict[tuple[int, int | None], float]:
    """Seconds per step of each bar run over its whole length (last elapsed / steps since the
    bar began, or the last rate where it is that mean finer, `_rate_on_clock`): bars print whole
    seconds, so each step is placed on the clock by this mean. Where the bar's first steps shown
    were slower than the rest beyond what whole seconds explain (`_past_start`), the mean is the
    rest's: the first steps held the start-up."""
    first: dict[tuple[int, int | None], Any] = {}
    last: dict[tuple[int, int | None], Any] = {}
    for rec in records:
        if rec.prog.bar and rec.prog.elapsed is not None and rec.bar_start is not None:
            key = (rec.run, rec.bar_start)
            last[key] = rec
            if key not in first and rec.glob > rec.bar_start:
                first[key] = rec
    out = {}
    for key, rec in last.items():
        if not (rec.prog.elapsed and rec.prog.elapsed >= RUN_MEAN_MIN_S
                and rec.glob > (rec.bar_start or 0)):
            continue
        later = _past_start(first[key], rec) if key in first else None
        out[key] = later if later is not None else rec.prog.rate_s if _rate_on_clock(rec) else (
            rec.prog.elapsed / (rec.glob - rec.bar_start))  # type: ignore[operator]
    return out


def _past_start(first: Any, last: Any) -> float | None:
    """A bar run's seconds per step between its first draw past its start and its last (their
    elapsed clocks' difference over their steps), where the first draw's own mean since the
    start is above the most that difference can be with whole seconds truncated (tqdm's
    `format_interval`: `00:08` is 8.0-8.99 s), over at least `RUN_MEAN_MIN_S`: the first steps
    held the start-up (a dataloader's workers, CUDA's first kernels), which is no step's time.
    None otherwise. Lightning's bar (newcomer6 #3, Lightning#4225): `1/18 [00:08<…]`, `2/18
    [00:11<…]` .. `5/18 [00:20<…]` is 3 s a step after an 8 s first one, not 20 / 5 = 4 s.
    Where the difference spans under `RUN_MEAN_MIN_S`, the last draw's rate, if whole seconds
    allow it (DeepSpeed#942's rank bar, `2/61289 [00:06<…]` .. `6/61289 [00:07<…, 9.93it/s]`
    after a 5 s first step: 0.1 s a step, not 7 / 6)."""
    steps = last.glob - first.glob
    passed = last.prog.elapsed - first.prog.elapsed
    if steps <= 0 or passed < 0:
        return None
    early = first.prog.elapsed / (first.glob - first.bar_start)
    most = (passed + 1.0) / steps
    if early <= most:
        return None
    if passed >= RUN_MEAN_MIN_S:
        return passed / steps
    rate = last.prog.rate_s  # too short a clock to measure: the bar's own rate, where it fits
    return rate if rate is not None and max(0.0, passed - 1.0) / steps <= rate <= most else None


def _preferred(rec: Any, prev: Any | None, wall: tuple[float, int] | None,
               timer: tuple[float, int] | None, means: dict[int, bool]
               ) -> tuple[float | None, str]:
    """The record's step time and its source. A stamp the transport wrote (a collector's,
    `stamps.TransportTime`) ranks after every time the trainer printed itself: it is when the
    line reached the collector, after the trainer's stdout buffer (many lines of a block-buffered
    pipe share one time), while a duration, an elapsed time, an average or a rate is the
    trainer's own measure of its steps; it still times the records that print none."""
    carried = isinstance(rec.prog.ts, TransportTime)
    step_s, source = _preferred_own(rec, prev, None if carried else wall, timer, means,
                                    coarse=not carried)
    if source or not carried:
        return step_s, source
    if wall is not None:
        return wall[0] / wall[1], "stamps"
    return _coarse(rec, prev)


def _preferred_own(rec: Any, prev: Any | None, wall: tuple[float, int] | None,
                   timer: tuple[float, int] | None, means: dict[int, bool], coarse: bool
                   ) -> tuple[float | None, str]:
    """`_preferred` on the trainer's clock; `coarse`: with the stamps' difference over a span
    too short for their resolution."""
    p, delta = rec.prog, rec.delta
    if p.step_s is not None:
        return p.step_s, "step_s"
    if p.window_s is not None and delta:
        if _rate_finer(p):
            return p.rate_s, "window_rate"
        return p.window_s / delta, "window_s"
    if p.line_s is not None:
        return (p.line_s + rec.carry) / (delta or 1), "line_s"
    if wall is not None:
        return wall[0] / wall[1], "stamps"
    elapsed = timer[0] / timer[1] if timer is not None else _bar_elapsed(rec)
    if elapsed is not None and not _finer_rate(rec, means):
        return elapsed, "elapsed"
    if p.smoothed_s is not None:
        return p.smoothed_s, "smoothed_s"
    if p.rate_s is not None:
        return _rate(rec), "rate"
    if coarse and _coarse(rec, prev)[1]:
        return _coarse(rec, prev)
    if prev is not None and not p.bar and p.elapsed is not None and (
            prev.tail.elapsed is not None) and p.elapsed > prev.tail.elapsed:
        return (p.elapsed - prev.tail.elapsed) / (delta or 1), "elapsed_coarse"
    return None, ""


def _rate_finer(p: Any) -> bool:
    """True when a line's rate of steps is printed finer than its window's duration, two times
    of the same window (`durations.window_by_rate`): fairseq's `"ups": "6.83", …,
    "train_wall": "28"` per 200 updates, whole seconds (1.8 %) against three figures (0.07 %);
    `train_wall` is also only the time inside the steps, 28 s of the 29 s between the lines
    (trainer.py's `log_start_time("train_wall", round=0)`). Not a bar's (tqdm's rate is an
    average over its own window). It is the window's mean (`window_rate`): a window that held an
    evaluation is no step's."""
    if p.rate_s is None or p.bar or not p.rate_s > 0:
        return False
    window = _rounding(p.window_s)
    rate = [r for r in (_rounding(p.rate_s), _rounding(1 / p.rate_s)) if r is not None]
    return window is not None and bool(rate) and min(rate) * FINER < window


def _coarse(rec: Any, prev: Any | None) -> tuple[float | None, str]:
    """The stamps' difference since the previous record, however short."""
    if prev is not None and rec.ts is not None and prev.ts is not None and rec.ts > prev.ts:
        return (rec.ts - prev.ts) / (rec.delta or 1), "stamps_coarse"
    return None, ""


SETTLED_S = 60.0  # tqdm's EMA rate on a draw this long after its bar began is settled ...
SETTLED_STEPS = 100  # ... over at least this many steps
EMA_AGREES = 0.10  # a settled EMA this near the mean since the start leaves the mean


def _lone_settled(records: list[Any], timers: list[Any]) -> list[int]:
    """The indexes of the records that are their bar run's only draw (one record of its run and
    start), timed by the bar's elapsed mean or rate alone (no printed time, stamps or span),
    whose rate is settled (`_settled_ema`). A run of several draws is timed by their clocks'
    differences (`_bar_run_means`, `_past_start`): measured, where the EMA may stray far
    (OpenRLHF's `127/128 [23:32<00:06,  6.63s/it]` then `128/128 … 11.04s/it`, dev A13: 11.03 s
    a step)."""
    count = Counter((r.run, r.bar_start) for r in records if r.prog.bar)
    return [i for i, r in enumerate(records)
            if r.prog.bar and count[(r.run, r.bar_start)] == 1 and timers[i] is None
            and r.source in ("elapsed", "rate", "") and _settled_ema(r)]


def _settled_ema(rec: Any) -> bool:
    """True when a bar's only draw (`_lone_settled`) prints tqdm's smoothed rate (a bar with
    time left: `[elapsed<remaining, rate]`, its rate an EMA of the last updates, smoothing
    0.3) long settled: at least `SETTLED_S` and
    `SETTLED_STEPS` since the bar began. That rate is the steps' own time; the elapsed time over
    the steps since the bar began also holds the bar's first steps (data workers starting, the
    first kernels), which a step's median does not (fresh21 Y12, AllenNLP: `4573/7882 [21:50<
    11:54,  4.63it/s]` alone, 0.216 s a batch where 1310 s / 4573 is 0.286). A draw early in
    its bar (the EMA not settled), a run of several draws, and a bar's final draw (n = N:
    its EMA holds the loop's end, `progress._ran_by_rate`) keep the mean; so does a rate that
    agrees with the mean within `EMA_AGREES` (3000 steps in 41:40 at 0.86 s/it: the mean since
    the start, 0.833 s, is the bar's own whole figure; tests/goodput/test_named_step_times.py)."""
    p = rec.prog
    if p.rate_s is None or p.elapsed is None or rec.bar_start is None or not p.bar or (
            p.matcher is None) or p.elapsed < SETTLED_S or (
            rec.glob - rec.bar_start < SETTLED_STEPS) or (
            rec.total is not None and rec.printed >= rec.total):
        return False
    mean = p.elapsed / (rec.glob - rec.bar_start)
    if abs(p.rate_s - mean) <= EMA_AGREES * mean:
        return False
    return any(r.role == "remaining" for r in p.matcher.reading.roles.values())


def _bar_elapsed(rec: Any) -> float | None:
    """A bar's elapsed time over the steps since it began, over at least ELAPSED_MIN_S (its
    clock prints whole seconds), where no stretch of the bar spans that long."""
    p = rec.prog
    if p.bar and p.elapsed is not None and rec.bar_start is not None and (
            rec.glob > rec.bar_start) and p.elapsed >= ELAPSED_MIN_S:
        return p.elapsed / (rec.glob - rec.bar_start)
    return None


def _rate(rec: Any) -> float | None:
    """The rate's seconds per step; a mid-way bar's rate that counts from 0 is rescaled."""
    p = rec.prog
    if p.rate_s is None:
        return None
    if rec.bar_start and rec.bar_start > 0.2 * rec.glob and rec.glob > rec.bar_start:
        if (not p.elapsed or p.elapsed < MID_WAY_ELAPSED_S) and not (
                quick(rec) or _anew_from_zero(rec)):
            return None  # a resumed bar's first redraws: its rate is not yet a rate
        counted = rec.printed > rec.glob - rec.bar_start  # its n counts steps it did not run
        if counted and abs(p.elapsed / p.rate_s - rec.printed) <= 0.1 * rec.printed:
            return p.rate_s * rec.glob / (rec.glob - rec.bar_start)
    return p.rate_s


def _anew_from_zero(rec: Any) -> bool:
    """True when a bar that begins high on the job-wide scale counts only its own steps (its n
    is the steps since it began: a per-epoch bar drawn anew, not a resumed one's `initial=`) and
    those n steps at its rate fit in its elapsed whole seconds: it ran from 0 in that time
    (CrossFit's `Epoch 19: 100%|…| 16/16 [00:00<00:00, 28.30it/s]` after epoch 18's bar, fresh19
    W15: 0.0353 s a batch, not unknown)."""
    p = rec.prog
    return p.rate_s is not None and rec.epoch is not None and (
        0 < rec.printed <= rec.glob - rec.bar_start) and (
        rec.printed * p.rate_s <= (p.elapsed or 0.0) + MID_WAY_ELAPSED_S)


def _first_by_next(records: list[Any], i: int) -> float | None:
    """Seconds a run's first record, stamped and timed by nothing of its own, stands for: the
    steps it stands for (`_estimate`: the next record's stride) but the first, whose time holds
    the start-up and is not known (`warm`; the README's rule: the stamped time before step 1 is
    initialization), at the next record's step time, where that record is of the same run and
    timed. Those steps ran before its stamp, so the time from the log's first stamp to it is not
    all start-up (newcomer6 #4, torchtitan#1287: `step: 10` at 12:55:55, 23 s after the first
    stamp, then 1.39 s a step: ~12.5 s of it are steps 2-10, not initialization). None where
    the next record gives no time, or the stride is one step."""
    nxt = records[i + 1] if i + 1 < len(records) else None
    if nxt is None or nxt.run != records[i].run or nxt.step_s is None or not nxt.delta or (
            nxt.delta < 2):
        return None
    return nxt.step_s * (nxt.delta - 1)


def _estimate(records: list[Any], i: int) -> int:
    """Steps a run's first record stands for: the next record's delta, else 1."""
    nxt = records[i + 1] if i + 1 < len(records) else None
    return nxt.delta if nxt is not None and nxt.delta else 1


def warm(records: list[Any]) -> None:
    """Mark each run's first record when it is not a full step (see the module docstring):
    only a run that starts at its beginning (the counter at most one log interval in, or a
    restart) has a warm-up; an excerpt that starts mid-run does not."""
    epoch_rules.epoch_openers(records)
    runs: dict[int, list[Any]] = {}
    for rec in records:
        runs.setdefault(rec.run, []).append(rec)
    for run, recs in runs.items():
        times = [r.step_s for r in recs[1:] if r.step_s and not r.warm]
        first = recs[0]
        interval = recs[1].delta if len(recs) > 1 and recs[1].delta else 1
        if run == 0 and first.printed > max(1, interval) or first_warm(recs):
            continue
        if not times or first.step_s is None:
            continue
        first.warm = not (min(times) / 2 <= first.step_s <= max(times) * 2)
