"""The walk's time gaps (`gpuslo.goodput.logs.walk.Walk` is a `Gaps`): the pauses a log shows
between its progress lines, each booked as what it was, never as progress.

- a pause right after a proven commit is that save (`_save_pause`: Lightning saves silently);
- a pause between two stamped progress lines with only saves of no time of their own between
  them (Megatron's `saving checkpoint at iteration N` / `successfully saved checkpoint`, unstamped
  between stamped iteration lines) is bounded by those stamps: what exceeds the step time, under
  the hang threshold, is booked `checkpoint_save` with a note that it is an upper bound
  (`_save_gap`); where other lines (an eval's summary) share it with the saves, `other`; a
  hang stays a hang, and a gap that may hold anything else is left alone;
- a pause between two progress lines of at least `hang_min_s` and 10 x the step time is a hang,
  booked `other` (`_pause`); stamps that jump forward while the printed step times stay are a
  clock jump or a silent stall, `other` too (`_jump`);
- a silence before a scheduler's stop line is a hang until the stop (`_silent_before`), as is
  one until a scheduler's pulse (`_alive`); `_stalled` books it.

The walk owns the state these read and write: `j` (the `Journal`), `last` (the last progress
record), `step_times`, `hang_min_s`, `hangs`, `notes`, `open` (an interruption not yet followed
by a restart), `pending_pause` and `_send()` (the progress held for the next steps event).
"""

from __future__ import annotations

from statistics import median

from gpuslo.goodput.logs.commits import EVENT_MARKS
from gpuslo.goodput.logs.items import Interruption, Mark, Save
from gpuslo.goodput.logs.progress import Record

# scheduler stops a silence before which is a hang (Slurm's time limit, a preemption, ...)
CANCELLED = ("time_limit", "preemption", "cancelled", "exit_signal")
SAVE_PAUSE_MIN_S = 1.0
# a save bounded by the stamps around it is read only where it adds more than this share of its
# interval's own time (and more than a step): less is within the steps' own variation
SAVE_GAP_SHARE = 0.1


class Gaps:
    """The gap rules of the module docstring, as methods of the walk."""

    def _save_pause(self, rec: Record) -> None:
        """The pause right after a proven commit is its save (Lightning saves silently)."""
        pending, self.pending_pause = self.pending_pause, None
        if pending is None or not rec.delta or rec.step_s is None or rec.glob <= pending[0]:
            return
        pause = rec.t1 - rec.t0 - rec.delta * rec.step_s
        if pause >= max(SAVE_PAUSE_MIN_S, 10 * rec.delta * rec.step_s):
            self._send()
            self.j.open_phase(pending[1], "checkpoint_save")
            self.j.close_phase(pending[1] + pause)

    def _pause(self, rec: Record, k: int) -> None:
        """A long pause between two progress lines is a hang; a shorter one around saves with
        no time of their own is those saves, at most (`_save_gap`). `k`: `rec`'s index."""
        if self.last is None or not rec.delta or rec.step_s is None or not self.step_times:
            return
        reference = median(self.step_times[-50:])
        pause = rec.t1 - rec.t0 - reference * rec.delta
        hung = pause >= self.hang_min_s and pause >= 10 * reference * rec.delta
        if hung:
            self.hangs.append({"after_step": self.last.glob, "seconds": round(pause, 3),
                               "cause": "no_progress", "line": rec.line})
            # time beyond the step time that the log explains as a hang is not progress, even
            # when the next line prints the whole pause as its step time (Megatron's elapsed
            # time per iteration): it is booked `other`, first in the interval
            self._send()
            self.j.open_phase(rec.t0, "other")
            self.j.close_phase(rec.t0 + pause)
        if not self._jump(rec, reference) and not hung:
            self._save_gap(rec, k, reference)

    def _save_gap(self, rec: Record, k: int, reference: float) -> None:
        """The pause between the stamped records `last` and `rec` (index `k`: their stamps' interval
        beyond `rec.delta` steps at the `reference` step time, under the hang threshold,
        neither a hang nor a jump `_pause` booked), where every line between them is a line
        of a save listed with no time of its own (no stamps on its lines, no printed
        seconds, no timer): Megatron's unstamped `saving checkpoint at iteration N` /
        `successfully saved checkpoint ... iteration N` between stamped iteration lines.
        Booked `checkpoint_save`, first in the interval, and noted as an upper bound: the
        stamps bound the save, they do not measure it. Where other lines share the gap with
        the saves (an eval's summary: nanoGPT's `step 3000: train loss ..., val loss ...`
        before its `saving checkpoint to out`, the next line's own `time 35392.33ms` against
        ~1.1 s steps, newcomer6 #20) the pause is no step's either: `other`, noted, not
        split. Left alone (progress, as before) where the gap may be something else: another
        item between (a restore, a stop, an init or end line), a restart or an open stop,
        records not both stamped, or a save chosen by a validation metric (`Save.validated`:
        Lightning's `'val_loss' reached ..., saving model to`, so a validation shares the
        gap: noted). Under max(1 s, a step, SAVE_GAP_SHARE of the interval) it is the steps'
        own variation."""
        last = self.last
        if (last is None or last.ts is None or rec.ts is None or rec.run != last.run
                or self.restarted or self.open is not None or self.j.state != "running"):
            return
        start = max(last.t1, self.j.last_t)
        pause = rec.t1 - start - reference * rec.delta
        if pause <= max(SAVE_PAUSE_MIN_S, reference, SAVE_GAP_SHARE * reference * rec.delta) or (
                pause >= self.hang_min_s and pause >= 10 * reference * rec.delta):
            return  # the steps' own variation; or long enough to be a hang: not read as a save
        between = [x for x in self.items[self.last_k + 1:k]
                   if not (isinstance(x, Mark) and x.kind not in EVENT_MARKS)]  # words: no event
        if not between or not all(isinstance(x, Save) and x.start_ts is None and x.end_ts is None
                                  and x.part_ts is None for x in between):
            return  # another item, or a stamped save line (its stamps place it: not this rule)
        shared = sum(x.lines for x in between) != rec.prog.seq - last.tail.seq - 1
        lines = {x.line for x in between}
        listed = [s for s in self.saves[-len(between):] if s["line"] in lines]
        if not listed or any(s["seconds"] is not None for s in listed):
            return  # failed, or timed by its own lines: the save rules booked it
        steps = ", ".join(str(s["step"]) for s in listed)
        bound = (f"line {rec.line}: {pause:g} s beyond {rec.delta} steps at the typical "
                 f"{reference:g} s between the stamped lines {last.line} and {rec.line}, around "
                 f"the save of step {steps} (no time of its own)")
        if shared:  # lines between that are not the saves' (nanoGPT's eval summary)
            self._send()
            self.j.open_phase(start, "other")
            self.j.close_phase(start + pause)
            self.notes.append(f"{bound} and other lines between (an evaluation's): booked as "
                              "other, not progress, and not split")
            return
        if any(x.validated for x in between):
            self.notes.append(f"{bound}: a validation metric chose the save, so the gap holds "
                              "the validation too; not split, left as progress")
            return
        self._send()
        self.j.open_phase(start, "checkpoint_save")
        self.j.close_phase(start + pause)
        self.notes.append(f"{bound}: booked as checkpoint_save, an upper bound (the stamps "
                          "bound the save, they do not measure it)")

    def _jump(self, rec: Record, reference: float) -> bool:
        """Time between the journal's last event and a record's start that the record's own
        step time does not cover (the stamps jump forward while the printed step times stay):
        the clock jumped or the job stalled without a word; either way it is not progress.
        Over `hang_min_s` and 10 × the step time it is booked `other`, and noted (True)."""
        start = max(self.j.last_t, self.last.t1) if self.last is not None else self.j.last_t
        gap = rec.t0 - start
        if gap < self.hang_min_s or gap < 10 * reference * max(rec.delta or 1, 1):
            return False
        self._send()
        self.j.open_phase(start, "other")
        self.j.close_phase(rec.t0)
        self.notes.append(f"line {rec.line}: the stamps jump {gap:g} s forward while the steps' "
                          "printed times do not (a clock jump, or a silent stall): booked as "
                          "other, not as progress")
        return True

    def _silent_before(self, item: Interruption) -> bool:
        """A scheduler's stop line (`_CANCELLED`: Slurm's `CANCELLED ... DUE TO TIME LIMIT`, a
        preemption) after a silence since the last progress of at least `hang_min_s` and 10 x
        the step time: the job hung, printing nothing, until it was stopped. The silence is a
        hang, booked `other` (README: a hang runs from the last progress to a watchdog line or
        a later scheduler pulse), not uncommitted progress; the stop line is the interruption.
        True when it was one. The job's own stop (a traceback, `Killed` during a silent eval)
        says nothing of a hang."""
        if item.hang or item.cause not in CANCELLED or self.last is None \
                or not self.step_times or self.open is not None:
            return False
        pause = item.t0 - self.last.t1
        if pause < self.hang_min_s or pause < 10 * median(self.step_times[-50:]):
            return False
        self.hangs.append({"after_step": self.last.glob, "seconds": round(pause, 3),
                           "cause": "no_progress", "line": item.line})
        self._stalled(self.last.t1, item.t0)
        return True

    def _alive(self, item: Mark) -> None:
        assert self.last is not None
        pause = item.t1 - self.last.t1
        if pause < self.hang_min_s or self.open is not None:
            return
        entry = next((h for h in self.hangs if h["cause"] == "no_progress"
                      and h["after_step"] == self.last.glob), None)
        if entry is None:
            self.hangs.append({"after_step": self.last.glob, "seconds": round(pause, 3),
                               "cause": "no_progress", "line": item.obs.line})
        else:
            entry["seconds"] = round(pause, 3)
        self._stalled(self.last.t1, item.t1)  # running, printing no step: not progress

    def _stalled(self, t0: float, t1: float) -> None:
        """Book a hang the log shows (last progress → a watchdog's line, or a scheduler's pulse
        long after it) as `other`, from the journal's last event on: the job held its GPUs
        and made no progress (T02's eval hang under hourly PULSE lines, T11's 7 h before the
        NCCL watchdog fired)."""
        if self.j.state != "running" or t1 <= max(t0, self.j.last_t):
            return
        self._send()
        self.j.open_phase(max(t0, self.j.last_t), "other")
        self.j.close_phase(t1)
