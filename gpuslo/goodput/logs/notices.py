"""Save lines that commit no work: printed before a run from scratch takes its first step (pure).

`initial_notices(items) -> list[Save]`: the saves of `items` (`items.group_events`' list, in log
order) to leave out. A trainer may announce where it will save before it trains, in the words
of a finished save: a pygcn-derived trainer logs `trained model saved at :../train_model/model.pt`
and `best model saved at :../best_model/model.pt` once at start-up (printing `args.save_model`),
then `Epoch: 0001` and `iter:0020 …`; its real torch.save calls print nothing
(Miao-er/gcn_graph_classification, pygcn/train.py). Whatever such a line means, what it could
have written is the state before any step: no progress is committed by it, and counting it
would give a goodput where the log shows no commit evidence.

So a save is left out when it comes before the log's first progress record, names no step, no epoch,
no number and no numbered path (nothing ties it to trained work), no restore of a trained step comes
before it (TF1's `Restoring parameters from /models/model.ckpt-0` restores none: fresh22 Z10's
Supervisor then says `Saving checkpoint to path /models/model.ckpt`), and the first record starts
the counter from scratch: its step is at most the counter's stride (`iter:0020` then `0040`) in the
first epoch or none. A save before the first step of a run that does not start from scratch stays
one (InsightFace's `Saved checkpoint to …model-0058.params`, then `Epoch[0] Batch [115980-116000]`:
the state those steps began from, `items`).

`model_exports(items) -> list[Save]`: in a log whose saves write the optimizer state as a file of
their own (two saves or more print it), a save that writes none and names a best-model file is
an export of the weights for evaluation, not the trainer's state: no run can resume from it, so
it commits nothing. Marian writes `model.npz.orig.npz`, `model.npz` and `Saving Adam parameters
to model.npz.optimizer.npz` every save-freq updates, and `model.npz.best-perplexity.npz` (and
`best-ce-mean-words`, `best-translation`) at each validation that improves (fresh15 R01: the
exports at the top of the excerpt, before any update line, are no save). An export printed with
a periodic save (no progress between: one `Save`) stays part of it. A best-model save in a log
whose saves never print the optimizer state stays a save (its file may hold the whole state).
`said_again(items) -> list[Save]`: an end line naming the file the save before it wrote, however
printed (`story.restates`), nothing between but other lines, is that save said again.

`leave_out(items)`: these lists, for `items.group_events`.
"""

from __future__ import annotations

import re
from typing import Any

from gpuslo.goodput.logs.items import Restore, Save, restates
from gpuslo.goodput.logs.progress import Record

_DIGIT = re.compile(r"\d")
_BEST = re.compile(r"(?i)(?<![a-z])best")  # a best-model file: `model_best.pth`, `x.best-bleu.npz`
STATE_SAVES = 2  # saves printing the optimizer state that make the log's saves resumable ones


def leave_out(items: list[Any]) -> list[Save]:
    """The saves that commit nothing (module docstring), each once."""
    notices = initial_notices(items)
    notices += [x for x in said_again(items) if x not in notices]
    return notices + [x for x in model_exports(items) if x not in notices]


def said_again(items: list[Any]) -> list[Save]:
    """Saves that are one end line naming the file the save before them wrote (`restates`:
    `./out` and `out`, `\\` or `/`), no step and no restore between: that save said again (a
    script's summary, `📁 Model saved at: ./out` after `✅ Model saved to: ./out` and the final
    evaluation, fresh18 V14), not another write.

    One question with `items._restated` (one test, `restates`), asked of other lines: that
    one, while grouping, takes an end line after the run's end line (`Mark("end")`) that
    restates the save open at that end line, as one more line of it (no save is opened; the
    save counts the line); this one, after grouping, takes the rest: a one-line ended save with
    no start path after a save closed by anything but progress or a restore (an epoch marker, a
    stop, a launch line, or an end line when no save was open), and leaves it out of the story
    (while grouping it was a save: a later line could join it, and then it has two lines and
    stays; the save it restates keeps its own line count)."""
    out: list[Save] = []
    last: Save | None = None
    for x in items:
        if isinstance(x, (Record, Restore)):
            last = None
        elif isinstance(x, Save):
            if last is not None and x.lines == 1 and x.ended and not x.path and restates(
                    x.named_path, last):
                out.append(x)
                continue
            last = x
    return out


def initial_notices(items: list[Any]) -> list[Save]:
    """The saves before a from-scratch first step that commit nothing (module docstring)."""
    records = [x for x in items if isinstance(x, Record)]
    if len(records) < 2:
        return []
    first, second = records[0], records[1]
    stride = second.glob - first.glob
    if stride <= 0 or first.glob > stride or (first.epoch is not None and first.epoch > 1):
        return []
    lead = items[:items.index(first)]
    if any(isinstance(x, Restore) and x.step != 0 for x in lead):  # (a load of step 0 holds
        return []  # no trained step: the run still starts from scratch, fresh22 Z10)
    return [x for x in lead if isinstance(x, Save) and _untied(x)]


def _untied(save: Save) -> bool:
    """A save whose lines tie it to no trained work: no step, epoch, number or numbered path
    (Tianxiaomo/pytorch-YOLOv4's `Checkpoint 1 saved !`, `Checkpoint 2 saved !` six minutes
    apart before its first DEBUG step line are saves each: their number is the epoch's)."""
    return save.step is None and save.epoch is None and save.hint is None and not save.named and (
        _DIGIT.search(save.end_text + save.path + save.named_path) is None)


def model_exports(items: list[Any]) -> list[Save]:
    """The best-model exports of a log whose saves write the optimizer state (module
    docstring)."""
    saves = [x for x in items if isinstance(x, Save)]
    if sum(1 for x in saves if x.state) < STATE_SAVES:
        return []
    return [x for x in saves if not x.state and _BEST.search(
        re.split(r"[/\\]", x.path or x.named_path)[-1])]
