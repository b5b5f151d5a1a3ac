"""The sustained-slowdown rule of the calculator in batch form: what `GoodputState` puts into
`slowdown`, and takes from `productive` and `wasted_progress`, for many journals at once, with
numpy (re-exported by `gpuslo.goodput.calculator`; the SLO engine and the simulator use it for
the journals `goodput_increments` flags as `may_slow`).

The fold's decisions, vectorised:
- **classification** (`gpuslo.goodput.slowdown.SlowdownTracker`): an interval is warm-up while
  fewer than `reference_intervals` steady intervals precede it in its configuration (or their
  median is not positive), steady when its step time ≤ threshold × the median of the last
  `reference_window` steady intervals before it, else slow. Each interval depends only on the
  ones before it, so the steady set is found as a fixed point: start from "every interval is
  steady", classify all intervals against it (one rolling median), repeat until nothing
  changes. Each pass settles at least the first interval still wrong, and the fixed point is
  the fold's answer (by induction over the intervals); it takes a few passes.
- **runs**: consecutive slow intervals, ended by a steady one, a restart or any `job_end`
  that ends a run (the tracker's `end_run`; an interval without a step time neither ends nor extends
  one). The first `min_intervals` − 1 are held aside, the `min_intervals`-th confirms the run.
- **seconds**: each slow interval's extra (step time − reference) × steps × GPUs, capped by the
  interval's progress, leaves the uncommitted progress; a confirmed run puts all of them into
  `slowdown` (the held ones at the confirming interval); a run that ends unconfirmed gives them
  back (to productive when a checkpoint passed meanwhile, else to the uncommitted progress).
  The fold also caps an extra by the uncommitted progress; this form assumes it does not bind
  and checks it, and the journals where it binds are left to the fold (`exact` is False for
  them), as are journals with a second fresh `job_start` (after a cancelled or completed run:
  the fold keeps held seconds across it) and any whose fixed point did not settle in
  `MAX_PASSES` passes.

Pure; numpy and pandas' rolling median, no Python loop per event. A property test holds every
row equal to the fold's on random journals with restarts, checkpoints and slow steps.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
from pandas.api.indexers import BaseIndexer

from gpuslo import names
from gpuslo.goodput.batch import goodput_increments
from gpuslo.goodput.slowdown import SlowdownRule

MAX_PASSES = 64
_HELD, _CONFIRMED, _SLOW = 1, 2, 3


class _Bounds(BaseIndexer):
    """Given window bounds (start, end arrays) for pandas' rolling median."""

    def get_window_bounds(self, num_values=0, min_periods=None, center=None, closed=None,
                          step=None):  # noqa: ANN001
        return self.lo, self.hi


@dataclass(frozen=True)
class SlowdownEpisodes:
    """The listed slowdowns (`JobGoodput.slowdowns`) of the exact journals, one row per
    episode: group, rows (the row indices of its intervals, an object array of int64 arrays),
    reference_s (seconds). `window` cuts them to a report window."""

    group: np.ndarray
    rows: list
    reference_s: np.ndarray


@dataclass(frozen=True)
class SlowdownIncrements:
    """The slowdown rule applied to the journals `goodput_increments` flags `may_slow`.

    rows: the input rows of those journals (int64, in order); gpu_seconds: for the categories
    the rule changes (productive, wasted_progress, slowdown), float64 per row of `rows`, what
    the row's event adds — equal to the fold's for the groups where `exact` (bool per group id
    of the input) holds; for every other category and every journal not flagged,
    `goodput_increments` is already the fold's. Groups where `exact` is False must be folded
    by the caller. episodes: the listed slowdowns of the exact groups (row positions in
    `rows`); per row of `rows`: group, t (Unix seconds), step, counted (steps of the interval),
    step_s (its mean step time, seconds), mark (position of the row that started the
    interval), last_step (the step before the row), confirmed (the row confirms a slowdown)."""

    rows: np.ndarray
    gpu_seconds: dict[str, np.ndarray]
    exact: np.ndarray
    episodes: SlowdownEpisodes
    group: np.ndarray
    t: np.ndarray
    step: np.ndarray
    counted: np.ndarray
    step_s: np.ndarray
    mark: np.ndarray
    last_step: np.ndarray
    confirmed: np.ndarray

    def episode_rows(self, since: float | None, until: float) -> list[dict]:
        """Each listed episode as `JobGoodput.slowdowns` gives it at `until` (Unix seconds;
        confirmed by then) less what it had at `since` (None: nothing before): dicts with
        group, start (Unix seconds), end, from_step, to_step, reference_s, ratio, gpu_seconds
        (> 0 only, as `gpuslo.slo.crawl.window_slowdowns`)."""
        out = []
        slow = self.gpu_seconds[names.CATEGORY_SLOWDOWN]
        for g, rows, ref in zip(self.episodes.group, self.episodes.rows,
                                self.episodes.reference_s, strict=True):
            upto = rows[self.t[rows] <= until]
            if not self.confirmed[upto].any():
                continue
            inside = upto if since is None else upto[self.t[upto] > since]
            seconds = float(slow[inside].sum())
            if not seconds > 0:
                continue
            steps = self.counted[upto]
            out.append({
                "group": int(g), "start": float(self.t[self.mark[rows[0]]]),
                "end": float(self.t[upto[-1]]), "from_step": int(self.last_step[rows[0]]) + 1,
                "to_step": int(self.step[upto[-1]]), "reference_s": float(ref),
                "ratio": float((self.step_s[upto] * steps).sum() / steps.sum() / ref),
                "gpu_seconds": seconds})
        return out


_STATE = ("kind", "advance", "steps", "measured", "gpus_before", "gpus_after", "counted",
          "step_s", "fresh", "restart", "completed_end", "commit", "last_step", "failed")


def slowdown_increments(
    group: np.ndarray, t: np.ndarray, event: np.ndarray, category: np.ndarray,
    gpus: np.ndarray, status: np.ndarray, step: np.ndarray, count: np.ndarray,
    step_time_s: np.ndarray, rule: SlowdownRule, state: dict | None = None,
) -> SlowdownIncrements:
    """The slowdown rule's effect on every journal that may hold a slowdown (arguments as
    `goodput_increments`; group ids 0..k-1 in row order; step, count, step_time_s float64 with
    NaN when absent; `state`: their `goodput_increments(..., threshold=rule.threshold).state`
    when the caller has it). See `SlowdownIncrements`."""
    t = np.asarray(t, dtype=np.float64)
    if state is None:
        state = goodput_increments(group, t, event, category, gpus, status, step, count,
                                   step_time_s, rule.threshold).state
    groups = int(group[-1]) + 1 if len(group) else 0
    rows = np.flatnonzero(state["may_slow"][group]) if len(group) else np.zeros(0, np.int64)
    position = np.cumsum(state["may_slow"][group]) - 1 if len(group) else rows
    s = {k: state[k][rows] for k in _STATE}
    mark = position[np.maximum(state["mark"][rows], 0)]
    group, t = group[rows], t[rows]
    step = np.asarray(step, dtype=np.float64)[rows]
    derived = np.isnan(np.asarray(step_time_s, dtype=np.float64)[rows])
    n = len(rows)
    kind = s["kind"]
    is_first = np.ones(n, dtype=bool)
    is_first[1:] = group[1:] != group[:-1]
    starts = kind <= 1
    measured = s["measured"]
    # the interval's progress, summed in event order as the fold does (a steps row ends one)
    interval = _segment_totals(s["advance"], is_first | _shift(starts | s["steps"]))
    with np.errstate(divide="ignore", invalid="ignore"):
        step_s = np.where(derived & measured, interval / s["gpus_before"] / s["counted"],
                          s["step_s"])
    del derived
    bad = (np.bincount(group, weights=s["fresh"], minlength=groups) > 1) & state["may_slow"]
    # configurations: a new tracker at the first job_start and where a start changes the GPUs
    config = np.cumsum(is_first | (starts & (s["gpus_after"] != s["gpus_before"])),
                       dtype=np.int32)
    measured_rows = np.flatnonzero(measured)
    ref, slow, settled = _classify(step_s[measured_rows], config[measured_rows], rule)
    del config
    bad[group[measured_rows[~settled]]] = True
    slow_row = np.zeros(n, dtype=bool)
    slow_row[measured_rows[slow]] = True
    reference = np.full(n, np.nan)
    reference[measured_rows] = ref
    runs = _slow_runs(s, is_first, measured, slow_row, step_s, reference, interval, rule)
    del interval
    new_run, kind_of, wanted = runs["new_run"], runs["kind_of"], runs["wanted"]
    x = np.maximum(wanted, 0.0)
    productive, wasted = _release_and_pools(s, is_first, runs, slow_row, x, group, bad)
    slowdown = np.where(kind_of == _SLOW, x, 0.0)
    confirm = kind_of == _CONFIRMED
    slowdown[confirm] = _running(x, new_run)[confirm]
    episodes = _episodes(group, new_run, slow_row, measured, s["steps"], kind_of, reference,
                         bad)
    return SlowdownIncrements(
        rows, {names.CATEGORY_PRODUCTIVE: productive, "wasted_progress": wasted,
               names.CATEGORY_SLOWDOWN: slowdown}, ~bad, episodes, group, t, step,
        s["counted"], step_s, mark, s["last_step"], confirm)


def _slow_runs(s: dict, is_first: np.ndarray, measured: np.ndarray, slow_row: np.ndarray,
               step_s: np.ndarray, reference: np.ndarray, interval: np.ndarray,
               rule: SlowdownRule) -> dict:
    """Runs of slow intervals, ended by a steady interval, a restart or a completion (arrays of
    the rows `slowdown_increments` kept): ender (rows ending a run), new_run, run (run id per
    row), length (slow intervals per run), kind_of (_HELD before the rule's min_intervals,
    _CONFIRMED at it, _SLOW after) and wanted (the GPU-seconds each slow interval would move
    to slowdown: (step time − reference) × steps × GPUs, at most the interval's progress)."""
    n = len(is_first)
    ender = (measured & ~slow_row) | s["restart"] | s["completed_end"] | s["failed"]
    new_run = is_first | ender
    run = np.cumsum(new_run, dtype=np.int32)
    in_run = _running(slow_row.astype(np.int32), new_run)
    length = np.zeros(run[-1] + 1 if n else 0, dtype=np.int64)
    np.maximum.at(length, run[slow_row], in_run[slow_row])
    minimum = rule.min_intervals
    kind_of = np.zeros(n, dtype=np.int8)
    kind_of[slow_row] = np.where(in_run[slow_row] < minimum, _HELD,
                                 np.where(in_run[slow_row] == minimum, _CONFIRMED, _SLOW))
    del in_run
    wanted = np.zeros(n)
    wanted[slow_row] = np.minimum(
        (step_s[slow_row] - reference[slow_row]) * s["counted"][slow_row]
        * s["gpus_before"][slow_row], interval[slow_row])
    return {"ender": ender, "new_run": new_run, "run": run, "length": length,
            "minimum": minimum, "kind_of": kind_of, "wanted": wanted}


def _release_and_pools(s: dict, is_first: np.ndarray, runs: dict, slow_row: np.ndarray,
                       x: np.ndarray, group: np.ndarray,
                       bad: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """(productive, wasted_progress) GPU-seconds per row once slowdown is split off. An
    unconfirmed run's ender gives its held seconds back: to the uncommitted progress those
    after the last flush (no checkpoint passed them: its rows in the ender's flush segment — a
    restart or completion releases before it flushes and closes that segment), to productive
    the others. Marks in `bad` (per group) a journal where the fold's cap by the uncommitted
    progress would bind, which these arrays do not model."""
    run, length, minimum = runs["run"], runs["length"], runs["minimum"]
    new_pool = is_first | _shift(s["commit"] | s["restart"] | s["failed"])
    after_flush = np.cumsum(new_pool, dtype=np.int32)
    ender_rows = np.flatnonzero(runs["ender"] & ~is_first)
    ended = run[ender_rows] - 1  # the run each ender closes (the run before its own)
    releasing = (length[ended] > 0) & (length[ended] < minimum)
    ender_rows, ended = ender_rows[releasing], ended[releasing]
    run_total = np.bincount(run[slow_row], weights=x[slow_row], minlength=len(length))
    held_key = np.full(len(length), -1, dtype=np.int64)
    held_key[ended] = after_flush[ender_rows]
    mine = slow_row & (held_key[run] == after_flush)
    since = np.bincount(run[mine], weights=x[mine], minlength=len(length))
    del after_flush, held_key, mine
    contrib = s["advance"] - x
    contrib[ender_rows] += since[ended]
    pool = _segment_totals(contrib, new_pool)
    # the fold caps each extra by the uncommitted progress too: check that it does not bind
    uncommitted = _running(contrib, new_pool)[slow_row] + x[slow_row]
    del contrib
    need = runs["wanted"][slow_row]
    binds = (need > 0) & (uncommitted < need - 1e-9 * np.maximum(need, 1.0))
    bad[group[slow_row][binds]] = True
    productive = np.where(s["commit"], pool, 0.0)
    productive[ender_rows] += run_total[ended] - since[ended]
    return productive, np.where(s["restart"] | s["failed"], pool, 0.0)


def _episodes(group, new_run, slow_row, measured, steps, kind_of, reference,
              bad) -> SlowdownEpisodes:
    """Episodes: slow rows of one run not split by a running steps event without a step time
    (the fold starts a new episode object after one); listed when one of its rows confirms."""
    episode = np.cumsum(new_run | (steps & ~measured))
    rows = np.flatnonzero(slow_row & ~bad[group])
    if not len(rows):
        return SlowdownEpisodes(np.zeros(0, dtype=np.int64), [], np.zeros(0))
    ids = episode[rows]
    cut = np.flatnonzero(np.r_[True, ids[1:] != ids[:-1]])
    parts = np.split(rows, cut[1:])
    listed = [p for p in parts if (kind_of[p] == _CONFIRMED).any()]
    return SlowdownEpisodes(np.array([group[p[0]] for p in listed], dtype=np.int64), listed,
                            np.array([reference[p[0]] for p in listed]))


def _classify(values: np.ndarray, config: np.ndarray, rule: SlowdownRule):
    """(reference per interval — NaN in warm-up —, slow per interval, settled per interval) for
    measured intervals in order, `config` the tracker each belongs to; see the module docstring.
    Each pass reclassifies only the configurations whose steady set changed in the last."""
    m = len(values)
    steady = np.ones(m, dtype=bool)
    ref = np.full(m, np.nan)
    active = np.arange(m)
    for _ in range(MAX_PASSES):
        if not len(active):
            return ref, ~steady, np.ones(m, dtype=bool)
        got = _reference(values[active], config[active], steady[active], rule)
        ref[active] = got
        now = ~(got > 0) | (values[active] <= rule.threshold * got)
        changed = active[now != steady[active]]
        steady[active] = now
        active = active[np.isin(config[active], config[changed])]
    # still changing: leave those configurations to the fold
    return ref, ~steady, ~np.isin(config, config[active])


def _reference(values, config, steady, rule: SlowdownRule) -> np.ndarray:
    """Per interval, the median of the last `reference_window` steady intervals before it in
    its configuration, NaN while fewer than `reference_intervals` precede it."""
    kept = np.flatnonzero(steady)
    if not len(kept):
        return np.full(len(values), np.nan)
    cfg = config[kept]
    position = np.arange(len(kept))
    begin = np.maximum.accumulate(np.where(np.r_[True, cfg[1:] != cfg[:-1]], position, 0))
    lo = np.maximum(position - rule.reference_window + 1, begin).astype(np.int64)
    medians = pd.Series(values[kept]).rolling(
        _Bounds(lo=lo, hi=(position + 1).astype(np.int64)), min_periods=1).median().to_numpy()
    # for each interval: the last steady one strictly before it, in the same configuration
    before = np.cumsum(steady) - steady.astype(np.int64) - 1
    at = np.maximum(before, 0)
    same = (before >= 0) & (cfg[at] == config)
    count = np.where(same, before - begin[at] + 1, 0)
    return np.where(same & (count >= rule.reference_intervals), medians[at], np.nan)


def _shift(mask: np.ndarray) -> np.ndarray:
    """mask moved one row down (row i holds mask[i − 1]; False on row 0)."""
    out = np.zeros(len(mask), dtype=bool)
    out[1:] = mask[:-1]
    return out


def _running(values: np.ndarray, new: np.ndarray) -> np.ndarray:
    """Running sums restarting at rows where `new` holds (row 0 must)."""
    total = np.cumsum(values)
    begin = np.flatnonzero(new)
    base = (total[begin] - values[begin])[np.cumsum(new) - 1] if len(begin) else total
    return total - base


def _segment_totals(values: np.ndarray, new: np.ndarray) -> np.ndarray:
    """Per row, the sum of its segment (rows from a row where `new` holds to the next one),
    added in order: what the fold has at the segment's last row (row 0 must hold `new`)."""
    begin = np.flatnonzero(new)
    if not len(begin):
        return np.zeros(len(values))
    return np.add.reduceat(values, begin)[np.cumsum(new) - 1]

