"""The items of a log, in order → Recorder journal events and the facts of `gpuslo goodput`.

`walk(items, journal, notes, hang_min_s) -> facts` (pure). The journal events are the
Recorder's (`job_start`, `phase_start`/`phase_end`, `steps`, `checkpoint`, `restart`,
`job_end`), so the one calculator (`compute_goodput`) turns them into GPU-seconds.

Commit evidence. A save line commits its step, unless the save has no end line and a stop follows it
before any progress, or the log ends inside a save to a temporary target (begun, not shown finished:
a save cut short commits nothing). A restore of step M proves a commit at M: the walk writes a
`checkpoint` of M when the run before the restore passed M (Lightning prints no save line; its
`Restored all states from …step=2532.ckpt` is the only evidence). A bar that starts mid-way at step
M + 1 after progress is a resumed run: M was committed too (a log that opens with such a bar is a
restart, but its commit is not proven). A restore before any progress of its run commits the step it
names (the run goes on from it); it is evidence for the progress the log shows only where the job
prints its saves (`Journal.commit`). A load that sets the counter back to 0 (`Restore.resets`: a
fine-tune's initial weights), or that names step 0 (Megatron's `loading release checkpoint from …`,
then `successfully loaded checkpoint from … at iteration 0`: released weights; a checkpoint of step
0 holds no trained step), before any progress is no restart and commits nothing: the checkpoint is
another run's. A load of a file that the run's own saver named for step 0 (TF1's `Restoring
parameters from /models/model.ckpt-0`, fresh22 Z10: the Supervisor's first save of an earlier
launch) is this job's resume: a restart, from step 0, committing nothing. A run whose saves no later
run restored (`unrestored_runs`: the next run starts its counter again, at or below the run's own
first step, with no restore line: Megatron's `will not load any checkpoints and will start from
random`) commits nothing: its steps are wasted, and the restart is from step 0. The end of training
(`max_steps` reached) commits nothing: a run's steps after its last proven commit stay uncommitted
(the document says so).

Restarts. A restore after progress, an init line after progress or after a stop, a launcher's or
scheduler's restart line (TorchElastic's `will restart worker group`, a requeue; after a stop,
or alone: the line is the evidence of the stop, and the lines of one restart count once), and a
step counter that goes back are each one restart (a restore with its init lines is one), and so
is each launch the script's opening printed again shows (`relaunch.reopenings`: one per launch,
even with no progress between two; no interruption after a run that ended); the
progress after the last commit is wasted (the calculator's rule). A restart with no stop line
before it (a restore, an init line or a counter going back, after progress) lists one
interruption, cause `unknown` on the observability layer, as the calculator counts a journal
that just stopped: the list and `goodput.interruptions` agree. An error line followed by more
progress without a restart was not a stop and is not counted. Hangs: a watchdog's line, or a
pause between progress lines (or until a scheduler's pulse) of at least `hang_min_s` and 10 ×
the step time. The time a hang holds (last progress → the watchdog's line, its `ran for`, or the
pulse) is booked `other`: the job held its GPUs and made no progress.

Steps events: a bar's records are sent once a second of the log; a line's that prints its step
time at once, stating it; a line's timed by the clock (stamp or elapsed differences) once they
span `CLOCK_TICKS` ticks of it, its time measured by the calculator, so the slowdown rule reads
intervals whose clock error (a tick) is at most 1 %.
"""

from __future__ import annotations

from statistics import median
from typing import Any

from gpuslo import names
from gpuslo.goodput.logs.commits import EVENT_MARKS as _MARKS  # the marks the walk acts on
from gpuslo.goodput.logs.commits import proven_commits, trailing, unrestored_runs, zero_based
from gpuslo.goodput.logs.gaps import Gaps
from gpuslo.goodput.logs.items import Interruption, Mark, Restore, Save, temporary, unfinished
from gpuslo.goodput.logs.journal_writer import Journal
from gpuslo.goodput.logs.progress import Record
from gpuslo.goodput.logs.restarts import Restarts
from gpuslo.goodput.logs.story import ends_unshown
from gpuslo.goodput.logs.windows import resolution

COALESCE_S = 1.0  # a bar's records are sent as one steps event per second of the log
# A line log timed by its clock (no step time printed: stamp or elapsed-time differences) is
# sent in intervals of at least this many ticks of that clock, so that a tick's error is at
# most 1 % of an interval: under the slowdown threshold (3 %), noise is not a slowdown
CLOCK_TICKS = 100
CLOCKED = {"stamps": "ts", "stamps_coarse": "ts", "elapsed": "elapsed", "": "ts"}


def _stamped_both(save: Save) -> bool:
    """A save whose start and end lines both carry a stamp is measured by them, 0 s when they
    are the same (accelerate's `Saving current state` and its parts all at 15:49:55: under the
    stamps' resolution), where a save with one stamp has no length to give."""
    return save.start_ts is not None and save.end_ts is not None


class Walk(Gaps, Restarts):
    """The state of one walk (see the module docstring)."""

    def __init__(self, items: list[Any], j: Journal, notes: list[str], hang_min_s: float):
        self.items, self.j, self.notes, self.hang_min_s = items, j, notes, hang_min_s
        self.commits = proven_commits(items)
        self.unrestored = unrestored_runs(items)
        self.saves: list[dict[str, Any]] = []
        self.restarts: list[dict[str, Any]] = []
        self.interruptions: list[dict[str, Any]] = []
        self.hangs: list[dict[str, Any]] = []
        self.step_times: list[float] = []
        self.retracted = 0
        self.last: Record | None = None
        self.last_k = -1  # the index of `last` in `items`
        self.open: tuple[Interruption, dict[str, Any]] | None = None
        self.progressed = False  # progress since the last (re)start
        self.restarted = False  # a restart since the last progress line
        self.completed = False
        self.window: list[float] = []  # step times of the records since the last steps event
        self.unsent: Record | None = None
        self.pending_pause: tuple[int, float] | None = None
        self.deferred: tuple[int, int] | None = None  # (index, step): a save's commit after it
        self.from_zero = zero_based(items)
        records = [x for x in items if isinstance(x, Record)]
        self.ticks = {"ts": resolution([r.ts for r in records if r.ts is not None]),
                      "elapsed": resolution([r.prog.elapsed for r in records
                                             if r.prog.elapsed is not None])}

    def run(self) -> dict[str, Any]:
        """Walk every item; returns the facts."""
        for k, item in enumerate(self.items):
            self.j.start(item.t0)
            if not isinstance(item, Record) and not (
                    isinstance(item, Mark) and item.kind not in _MARKS):  # a word, not an event
                self._send()
            if isinstance(item, Record):
                self._record(k, item)
            elif isinstance(item, Save):
                self._save(item, self._cut_short(k, item), unfinished(self.items, k), k)
            elif isinstance(item, Restore):
                self._restore(k, item)
            elif isinstance(item, Interruption):
                self._interruption(item)
            elif isinstance(item, Mark):
                self._mark(k, item)
            if self.deferred is not None and self.deferred[0] == k:
                self._deferred_commit(item)
        self._send()
        if self.open is not None:
            self._end_interrupted(*self.open)
        if self.retracted:
            self.notes.append(f"{self.retracted} error report(s) were followed by more progress "
                              "without a restart: not counted as interruptions")
        for r in self.restarts:
            r.pop("_restore", None)
        return {"saves": self.saves, "restarts": self.restarts, "hangs": self.hangs,
                "interruptions": self.interruptions, "step_times": self.step_times}

    # -- progress ------------------------------------------------------------------------------

    def _record(self, k: int, rec: Record) -> None:
        last = self.last
        back = last is not None and rec.glob < last.glob and not self.restarted
        if self.open is not None and not back:  # progress went on: that error did not stop it
            self.interruptions.remove(self.open[1])
            self.retracted += 1
            self.open = None
        if back:  # an error right before the counter goes back (a DistBackendError) stopped it
            assert last is not None
            self.notes.append(f"line {rec.line}: step {rec.glob} after {last.glob} with no "
                              "restart line: read as a restart")
            if self.open is None:
                self.interruptions.append({"after_step": last.glob, "cause": "unknown",
                                           "layer": names.LAYER_OBSERVABILITY, "line": rec.line,
                                           "text": None})
            self._restart(k, rec.t0, rec.line, rec.resumed)
        elif self.j.state == "interrupted":
            self._restart(k, rec.t0, rec.line, rec.resumed)
        elif last is None and rec.resumed is not None and not self.restarts:
            self.restarts.append({"resumed_from_step": rec.resumed, "lost_steps": None,
                                  "line": rec.line, "opens_log": True, "_restore": None})
        if self.restarted:
            self._send()
        self.j.close_phase(rec.t0)
        self._pause(rec, k)
        self._save_pause(rec)
        if rec.step_s is not None and not rec.warm and rec.parts:  # each step's own time
            self.step_times += rec.parts
            self.window += rec.parts
        elif rec.step_s is not None and not rec.warm:
            self.step_times.append(rec.step_s)
            self.window.append(rec.step_s)
        self.unsent = rec
        self._proven_commit(rec)
        if self.unsent is not None and rec.t1 - self.j.last_t >= self._interval(rec):
            self._send()
        self.last, self.last_k, self.progressed, self.restarted = rec, k, True, False

    def _interval(self, rec: Record) -> float:
        """The least time the records since the last steps event must span to be sent: a
        bar's, a second (COALESCE_S); a line's that prints its step time, none; a line's timed
        by the clock, CLOCK_TICKS ticks of it (whole-second stamps: 100 s, so a window of
        8 steps in 7 or 8 s is not read as steps 14 % slower)."""
        if rec.prog.bar:
            return COALESCE_S
        clock = CLOCKED.get(rec.source)
        return 0.0 if clock is None else CLOCK_TICKS * self.ticks[clock]

    def _send(self) -> None:
        """Write the `steps` event of the records since the last one (bars print a line per
        step and whole seconds: their records are sent together, with their median step
        time; a line log's record is sent alone, with the step time it gives). The step time
        is stated, not left to the calculator to measure between events, so the slowdowns
        filed are those of the log's own intervals whatever the clock placed around them (a
        save's end and the next line's stamp)."""
        rec, self.unsent = self.unsent, None
        if rec is None:
            return
        fields: dict[str, Any] = {"step": rec.glob}
        if self.window and (rec.prog.bar or rec.source not in CLOCKED):  # else: the clock's
            fields["step_time_s"] = round(median(self.window), 9)
        self.window = []
        self.j.emit(rec.t1, "steps", **fields)

    def _proven_commit(self, rec: Record) -> None:
        """Write the checkpoint a later restore proves, when this record passes its step."""
        step = self.commits.get(rec.run)
        if step is None or self.j.committed >= step or rec.glob < step:
            return
        before = self.last.glob if self.last is not None and self.last.run == rec.run else None
        share = 1.0 if before is None or rec.glob == before else (step - before) / (
            rec.glob - before)
        t = rec.t0 + max(0.0, min(1.0, share)) * (rec.t1 - rec.t0)
        self._send() if rec.glob == step else self.j.emit(t, "steps", step=step)
        self.j.commit(t, step)
        self.pending_pause = (step, t)

    # -- events --------------------------------------------------------------------------------

    def _cut_short(self, k: int, save: Save) -> Interruption | bool | None:
        """The stop that follows a save with no end line before any progress, on a later line
        (the save was begun, not finished, and commits nothing), else None. A stop glued to
        the save's own line came after more output of the job (mmcv's evaluation bar drawn
        after the save, then the shell's `Killed`). True when the log ends inside a save to a
        temporary target (`items.temporary`: HF's `Saving model checkpoint to
        …/tmp-checkpoint-40`, its config file written, then nothing): the rename that commits
        it is not shown, so no commit is proven; also where the log's earlier saves of the same
        words showed their writes and this one shows none (`story.ends_unshown`). (Else a save
        to its own name that the log ends in is counted: a job that goes on prints nothing more
        when the save returns.)"""
        if save.ended:
            return None
        for item in self.items[k + 1:]:
            if isinstance(item, Interruption):
                return item if item.line != save.line else None
            if not isinstance(item, Save):
                return None
        saves = [x for x in self.items if isinstance(x, Save)]
        return True if temporary(save.path) or ends_unshown(saves, save) else None

    def _save(self, save: Save, stop: Interruption | bool | None = None,
              unfinished: bool = False, k: int | None = None) -> None:
        """A save that a stop follows commits nothing; when the stop is an error, not a hang
        (Caffe's `Snapshotting to …` then glog's fatal `Check failed:` of the write, a
        traceback out of torch.save), the save failed and is not listed either. A save the
        log ends inside (`stop` True) is listed and commits nothing; one begun before any step
        where the log ends, naming nothing it wrote (`unfinished`), is not listed; nor is one
        that names no step after the error of a launch that never stepped (a restart since the
        last progress: csm-1b's `Saved partial model to …model_partial.safetensors despite
        errors` after a traceback, fresh13 P07): the state it writes holds no trained step."""
        if self.j.state != "running":
            return
        self.j.open_phase(save.t0, "checkpoint_save")
        self.j.close_phase(save.t1)
        if self.restarted and self.open is not None and not save.named:
            self.notes.append(f"line {save.line}: a save after the error of a launch that never "
                              "stepped holds no trained step: not counted as a checkpoint save")
            return
        if unfinished:
            self.notes.append(f"line {save.line}: a save begun where the log ends, not seen "
                              "to finish: not counted as a checkpoint save")
            return
        step = save.step if save.step is not None else (self.last.glob if self.last else None)
        failed = save.failed_line or (stop.line if isinstance(stop, Interruption)
                                      and not stop.hang else 0)
        if failed:  # said failed, by its own line or an error that stops it (newcomer3 #3)
            self.notes.append(f"line {save.line}: a save begun and failed (line {failed}): "
                              "not counted as a checkpoint save")
            return
        if stop is True:
            self.notes.append(f"line {save.line}: the log ends inside a save to a temporary "
                              f"target ({save.path}): the rename that commits it is not shown, "
                              "so it is not counted as a commit" if temporary(save.path) else
                              f"line {save.line}: the log ends inside a save whose writes are "
                              "not shown (its earlier saves printed theirs): not counted as a "
                              "commit")
        if step is not None and stop is None and not (
                self.last is not None and self.last.run in self.unrestored):
            self._commit_save(save, int(step), k)
        seconds = round(save.seconds, 6) if save.seconds is not None else (
            round(save.t1 - save.t0, 6) if (save.start_ts is not None or save.lines >= 2)
            and (save.t1 > save.t0 or _stamped_both(save)) else None)
        self.saves.append({"step": step, "seconds": seconds, "line": save.line or None,
                           **({"file": save.named_path} if not save.line else {})})

    def _commit_save(self, save: Save, step: int, k: int | None) -> None:
        """Commit a save's step: at its end, or after the records of steps up to it that the log
        prints after the save's line (`commits.trailing`: Keras's ModelCheckpoint line before
        the epoch's final bar), so their time is committed, not left uncommitted. A save whose
        step is unknown (the last step printed is taken) moves nothing, nor do records that end
        where the save does (fairseq's epoch summary, stamped with the save's end, adds no
        time: the commit stays before its steps event, as the calculator has always read it)."""
        after = trailing(self.items, k, save.step, self.last, self.from_zero) if k is not None \
            else None
        if after is None or self.items[after].t1 <= save.t1:  # they add no time: nothing moves
            self.j.commit(save.t1, step)
        else:
            self.deferred = (after, step)

    def _deferred_commit(self, rec: Record) -> None:
        """Write the commit `_commit_save` moved to the end of the record `rec`. The steps
        events stay as they were (a bar's records still sent once a second): the commit only
        moves, so the calculator commits the progress up to it, slowdown windows unchanged."""
        assert self.deferred is not None
        step, self.deferred = self.deferred[1], None
        if self.j.state == "running" and self.j.committed < step:  # a restore proved it meanwhile
            self.j.commit(rec.t1, step)

    def _restore(self, k: int, item: Restore) -> None:
        if self.open is None and self.j.state == "running" and self.progressed and (
                self.last is not None):  # no stop line: the restore is the evidence of the stop
            self.interruptions.append({"after_step": self.last.glob, "cause": "unknown",
                                       "layer": names.LAYER_OBSERVABILITY, "line": item.line,
                                       "text": None})
            self._restart(k, item.t0, item.line)
        elif self.open is not None or self.j.state in ("interrupted", "completed") or (
                self.progressed and self.last is not None) or self.completed:
            self._restart(k, item.t0, item.line)
        elif item.resets or (item.step == 0 and not item.saved_step) or self.restarted:
            pass  # initial weights before any progress (a fine-tune), or a restart's own lines
        elif not self.restarts or self.restarts[-1].get("_restore") is not item:
            self.restarts.append({"resumed_from_step": item.step, "lost_steps": None,
                                  "line": item.line, "opens_log": True, "_restore": item})
        if item.t1 > item.t0 or self.j.phase is None:
            self.j.open_phase(item.t0, "checkpoint_restore")
            self.j.close_phase(item.t1)
        # else: a load with no time of its own (unstamped lines) inside the start-up leaves the
        # start-up's phase open to the next progress line: the load is not progress either
        if item.step and self.j.committed < item.step and not item.resets:  # step 0: none trained
            self.j.commit(item.t1, item.step, head_restore=True)  # before it (else a restart)

    def _interruption(self, item: Interruption) -> None:
        after = self.last.glob if self.last is not None else None
        silent = self._silent_before(item)
        layer = item.layer
        if silent and item.cause == "time_limit":  # the job's stall ran its time out
            layer = names.LAYER_TRAINING
        entry = {"after_step": after, "cause": item.cause, "layer": layer,
                 "line": item.line, "text": item.text}
        self.interruptions.append(entry)
        if not self.completed:
            self.open = (item, entry)
        if item.hang:
            self.hangs.append({"after_step": after, "cause": item.cause, "line": item.line,
                               "seconds": round(item.ran_for_s, 3)
                               if item.ran_for_s is not None else None})
            self._stalled(item.t0, item.t1)  # the time a watchdog says it waited: not progress

    def _mark(self, k: int, item: Mark) -> None:
        kind, line = item.kind, item.obs.line
        if kind == "init":
            t = item.t0
            if self.open is not None or self.j.state in ("interrupted", "completed"):
                t = self._restart(k, item.t0, line)
            elif self.progressed:
                self.interruptions.append({
                    "after_step": self.last.glob if self.last else None, "cause": "unknown",
                    "layer": names.LAYER_OBSERVABILITY, "line": line, "text": None})
                t = self._restart(k, item.t0, line)
            self.j.open_phase(t, "initialization")
        elif kind == "train_start":
            self.j.close_phase(item.t0)
        elif kind == "restart" and (self.open is not None or not self.restarted):
            if self.open is None:  # the launcher's own line is the evidence that the run stopped
                self.interruptions.append({
                    "after_step": self.last.glob if self.last else None, "cause": "unknown",
                    "layer": names.LAYER_OBSERVABILITY, "line": line, "text": None})
            self._restart(k, item.t0, line)
        elif kind == "relaunch":  # each launch is one (`relaunch.reopenings`)
            if self.open is None and not self.completed:
                self.interruptions.append({
                    "after_step": self.last.glob if self.last else None, "cause": "unknown",
                    "layer": names.LAYER_OBSERVABILITY, "line": line, "text": None})
            self._restart(k, item.t0, line)
        elif kind == "end" and self.j.state == "running":
            self.j.close_phase(item.t0)
            self.completed = True
        elif kind == "alive" and self.last is not None:
            self._alive(item)
