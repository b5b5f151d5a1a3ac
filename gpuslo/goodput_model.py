"""The job event model and the one pure goodput calculator (DESIGN.md §4–§5).

A job journal is JSON lines, one event per line, every line `{"v": 1, "t": <Unix seconds>,
"event": <kind>, ...}`. Event kinds (schema version 1):

- `job_start`  `job` (validated id), `node`, `gpus` (GPUs this node gives the job)
- `phase_start` / `phase_end`  `category` (one of `names.BADPUT_CATEGORIES` the job spends on
  itself: initialization, training_prep, data_loading, checkpoint_save, checkpoint_restore)
- `steps`  coalesced progress: `step` (last step, finished at `t`), `first_step`, `first_t`, `count`
- `checkpoint`  `step` committed by a finished checkpoint
- `restart`  `from_step` (the checkpoint step the job resumes from), optional `gpus`, `layer`
- `job_end`  `status` (`completed`, `failed`, `cancelled`), optional `layer` of the fault

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
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from typing import Any

from gpuslo import names
from gpuslo.errors import ParseError

SCHEMA_VERSION = 1
JOB_ID_MAX = 128
_JOB_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._:@+=-]*")
PHASES = ("initialization", "training_prep", "data_loading", "checkpoint_save",
          "checkpoint_restore")  # fmt: skip
END_STATUSES = ("completed", "failed", "cancelled")
_REQUIRED = {
    "job_start": {"job": str, "gpus": int},
    "phase_start": {"category": str},
    "phase_end": {"category": str},
    "steps": {"step": int},
    "checkpoint": {"step": int},
    "restart": {"from_step": int},
    "job_end": {"status": str},
}
EVENTS = tuple(_REQUIRED)


def validate_job_id(job_id: object) -> str:
    """Return `job_id` if it is a safe, bounded label value and file name, else raise ValueError.

    Rules: a string of 1–128 printable ASCII characters from `A-Z a-z 0-9 . _ : @ + = -`, starting
    with a letter or digit (so no path separators, no `..`, no hidden files, no 2 KB labels).
    """
    if not isinstance(job_id, str) or not job_id:
        raise ValueError("job id must be a non-empty string")
    if len(job_id) > JOB_ID_MAX:
        raise ValueError(f"job id is {len(job_id)} characters long (at most {JOB_ID_MAX})")
    if not _JOB_ID.fullmatch(job_id):
        raise ValueError(f"job id {job_id[:40]!r} has characters outside [A-Za-z0-9._:@+=-]")
    return job_id


def check_event(event: Any) -> None:
    """Raise ValueError naming the field when `event` (a decoded JSON line) is not a valid v1 event."""
    if not isinstance(event, dict):
        raise ValueError("line is not a JSON object")
    if event.get("v") != SCHEMA_VERSION:
        raise ValueError(f"unknown schema version {event.get('v')!r} (field 'v'; known: 1)")
    t = event.get("t")
    if isinstance(t, bool) or not isinstance(t, int | float) or not math.isfinite(t):
        raise ValueError("field 't' is not a finite number of Unix seconds")
    kind = event.get("event")
    if kind not in _REQUIRED:
        raise ValueError(f"field 'event': unknown event {kind!r}")
    for key, typ in _REQUIRED[kind].items():
        value = event.get(key)
        if isinstance(value, bool) or not isinstance(value, typ):
            raise ValueError(f"field {key!r} missing or not {typ.__name__}")
    if kind == "job_start":
        validate_job_id(event["job"])
        if event["gpus"] < 1:
            raise ValueError("field 'gpus' must be at least 1")
    if kind.startswith("phase_") and event["category"] not in PHASES:
        raise ValueError(f"field 'category': {event['category']!r} is not one of {PHASES}")
    if kind == "job_end" and event["status"] not in END_STATUSES:
        raise ValueError(f"field 'status': {event['status']!r} is not one of {END_STATUSES}")
    layer = event.get("layer")
    if layer is not None and layer not in names.LAYERS:
        raise ValueError(f"field 'layer': {layer!r} is not one of {names.LAYERS}")


class JournalReader:
    """Incremental, validating reader of one journal: feed it complete lines as they arrive.

    Every problem kind (invalid JSON or truncated line, unknown schema version, bad job id, bad
    field, event out of order, step going backwards) is reported once, with the source and the
    first line it occurred on, as a `ParseError`; the offending line is skipped and the rest read.
    """

    def __init__(self, source: str) -> None:
        self.source = source
        self.line_no = 0
        self.problems: list[ParseError] = []
        self._seen: set[str] = set()
        self._last_t = -math.inf
        self._last_step: int | None = None

    def _problem(self, kind: str, message: str, field_name: str | None = None) -> None:
        if kind not in self._seen:
            self._seen.add(kind)
            self.problems.append(ParseError(self.source, message, self.line_no, field_name))

    def feed_line(self, line: str) -> dict[str, Any] | None:
        """Validate one line (without its newline); return the event, or None when skipped."""
        self.line_no += 1
        if not line.strip():
            return None
        try:
            event = json.loads(line)
        except ValueError:
            self._problem("json", "truncated or invalid JSON line; skipped")
            return None
        try:
            check_event(event)
        except ValueError as error:
            text = str(error)
            kind = next((k for k in ("schema version", "job id") if k in text), text.split(":")[0])
            self._problem(kind, f"{error}; line skipped")
            return None
        return self._ordered(event)

    def _ordered(self, event: dict[str, Any]) -> dict[str, Any] | None:
        if event["t"] < self._last_t:
            self._problem("order", "event out of order (time goes backwards); skipped", "t")
            return None
        if event["event"] in ("restart", "job_start"):
            self._last_step = event.get("from_step")
        elif event["event"] == "steps":
            if self._last_step is not None and event["step"] < self._last_step:
                self._problem("backwards", "step goes backwards without a restart; skipped", "step")
                return None
            self._last_step = event["step"]
        self._last_t = event["t"]
        return event


def parse_journal(text: str, source: str) -> tuple[list[dict[str, Any]], list[ParseError]]:
    """Parse a whole journal text. Returns (valid events in file order, problems).

    A last line without its newline is a truncated write (a crash mid-line): reported, skipped.
    """
    reader = JournalReader(source)
    lines = text.split("\n")
    tail = lines.pop()  # "" when the text ends with a newline
    events = [e for e in map(reader.feed_line, lines) if e is not None]
    if tail:
        reader.line_no += 1
        reader._problem("json", "truncated last line (no newline); skipped")
    return events, reader.problems


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
