"""Job goodput per (job, node) over a report window from journal events, and the slowdowns in
it — the calculator's batch form where it applies, its fold where a slowdown may be found.

`goodput_and_slowdowns(job_events, start, end, rule, index)`: the batch form
(`gpuslo.goodput.calculator.goodput_increments`) gives what every event adds; a window's amount
is the sum over its events in (start, end] — the total after the last event at or before `end`
minus the total after the last one at or before `start`, the increase of the exporter's counters
over the window. Journals whose measured step times could hold a sustained slowdown (the batch
form flags them: `state["may_slow"]`) go through the slowdown rule's batch form
(`gpuslo.goodput.calculator.slowdown_increments`), which also lists their slowdowns; the few it
hands back (see `gpuslo.goodput.slowdown_batch`) are folded with `compute_goodput`, event by
event (`gpuslo.slo.crawl.window_slowdowns`). No Python loop per event otherwise; the batch
forms run on one batch of whole journals at a time (`gpuslo.slo.events.batches`), which bounds
their temporaries whatever the fleet's size.
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from gpuslo import names
from gpuslo.goodput import journal
from gpuslo.goodput.calculator import compute_goodput, goodput_increments, slowdown_increments
from gpuslo.goodput.slowdown import SlowdownRule
from gpuslo.slo.crawl import SLOWDOWN_COLUMNS, window_slowdowns
from gpuslo.slo.events import BATCH_EVENTS, EventIndex, batch_rows, batches, index_events

_CATEGORIES = list(names.JOB_CATEGORIES)
_TYPES = {"job": "string", "node": "string", "status": "string", "gpus": "int64"}
_FROM_PROGRESS = (names.CATEGORY_PRODUCTIVE, "wasted_progress", names.CATEGORY_SLOWDOWN)
# the calculator's progress not yet committed (`JobGoodput.uncommitted_gpu_s`): its change over
# the window, so categories + uncommitted is the GPU-time the journal shows, as the calculator's
# `summary` accounts it (`gpuslo goodput` divides by that too)
UNCOMMITTED = names.CATEGORY_UNCOMMITTED
COLUMNS = ["job", "node", "gpus", "status", *_CATEGORIES, UNCOMMITTED]


def job_goodput(job_events: pd.DataFrame, start: pd.Timestamp, end: pd.Timestamp,
                rule: SlowdownRule | None = None, index: EventIndex | None = None) -> pd.DataFrame:
    """Per (job, node): GPU-seconds in [start, end) for every `names.JOB_CATEGORIES` (float64
    columns named after them) and the change of the uncommitted progress (`UNCOMMITTED`, float64:
    negative where progress from before the window is committed in it), `gpus` (int64), `status`
    (string). Empty input → empty frame."""
    return goodput_and_slowdowns(job_events, start, end, rule, index)[0]


def goodput_and_slowdowns(
    job_events: pd.DataFrame, start: pd.Timestamp, end: pd.Timestamp,
    rule: SlowdownRule | None = None, index: EventIndex | None = None,
    batch_events: int = BATCH_EVENTS,
) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(`job_goodput`'s frame, slowdowns): one row per sustained slowdown of a (job, node) with
    GPU-seconds in the window — columns `SLOWDOWN_COLUMNS`: start/end of the slowdown (UTC),
    from_step/to_step, reference_s (seconds), ratio (mean step time / reference), gpus and
    gpu_seconds (what it put into `slowdown` within [start, end)), as `crawl.window_slowdowns`.
    `rule` is the SLO spec's sustained-slowdown rule (`SloSpec.slowdown_rule()`; default its
    defaults); `index` is `index_events(job_events)` when the caller has it; the journals are
    computed `batch_events` rows at a time (whole journals, see `gpuslo.slo.events.batches`)."""
    rule = rule or SlowdownRule()
    idx = index if index is not None else index_events(job_events)
    if not len(idx):
        return pd.DataFrame(columns=COLUMNS).astype(_TYPES), _slowdown_frame([])
    totals = _Totals.zeros(len(idx.first))
    upto = _last_at(idx.first, idx.t_ns <= end.value)
    for g0, g1 in batches(idx.first, len(idx), batch_events):
        totals.add(_Batch(idx, g0, g1), rule, (start.value, end.value), upto)
    frame = pd.DataFrame({"job": idx.jobs[idx.job[idx.first]],
                          "node": idx.nodes[idx.node[idx.first]], "gpus": totals.gpus,
                          "status": totals.status, **totals.amounts,
                          UNCOMMITTED: totals.uncommitted})
    slow = totals.slow
    for row in slow:
        g = row["group"]
        row.update(job=frame.at[g, "job"], node=frame.at[g, "node"], gpus=frame.at[g, "gpus"])
    slow += _fold(job_events, idx, np.concatenate(totals.folded), frame, rule, start, end)
    slow.sort(key=lambda row: row.pop("group"))  # per journal, in the order the fold lists
    return frame[COLUMNS].astype(_TYPES), _slowdown_frame(slow)


@dataclass(frozen=True)
class _Batch:
    """The groups [g0, g1) of an EventIndex — its `rows` [a, b) — as the batch forms' arguments
    (group ids from 0)."""

    idx: EventIndex
    g0: int
    g1: int

    @property
    def rows(self) -> tuple[int, int]:
        return batch_rows(self.idx.first, len(self.idx), self.g0, self.g1)

    def _arguments(self) -> tuple:
        idx, (a, b) = self.idx, self.rows
        return (idx.group[a:b] - self.g0, idx.t_ns[a:b] / 1e9, idx.event[a:b],
                idx.category[a:b], idx.gpus[a:b], idx.status[a:b], idx.step[a:b],
                idx.count[a:b], idx.step_time_s[a:b])

    def increments(self, rule: SlowdownRule):
        """`goodput_increments` of the batch, with the rule's threshold (so `may_slow`)."""
        return goodput_increments(*self._arguments(), rule.threshold)

    def slowdowns(self, rule: SlowdownRule, state: dict):
        """`slowdown_increments` of the batch (rows and groups from the batch's start)."""
        return slowdown_increments(*self._arguments(), rule, state)


@dataclass
class _Totals:
    """Per group of the index: gpus and status at the window's end, GPU-seconds per category in
    the window; the slowdowns listed (dicts with their group) and the groups left to the fold
    (arrays of group ids), batch by batch."""

    gpus: np.ndarray
    status: np.ndarray
    amounts: dict[str, np.ndarray]
    slow: list
    folded: list
    uncommitted: np.ndarray

    @classmethod
    def zeros(cls, groups: int) -> _Totals:
        return cls(np.zeros(groups, dtype=np.int64), np.full(groups, "", dtype=object),
                   {c: np.zeros(groups) for c in _CATEGORIES}, [], [], np.zeros(groups))

    def add(self, part: _Batch, rule: SlowdownRule, window_ns: tuple[int, int],
            upto: np.ndarray) -> None:
        """Apply the calculator's batch forms to one batch; `upto`: per group, its last row at
        or before the window's end (-1: none)."""
        (g0, g1), (a, b) = (part.g0, part.g1), part.rows
        t_ns = part.idx.t_ns[a:b]
        inside = (t_ns > window_ns[0]) & (t_ns <= window_ns[1])
        inc = part.increments(rule)
        last = upto[g0:g1]
        self.gpus[g0:g1] = np.where(last >= 0, inc.gpus[np.maximum(last - a, 0)], 0)
        self.status[g0:g1] = np.where(last >= 0, inc.status[np.maximum(last - a, 0)], "")
        starts = part.idx.first[g0:g1] - a
        for c in _CATEGORIES:
            self.amounts[c][g0:g1] = np.add.reduceat(np.where(inside, inc.gpu_seconds[c], 0.0),
                                                     starts)
        state = inc.state
        del inc  # the categories are summed; the rule needs only the state
        progress = np.add.reduceat(np.where(inside, state["advance"], 0.0), starts)
        sub = part.slowdowns(rule, state)
        del state
        if len(sub.rows):  # the rule's categories where it is exact
            begins = np.flatnonzero(np.r_[True, sub.group[1:] != sub.group[:-1]])
            chosen = sub.group[begins]
            exact = sub.exact[chosen]
            for c, values in sub.gpu_seconds.items():
                window = np.add.reduceat(np.where(inside[sub.rows], values, 0.0), begins)
                self.amounts[c][g0 + chosen[exact]] = window[exact]
        self.slow += [row | {"group": row["group"] + g0}
                      for row in sub.episode_rows(window_ns[0] / 1e9, window_ns[1] / 1e9)]
        self.folded.append(g0 + np.flatnonzero(~sub.exact))
        # progress run in the window that no category took (the fold's figures replace the
        # folded groups'): productive, wasted and slowdown are the categories progress feeds
        taken = sum(self.amounts[c][g0:g1] for c in _FROM_PROGRESS)
        self.uncommitted[g0:g1] = np.round(progress - taken, 6)


def _fold(job_events, idx: EventIndex, groups: np.ndarray, frame: pd.DataFrame,
          rule: SlowdownRule, start, end) -> list[dict]:
    """Fold the journals of `groups` with the calculator, writing their rows of `frame`; their
    slowdowns in the window. Their events are gathered once, then folded slice by slice."""
    if not len(groups):
        return []
    bounds = np.r_[idx.first, len(idx)]
    sizes = bounds[groups + 1] - bounds[groups]
    rows = np.concatenate([np.arange(bounds[g], bounds[g + 1]) for g in groups])
    cols = _columns(job_events.iloc[idx.order[rows]])
    offsets = np.r_[0, np.cumsum(sizes)]
    amounts, state, slow = [], [], []
    for g, a, b in zip(groups, offsets[:-1], offsets[1:], strict=True):
        events = _event_dicts(cols, a, b)
        upto = compute_goodput(events, until=end.value / 1e9, rule=rule)
        before = (compute_goodput(events, until=start.value / 1e9, rule=rule)
                  if idx.t_ns[bounds[g]] <= start.value else None)
        amounts.append([upto.gpu_seconds[c] - (before.gpu_seconds[c] if before else 0.0)
                        for c in _CATEGORIES]
                       + [upto.uncommitted_gpu_s - (before.uncommitted_gpu_s if before else 0.0)])
        state.append((upto.gpus, upto.status))
        slow += [row | {"group": g} for row in
                 window_slowdowns(frame.at[g, "job"], frame.at[g, "node"], upto, before)]
    frame.loc[groups, _CATEGORIES] = np.array([row[:-1] for row in amounts])
    frame.loc[groups, UNCOMMITTED] = [row[-1] for row in amounts]
    frame.loc[groups, "gpus"] = [gpus for gpus, _ in state]
    frame.loc[groups, "status"] = [status for _, status in state]
    return slow


def _slowdown_frame(slow: list[dict]) -> pd.DataFrame:
    slowdowns = pd.DataFrame(slow, columns=list(SLOWDOWN_COLUMNS))
    for col in ("start", "end"):
        slowdowns[col] = pd.to_datetime(slowdowns[col], unit="s", utc=True)
    return slowdowns.astype(SLOWDOWN_COLUMNS)


def counted_goodput(job_gpu_seconds: pd.DataFrame) -> pd.DataFrame:
    """`job_goodput`'s frame from window amounts already summed (the `job_gpu_seconds` frame the
    Prometheus source reads from the exporters' counters): gpus 0 and status "" (unknown)."""
    wide = job_gpu_seconds.pivot_table(index=["job", "node"], columns="category",
                                       values="gpu_seconds", aggfunc="sum", observed=True)
    wide = wide.reindex(columns=_CATEGORIES).fillna(0.0).reset_index()
    # the counters carry no uncommitted progress: the exporter books it when it is committed
    return wide.assign(gpus=0, status="", **{UNCOMMITTED: 0.0})[COLUMNS].astype(_TYPES)


def _last_at(first: np.ndarray, mask: np.ndarray) -> np.ndarray:
    """Per group (starting at rows `first`), the last row where `mask` holds, given that it
    holds on a prefix of each group (times in order); -1 when it holds on none."""
    count = np.add.reduceat(mask.astype(np.int64), first)
    return np.where(count > 0, first + count - 1, -1)


def _columns(ev: pd.DataFrame) -> dict[str, list]:
    """The job_events columns as Python lists (times in Unix seconds, <NA> → None)."""
    cols = {
        k: ev[k].to_numpy(dtype=object).tolist()
        for k in ("event", "job", "node", "category", "status", "layer")
    }
    cols["t"] = (ev["time"].to_numpy("int64") / 1e9).tolist()
    for key in ("step", "gpus", "count", "step_time_s", "compute_s"):
        if key in ev:
            cols[key] = ev[key].to_numpy(dtype=object, na_value=None).tolist()
        else:
            cols[key] = [None] * len(ev)
    return cols


def _event_dicts(cols: dict[str, list], a: int, b: int) -> list[dict]:
    """Rows a..b-1 as journal events (`gpuslo.goodput.journal.event`, schema v1), built per
    journal to bound memory."""
    out = []
    for i in range(a, b):
        kind, step, gpus = cols["event"][i], cols["step"][i], cols["gpus"][i]
        out.append(journal.event(
            kind, cols["t"][i], job=cols["job"][i], node=cols["node"][i],
            gpus=None if gpus is None else int(gpus),
            step=None if step is None else int(step),
            from_step=None if step is None else int(step),
            category=cols["category"][i], status=cols["status"][i], layer=cols["layer"][i],
            count=_int(cols["count"][i]), step_time_s=_float(cols["step_time_s"][i]),
            compute_s=_float(cols["compute_s"][i]),
        ))
    return out


def _int(value) -> int | None:
    return None if value is None else int(value)


def _float(value) -> float | None:
    return None if value is None else float(value)
