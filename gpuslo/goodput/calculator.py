"""The one pure goodput calculator (DESIGN.md §4–§5): journal events in, GPU-seconds out.

The events are those of `gpuslo.goodput.journal` (schema v1), valid and in time order.
Accounting rules (GPU-seconds on this node = seconds × `gpus`):
- time inside a phase goes to that phase's category;
- other running time is progress; it stays *uncommitted* until a `checkpoint` commits it
  (`productive`), or a `job_end` not completed (failed, cancelled: nothing will commit it, a
  restart resumes from a checkpoint) or a restart discards it (`wasted_progress`); `job_end
  completed` commits it;
- the time from an interruption to the `restart` is `recovery`. The interruption is a
  `job_end` with a status other than completed, or — when the journal just stops (kill -9, node
  lost) — the last event before the `restart`;
- interruptions are counted by layer: the `layer` given by the job, else `training` for a failure
  the job reported itself, else `observability` (the journal stopped; the cause was not seen — the
  SLO engine re-attributes by correlating with verdicts).
- `slowdown`: each `steps` event is one logged interval with a mean step time (its `step_time_s`,
  else its progress seconds / its steps; the first after a start counts only when it states its
  step time, since the step before it is unknown); `gpuslo.goodput.slowdown` decides whether it
  is slower than the job's own reference, and the extra seconds of a *sustained* slowdown
  (Σ (step time − reference) × steps, × `gpus`) leave the progress for `slowdown` the moment the
  run is confirmed — before any checkpoint commits them. The extra seconds of a run not yet
  confirmed are held aside: a checkpoint does not commit them; they become slowdown when the run
  is confirmed, or return to progress (productive when a checkpoint passed meanwhile) when the
  run ends as a spike. The reference is kept across restarts of one configuration (same `gpus`)
  and learned afresh when the GPU count changes. Each slowdown is listed in
  `JobGoodput.slowdowns` with its times, so the SLO engine can look for its cause.
Open segments (a phase still running, progress not yet committed) are not counted until an event
closes them, so every counter only grows as events arrive. Known limit: a restart from a
checkpoint *older* than the last committed one leaves the already committed time productive.

Worked example (issue 4): 60 s steps from t=0, checkpoint at step 80 (t=4800), failure after
step 100 (t=6000), restart 600 s later from step 80 → productive 4800 s, wasted_progress 1200 s,
recovery 600 s, per GPU.

Two forms of the same rules: `GoodputState` folds one journal event by event (the exporter tails
journals with it); the batch form computes what every event of many journals adds, with numpy:
`gpuslo.goodput.batch` for every rule but the slowdown split, and
`gpuslo.goodput.slowdown_batch` for that split on the journals whose step times could hold a
slowdown (`slowdown_increments`). `goodput_table` gives the running totals of any journals by
them, folding only the few journals the batch form hands back (see `slowdown_batch`). The SLO
engine and the simulator use them; property tests hold them equal to the fold on random
journals.

Pure: no clock, no I/O, no OpenTelemetry. `PHASES` and `END_STATUSES` are the journal's.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np
import pandas as pd

from gpuslo import names
from gpuslo.goodput import journal
from gpuslo.goodput.batch import (
    EVENTS,
    STATUSES,
    GoodputIncrements,
    GoodputTable,
    batch_table,
    codes_of,
    goodput_increments,
)
from gpuslo.goodput.journal import END_STATUSES, PHASES
from gpuslo.goodput.slowdown import SlowdownRule, SlowdownTracker
from gpuslo.goodput.slowdown_batch import SlowdownIncrements, slowdown_increments

__all__ = [
    "END_STATUSES", "EVENTS", "PHASES", "STATUSES", "GoodputIncrements", "GoodputState",
    "GoodputTable", "JobGoodput", "SlowdownEpisode", "codes_of", "compute_goodput",
    "goodput_increments", "goodput_table", "SlowdownIncrements", "slowdown_increments",
]


@dataclass
class SlowdownEpisode:
    """One sustained slowdown of the job on this node (times in Unix seconds).

    start_t: start of its first slow interval; end_t: end of its last one so far; from_step,
    to_step: the steps it covers; reference_s: the reference step time (seconds); steps and
    step_seconds: steps covered and their summed step time (seconds); gpu_seconds: what it put
    into the `slowdown` category (GPU-seconds). `ratio` = mean step time / reference.
    """

    start_t: float
    end_t: float
    from_step: int
    to_step: int
    reference_s: float
    steps: int = 0
    step_seconds: float = 0.0
    gpu_seconds: float = 0.0

    @property
    def ratio(self) -> float:
        """Mean step time over the slowdown / the reference (above the rule's threshold)."""
        return self.step_seconds / self.steps / self.reference_s if self.steps else 1.0


@dataclass
class JobGoodput:
    """Goodput of one job on one node.

    Attributes:
        job, node: identity ("" until a job_start is seen).
        gpus: GPUs this node gives the job.
        gpu_seconds: GPU-seconds by every category of `names.JOB_CATEGORIES` (zeros included).
        uncommitted_gpu_s: progress GPU-seconds not yet committed by a checkpoint.
        committed_step: last step committed by a checkpoint (or resumed from), -1 when none.
        last_step: last step seen, -1 when none.
        last_progress_t: Unix seconds of the last step, 0.0 when none.
        last_event_t: Unix seconds of the last event, 0.0 when none.
        interruptions: count by layer (`names.LAYERS`).
        status: `running`, `interrupted`, or the job_end status; "" before job_start.
        step_time_s: mean step time of the last measured interval (seconds), None before one.
        compute_s: this node's mean compute seconds per step in the last interval that said it
            (the `steps` event's `compute_s`), None when none did.
        slowdowns: every sustained slowdown so far (`SlowdownEpisode`), oldest first.
    """

    job: str = ""
    node: str = ""
    gpus: int = 0
    gpu_seconds: dict[str, float] = field(
        default_factory=lambda: dict.fromkeys(names.JOB_CATEGORIES, 0.0)
    )
    uncommitted_gpu_s: float = 0.0
    committed_step: int = -1
    last_step: int = -1
    last_progress_t: float = 0.0
    last_event_t: float = 0.0
    interruptions: dict[str, int] = field(default_factory=lambda: dict.fromkeys(names.LAYERS, 0))
    status: str = ""
    step_time_s: float | None = None
    compute_s: float | None = None
    slowdowns: list[SlowdownEpisode] = field(default_factory=list)


def interruption_layer(declared: str | None, reported: bool) -> str:
    """The layer of a job interruption by the job's own account, the one rule of this calculator
    (its fold and `batch`) and of the SLO engine's attribution where no fault explains the
    interruption (`slo.attribution.attribute`): the layer the job gave (a `job_end`'s or
    `restart`'s `layer`), else `training` for a failure the job reported itself (a `job_end`
    not completed), else `observability` (the journal just stopped: the cause was not seen)."""
    if declared:
        return declared
    return names.LAYER_TRAINING if reported else names.LAYER_OBSERVABILITY


class GoodputState:
    """Fold over valid events (from `JournalReader`), in order; `result` is the running answer.
    `rule` is the sustained-slowdown rule (default `SlowdownRule()`, the SLO spec's defaults)."""

    def __init__(self, rule: SlowdownRule | None = None) -> None:
        self.result = JobGoodput()
        self._rule = rule or SlowdownRule()
        self._tracker = SlowdownTracker(self._rule)
        self._mark = 0.0
        self._phase: str | None = None
        self._interrupted_at: float | None = None
        self._interval_gpu_s = 0.0  # progress GPU-seconds since the last steps event
        self._interval_start = 0.0
        self._held = 0.0  # extra GPU-seconds of an unconfirmed slow run, not committed
        self._held_committed = 0.0  # ... that a checkpoint passed while the run was unconfirmed
        self._episode: SlowdownEpisode | None = None

    def apply(self, event: dict[str, Any]) -> None:
        """Apply one event; events are assumed valid and in time order."""
        kind, t, r = event["event"], float(event["t"]), self.result
        if kind == "job_start" and r.status in ("", "completed", "cancelled"):
            self._configure(event["gpus"])
            r.job, r.node, r.gpus = event["job"], str(event.get("node", "")), event["gpus"]
            self._run_from(t)
        elif kind == "restart" or (kind == "job_start" and r.status):
            self._restart(t, event.get("from_step", r.committed_step), event)
        elif r.status == "running":
            self._advance(t)
            self._running_event(kind, t, event)
        r.last_event_t = t

    @property
    def held_gpu_s(self) -> float:
        """The extra GPU-seconds of a slow run not yet confirmed (nor ended as a spike)."""
        return self._held + self._held_committed

    def _run_from(self, t: float) -> None:
        self.result.status, self._mark, self._phase = "running", t, None
        self._interrupted_at = None
        self._interval_gpu_s, self._interval_start = 0.0, t

    def _configure(self, gpus: int) -> None:
        """A new configuration (GPU count) learns its own reference."""
        if gpus != self.result.gpus:
            self._tracker = SlowdownTracker(self._rule)

    def _advance(self, t: float) -> None:
        r = self.result
        seconds = (t - self._mark) * r.gpus
        if self._phase:
            r.gpu_seconds[self._phase] += seconds
        else:
            r.uncommitted_gpu_s += seconds
            self._interval_gpu_s += seconds
        self._mark = t

    def _commit(self) -> None:
        r = self.result
        r.gpu_seconds[names.CATEGORY_PRODUCTIVE] += r.uncommitted_gpu_s
        r.uncommitted_gpu_s = 0.0
        self._held_committed += self._held
        self._held = 0.0

    def _release(self) -> None:
        """An unconfirmed slow run was a spike: its held seconds go back to progress."""
        r = self.result
        r.uncommitted_gpu_s += self._held
        r.gpu_seconds[names.CATEGORY_PRODUCTIVE] += self._held_committed
        self._held = self._held_committed = 0.0

    def _end_run(self) -> None:
        if self._tracker.end_run():
            self._release()
        self._episode = None

    def _steps(self, t: float, event: dict[str, Any]) -> None:
        """One logged interval: measure its step time and split off slowdown seconds."""
        r = self.result
        step_s = event.get("step_time_s")
        # Steps since the last known step; the first interval after a start has no step before
        # it, but when the event states its step time it is one measured interval all the same.
        count = event.get("count") or (event["step"] - r.last_step if r.last_step >= 0
                                       else int(step_s is not None))
        if step_s is None and count > 0 and r.gpus:
            step_s = self._interval_gpu_s / r.gpus / count
        seen = self._tracker.observe(step_s, count)
        if seen.released:
            self._release()
        if seen.kind in ("held", "confirmed", "slow"):
            self._slow(seen, t, event, count, float(step_s))
        else:
            self._episode = None
        r.last_step, r.last_progress_t = event["step"], t
        r.step_time_s = step_s if step_s is not None else r.step_time_s
        r.compute_s = event.get("compute_s", r.compute_s)
        self._interval_gpu_s, self._interval_start = 0.0, t

    def _slow(self, seen, t: float, event: dict[str, Any], count: int, step_s: float) -> None:
        r = self.result
        extra = max(min(seen.extra_s * r.gpus, self._interval_gpu_s, r.uncommitted_gpu_s), 0.0)
        r.uncommitted_gpu_s -= extra
        if self._episode is None:
            first = event.get("first_step", r.last_step + 1)
            self._episode = SlowdownEpisode(self._interval_start, t, first, event["step"],
                                            seen.reference_s)
        episode = self._episode
        episode.end_t, episode.to_step = t, event["step"]
        episode.steps += count
        episode.step_seconds += step_s * count
        if seen.kind == "held":
            self._held += extra
            return
        if seen.kind == "confirmed":
            extra += self._held + self._held_committed
            self._held = self._held_committed = 0.0
            r.slowdowns.append(episode)
        r.gpu_seconds[names.CATEGORY_SLOWDOWN] += extra
        episode.gpu_seconds += extra

    def _running_event(self, kind: str, t: float, event: dict[str, Any]) -> None:
        r = self.result
        if kind == "phase_start":
            self._phase = event["category"]
        elif kind == "phase_end":
            self._phase = None
        elif kind == "steps":
            self._steps(t, event)
        elif kind == "checkpoint":
            self._commit()
            r.committed_step = event["step"]
        elif kind == "job_end" and event["status"] == "completed":
            self._end_run()
            self._commit()
            r.status = "completed"
        elif kind == "job_end":
            r.interruptions[interruption_layer(event.get("layer"), reported=True)] += 1
            r.status, self._interrupted_at = event["status"], t
            self._discard()

    def _discard(self) -> None:
        """The run ended without a commit: its uncommitted progress is lost."""
        r = self.result
        self._end_run()
        r.gpu_seconds["wasted_progress"] += r.uncommitted_gpu_s
        r.uncommitted_gpu_s = 0.0

    def _restart(self, t: float, from_step: int, event: dict[str, Any]) -> None:
        r = self.result
        if r.status == "running":  # the journal just stopped: interrupted at its last event
            r.interruptions[interruption_layer(event.get("layer"), reported=False)] += 1
            self._interrupted_at = r.last_event_t
        if self._interrupted_at is not None:
            r.gpu_seconds["recovery"] += (t - self._interrupted_at) * r.gpus
        self._discard()
        self._configure(event.get("gpus", r.gpus))
        r.gpus = event.get("gpus", r.gpus)
        r.committed_step = r.last_step = from_step
        self._interrupted_at = None
        self._run_from(t)


def summary(result: JobGoodput) -> dict[str, Any]:
    """The goodput facts of one calculator run for a person or a JSON document: `gpu_seconds`
    (every category, rounded to ms), `uncommitted_gpu_s`, `accounted_gpu_s` (their sum),
    `goodput` (productive / accounted; None when nothing is accounted), `interruptions` (by
    layer, non-zero only), `slowdown_gpu_s` and `slowdowns` — every slowdown episode it filed
    ({from_step, to_step, ratio, reference_s, steps, gpu_seconds}), which add up to the
    `slowdown` category: what is listed is what is filed. Pure."""
    seconds = {k: round(v, 3) for k, v in result.gpu_seconds.items()}
    accounted = sum(seconds.values()) + result.uncommitted_gpu_s
    slowdowns = [{"from_step": e.from_step, "to_step": e.to_step, "ratio": round(e.ratio, 4),
                  "reference_s": round(e.reference_s, 6), "steps": e.steps,
                  "gpu_seconds": round(e.gpu_seconds, 3)} for e in result.slowdowns]
    return {
        "gpu_seconds": seconds,
        "uncommitted_gpu_s": round(result.uncommitted_gpu_s, 3),
        "accounted_gpu_s": round(accounted, 3),
        "goodput": round(seconds[names.CATEGORY_PRODUCTIVE] / accounted, 6)
        if accounted > 0 else None,
        "interruptions": {k: v for k, v in result.interruptions.items() if v},
        "slowdown_gpu_s": round(sum(e.gpu_seconds for e in result.slowdowns), 3),
        "slowdowns": slowdowns,
    }


def compute_goodput(
    events: Iterable[dict[str, Any]], until: float | None = None, rule: SlowdownRule | None = None
) -> JobGoodput:
    """Goodput of one job on one node from its valid events (see the module docstring for rules).

    `until` (Unix seconds) ignores events after it, for a report window; `rule` is the
    sustained-slowdown rule (default: `SlowdownRule()`). Pure: no clock, no I/O. The extra
    seconds of a slow run not yet confirmed (held aside) are progress no checkpoint committed:
    they are in the answer's `uncommitted_gpu_s`, so every second the journal shows is
    accounted (the report's batch form counts them there too).
    """
    state = GoodputState(rule)
    for event in events:
        if until is not None and event["t"] > until:
            break
        state.apply(event)
    held = state.held_gpu_s
    if not held:
        return state.result
    return replace(state.result, uncommitted_gpu_s=state.result.uncommitted_gpu_s + held)


def goodput_table(
    group: np.ndarray, t: np.ndarray, event: np.ndarray, category: np.ndarray,
    gpus: np.ndarray, status: np.ndarray, step: np.ndarray | None = None,
    layer: np.ndarray | None = None, count: np.ndarray | None = None,
    step_time_s: np.ndarray | None = None, compute_s: np.ndarray | None = None,
    rule: SlowdownRule | None = None,
) -> GoodputTable:
    """The running goodput after every event of many journals (arrays as
    `gpuslo.goodput.batch.goodput_increments`; event, category, status and layer as text): the
    batch form, with the journals where a slowdown may be found folded by `GoodputState`
    (`rule`, default `SlowdownRule()`), so every row equals the fold's. Pure."""
    rule = rule or SlowdownRule()
    table = batch_table(group, t, event, category, gpus, status, step, layer)
    n = len(t)
    nan = np.full(n, np.nan)
    arrays = [nan if a is None else np.asarray(a, dtype=np.float64)
              for a in (step, count, step_time_s, compute_s)]
    inc = goodput_increments(group, t, event, category, gpus, status, arrays[0], arrays[1],
                             arrays[2], rule.threshold)
    sub = slowdown_increments(group, t, event, category, gpus, status, arrays[0], arrays[1],
                              arrays[2], rule, inc.state)
    batch = sub.exact[sub.group]
    for c, values in sub.gpu_seconds.items():
        table.gpu_seconds[c][sub.rows[batch]] = _group_running_sum(values[batch],
                                                                   sub.group[batch])
    rows = np.flatnonzero(~sub.exact[group])
    text = [np.asarray(a, dtype=object) for a in (event, category, status,
                                                  np.full(n, "", dtype=object)
                                                  if layer is None else layer)]
    gpus = np.asarray(gpus, dtype=np.float64)
    state, current = None, None
    for i in rows:
        if group[i] != current:
            state, current = GoodputState(rule), group[i]
        state.apply(_event(i, t, text, gpus, arrays))
        for c in names.JOB_CATEGORIES:
            table.gpu_seconds[c][i] = state.result.gpu_seconds[c]
    return table


def _group_running_sum(values: np.ndarray, ids: np.ndarray) -> np.ndarray:
    """Running sums per group id (rows of one id contiguous), summed in order from 0."""
    return pd.Series(values).groupby(ids).cumsum().to_numpy()


def _event(i: int, t, text, gpus, arrays) -> dict[str, Any]:
    """Row i as a journal event (schema v1), for the fold."""
    step, count, step_time_s, compute_s = (None if np.isnan(a[i]) else a[i] for a in arrays)
    return journal.event(
        text[0][i], float(t[i]), job="job", node="node",
        gpus=None if np.isnan(gpus[i]) else int(gpus[i]),
        step=None if step is None else int(step), from_step=None if step is None else int(step),
        category=text[1][i] or None, status=text[2][i] or None, layer=text[3][i] or None,
        count=None if count is None else int(count), step_time_s=step_time_s,
        compute_s=compute_s,
    )
