"""The items of a log's story and the steps their paths name (pure): `Save`, `Restore`,
`Interruption` and `Mark` (what `items.group_events` makes of the event lines and the walk
reads), `path_step` / `line_path_step` (the step a checkpoint path names), `temporary`,
`inside`, `same_file` and `restates` (path tests), `nested_saves` (a save inside a later
one's printed duration is part of it), `best_apart` (a best checkpoint's end line after a
periodic save's start) and `unfinished` (a begun save nothing proves finished). Split out
of `items.py`, which re-exports them.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from gpuslo.goodput.logs.parsedlog import Obs
from gpuslo.goodput.logs.progress import Record
from gpuslo.goodput.logs.tokens import number


@dataclass
class Save:
    """One checkpoint save, from its start/part/end/duration lines."""

    line: int
    step: int | None
    seq: int = 0
    epoch: int | None = None
    seconds: float | None = None
    start_ts: float | None = None
    end_ts: float | None = None
    part_ts: float | None = None
    prev_ts: float | None = None
    ended: bool = False
    after: Record | None = None
    hint: int | None = None
    named: bool = False  # a line of the save prints its step (not only its path names it)
    path: str = ""  # where its start line says it writes
    named_path: str = ""  # a path any of its lines names (a bare path printed after the write)
    lines: int = 0
    end_text: str = ""  # its last end line's text and place (`_again`)
    end_seq: int = 0
    validated: bool = False  # its line says a validation metric chose it: a validation ran before
    state: bool = False  # a line of it writes the optimizer state (`notices.model_exports`)
    failed_line: int = 0  # a line said it failed (and no later line of it said it ended): no commit
    failed_seq: int = -1
    start_text: str = ""  # its first start line's text (`ends_unshown`)
    written: int = 0  # its part and end lines (files it says were written, its end)
    t0: float = 0.0
    t1: float = 0.0


@dataclass
class Restore:
    """One checkpoint load (`step` None when the log does not name it). `resets`: its end line
    says the run goes on from step 0 although its start named a later step (Megatron's
    `--finetune`: `loading checkpoint from /pretrained/llama at iteration 100000`, then
    `successfully loaded checkpoint from … at iteration 0`): the weights of another run loaded
    as initial weights, not a resume of this job. `saved_step`: the step is the one its
    checkpoint's file name carries (`model.ckpt-0`, the run's own saver's suffix), not one its
    lines say (`at iteration 0`)."""

    line: int
    step: int | None
    path: str = ""
    start_ts: float | None = None
    end_ts: float | None = None
    seconds: float | None = None
    ended: bool = False
    t0: float = 0.0
    t1: float = 0.0
    resets: bool = False
    saved_step: bool = False


@dataclass
class Interruption:
    """One stop of the job, from every error line that tells it."""

    line: int
    cause: str
    layer: str
    priority: int
    text: str
    ts: float | None
    hang: bool = False
    ran_for_s: float | None = None
    t0: float = 0.0
    t1: float = 0.0


@dataclass
class Mark:
    """A line that only marks a moment: init, train_start, restart (launcher), alive, end."""

    kind: str
    obs: Obs
    t0: float = 0.0
    t1: float = 0.0


MAX_STEP = 10**15  # a step number beyond this is a misread
_DIGITS = re.compile(r"\d+")


def _int(value: Any) -> int | None:
    found = number(str(value)) if value is not None else None
    ok = found is not None and abs(found) <= MAX_STEP and found == int(found)
    return int(found) if ok else None  # type: ignore[arg-type]


def path_step(path: str, patterns: tuple[re.Pattern[str], ...]) -> int | None:
    """The step a checkpoint path names (`checkpoint-500`, `epoch=0-step=2532.ckpt`), else None."""
    for pattern in patterns:
        found = pattern.search(path)
        if found:
            return _int(found.group("step"))
    return None


_PIECES = re.compile(r"""[\s'"`]+""")


def line_path_step(text: str, path: str, patterns: tuple[re.Pattern[str], ...]) -> int | None:
    """The step a checkpoint path names where a space or a quote cut it (`Saved state to
    C:/LORA/W Output\\checkpoint-416`: the path read stops at `W`): each piece of the record from
    the path on that holds a path separator, its edge punctuation stripped; else None."""
    at = text.find(path) if path else -1
    if at < 0:
        return None
    for piece in _PIECES.split(text[at:]):
        piece = piece.strip("()[]{},;:")
        if ("/" in piece or "\\" in piece) and (step := path_step(piece, patterns)) is not None:
            return step
    return None


# A save target whose last part is marked temporary (HF Trainer's `tmp-checkpoint-pe8ry7n_`,
# Orbax's `1000.orbax-checkpoint-tmp-1700000000`) is renamed to the checkpoint when the write is
# done: the rename is the commit.
# Lightning's ModelCheckpoint `'val_loss' reached 2.5 (best 2.5), saving model to`, Keras's
# `val_loss improved from 0.29 to 0.28, saving model to`: the save follows a validation
_TEMPORARY = re.compile(r"(?i)(?:^|[-_.])(?:tmp|temp)(?:[-_.]|$)")


def temporary(path: str) -> bool:
    """Whether a save's target is a temporary name that a rename makes the checkpoint."""
    last = re.split(r"[/\\]", path.rstrip("/\\"))[-1]
    return bool(_TEMPORARY.search(last))


def ends_unshown(saves: list[Save], save: Save) -> bool:
    """Whether the log shows how its saves end and `save`, begun where the log ends, lacks it:
    an earlier save begun in the same words (digits aside) printed part or end lines after its
    start (HF Trainer's `Saving model checkpoint to …/checkpoint-9500`, then `Configuration saved
    in …/checkpoint-9500/config.json`, `Model weights saved in …`: Trainer logs the start before
    it writes), while `save` printed its start alone: its writes were not shown, so it is not
    proven finished (newcomer5 #14). A start line cut where the log ends (`… >> Saving model`)
    is the earlier one's words when they begin with it. A save the log ends in whose earlier
    saves printed their start alone too is counted, as before: the job prints nothing more."""
    if save.written or save.ended or save.seconds is not None or not save.start_text:
        return False
    words = _DIGITS.sub("0", save.start_text)
    return any(s is not save and s.written and s.start_text and _DIGITS.sub(
        "0", s.start_text).startswith(words) for s in saves)


def inside(path: str, folder: str) -> bool:
    """Whether `path` names a file under `folder` (both as the log printed them)."""
    folder = folder.rstrip("/\\")
    return bool(folder) and len(path) > len(folder) + 1 and path.startswith(folder) and (
        path[len(folder)] in "/\\")


def same_file(path: str, other: str) -> bool:
    """Whether two paths as the log printed them name one file: the same parts, whichever
    separator (`output\\linear\\model.pkl`, `output/linear/model.pkl`); False when either is
    empty."""
    parts = [p for p in re.split(r"[/\\]+", path.strip()) if p not in ("", ".")]
    others = [p for p in re.split(r"[/\\]+", other.strip()) if p not in ("", ".")]
    return bool(parts) and parts == others


def restates(path: str, save: Save) -> bool:
    """Whether a later line naming `path` names the file `save` wrote: the first path its lines
    named (a start line's path is one), the same file however printed (`same_file`: fresh12
    O19's `Saved model to: output\\linear\\xgboost_model.pkl`, then `Model saved to:
    output/linear/xgboost_model.pkl`). The one test of a save said again by another line, rank
    or logger (`items._restated`, `notices.said_again`); False when either names none."""
    return same_file(path, save.named_path)


NESTED_SLACK_S = 1.0  # a stamp's resolution: fairseq's are whole seconds


def _within(inner: Save, outer: Save) -> bool:
    """`inner`, listed before `outer` with no progress between, lies inside the time `outer`'s
    own printed seconds count back from its end (begins in it, a stamp's resolution allowed,
    and ends after it began), and names no other step or epoch."""
    if outer.seconds is None or outer.end_ts is None or inner.after is not outer.after:
        return False
    stamps = [t for t in (inner.start_ts, inner.part_ts, inner.end_ts) if t is not None]
    if inner.seconds is not None and inner.end_ts is not None:
        stamps.append(inner.end_ts - inner.seconds)
    began = outer.end_ts - outer.seconds
    return bool(stamps) and min(stamps) >= began - NESTED_SLACK_S and max(stamps) > began and (
        inner.step in (None, outer.step) or outer.step is None) and (
        inner.epoch in (None, outer.epoch) or outer.epoch is None)


def nested_saves(items: list[Any], saves: list[Save]) -> None:
    """A save whose lines lie inside a later save's printed duration is a part of that save:
    fairseq's `Preparing to save checkpoint for epoch 1 @ 25 updates` (04:40:58), each shard's
    `Saving checkpoint to …shard0.pt` / `Finished saving …` (04:41:08-26, 04:41:26-48), then
    `Saved checkpoint … (epoch 1 @ 25 updates …) (writing took 49.16 seconds)` at 04:41:48:
    one save of 49 s, not an 18 s one inside it as well (newcomer4 #4). Only saves between
    them (no step, restore, stop or mark). The outer save takes the inner's first line, start
    and names; in place on `items` and `saves`."""
    for k in range(len(saves) - 1, 0, -1):
        outer, inner = saves[k], saves[k - 1]
        if not _within(inner, outer):  # first: most saves print no duration (cheap, and rare)
            continue
        a = next(i for i, x in enumerate(items) if x is inner)  # by identity: dataclasses
        b = next(i for i, x in enumerate(items) if x is outer)  # compare field by field
        if any(not isinstance(x, Save) for x in items[a:b]):
            continue
        outer.line, outer.seq, outer.prev_ts = inner.line, inner.seq, inner.prev_ts
        starts = [t for t in (inner.start_ts, outer.start_ts) if t is not None]
        outer.start_ts = min(starts) if starts else None
        ends = [t for t in (inner.end_ts, inner.part_ts, outer.part_ts) if t is not None]
        outer.part_ts = max(ends) if ends else None
        outer.lines += inner.lines
        outer.step = outer.step if outer.step is not None else inner.step
        outer.epoch = outer.epoch if outer.epoch is not None else inner.epoch
        outer.path, outer.named = outer.path or inner.path, outer.named or inner.named
        outer.named_path = outer.named_path or inner.named_path
        outer.validated = outer.validated or inner.validated
        del items[a]
        del saves[k - 1]


def again_worded(save: Save, o: Obs, phase: str) -> bool:
    """An end line worded as the ended save's own, a number in it changed, after other lines
    (Tianxiaomo/pytorch-YOLOv4's `Checkpoint 1 saved !`, then `Created checkpoint directory`
    six minutes later and `Checkpoint 2 saved !`, the epoch's steps printed at DEBUG level or
    not at all between): another save, not a second file of the one ended. The same text again
    (a line every rank prints), or the next line (theano_alexnet's `weight saved: W_0_1`,
    `weight saved: W_1_1`, … one line per array of one save), is the same save."""
    if phase != "end" or not save.ended or not save.end_text or o.text == save.end_text or (
            o.seq <= save.end_seq + 1):
        return False
    return _DIGITS.sub("0", o.text) == _DIGITS.sub("0", save.end_text)


AGAIN_S = 1.0  # a save's start line printed again this long after, other stamped lines between


def started_again(save: Save, o: Obs, phase: str) -> bool:
    """A start line worded as the open save's own start line (digits masked), printed again
    after other lines whose stamps are `AGAIN_S` or more past the first print: the loop did other
    work between and saves again (YOLOX's after_epoch `Save weights to …` for its latest
    checkpoint, then an evaluation, then evaluate_and_save_model's `Save weights to …` for its
    last-epoch one, 2.3 s apart, fresh20 X02). The same line printed by every rank or host at
    once (levanter's `Saving checkpoint at step 9485 to …`, all in one second) is one save."""
    if phase != "start" or not save.start_text or save.start_ts is None or o.prev_ts is None or (
            o.seq <= save.seq + 1):
        return False
    return o.prev_ts - save.start_ts >= AGAIN_S and (
        _DIGITS.sub("0", o.text) == _DIGITS.sub("0", save.start_text))


_BEST = re.compile(r"(?i)(?:\b|_)best(?:\b|_)")


def best_apart(save: Save, o: Obs, phase: str) -> bool:
    """An end line saying it saved the best checkpoint, after other lines, while the open save
    was begun by a start line that does not say best: two saves. A best checkpoint is chosen by
    a validation metric, so validation ran after that start: the save it began is the periodic
    one (MMEngine's CheckpointHook: `Saving checkpoint at 10 epochs` after the epoch, then
    `Epoch(val) [10][17/17] …`, then `The best checkpoint with 3.9889 accuracy/top1 at 10 epoch
    is saved to best_accuracy_top1_epoch_10.pth.`, fresh22 Z11). A save whose start line or
    path says best (`Saving best model …`, then `Best model saved`; fairseq's `Preparing to
    save checkpoint for epoch 3 @ 1437 updates`, `Saving checkpoint to checkpoints/
    checkpoint_best.pt`, then `Finished saving …checkpoint_best.pt`, fresh15 R02), or an end
    line right after its start, is one save."""
    if phase != "end" or save.ended or not save.start_text or o.seq <= save.seq + 1:
        return False
    said = (save.start_text, save.path, save.named_path)
    return _BEST.search(o.text) is not None and not any(_BEST.search(x) for x in said if x)


_FILE_NUMBERS = re.compile(r"(?<![\d.])\d+(?![\d.])")
# a checkpoint file a save line names, folders or not (`ijepa_finetune_epoch40.pth`)
_SUFFIX = re.compile(r"(?i)\.(?:pth?|ckpt|safetensors|pdparams|h5|hdf5|keras|t7|bin|npz|params|"
                     r"caffemodel)(?:\.tar)?$")
_WEIGHTS_FILE = re.compile(r"(?i)[\w.~=+-]{1,300}\.(?:pth?|ckpt|safetensors|pdparams|h5|hdf5|"
                           r"keras|t7|bin|npz|params|caffemodel)(?:\.tar)?\b")


def other_file(save: Save, o: Obs, phase: str) -> bool:
    """An end line right after an ended save that names a checkpoint file whose name drops the
    number the ended save's file name carries (`Checkpoint saved: ijepa_finetune_epoch40.pth`,
    then `Finetuned model saved: ijepa_finetune_final.pth` 0.3 s later, fresh22 Z01): the run's
    final save after its last periodic one, another save. The files of one save carry its one
    number each (`G_1000.pth`, `D_1000.pth`; `model_epoch3.pth`, `optimizer_epoch3.pth`), or
    none (`model.pth`, `optimizer.pth`): one save. So is a best-model copy written by the same
    save routine (`Saved checkpoint to checkpoints/checkpoint_step_500.pt`, then `Saved best
    model to checkpoints/best_model.pt`: torch.save again when the step is the best, fresh12
    O10, one save point by its facts)."""
    if phase != "end" or not save.ended or not save.end_text:
        return False
    ended, this = _WEIGHTS_FILE.findall(save.end_text), _WEIGHTS_FILE.findall(o.text)
    if len(ended) != 1 or len(this) != 1 or _BEST.search(re.split(r"[/\\]", this[0])[-1]):
        return False
    had, has = _file_numbers(ended[0]), _file_numbers(this[0])
    return bool(had) and not had & has


def _file_numbers(path: str) -> set[str]:
    """The numbers of a checkpoint file's name, its folders and suffix left out."""
    name = re.split(r"[/\\]", path)[-1]
    return set(re.findall(r"\d+", _SUFFIX.sub("", name)))


def named_in_path(path: str, steps: list[int]) -> int | None:
    """The step printed just before or after a save that a number of its file name repeats
    (WLASL's `checkpoints/nslt_2000_003036_0.001389.pt` beside `Step 3036/64000`: the step
    zero-padded between the class count and the score), else None."""
    name = re.split(r"[/\\]", path)[-1] if path else ""
    numbers = {int(n) for n in _FILE_NUMBERS.findall(name)}
    return next((s for s in steps if s > 0 and s in numbers), None)


def unfinished(items: list[Any], k: int) -> bool:
    """Whether the save `items[k]` was begun with no training step anywhere in the log, no end
    line and no step on its lines, and then either the log ends (nothing named that it wrote,
    only saves after it: T5X's `Saving checkpoint before the training loop starts.` as the last
    line of a run that hangs there) or the run fails (only saves, marks and stops after it: a TF
    Supervisor's `Saving checkpoint to path /models/model.ckpt` at session start and slim's
    `Finished training! Saving model to disk.`, then the InvalidArgumentError traceback, with
    `global_step/sec: 0`, fresh22 Z10): nothing proves it finished. A begun save at the end of
    an excerpt after the steps it saves (InnerEye's `Saving latest checkpoint...` after its
    epoch), or naming its step (`Saving checkpoint at step 9485`), is a save."""
    save = items[k]
    if not isinstance(save, Save) or save.ended or save.named or any(
            isinstance(x, Record) for x in items):
        return False
    after = items[k + 1:]
    if not save.named_path and all(isinstance(x, Save) for x in after):
        return True
    return any(isinstance(x, Interruption) for x in after) and all(
        isinstance(x, (Save, Mark, Interruption)) for x in after)
