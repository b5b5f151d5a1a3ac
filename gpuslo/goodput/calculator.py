"""The one pure goodput calculator (DESIGN.md §4–§5): journal events in, GPU-seconds out.

The events are those of `gpuslo.goodput.journal` (schema v1), valid and in time order.
Accounting rules (GPU-seconds on this node = seconds × `gpus`):
- time inside a phase goes to that phase's category;
- other running time is progress; it stays *uncommitted* until a `checkpoint` commits it
  (`productive`) or a restart discards it (`wasted_progress`); `job_end completed` commits it;
- the time from an interruption to the `restart` is `recovery`. The interruption is a
  `job_end` with a status other than completed, or — when the journal just stops (kill -9, node
  lost) — the last event before the `restart`;
- interruptions are counted by layer: the `layer` given by the job, else `training` for a failure
  the job reported itself, else `observability` (the journal stopped; the cause was not seen — the
  SLO engine re-attributes by correlating with verdicts).
Open segments (a phase still running, progress not yet committed) are not counted until an event
closes them, so every counter only grows as events arrive. Known limit: a restart from a
checkpoint *older* than the last committed one leaves the already committed time productive.

Worked example (issue 4): 60 s steps from t=0, checkpoint at step 80 (t=4800), failure after
step 100 (t=6000), restart 600 s later from step 80 → productive 4800 s, wasted_progress 1200 s,
recovery 600 s, per GPU.

Pure: no clock, no I/O, no OpenTelemetry. `PHASES` and `END_STATUSES` are the journal's.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from gpuslo import names
from gpuslo.goodput.journal import END_STATUSES, PHASES

__all__ = ["END_STATUSES", "PHASES", "GoodputState", "JobGoodput", "compute_goodput"]


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


class GoodputState:
    """Fold over valid events (from `JournalReader`), in order; `result` is the running answer."""

    def __init__(self) -> None:
        self.result = JobGoodput()
        self._mark = 0.0
        self._phase: str | None = None
        self._interrupted_at: float | None = None

    def apply(self, event: dict[str, Any]) -> None:
        """Apply one event; events are assumed valid and in time order."""
        kind, t, r = event["event"], float(event["t"]), self.result
        if kind == "job_start" and r.status in ("", "completed", "cancelled"):
            r.job, r.node, r.gpus = event["job"], str(event.get("node", "")), event["gpus"]
            self._run_from(t)
        elif kind == "restart" or (kind == "job_start" and r.status):
            self._restart(t, event.get("from_step", r.committed_step), event)
        elif r.status == "running":
            self._advance(t)
            self._running_event(kind, t, event)
        r.last_event_t = t

    def _run_from(self, t: float) -> None:
        self.result.status, self._mark, self._phase = "running", t, None

    def _advance(self, t: float) -> None:
        r = self.result
        seconds = (t - self._mark) * r.gpus
        if self._phase:
            r.gpu_seconds[self._phase] += seconds
        else:
            r.uncommitted_gpu_s += seconds
        self._mark = t

    def _commit(self) -> None:
        r = self.result
        r.gpu_seconds[names.CATEGORY_PRODUCTIVE] += r.uncommitted_gpu_s
        r.uncommitted_gpu_s = 0.0

    def _running_event(self, kind: str, t: float, event: dict[str, Any]) -> None:
        r = self.result
        if kind == "phase_start":
            self._phase = event["category"]
        elif kind == "phase_end":
            self._phase = None
        elif kind == "steps":
            r.last_step, r.last_progress_t = event["step"], t
        elif kind == "checkpoint":
            self._commit()
            r.committed_step = event["step"]
        elif kind == "job_end" and event["status"] == "completed":
            self._commit()
            r.status = "completed"
        elif kind == "job_end":
            layer = event.get("layer") or names.LAYER_TRAINING
            r.interruptions[layer] += 1
            r.status, self._interrupted_at = event["status"], t

    def _restart(self, t: float, from_step: int, event: dict[str, Any]) -> None:
        r = self.result
        if r.status == "running":  # the journal just stopped: interrupted at its last event
            r.interruptions[event.get("layer") or names.LAYER_OBSERVABILITY] += 1
            self._interrupted_at = r.last_event_t
        if self._interrupted_at is not None:
            r.gpu_seconds["recovery"] += (t - self._interrupted_at) * r.gpus
        r.gpu_seconds["wasted_progress"] += r.uncommitted_gpu_s
        r.uncommitted_gpu_s = 0.0
        r.gpus = event.get("gpus", r.gpus)
        r.committed_step = r.last_step = from_step
        self._interrupted_at = None
        self._run_from(t)


def compute_goodput(events: Iterable[dict[str, Any]], until: float | None = None) -> JobGoodput:
    """Goodput of one job on one node from its valid events (see the module docstring for rules).

    `until` (Unix seconds) ignores events after it, for a report window. Pure: no clock, no I/O.
    """
    state = GoodputState()
    for event in events:
        if until is not None and event["t"] > until:
            break
        state.apply(event)
    return state.result
