"""The walk's restarts (`gpuslo.goodput.logs.walk.Walk` is a `Restarts`): where a restart is
dated, which restore it resumed from, and the end of the run a stop line interrupted.

- `_restart` writes the restart an item tells (a restore, an init or launcher line, a counter
  that goes back): the run before ends at its stop line (`_end_interrupted`), the journal's
  `restart` names the step it resumed from (the restore the next lines tell,
  `_upcoming_restore`; 0 when the run before was never restored), and the steps lost;
- `_relaunched` dates it: the stop line's own stamp, else the first dated line of the new
  process, so the undated gap is `recovery`, not the new process's `initialization`.

The walk owns the state these read and write: `items`, `j` (the `Journal`), `last`, `open`,
`restarted`, `completed`, `progressed`, `restarts`, `unrestored` and `notes`.
"""

from __future__ import annotations

from typing import Any

from gpuslo.goodput.logs.gaps import CANCELLED
from gpuslo.goodput.logs.items import Interruption, Mark, Restore
from gpuslo.goodput.logs.progress import Record


class Restarts:
    """The restart rules of the module docstring, as methods of the walk."""

    def _upcoming_restore(self, k: int) -> Restore | None:
        """The restore the lines after a restart's tell before the next progress: the first that
        names its step (HF's `Continuing training from checkpoint, will skip to saved
        global_step`, then `… from global step 200`), else the first; None when there is none."""
        first = None
        for later in self.items[k + 1:k + 400]:
            if isinstance(later, Restore):
                if later.step is not None:
                    return later
                first = first or later
            if isinstance(later, Record):
                break
        return first

    def _relaunched(self, k: int, t: float) -> float:
        """When the relaunched process is first seen alive: the time of the line that tells the
        restart (`items[k]`) where it has a stamp of its own, else, after a stop line, the first
        dated line of the new process (its own stamp, no later than its first progress): its
        undated first lines are in the gap, and the gap up to that sign of life is `recovery`,
        not the new process's `initialization` (README: recovery runs from the interruption
        until the job runs again). Noted when it moves."""
        item = self.items[k]
        if self.open is None or _own_time(item) is not None:
            return t
        for later in self.items[k + 1:k + 400]:
            own = _own_time(later)
            if own is not None and later.t0 > t:
                line = later.obs.line if isinstance(later, Mark) else later.line
                self.notes.append(f"line {self.open[0].line}: the relaunch's first lines carry "
                                  f"no time: recovery counted to its first dated line ({line})")
                return later.t0
            if isinstance(later, Record):
                break
        return t

    def _restart(self, k: int, t: float, line: int, resumed: int | None = None) -> float:
        """Write the restart the item `k` tells; returns its time (`_relaunched`)."""
        self.restarted, self.completed = True, False
        t = self._relaunched(k, t)
        if self.open is not None:
            self._end_interrupted(*self.open)
        item = self.items[k]
        restore = item if isinstance(item, Restore) else self._upcoming_restore(k)
        from_step = restore.step if restore is not None and restore.step is not None else resumed
        if restore is None and from_step is None and self.last is not None and (
                self.last.run in self.unrestored):
            from_step = 0  # the counter starts again: nothing of the run before was restored
        self.j.close_phase(t)
        self.j.emit(t, "restart", from_step=int(from_step if from_step is not None
                                                else max(self.j.committed, 0)))
        self.j.state = "running"
        if from_step is not None:
            self.j.committed = int(from_step)
        lost = (self.last.glob - from_step) if self.last is not None and from_step is not None \
            else None
        if lost is not None and lost < 0:
            lost = None  # the run before printed a counter reset by its own restore: not comparable
        self.restarts.append({"resumed_from_step": from_step, "lost_steps": lost, "line": line,
                              "opens_log": False, "_restore": restore})
        self.open, self.progressed = None, False
        return t

    def _end_interrupted(self, intr: Interruption, entry: dict[str, Any]) -> None:
        """The run ends at the stop line, on the layer its listed entry gives."""
        self.open = None
        if self.j.state != "running":
            return
        self.j.close_phase(intr.t0)
        status = "cancelled" if intr.cause in CANCELLED else "failed"
        self.j.emit(intr.t0, "job_end", status=status, layer=entry["layer"])
        self.j.state = "interrupted"


def _own_time(item: object) -> float | None:
    """The stamp a walked item carries itself (None: its time is inferred): a mark's line's, a
    record's, a restore's start or end line's (Lightning's `Restoring states from the checkpoint
    path at ...`, DeepSpeed's `Loading checkpoint from ...`, stamped like any line)."""
    if isinstance(item, Mark):
        return item.obs.ts
    if isinstance(item, Record):
        return item.t0 if item.ts is not None else None
    if isinstance(item, Restore):
        return item.start_ts if item.start_ts is not None else item.end_ts
    return None
