"""Which steps a log's lines prove committed, beyond a save line's own step (pure).

`proven_commits(items)`: the step a later restore (or a bar resumed mid-way) proves each run
committed; `unrestored_runs(items)`: the runs whose saves no later run restored (they commit
nothing); `trailing(items, k, step, last, from_zero)`: the records after a save's line that its
commit covers.

A save of step S commits the progress up to S. Frameworks print the record of a step after the
callbacks of that step have run: tf.keras's ModelCheckpoint line comes before the epoch's final
bar line (the bar's last print follows `on_epoch_end`), e.g. (fresh4 F26)

    320/405 [======================>.......] - ETA: 0s - loss: 0.1523
    Epoch 00044: val_loss improved from 0.28634 to 0.27306, saving model to out/test/w.hdf5
    405/405 [==============================] - 0s 891us/sample - loss: 0.1501 - val_loss: 0.2731

The bar's epoch 44 ends at step 17820 = the save's step: its time is what the save committed,
not progress after the commit. `trailing` gives the index of the last such record, so the walk
writes the save's `checkpoint` after it (the save's own phase stays where its lines are).
"""

from __future__ import annotations

from typing import Any

from gpuslo.goodput.logs.items import Mark, Restore, Save
from gpuslo.goodput.logs.progress import Record

# The marks the walk acts on (`walk._MARKS`): any other mark is a word, not an event
EVENT_MARKS = ("init", "train_start", "restart", "relaunch", "end", "alive")


def zero_based(items: list[Any]) -> bool:
    """Whether the log's counter prints 0 (PaddleDetection's `Epoch: [6] [  0/756]`, TF
    Estimator's `step = 0`): it numbers a step before it is done, so its record of step S is the
    (S + 1)-th step, one after a save of S (that save wrote S steps done)."""
    return any(isinstance(x, Record) and x.printed == 0 for x in items)


def trailing(items: list[Any], k: int, step: int | None, last: Record | None,
             from_zero: bool = False) -> int | None:
    """The index of the last record after the save `items[k]` whose step its commit covers, or
    None when there is none. `step`: the step the save names or was given (None: unknown, then
    nothing moves); `last`: the last record before the save (None: none, then nothing moves: a
    save that opens the log, before any step of it, may count in another basis than the records
    after it (D27's best-model save at 378 above batches 10..126), or save the state the next
    steps begin from (TF Estimator's `Saving checkpoints for 0`, then `loss = …, step = 0`));
    `from_zero`: the counter prints 0 (`zero_based`): a record of step S is past the save (B14's
    `Epoch: [6] [  0/756]`, global 4536, after the save at the end of epoch 5, 4536), so only
    records below `step` are taken.

    The records taken follow the save directly (only words between: no other save, restore,
    stop or event mark), each of step ≤ `step` (< in a counter from 0), of the run of `last`,
    never going back (a counter below the last one is a restart, not the save's steps) and not
    resumed mid-way; the first record of a larger step, or anything else, ends them."""
    if step is None or last is None:
        return None
    floor, run, found, top = last.glob, last.run, None, step - 1 if from_zero else step
    for i in range(k + 1, len(items)):
        item = items[i]
        if isinstance(item, Mark) and item.kind not in EVENT_MARKS:
            continue
        if not isinstance(item, Record) or not floor <= item.glob <= top or (
                item.resumed is not None or item.run != run):
            break
        floor, run, found = item.glob, item.run, i
    return found


def proven_commits(items: list[Any]) -> dict[int, int]:
    """Run → the step a later restore (or a bar resumed mid-way) proves that run committed:
    for each restore, the run of the records before it."""
    out: dict[int, int] = {}
    run: int | None = None
    for item in items:
        if isinstance(item, Record):
            if item.resumed is not None and run is not None and item.run != run:
                out.setdefault(run, item.resumed)
            run = item.run
        elif isinstance(item, Restore) and item.step is not None and run is not None:
            out[run] = item.step
    return out


def unrestored_runs(items: list[Any]) -> set[int]:
    """The runs whose saves no later run restored: the next run follows with no restore line (nor
    a bar resumed mid-way) and its counter starts again at or below the run's own first step, so
    from the beginning (Megatron's `will not load any checkpoints and will start from random`,
    then iterations 10, 20, … again). Their progress is never committed, whatever they saved. A
    counter that starts again above the run's first step, at a step it saved, is a resume from
    that save that printed no restore line (a restarted container's log going on from `iter
    3000` after the save of 3000): not one of these."""
    out: set[int] = set()
    first_save: dict[int, int] = {}
    first_step: dict[int, int] = {}
    last: Record | None = None
    restored = False
    for item in items:
        if isinstance(item, Record):
            first_step.setdefault(item.run, item.glob)
            if (last is not None and item.run != last.run and not restored
                    and item.resumed is None and last.run in first_save
                    and item.glob <= min(first_save[last.run], first_step[last.run])):
                out.add(last.run)
            last, restored = item, False
        elif isinstance(item, Save) and last is not None:
            first_save.setdefault(last.run, item.step if item.step is not None else last.glob)
        elif isinstance(item, Restore):
            restored = True
    return out
