"""Framework hooks → the Recorder's journal events, with phases timed where the hooks are.

`GoodputSession(journal_dir, job_id, gpus)` is driven by a framework callback:
`begin()` when the process sets up (the initialization phase opens), then either
`fresh_start()` or `resumed(step, restore_started, restore_ended)` once it is known whether a
checkpoint was loaded (a resumed run writes `restart` at the set-up time, initialization until the
load began and `checkpoint_restore` for the load: events are written with the times they
happened), `train_start()` (initialization closes), `step(n, compute_s)`, `save_started()` /
`save_ended(step)` around a checkpoint write (progress up to `step` becomes committed), and
`end(status)`. A process that dies writes nothing more; the next run's `resumed` is then a
restart after an interruption the calculator dates at the last event (DESIGN.md §5).

Whether this process is a restart is read from the journal: an existing journal of the job whose
last run did not complete means the job was interrupted.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from typing import Any

from gpuslo.goodput.recorder import Recorder


class GoodputSession:
    """One process of a training job on one node (only the node's local rank 0 makes one).

    Args:
        journal_dir: the exporter's `--journal-dir` (e.g. /var/lib/gpuslo/journals).
        job_id: the job's id, the same in every restart (validate_job_id rules).
        gpus: GPUs this node gives the job.
        clock: Unix seconds (injected for tests).
        recorder_options: passed to the `Recorder` (`node`, `coalesce_steps`, `coalesce_s`).
    """

    def __init__(self, journal_dir: str | os.PathLike[str], job_id: str, gpus: int,
                 clock: Callable[[], float] = time.time, **recorder_options: Any) -> None:
        self._clock, self._at = clock, None
        self.gpus = int(gpus)
        self.recorder = Recorder(journal_dir, job_id, clock=self._time, **recorder_options)
        status = self.recorder.goodput.status
        self.interrupted_before = status not in ("", "completed", "cancelled")
        self._phase: Any = None
        self._begun = self._started = False
        self._t_begin = 0.0

    def _time(self) -> float:
        return self._at if self._at is not None else self._clock()

    def now(self) -> float:
        """The session's clock (Unix seconds)."""
        return self._clock()

    def _open(self, category: str, at: float | None = None) -> None:
        self._close(at)
        self._at = at
        self._phase = self.recorder.phase(category)
        self._phase.__enter__()
        self._at = None

    def _close(self, at: float | None = None) -> None:
        if self._phase is not None:
            self._at = at
            self._phase.__exit__(None, None, None)
            self._phase, self._at = None, None

    def begin(self) -> None:
        """The process sets up; what it does until `train_start` is initialization."""
        self._t_begin, self._begun = self.now(), True

    def fresh_start(self) -> None:
        """No checkpoint was loaded: a new job, or a restart from scratch after a failure."""
        if self._started:
            return
        self._started = True
        self._at = self._t_begin
        if self.interrupted_before:
            self.recorder.restart(from_step=0, gpus=self.gpus)
        else:
            self.recorder.job_start(self.gpus)
        self._at = None
        self._open("initialization", self._t_begin)

    def resumed(self, step: int, restore_started: float, restore_ended: float) -> None:
        """A checkpoint of `step` was loaded between the two times (Unix seconds)."""
        if self._started:
            return
        self._started = True
        self._at = self._t_begin
        if self.recorder.goodput.status:  # the job's earlier run is in the journal
            self.recorder.restart(from_step=int(step), gpus=self.gpus)
        else:  # resumed from a checkpoint the journal never saw (journal lost or new)
            self.recorder.job_start(self.gpus)
        self._open("initialization", self._t_begin)
        self._open("checkpoint_restore", max(restore_started, self._t_begin))
        self._close(max(restore_ended, restore_started, self._t_begin))

    def train_start(self) -> None:
        """The first training step begins now: initialization (if still open) ends."""
        self.fresh_start()
        self._close()

    def step(self, n: int, compute_s: float | None = None) -> None:
        """Step `n` finished now; `compute_s`: this rank's compute seconds in it (section
        timings, without waiting in collectives), None when not measured."""
        self.recorder.step(n, compute_s=compute_s)

    def save_started(self, at: float | None = None) -> None:
        """A checkpoint write begins (now, or at `at`)."""
        self._open("checkpoint_save", at)

    def save_ended(self, step: int) -> None:
        """The checkpoint of `step` is written: the save phase ends, progress is committed."""
        self._close()
        self.recorder.checkpoint(int(step))

    def end(self, status: str = "completed") -> None:
        """The run ends (`completed`, `failed`, `cancelled`); the journal is closed."""
        self._close()
        self.recorder.job_end(status)
