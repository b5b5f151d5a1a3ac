"""The step of each save its lines did not name, resolved once the events are grouped (pure).

`off_counter(items)` then `save_steps(items, saves)`, called by `items.group_events`.

The step a save names: the step on its line, else its checkpoint path's (`checkpoint-500`,
`step=2532`), else the end of the epoch its line names (`Saving checkpoint at 12 epochs`, `Epoch
00097: … saving model`: epoch × steps per epoch), else a step a number of its file name repeats
from the record before or after it (WLASL's `nslt_2000_003036_0.001389.pt` beside `Step
3036/64000`), else the step of a later restore between those records (`_restored_later`), else,
in a log whose counter restarts each epoch, the end of the current epoch when the next progress
line is in a later one (YOLOX's `Save weights to …`), else the last step printed; a save before
the first progress line of such a log, or of a log whose epochs are its steps, ends the epoch
before that line's (SpeechBrain's end-of-epoch save, then `Going into epoch 17`); in any other
log it is the step before that line's (InsightFace's `Saved checkpoint to …model-0058.params`,
then `Epoch[0] Batch [115980-116000]`: the state the printed steps began from). A restore's step:
on its line, else its path. A path cut by a space or a quote (`…/W Output\\checkpoint-416`) is
read piece by piece (`line_path_step`).
"""

from __future__ import annotations

import re
from typing import Any

from gpuslo.goodput.logs.epochs import epoch_base
from gpuslo.goodput.logs.progress import Record
from gpuslo.goodput.logs.story import Restore, Save, named_in_path

_NUMBER = re.compile(r"\d+(?:\.\d+)?")


def off_counter(items: list[Any]) -> None:
    """A save's named step below the first step of the run printed before it, no restore since,
    is another counter's (a script's stage: `💾 Step 7: Saving final model...` after
    `1755/1755`, fresh18 V14): its step is resolved as an unnamed save's (`save_steps`). Not
    where a save line of the same wording (its numbers aside) names a step the progress printed:
    that wording counts the run's steps, its lower step printed late (3D Gaussian Splatting's
    stdout flushed after the stderr bar: `[ITER 7000] Saving Gaussians` below the bar's 29620,
    `[ITER 30000] Saving Gaussians` at its last; fresh12 O16)."""
    reached = {x.glob for x in items if isinstance(x, Record)}
    kin = {_wording(x.start_text) for x in items
           if isinstance(x, Save) and x.named and x.start_text and x.step in reached}
    first: dict[int, int] = {}
    for x in items:
        if isinstance(x, Record):
            first.setdefault(x.run, x.glob)
        elif isinstance(x, Restore):
            first.clear()
        elif isinstance(x, Save) and x.named and x.step is not None and x.after is not None and (
                x.step < first.get(x.after.run, 0)) and _wording(x.start_text) not in kin:
            x.step = None


def _wording(text: str) -> str:
    """`text` with its numbers masked: the wording lines of one template share."""
    return _NUMBER.sub("<n>", text)


def save_steps(items: list[Any], saves: list[Save]) -> None:
    """Resolve the step of each save that its lines did not name (module docstring)."""
    records = [x for x in items if isinstance(x, Record)]
    totals = [r.total for r in records if r.total]
    per_epoch = totals and any(r.glob != r.printed or r.epoch is not None for r in records)
    base = 0 if any(r.epoch == 0 for r in records) else epoch_base([r.prog for r in records], [])
    for save in saves:
        if save.step is not None:
            continue
        total = totals[-1] if totals else None
        if save.epoch is not None and total:
            save.step = (save.epoch + (1 - base)) * total
            continue
        if save.hint is not None:
            save.step = save.hint
            continue
        before = save.after
        after = next((x for x in items[items.index(save) + 1:] if isinstance(x, Record)), None)
        named = named_in_path(save.named_path, [r.glob for r in (before, after) if r is not None])
        restored = _restored_later(items, save, before, after)
        if named is not None:
            save.step = named
        elif restored is not None:
            save.step = restored
        elif before is not None and per_epoch and before.total and before.epoch is not None and (
                after is None or after.epoch is None or after.epoch > before.epoch):
            save.step = (before.epoch + (1 - base)) * before.total
        elif before is not None:
            save.step = before.glob
        elif per_epoch and after is not None and after.total and after.epoch is not None:
            save.step = (after.epoch - base) * after.total  # the end of the epoch before
        elif after is not None and (after.glob > 0 or after.prog.family == "epochs"):
            save.step = after.glob - 1  # the state the first printed steps began from


def _restored_later(items: list[Any], save: Save, before: Record | None,
                    after: Record | None) -> int | None:
    """The step of a later restore that falls between the records around a save that names no
    step (Seed-VC's `Saving..` between the bar at step 899 and the line of step 900, then the
    next run's `Loaded checkpoint from …DiT_epoch_00007_step_00900.pth`): that state is the one
    the save wrote. None when no restore names such a step."""
    if before is None:
        return None
    low, high = before.glob, after.glob if after is not None else before.glob
    for item in items[items.index(save) + 1:]:
        if isinstance(item, Restore) and item.step is not None and low <= item.step <= high:
            return item.step
    return None
