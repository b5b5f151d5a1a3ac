"""Event observations → the items of a log's story: saves, restores, stops and marks (pure).

`group_events(observations, records, checkpoint_step) -> list[item]` merges the events with the
progress records in log order and groups the lines of one event:

- one `Save` per checkpoint save, from its start, part, end and duration lines (a line saying a
  file under the folder the start line names was saved is a part: HF's `Saving model
  checkpoint to out/tmp-checkpoint-40`, then `Configuration saved in
  out/tmp-checkpoint-40/config.json` before the weights and optimizer are written); the same save
  printed by several processes or handlers (`Saving checkpoint at step 9485` by every host, a
  line doubled by two logging handlers) is one save: a start with the step of an open save, no
  progress between, joins it; a line that printed the same step again between them (dropped as
  a duplicate record) is progress between when neither save line names its step (vak's
  `Step 5000 is a checkpoint step` after its validation step's best-model save); an end line
  worded as the ended save's, a number changed, after other lines is another save (`_again`),
  and an epoch marker closes the open save (not one of the epoch the save's own lines name:
  `_own_epoch`); a save whose lines lie inside a later save's
  printed duration, only saves between, is a part of it (`story.nested_saves`: fairseq's
  shard writes inside its `Saved checkpoint … (writing took 49.16 seconds)`); a line after the
  end line saying the same file was saved restates the save then open (`_restated`); an end
  line saying a best checkpoint was saved, after other lines, is not the end of an open save
  whose start does not say best (`story.best_apart`: MMEngine's periodic, then best save); a
  `closes` line (the next `Saving <metrics>` banner right after a save's lone start line) ends
  that save at its stamp (`_closes`); an end line naming a checkpoint file that drops the number
  the ended save's file carries is another save (`story.other_file`: the final save right after
  the last periodic one, `…_epoch40.pth` then `…_final.pth`);
- one `Restore` per checkpoint load (`Restoring states …`, `resumed epoch 7, iter 49231`); a
  train_start line closes it (a load line after the loop began is another load); a line whose
  rule has an `opening` group (TF1's `Restoring parameters from`, printed for evaluations' loads
  too) is a load only before the first progress since the log's start, a launch or a stop line;
- one `Interruption` per stop, from every error line that tells it (the highest priority cause
  wins); progress after it without a restart retracts it (the walk decides);
- a `Mark` for init, train_start, restart (launcher), alive and end lines.

The step of each save its lines do not name is resolved after grouping (`savesteps`: its
docstring gives the order of the sources, and where a restore's step is read from).
"""

from __future__ import annotations

import re
from collections.abc import Callable
from typing import Any

from gpuslo.goodput.logs.parsedlog import Obs
from gpuslo.goodput.logs.progress import Record
from gpuslo.goodput.logs.savesteps import off_counter, save_steps
from gpuslo.goodput.logs.story import (  # noqa: F401 - re-exported
    _DIGITS,
    MAX_STEP,
    Interruption,
    Mark,
    Restore,
    Save,
    _int,
    again_worded,
    best_apart,
    inside,
    line_path_step,
    named_in_path,
    nested_saves,
    other_file,
    path_step,
    restates,
    same_file,
    started_again,
    temporary,
    unfinished,
)
from gpuslo.goodput.logs.tokens import number
from gpuslo.goodput.logs.xidlayer import is_fatal_xid, xid_layer

_VALIDATED = re.compile(r"(?i)\bval(?:id(?:ation)?)?(?:[_/.-]\w+)?['\"]? (?:reached|improved)\b")
_OPTIMIZER = re.compile(r"(?i)\boptimi[sz]er\b")  # a save line writing the optimizer state


class _Grouper:
    """The state of `group_events` (see the module docstring)."""

    def __init__(self, patterns: tuple[re.Pattern[str], ...]) -> None:
        self.patterns = patterns
        self.items: list[Any] = []
        self.last: Record | None = None
        self.hint: int | None = None
        self.save: Save | None = None
        self.last_save: Save | None = None
        self.ended: Save | None = None  # the save open when an end line came (`_restated`)
        self.restore: Restore | None = None
        self.intr: Interruption | None = None
        self.saves: list[Save] = []
        self.again: list[int] = []  # seqs of the lines that repeated the last step
        self.headers: dict[str, tuple[int, int]] = {}  # marker shape -> (epoch, items then)
        self.epoch: int | None = None  # the last epoch a marker printed
        self.load_seq = -1  # the seq of the last restore line
        self.stepped = False  # progress since the log's start, a launch line or a stop line

    def record(self, rec: Record) -> None:
        self.items.append(rec)
        self.last, self.hint, self.again, self.stepped = rec, None, rec.again, True
        self.save = self.restore = self.intr = self.ended = None

    def _repeated_since(self, save: Save, o: Obs, step: int | None) -> bool:
        """A line printed the current step again between `save` and this start line that names
        no step (vak's `Step 5000 is a validation step` → save of the best model → `Step 5000 is
        a checkpoint step` → the periodic save): the loop went on, so this is another save."""
        return step is None and save.step is None and any(
            save.seq < seq < o.seq for seq in self.again)

    def event(self, o: Obs) -> None:
        if o.kind == "hint":
            self.hint = _int(o.data.get("step"))
        elif o.kind == "save":
            self._save(o)
        elif o.kind == "restore":
            self._restore(o)
        elif o.kind == "interruption":
            self._interruption(o)
        elif o.kind == "epoch":
            if not self._own_epoch(o):
                self.save = None  # the loop went on: a later save line is another save's
            self._header_again(o)
        else:
            if o.kind in ("init", "restart", "end"):
                self.ended = self.save if o.kind == "end" else None
                self.intr = self.save = None
                self.stepped = self.stepped and o.kind == "end"  # a launch: none since
            elif o.kind == "train_start":  # the loop began: a load line after it is another
                self.restore = None  # load (`relaunch._loaded_between`)
            self.items.append(Mark(o.kind, o))

    def _own_epoch(self, o: Obs) -> bool:
        """Whether the epoch marker `o` prints the epoch the open save names on its own lines
        (each line of fairseq-lua's save, `| checkpoint 010 | epoch 010 | 0050070 updates |
        saved model to …` then `… | saved new best model to …`, is also a marker of epoch 10):
        no loop past the save, so it stays open (newcomer6 #14: one save, not two)."""
        save, epoch = self.save, _int(o.data.get("epoch"))
        return save is not None and epoch is not None and save.epoch == epoch and (
            self.last is save.after)

    def _header_again(self, o: Obs) -> None:
        """An epoch marker of one shape (Keras's `Epoch 3/5`) printed again for the epoch the
        run is in, after progress and a stop line since its last print (`Killed`, then
        BackupAndRestore's relaunch prints `Epoch 3/5` again): a second run header, so a
        restart (README: restarts are read from a second run header). Another shape printing
        the same epoch (`Epoch 3: val_loss improved ...`) is no repeat; an epoch that goes back
        is the counter's restart, which the walk reads from the steps."""
        epoch = _int(o.data.get("epoch"))
        if epoch is None:
            return
        shape = _DIGITS.sub("#", o.text)
        before = self.headers.get(shape)
        latest, self.epoch = self.epoch, epoch
        self.headers[shape] = (epoch, len(self.items))
        if before is None or not epoch == before[0] == latest:
            return
        since = self.items[before[1]:]
        if any(isinstance(x, Record) for x in since) and any(
                isinstance(x, Interruption) for x in since):
            self.intr = self.save = None
            self.items.append(Mark("restart", o))

    def _save(self, o: Obs) -> None:
        d, phase = o.data, o.rule.phase if o.rule else ""
        step = _int(d.get("step"))
        if step is None and d.get("path"):
            step = path_step(d["path"], self.patterns)
            step = line_path_step(o.text, d["path"], self.patterns) if step is None else step
        seconds = number(d.get("seconds", "")) if d.get("seconds") else None
        if seconds is None and d.get("ms"):
            seconds = (number(d["ms"]) or 0.0) / 1000.0
        if self._restated(o, phase):
            return
        if phase == "closes":
            self._closes(o)
            return
        if phase == "duration":
            target = self.save or self.last_save
            if target is not None and target.seconds is None:
                target.seconds = seconds
            return
        if phase == "failed" and "during" in d:  # a write error: only inside an open save
            last = self.last_save
            target = self.save or (last if last is not None and not last.ended
                                   and last.after is self.last else None)
            if target is not None:
                self._failed(target, o)
            return
        save = self._which_save(o, phase, step, _int(d.get("epoch")))
        save.lines += 1
        if phase == "end" and inside(d.get("path") or "", save.path):
            phase = "part"  # one file of the save written (HF's `Configuration saved in`)
        if phase == "start":
            save.start_ts = save.start_ts if save.start_ts is not None else o.ts
            save.path = save.path or d.get("path") or ""
            save.start_text = save.start_text or o.text
        elif phase == "part" and o.ts is not None:
            save.part_ts = o.ts if save.part_ts is None else max(save.part_ts, o.ts)
        elif phase == "end":
            save.end_ts, save.ended, save.end_text, save.end_seq = o.ts, True, o.text, o.seq
            if o.seq > save.failed_seq:  # a later line says it ended: a retry that succeeded
                save.failed_line, save.failed_seq = 0, -1
        elif phase == "failed":
            self._failed(save, o)
        save.written += phase in ("part", "end")
        save.seconds = seconds if seconds is not None else save.seconds
        save.step = step if step is not None else save.step
        save.named = save.named or _int(d.get("step")) is not None
        save.validated = save.validated or bool(_VALIDATED.search(o.text))
        save.state = save.state or bool(_OPTIMIZER.search(o.text))
        save.epoch = save.epoch if save.epoch is not None else _int(d.get("epoch"))
        save.named_path = save.named_path or d.get("path", "")

    def _restated(self, o: Obs, phase: str) -> bool:
        """An end line after the run's end line naming the file the save open at that end line
        wrote (`restates`), no progress, launch or save line between, restates that save: it
        joins it as one more of its lines and opens no save (an XGBoost pipeline's summary
        `Model saved to: output/linear/xgboost_model.pkl` after `Saved model to:
        output\\linear\\…pkl` and `Training Complete!`, fresh12 O19, one save by its facts); a
        save to another target after the end is another (HF's final `Saving model checkpoint to
        <output dir>` after `checkpoint-2100`, fresh15 R05). The same question as
        `notices.said_again`, asked while grouping of the lines after an end line only; that
        rule takes, after grouping, the one-line saves said again after anything else that
        closed a save (its docstring says how the two differ)."""
        ended = self.ended
        if self.save is not None or ended is None or phase != "end" or not restates(
                o.data.get("path") or "", ended):
            return False
        ended.lines += 1
        return True

    def _closes(self, o: Obs) -> None:
        """A save of something that is no checkpoint begun on the line right after the open
        save's lone start line: the checkpoint's write returned at this line's stamp (its
        `part_ts`: `timeline._save` ends the save there); nothing when no such save is open."""
        save = self.save
        if save is None or save.ended or save.lines != 1 or save.start_ts is None or (
                o.ts is None or o.seq != save.seq + 1):
            return
        save.part_ts = o.ts

    @staticmethod
    def _failed(save: Save, o: Obs) -> None:
        """A line says `save` failed: it ends there and commits nothing (newcomer3 #3)."""
        save.end_ts = o.ts if not save.ended or save.end_ts is None else save.end_ts
        save.ended, save.failed_line, save.failed_seq = True, o.line, o.seq

    def _which_save(self, o: Obs, phase: str, step: int | None, epoch: int | None = None
                    ) -> Save:
        """The save this line belongs to: the open one (no progress since) when the step
        and the epoch agree, the last unfinished one for an end line (or for a start with no
        progress since that names no other step), else a new one."""
        current = self.save
        agrees = current is not None and (step is None or current.step in (None, step)) and (
            epoch is None or current.epoch in (None, epoch)) and not again_worded(
            current, o, phase) and not started_again(current, o, phase) and not best_apart(
            current, o, phase) and not other_file(current, o, phase)
        if current is not None and agrees and (
                not current.ended or (step is not None and current.step == step)
                or phase != "start") and not (
                phase == "start" and self._repeated_since(current, o, step)):
            return current
        last = self.last_save
        if last is not None and not last.ended and not best_apart(last, o, phase) and (
                phase != "start" or self._begun_again(last, o, step, epoch)):
            # an end for the last unfinished save; or a start after it with no progress between
            # (its own framework's begin, after a stop line: accelerate's `Saving current state
            # to …/checkpoint-6928`, the watchdog, DeepSpeed's `[Torch] Checkpoint
            # pytorch_model is about to be saved!`): one save, begun twice
            self.save = last
            return last
        save = Save(o.line, step, o.seq, prev_ts=o.prev_ts, after=self.last, hint=self.hint)
        self.items.append(save)
        self.saves.append(save)
        self.save = self.last_save = save
        return save

    def _begun_again(self, last: Save, o: Obs, step: int | None, epoch: int | None) -> bool:
        """Whether a start line after the unfinished save `last` begins it again: no progress
        between, and no other step, epoch or file named (nor the step printed again between:
        `_repeated_since`), nor a checkpoint loaded between (so-vits-svc's relaunch loads
        `G_10000.pth`, prints step 10000 again, a duplicate record, and saves step 10000 once
        more: another save, fresh15 R18)."""
        path = o.data.get("path") or ""
        return (last.after is self.last and step in (None, last.step)
                and not last.seq < self.load_seq < o.seq
                and epoch in (None, last.epoch) and not (path and last.path and path != last.path)
                and not self._repeated_since(last, o, step)
                and not started_again(last, o, "start"))

    def _restore(self, o: Obs) -> None:
        d, phase = o.data, o.rule.phase if o.rule else ""
        if phase == "closes" and (self.restore is None or self.restore.ended):
            return  # no load begun since the last progress: the end of a fresh initialisation
        if "opening" in d and self.stepped:
            return  # a load line also printed for evaluations: only a launch's own is a restore
        step = _int(d.get("step"))
        nxt = _int(d.get("next"))  # the first step the resumed loop runs: the one before it
        step = nxt - 1 if step is None and nxt else step  # was restored
        named = step is not None
        if step is None and d.get("path"):
            step = path_step(d["path"], self.patterns)
            step = line_path_step(o.text, d["path"], self.patterns) if step is None else step
        current = self.restore
        if current is None or (current.ended and phase == "start") or (
                current.ended and step is not None and current.step not in (None, step)):
            current = self.restore = Restore(o.line, None, d.get("path", ""))
            self.items.append(current)
        if phase != "start" and step == 0 and current.step:
            current.resets = True  # the counter set back to 0 by the load: initial weights
        if step is not None and (named or current.step is None):  # a line says it, or only
            current.saved_step = not named  # its file's name does (`model.ckpt-0`)
        current.step = step if step is not None else current.step
        if phase == "start":
            current.start_ts = current.start_ts if current.start_ts is not None else o.ts
        else:
            current.end_ts = current.end_ts if current.ended else o.ts
            current.ended = True
        if d.get("seconds"):
            current.seconds = number(d["seconds"])
        self.save, self.load_seq = None, o.seq

    def _interruption(self, o: Obs) -> None:
        rule = o.rule
        assert rule is not None
        ran_for = number(o.data.get("ran_for_ms", "")) if o.data.get("ran_for_ms") else None
        ran_for_s = ran_for / 1000.0 if ran_for is not None else None
        layer = xid_layer(o.data.get("xid"), rule.layer) if rule.cause == "xid" else rule.layer
        intr = self.intr
        if intr is not None:
            # a node Xid after an application one of the same stop is the stop's cause
            node_xid = (rule.cause == intr.cause == "xid" and intr.layer == "training"
                        and is_fatal_xid(o.data.get("xid")))
            if rule.priority > intr.priority or node_xid:
                intr.cause, intr.layer, intr.priority = rule.cause, layer, rule.priority
                intr.line, intr.text = o.line, o.text
            intr.hang = intr.hang or rule.hang
            if ran_for_s is not None:
                intr.ran_for_s = max(intr.ran_for_s or 0.0, ran_for_s)
            intr.ts = intr.ts if intr.ts is not None else o.ts
            return
        self.intr = Interruption(o.line, rule.cause, layer, rule.priority, o.text, o.ts,
                                 rule.hang, ran_for_s)
        self.items.append(self.intr)
        self.save, self.stepped = None, False  # a load after a stop line opens a launch


def group_events(observations: list[Obs], records: list[Record],
                 patterns: tuple[re.Pattern[str], ...],
                 leave_out: Callable[[list[Any]], list[Save]] | None = None) -> list[Any]:
    """The log's items in order (see the module docstring); `leave_out(items)` names saves
    that commit nothing, taken out before the steps of the others are resolved
    (`notices.leave_out`)."""
    grouper = _Grouper(patterns)
    k = 0
    for rec in records:
        while k < len(observations) and observations[k].seq < rec.prog.seq:
            grouper.event(observations[k])
            k += 1
        grouper.record(rec)
    for o in observations[k:]:
        grouper.event(o)
    for notice in leave_out(grouper.items) if leave_out is not None else []:
        grouper.items.remove(notice)
        grouper.saves.remove(notice)
    nested_saves(grouper.items, grouper.saves)
    off_counter(grouper.items)
    save_steps(grouper.items, grouper.saves)
    return grouper.items
