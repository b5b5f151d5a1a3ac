"""The goodput calculator's batch form (re-exported by `gpuslo.goodput.calculator`): the rules
of `gpuslo.goodput.calculator.GoodputState`, vectorised with numpy over many journals at once,
for the SLO engine and the simulator. `goodput_increments` gives what each event adds to its
journal's categories; `batch_table` the running totals after every event (what the fold gives
after each event; a property test holds them equal on random journals). Pure; no Python loop per
event.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from gpuslo import names
from gpuslo.goodput.journal import END_STATUSES, PHASES

_NONE = -1  # phase code for "no phase": running time is progress


@dataclass(frozen=True)
class GoodputTable:
    """Running goodput after every event of `goodput_table`'s input (row i = after event i).

    gpu_seconds: category (every `names.JOB_CATEGORIES`) → float64 array, cumulative GPU-seconds
    of the row's (job, node) journal; gpus, committed_step: int64 arrays; last_progress_t:
    float64 (Unix seconds, 0.0 before the first step); interruptions: layer (every
    `names.LAYERS`) → int64 cumulative counts; status: object array (`running`, a job_end status,
    or "" before job_start) — what `compute_goodput(events[:i + 1])` gives."""

    gpu_seconds: dict[str, np.ndarray]
    gpus: np.ndarray
    status: np.ndarray
    committed_step: np.ndarray
    last_progress_t: np.ndarray
    interruptions: dict[str, np.ndarray]


def _last(mask: np.ndarray, first: np.ndarray) -> np.ndarray:
    """Per row, the index of the last row at or before it in its group where `mask` holds
    (-1 when none): a forward fill by running maximum."""
    index = _rows(len(mask))
    index[~mask] = -1
    np.maximum.accumulate(index, out=index)
    index[index < first] = -1
    return index


def _before(values: np.ndarray, start: np.ndarray, fill) -> np.ndarray:
    """values shifted one row down within each group; `fill` on a group's first row."""
    out = np.empty_like(values)
    out[1:] = values[:-1]
    out[start] = fill
    return out


def _group_cumsum(values: np.ndarray, first: np.ndarray) -> np.ndarray:
    """Running sums restarting at each group (`first`: each row's group start)."""
    total = np.cumsum(values)
    starts = np.flatnonzero(np.r_[True, first[1:] != first[:-1]]) if len(first) else first
    base = total[starts] - values[starts]
    return total - np.repeat(base, np.diff(np.r_[starts, len(values)]))


def _rows(n: int) -> np.ndarray:
    """0..n-1 as the smallest integer type that holds them (row indices take most memory)."""
    return np.arange(n, dtype=np.int32 if n < 2**31 else np.int64)


def _take(values: np.ndarray, index: np.ndarray, fill) -> np.ndarray:
    """values[index], `fill` (a value, or an array like index) where index is -1 (one gather,
    filled in place)."""
    if not len(values):
        return np.broadcast_to(np.asarray(fill, dtype=values.dtype), index.shape).copy()
    out = values.take(index)
    missing = index < 0
    out[missing] = fill[missing] if np.ndim(fill) else fill
    return out


STATUSES = ("", "running", *END_STATUSES)  # status codes: index in this tuple
EVENTS = ("job_start", "restart", "job_end", "phase_start", "phase_end", "steps", "checkpoint")


def codes_of(values, vocabulary: tuple[str, ...]) -> np.ndarray:
    """Index of each value in `vocabulary` (int8, -1 for anything else), by hashing each
    distinct value once (pandas.factorize) instead of comparing strings row by row. A pandas
    array (a frame's `string` column) is factorised as it is, without a copy to an object
    array. Integer input is taken as codes already."""
    kind = getattr(getattr(values, "dtype", None), "kind", "")
    if kind in ("i", "u"):
        return np.asarray(values)
    if not isinstance(values, pd.api.extensions.ExtensionArray):
        values = np.asarray(values).astype(object)
    found, uniques = pd.factorize(values, use_na_sentinel=True)
    lookup = np.array([vocabulary.index(u) if u in vocabulary else -1 for u in uniques] + [-1],
                      dtype=np.int8)
    return lookup[found]


@dataclass(frozen=True)
class GoodputIncrements:
    """What each event of `goodput_increments`' input adds: gpu_seconds (category → float64 per
    row, the GPU-seconds the row's event adds to its journal's category), gpus and status after
    the row (as GoodputTable). A window's amount is the sum over its rows; running totals are
    the sums per journal up to each row (`goodput_table`)."""

    gpu_seconds: dict[str, np.ndarray]
    gpus: np.ndarray
    status: np.ndarray
    state: dict


def goodput_increments(
    group: np.ndarray,
    t: np.ndarray,
    event: np.ndarray,
    category: np.ndarray,
    gpus: np.ndarray,
    status: np.ndarray,
    step: np.ndarray | None = None,
    count: np.ndarray | None = None,
    step_time_s: np.ndarray | None = None,
    threshold: float | None = None,
) -> GoodputIncrements:
    """The GPU-seconds each event adds to its journal's categories, by the rules of
    `GoodputState`, for many journals at once.

    Arrays of one length n, one row per valid event: group (int64, equal for one job on one
    node, each group's rows contiguous and in time order), t (Unix seconds, float64), event,
    category and status (str or object, "" when absent, or their codes in EVENTS, PHASES and
    STATUSES), gpus (float64, NaN when absent). Pure; O(n) numpy, no Python loop per event.

    Slowdown is a fold (`gpuslo.goodput.slowdown`: a reference learned from the job's own
    steady intervals), not computed here: `slowdown` is 0. With `threshold` (the slowdown rule's)
    and the steps events' step, count and step_time_s (float64, NaN when absent; a restart's
    from_step goes in `step`), `state["may_slow"]` says per group (by group id) whether any of
    its measured intervals is slower than `threshold` × its fastest one — the only journals where
    the rule could find a slowdown (the reference is a median of steady intervals, never below
    the fastest), which the caller then runs through `gpuslo.goodput.slowdown_batch` (or folds
    with `GoodputState`); for every other journal these increments are exactly the fold's."""
    n = len(t)
    t = np.asarray(t, dtype=np.float64)
    kind = codes_of(event, EVENTS)
    run = _run_rows(group, kind, status, gpus)
    first, start_rows, starts, ends = run["first"], run["start_rows"], run["starts"], run["ends"]
    was_running, restart, status = run["was_running"], run["restart"], run["status"]
    gpus_before, completed = run["gpus_before"], STATUSES.index("completed")
    out, advance = _phase_seconds(t, kind, category, run)
    progress = np.cumsum(advance)
    commit = was_running & ((kind == 6) | (ends & (status == completed)))
    failed = run["effective_end"] & (status != completed)  # its uncommitted progress is lost
    flush = commit | restart | failed
    previous_flush = _before(_last(flush, first), start_rows, -1)
    group_base = np.where(first > 0, progress[np.maximum(first - 1, 0)], 0.0)
    pool = progress - _take(progress, previous_flush, group_base)
    del previous_flush, group_base, flush
    out[names.CATEGORY_PRODUCTIVE] = np.where(commit, pool, 0.0)
    out["wasted_progress"] = np.where(restart | failed, pool, 0.0)
    # recovery: from the interruption (the last event when the journal just stopped, else the
    # job_end that failed) to the restart
    interrupted = np.where(was_running, _before(t, start_rows, 0.0),
                           _take(t, run["last_effective"], 0.0))
    recovers = restart & (was_running | ~np.isin(run["before"], [0, completed]))
    out["recovery"] = np.where(recovers, (t - interrupted) * gpus_before, 0.0)
    out[names.CATEGORY_SLOWDOWN] = np.zeros(n)
    out.setdefault("other", np.zeros(n))  # a phase `other` (a hang a log shows) fills it
    state = {"first": first, "start_rows": start_rows, "kind": kind, "was_running": was_running,
             "restart": restart, "failed": failed,
             "fresh": run["fresh"], "commit": commit, "gpus_before": gpus_before,
             "gpus_after": run["gpus_after"], "advance": advance,
             "completed_end": was_running & ends & (status == completed)}
    if threshold is not None:
        measure = _StepTimes(first, start_rows, kind, was_running, starts, restart, gpus_before,
                             progress, step, count)
        state["may_slow"] = measure.may_slow(group, step_time_s, threshold, state)
    return GoodputIncrements({c: out[c] for c in names.JOB_CATEGORIES},
                             run["gpus_after"].astype(np.int64),
                             np.array(STATUSES, dtype=object)[run["after"]], state)


def _run_rows(group: np.ndarray, kind: np.ndarray, status: np.ndarray,
              gpus: np.ndarray) -> dict[str, np.ndarray]:
    """Where each row's journal stands (`goodput_increments`' first stage, arrays of n rows):
    first (the row index of its group's first row), start_rows (each group's first row),
    starts/ends (job_start or restart / job_end rows), was_running (a run was going before the
    row), effective_end (a job_end ending a run) and last_effective (the last such row so far,
    -1 none), status (codes), after/before (the status code after the row / before it), fresh
    (a job_start after nothing, a completion or a cancel) and restart (any other start),
    gpus_after/gpus_before (the GPUs of the run after the row / before it)."""
    n = len(kind)
    is_first = np.ones(n, dtype=bool)
    is_first[1:] = group[1:] != group[:-1]
    first = np.maximum.accumulate(np.where(is_first, _rows(n), 0))
    start_rows = np.flatnonzero(is_first)
    starts, ends = kind <= 1, kind == 2
    last_start, last_end = _last(starts, first), _last(ends, first)
    running = (last_start >= 0) & (last_start > last_end)
    del last_end
    was_running = _before(running, start_rows, False)
    effective_end = ends & was_running
    last_effective = _last(effective_end, first)
    status = np.maximum(codes_of(status, STATUSES), 0)
    after = np.where(running, 1, np.where(last_start >= 0, _take(status, last_effective, 0), 0))
    before = _before(after, start_rows, 0)
    del running
    completed, cancelled = STATUSES.index("completed"), STATUSES.index("cancelled")
    fresh = (kind == 0) & np.isin(before, [0, completed, cancelled])
    gpus = np.asarray(gpus, dtype=np.float64)
    gpus_after = _take(np.nan_to_num(gpus), _last(starts & ~np.isnan(gpus), first), 0.0)
    return {"first": first, "start_rows": start_rows, "starts": starts, "ends": ends,
            "was_running": was_running, "effective_end": effective_end,
            "last_effective": last_effective, "status": status, "after": after,
            "before": before, "fresh": fresh, "restart": starts & ~fresh,
            "gpus_after": gpus_after, "gpus_before": _before(gpus_after, start_rows, 0.0)}


def _phase_seconds(t: np.ndarray, kind: np.ndarray, category: np.ndarray,
                   run: dict[str, np.ndarray]) -> tuple[dict[str, np.ndarray], np.ndarray]:
    """({phase: GPU-seconds each row adds to it}, GPU-seconds of uncommitted progress each row
    adds): the time since the previous row × the run's GPUs goes to the phase the run was in (a
    run starts outside any phase; phase events count while running), else to progress."""
    first, start_rows, starts = run["first"], run["start_rows"], run["starts"]
    was_running = run["was_running"]
    code = codes_of(category, PHASES)
    marker = starts | (((kind == 3) | (kind == 4)) & was_running)
    phase_of = np.where(kind == 3, code, _NONE)
    phase_before = _before(_take(phase_of, _last(marker, first), _NONE), start_rows, _NONE)
    del code, marker, phase_of
    dt = t - _before(t, start_rows, 0.0)
    seconds = np.where(~starts & was_running, dt * run["gpus_before"], 0.0)
    del dt
    out = {name: np.where(phase_before == c, seconds, 0.0) for c, name in enumerate(PHASES)}
    return out, np.where(phase_before == _NONE, seconds, 0.0)


@dataclass(frozen=True)
class _StepTimes:
    """The mean step time of each measured interval, as `GoodputState._steps` computes it: the
    event's step_time_s, else the progress GPU-seconds since the last steps event (or the run's
    start) / gpus / steps, where steps is the event's count, else step − the last step."""

    first: np.ndarray
    start_rows: np.ndarray
    kind: np.ndarray
    was_running: np.ndarray
    starts: np.ndarray
    restart: np.ndarray
    gpus_before: np.ndarray
    progress: np.ndarray  # global running sum of progress GPU-seconds
    step: np.ndarray | None
    count: np.ndarray | None

    def may_slow(self, group: np.ndarray, step_time_s, threshold: float,
                 state: dict) -> np.ndarray:
        """Per group id, whether the fold could find a slowdown (see goodput_increments);
        stores each row's measured interval in `state` (step_s, counted, measured, interval,
        mark: the row that started it, last_step: the step before the row)."""
        n = len(group)
        nan = np.full(n, np.nan)
        step = nan if self.step is None else np.asarray(self.step, dtype=np.float64)
        count = nan if self.count is None else np.asarray(self.count, dtype=np.float64)
        given = nan if step_time_s is None else np.asarray(step_time_s, dtype=np.float64)
        first, rows = self.first, self.start_rows
        steps = (self.kind == 5) & self.was_running
        base = np.where(first > 0, self.progress[np.maximum(first - 1, 0)], 0.0)
        mark = _before(_last(steps | self.starts, first), rows, -1)
        interval = self.progress - _take(self.progress, mark, base)
        commits = (self.restart & ~np.isnan(step)) | ((self.kind == 6) & self.was_running)
        committed = _before(_take(np.nan_to_num(step, nan=-1.0), _last(commits, first), -1.0),
                            rows, -1.0)
        setter = np.where(steps | ~np.isnan(step), step, committed)
        last_step = _before(_take(setter, _last(steps | self.restart, first), -1.0), rows, -1.0)
        counted = np.where(np.nan_to_num(count) != 0, count,  # the fold's rule (calculator)
                           np.where(last_step >= 0, step - last_step,
                                    np.where(np.isnan(given), 0.0, 1.0)))
        with np.errstate(divide="ignore", invalid="ignore"):
            derived = np.where((counted > 0) & (self.gpus_before > 0),
                               interval / self.gpus_before / counted, np.nan)
        step_s = np.where(np.isnan(given), derived, given)
        measured = steps & ~np.isnan(step_s) & (counted >= 1) & (step_s >= 0)
        state.update(step_s=step_s, counted=counted, measured=measured, interval=interval,
                     mark=mark, last_step=last_step, steps=steps)
        # An interval can be slow only above threshold × the reference, and the reference (a
        # median of steady intervals, learned afresh per configuration) is never below the
        # fastest earlier measured interval of the journal: below that bound it is steady.
        fastest = _before(_running_min(np.where(measured, step_s, np.inf), first), rows, np.inf)
        candidate = measured & (step_s > threshold * fastest * (1 - 1e-9))
        # A lone slow interval is held aside until the run ends (a completion releases it before
        # committing) or a steady one releases it: the fold's categories differ only if a
        # checkpoint commits progress while it is held, or a second slow interval follows (a
        # slowdown may be confirmed).
        commit = self.was_running & (self.kind == 6)
        stop = measured | commit | self.starts
        after = _next(stop, first, rows)
        unsafe = candidate & (after >= 0) & (candidate[np.maximum(after, 0)]
                                             | commit[np.maximum(after, 0)])
        groups = int(group[-1]) + 1 if n else 0
        out = np.zeros(groups, dtype=bool)
        out[group[unsafe]] = True
        return out


def _running_min(values: np.ndarray, first: np.ndarray) -> np.ndarray:
    """Running minimum restarting at each group (`first`: each row's group start), vectorised:
    each later group is shifted below every earlier one, so one running minimum serves all."""
    if not len(values):
        return values.copy()
    finite = np.isfinite(values)
    top = float(values[finite].max()) + 1.0 if finite.any() else 1.0
    group = np.cumsum(np.r_[True, first[1:] != first[:-1]]) - 1
    shift = group * (top + 1.0)
    low = np.minimum.accumulate(np.where(finite, values, top) - shift) + shift
    return np.where(low >= top, np.inf, low)


def _next(mask: np.ndarray, first: np.ndarray, start_rows: np.ndarray) -> np.ndarray:
    """Per row, the index of the next row after it in its group where `mask` holds (-1 when
    none): a backward fill by running minimum."""
    n = len(mask)
    index = np.where(mask, np.arange(n), n)
    nxt = np.minimum.accumulate(index[::-1])[::-1]
    following = np.r_[nxt[1:], n]
    ends = np.r_[start_rows[1:], n]  # each group's end, per row
    group_end = ends[np.searchsorted(start_rows, np.arange(n), side="right") - 1]
    return np.where(following < group_end, following, -1)


def batch_table(
    group: np.ndarray,
    t: np.ndarray,
    event: np.ndarray,
    category: np.ndarray,
    gpus: np.ndarray,
    status: np.ndarray,
    step: np.ndarray | None = None,
    layer: np.ndarray | None = None,
) -> GoodputTable:
    """The running goodput of many journals at once, by the rules of `GoodputState` without
    slowdown (`gpuslo.goodput.calculator.goodput_table` folds the journals that may have one):
    the per-journal running sums of `goodput_increments` (same arguments), plus step (float64, NaN
    when absent; a restart's from_step goes in it) and layer (as category) for the committed
    step, the last progress time and the interruptions by layer. Pure; O(n) numpy."""
    n = len(t)
    step = np.full(n, np.nan) if step is None else np.asarray(step, dtype=np.float64)
    layer = np.full(n, "", dtype=object) if layer is None else layer
    inc = goodput_increments(group, t, event, category, gpus, status)
    first, kind = inc.state["first"], inc.state["kind"]
    was_running, restart = inc.state["was_running"], inc.state["restart"]
    totals = {c: _group_cumsum(v, first) for c, v in inc.gpu_seconds.items()}
    # committed step (a checkpoint commits its step, a restart resumes from its from_step) and
    # the last progress time (a steps event)
    commits = (restart & ~np.isnan(step)) | ((kind == 6) & was_running)
    committed = _take(np.nan_to_num(step, nan=-1.0), _last(commits, first), -1.0)
    last_progress = _take(np.asarray(t, dtype=np.float64), _last((kind == 5) & was_running,
                                                                 first), 0.0)
    return GoodputTable(
        totals, inc.gpus, inc.status, committed.astype(np.int64), last_progress,
        _interruptions(first, inc.state["failed"], restart & was_running,
                       codes_of(layer, names.LAYERS)))


def _interruptions(first, failed, stopped, layer) -> dict[str, np.ndarray]:
    """Interruptions by layer after each row: a job_end that is not `completed` counts under its
    layer (else training); a restart while running (the journal just stopped) under its layer
    (else observability): `calculator.interruption_layer`, vectorised. `layer` holds codes into
    names.LAYERS (-1: none given)."""
    training = names.LAYERS.index(names.LAYER_TRAINING)
    blind = names.LAYERS.index(names.LAYER_OBSERVABILITY)
    own = np.where(failed, np.where(layer >= 0, layer, training),
                   np.where(stopped, np.where(layer >= 0, layer, blind), -1))
    return {name: _group_cumsum((own == c).astype(np.int64), first)
            for c, name in enumerate(names.LAYERS)}
