"""The Recorder journal a log's walk writes (pure): its events, the open phase, the state and
the commit evidence (`walk` drives it; `Journal.commit` says which checkpoints are evidence of
the log's own progress).
"""

from __future__ import annotations

from typing import Any

from gpuslo.goodput.journal import SCHEMA_VERSION, check_event


class Journal:
    """The journal being written: events, the open phase, the state (new | running |
    interrupted | completed) and the last committed step. `commits` counts the checkpoints that
    are commit evidence of the log's own progress, `head_restores` the restores before any
    progress of their run (`commit`)."""

    def __init__(self, job: str, gpus: int) -> None:
        self.job, self.gpus = job, gpus
        self.events: list[dict[str, Any]] = []
        self.phase: str | None = None
        self.state = "new"
        self.last_t = 0.0
        self.committed = -1
        self.commits = 0
        self.head_restores = 0

    def emit(self, t: float, kind: str, **fields: Any) -> None:
        """Append one event (never before the last one)."""
        t = max(t, self.last_t)
        self.last_t = t
        event = {"v": SCHEMA_VERSION, "t": round(t, 6), "event": kind, **fields}
        check_event(event)
        self.events.append(event)

    def commit(self, t: float, step: int, head_restore: bool = False) -> None:
        """A `checkpoint` of `step`. A save line, or a restore of a step a run of the log
        passed, proves a commit of the log's own progress (`commits`). A restore before any
        progress of its run (`head_restore`: a log that opens by loading `0-1250.ckpt`) proves
        a commit of a run the log does not show; it tells of the log's progress only where the
        job prints its saves (its silence after the restore then says nothing was committed
        since): `assemble` decides, from the framework's profile (Lightning saves silently)."""
        self.emit(t, "checkpoint", step=step)
        self.committed = step
        self.head_restores += head_restore
        self.commits += not head_restore

    def start(self, t: float) -> None:
        """`job_start` before the first item."""
        if self.state == "new":
            self.emit(t, "job_start", job=self.job, node="log", gpus=self.gpus)
            self.state = "running"

    def open_phase(self, t: float, category: str) -> None:
        """Open a phase (closing another one)."""
        if self.state != "running" or self.phase == category:
            return
        self.close_phase(t)
        self.emit(t, "phase_start", category=category)
        self.phase = category

    def close_phase(self, t: float) -> None:
        """Close the open phase, if any."""
        if self.phase is not None:
            self.emit(t, "phase_end", category=self.phase)
            self.phase = None
