"""Epochs of a per-epoch step counter: the first epoch's number, counters that run across epoch
markers, counters with no N, and when the job-wide count of a per-epoch counter is built (pure).

The job-wide step of a per-epoch counter `Epoch [e][n/N]` is (e - first epoch) × N + n; its
first epoch (`epoch_base`) is read from the log, and where the log does not show it, guessed
(torchvision's references count epochs from 0, PaddleClas and MMCV from 1). `printed_scale`
says when that count is not built (issue 23, the lead's decision): when every per-epoch record
lies in ONE epoch, the count is the counter as printed, because the job-wide count rests on the
guessed base (fresh4 F02 and fresh3 E13: the job-wide guess is a whole epoch off). The job-wide
count is built only where the log needs or proves it:

- the records cross an epoch boundary (the counter resets while the epoch rises): the printed
  counter goes back each epoch, so it cannot be the step;
- a save or restore line names a step on the job-wide scale (`named_steps`): a step above the
  counter's N, or a step named beside its epoch (MMEngine's `resumed epoch: 81, iter: 6966`,
  fresh C16: 81 × 86 = 6966), so the progress must line up with it.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable

from gpuslo.goodput.logs.counters import words
from gpuslo.goodput.logs.matchers import Prog
from gpuslo.goodput.logs.templates import Field
from gpuslo.goodput.logs.tokens import number

_NAMING = ("save", "restore")
# step times measured over the window since the record before (`steptimes._preferred`'s sources)
_WINDOWED = ("window_s", "window_rate", "stamps", "elapsed", "stamps_coarse", "elapsed_coarse")


def epoch_base(progress: list[Prog], marker_epochs: list[int]) -> int:
    """The first epoch's number: 0 when the log prints epoch 0, or when a per-epoch counter of
    a log line (not a bar: tqdm draws `0/N` before any step) prints 0 beside its epoch
    (PaddleDetection's `Epoch: [5] [  0/756]`: a loop that counts batches from 0 counts epochs
    from 0 too), unless the log opens at epoch 1, batch 0 (`Train Epoch: 1 [0/60000 (0%)]`,
    PyTorch's MNIST example: its first epoch is 1); else 1."""
    if 0 in marker_epochs or any(p.epoch == 0 for p in progress):
        return 0
    first = next((p for p in progress if p.epoch is not None), None)
    if first is not None and (first.epoch, first.printed) == (1, 0):
        return 1  # the log opens at epoch 1's first batch (PyTorch's MNIST example)
    return 0 if any(p.printed == 0 and p.epoch is not None and p.total and not p.bar
                    for p in progress) else 1


def outer_loop(fields: list[Field], counter: int) -> int | None:
    """The index of the integer named `fold` or `trial` printed before the epoch counter
    `fields[counter]` that counts an epoch summary's progress, None when there is none: the
    loop the epochs run inside (THGNN's train_cv.py `[Fold 2 Ep 001] tr_loss=… | 2.0s`,
    fresh18 V16). Each fold of a cross-validation (each trial of a search) trains a new model
    from its first epoch by design, so the counter starting again where the fold rises is a new
    loop of one process, not a restart; its records count on across the folds (`Untotalled`)."""
    for f in fields[:counter]:
        if f.kind == "num" and f.integer and words(f.key) in (["fold"], ["trial"]):
            return f.index
    return None


def lagging_labels(progress: list[Prog]) -> dict[int, int]:
    """seq -> epoch of each record of an `n/N` counter whose epoch label lags its wrap: the
    counter falls while the printed epoch stays, the next record prints the next epoch and
    goes on from it, and the fall is the counter's own stride wrapped at N (PaddleGAN's trainer
    prints `Epoch: {current_epoch}, iter: {current_iter % iters_per_epoch}` with the data
    loader's epoch, raised only when its next batch is drawn: `Epoch: 1/100, iter: 980/989`,
    `Epoch: 1/100, iter: 1/989` (global iteration 990), `Epoch: 2/100, iter: 11/989`, fresh18
    V08). Such a record belongs to the next epoch; anything else (a counter that falls by
    another amount, an epoch that does not rise next) keeps its label."""
    fixed: dict[int, int] = {}
    runs: dict[str, list[Prog]] = {}
    for p in progress:
        if p.epoch is not None and p.total:
            runs.setdefault(p.family, []).append(p)
    for recs in runs.values():
        for a, b, c in zip(recs, recs[1:], recs[2:], strict=False):
            stride = c.printed - b.printed
            if a.epoch == b.epoch and c.epoch == b.epoch + 1 and b.printed < a.printed and (
                    stride > 0 and a.total == b.total == c.total
                    and a.printed + stride == b.total + b.printed):
                fixed[b.seq] = c.epoch
    return fixed


def run_across_markers(progress: list[Prog], markers: list[tuple[int, int]]) -> set[str]:
    """Families whose counter kept rising where an epoch marker changed the epoch (kohya's one
    `steps: 176/800` bar under `epoch 11/50` lines): a job-wide counter, not a per-epoch one."""
    running: set[str] = set()
    last: dict[tuple[str, int | None], tuple[int | None, int]] = {}
    k, context = 0, None
    for p in progress:
        while k < len(markers) and markers[k][0] < p.seq:
            context, k = markers[k][1], k + 1
        before = last.get((p.family, p.total))  # a bar of another total: another loop's
        if before is not None and before[0] is not None and context != before[0] and (
                p.printed > before[1]):
            running.add(p.family)
        last[(p.family, p.total)] = (context, p.printed)
    return running


def reset_at_markers(progress: list[Prog], markers: list[tuple[int, int]]) -> set[str]:
    """Families of a counter with no N and no epoch of its own that starts again each time an
    epoch marker line raises the epoch, and only then: a per-epoch counter numbered by the
    markers, not a restart (pygcn's `Epoch: 0002` line, then `iter:0020` after `iter:0140`,
    fresh14 Q01). Every fall of the counter must come after a marker above the one before the
    record it falls from; a fall under the same epoch (a relaunch printing `Epoch: 0001`
    again, a counter that goes back mid-epoch) leaves the family out, as does a counter that
    kept rising where the epoch rose (`run_across_markers`)."""
    reset: set[str] = set()
    broken: set[str] = set()
    last: dict[str, tuple[int | None, int]] = {}
    k, context = 0, None
    for p in progress:
        while k < len(markers) and markers[k][0] < p.seq:
            context, k = markers[k][1], k + 1
        if p.epoch is not None or p.total is not None or p.printed is None:
            continue
        before = last.get(p.family)
        last[p.family] = (context, p.printed)
        if before is None or p.printed > before[1]:
            continue
        rose = context is not None and before[0] is not None and context > before[0]
        if rose or p.printed < before[1]:  # the same step again in one epoch: a copy
            (reset if rose else broken).add(p.family)
    return reset - broken


class Untotalled:
    """Job-wide steps of a per-epoch counter that prints no N (icefall's `Epoch 1, batch 0`,
    MXNet's `Epoch[102] Batch [50]`): where the epoch rises the count goes on from the last
    counter of the epoch before plus the counter's usual stride (the most common rise within an
    epoch), so the reset is a new epoch, not a restart; the epoch's length is an estimate. A
    counter printed every step that starts each epoch at 1 goes on from the last one exactly.

    A counter printed beside its epoch that rose, not reset, at every epoch rise is job-wide
    already (`continuing`): PaddleOCR's tools/program.py prints its `global_step` as `epoch:
    [4/10], iter: 34` then `epoch: [5/10], iter: 35` (newcomer5 #2); its count is the counter
    as printed. One reset at any epoch rise keeps the family per-epoch."""

    def __init__(self, progress: list[Prog]) -> None:
        rises: dict[str, Counter] = {}
        last: dict[str, Prog] = {}
        crossed: dict[str, set[bool]] = {}  # family: whether it rose at each epoch rise
        for p in progress:
            q = last.get(p.family)
            if q is not None and q.epoch == p.epoch and p.printed > q.printed:
                rises.setdefault(p.family, Counter())[p.printed - q.printed] += 1
            if q is not None and None not in (q.epoch, p.epoch) and p.epoch > q.epoch:
                crossed.setdefault(p.family, set()).add(p.printed > q.printed)
            last[p.family] = p
        self.stride = {f: c.most_common(1)[0][0] for f, c in rises.items()}
        self.continuing = {f for f, rose in crossed.items() if rose == {True}}
        self.state: dict[str, tuple[int, int, int]] = {}  # family: epoch, last printed, offset

    def glob(self, p: Prog, epoch: int) -> int:
        if p.family in self.continuing:
            return p.printed
        was = self.state.get(p.family)
        offset = 0 if was is None else was[2]
        if was is not None and epoch > was[0]:
            stride = self.stride.get(p.family, 1)
            # a counter printed every step from 1 (`Ep 001` … `Ep 048`, then `Ep 001`): the
            # epoch before ran `was[1]` steps, none skipped
            offset += was[1] + (0 if stride == 1 and p.printed == 1 else stride)
        self.state[p.family] = (epoch, p.printed, offset)
        return offset + p.printed


def epoch_rose(before, after) -> bool:
    """Whether the epoch printed on record `after` is above the one on `before` (both
    `progress.Record`s; False when either prints none)."""
    return None not in (before.epoch, after.epoch) and after.epoch > before.epoch


def across_estimate(records: list) -> list[int]:
    """Indexes of the records (`progress.Record`s, in order) whose steps since the one before
    are `Untotalled`'s estimate: a counter with no N whose epoch rose between the two, so the
    count went on by a guessed epoch length. Their time holds the epoch's unprinted batches (and
    its evaluation): no step time can be read from it (MXNet Gluon's `[Epoch 0][Batch 50]`,
    then `[Epoch 1][Batch 0]` 38 s later, 0.75 s a batch inside the epochs). Only a time read
    over the window between the records (`_WINDOWED` sources) rests on that count; a duration
    the line prints of its own step (PaddleRec's `avg_batch_cost`) does not."""
    out = []
    for i in range(1, len(records)):
        a, b = records[i - 1], records[i]
        if a.total is None and b.total is None and epoch_rose(a, b) and (
                b.glob - b.printed != a.glob - a.printed) and b.source in _WINDOWED:
            out.append(i)
    return out


def epoch_openers(records: list) -> None:
    """Mark `warm` each epoch's first record of a per-epoch counter (`progress.Record`s: the
    counter back at or below the last one's while the epoch rose, within one run) whose step
    time is more than twice the slowest or less than half the fastest of the run's other
    records: not a full step. The first window of an epoch holds the epoch's boundary (a
    validation, the loader's restart), and a mean over the print interval taken at the first
    batch is one batch spread over the interval (PaddleRec's `epoch: 1, batch_id: 0, …,
    avg_batch_cost: 0.00173 sec` beside 0.56 s at batch_id 500: the meter averages over
    print_interval = 500 calls). A job-wide counter never resets, so it has none. Where the
    counter prints no N and the step time is a window's since the record before (stamps, a
    cumulative clock), the steps of that window are `Untotalled`'s estimate: not a measure
    either (prednet-paddle's `Epoch 1, Step 25, total used time 47.73 (s)` after `Epoch 0,
    Step 125, … 34.65 (s)`: 13.08 s over an epoch's tail of unknown length)."""
    openers, others = [], []
    strides: dict = {}  # run -> the counter's stride within an epoch (`_stride`)
    for prev, rec in zip(records, records[1:], strict=False):
        opens = rec.run == prev.run and epoch_rose(prev, rec) and rec.printed <= prev.printed
        (openers if opens else others).append(rec)
    for rec in openers:
        if rec.total is None and rec.source in _WINDOWED:
            rec.warm = True
            continue
        times = [r.step_s for r in others if r.run == rec.run and r.step_s and not r.warm]
        if times and rec.step_s is not None:
            fast = rec.step_s < min(times) / 2 and not (
                rec.printed >= strides.setdefault(rec.run, _stride(rec.run, records)) > 0)
            rec.warm = fast or rec.step_s > max(times) * 2


def _stride(run: object, records: list) -> int:
    """The counter's steady stride within an epoch of `run` (0 when none). An epoch's first
    record printed a whole print interval into the epoch (its printed count at least that
    stride) is a mean over full steps: a time faster than the others' is the loop's own
    speed-up, not one step spread over the interval (YOLOX's `epoch: 2/300, iter: 10/47, …
    iter_time: 0.084s` after
    epoch 1's 0.191-0.487 s, its warm-up: the stamps give 0.0875 s over those 10 iterations,
    fresh20 X09; PaddleRec's `batch_id: 0` at an interval of 500 is not whole)."""
    steps = Counter(b.printed - a.printed for a, b in zip(records, records[1:], strict=False)
                    if a.run == b.run == run and a.epoch == b.epoch and b.printed > a.printed)
    return steps.most_common(1)[0][0] if steps else 0


def _int(value: str | None) -> int | None:
    found = number(value) if value else None
    return int(found) if found is not None and found == int(found) else None


def named_steps(observations: Iterable) -> list[tuple[int, bool]]:
    """(step, named beside an epoch) of each save or restore line that names its step on the
    line (`observations`: the reader's `Obs`, with `kind` and `data`); a step read only from a
    checkpoint path is left out (its scale is the file name's)."""
    out = []
    for o in observations:
        step = _int(o.data.get("step")) if o.kind in _NAMING else None
        if step is not None:
            out.append((step, _int(o.data.get("epoch")) is not None))
    return out


def printed_scale(per_epoch: list[tuple[int, int | None]], named: list[tuple[int, bool]]
                  ) -> bool:
    """True when a per-epoch counter's records keep the count as printed (module docstring):
    `per_epoch` (epoch, N or None) of each record whose job-wide count was built, `named`
    from `named_steps`. False when there are none, when they span two or more epochs, or when
    a save/restore names a step above the counter's N or beside an epoch."""
    if not per_epoch or len({e for e, _ in per_epoch}) > 1:
        return False
    top = max((n for _, n in per_epoch if n), default=None)
    return not any(with_epoch or (top is not None and step > top) for step, with_epoch in named)


_TIMED = ("step_s", "window_s", "elapsed", "rate_ips", "rate_spi", "smoothed_s", "line_s")


def lone_count(chosen: list, epoch_lines: list) -> bool:
    """True when the step lines chosen (`roles.Reading`s) are one record whose counter has no
    N and no time beside it, not a bar, while epoch lines (markers or summaries) recur: one
    number shows no counter rising (a run's name printed once, BYOL_v1's `wandb: Syncing run
    [Training][batch:256][input:128][…]`, where `batch` is the batch size, beside ten
    `[epoch:1/1200] … [total time:0:02:28]` records, fresh20 X19): the epoch lines are the
    progress. A bar or an `n/N` drawn once still is (a rich bar's one line, `2960/2960`), and
    so is one record where no epoch line recurs."""
    if not chosen or sum(r.template.count for r in chosen) != 1:
        return False
    if any(r.bar or r.total is not None or any(x.role in _TIMED for x in r.roles.values())
           for r in chosen):
        return False
    return any(r.template.count >= 2 for r in epoch_lines)



# a marker that says its epoch is over (`Epoch 6 complete.`, `epoch 3 finished`, `End of epoch
# 2`), or names the epoch a model is saved at (`Saving model at epoch 6`: after its steps)
_CLOSES = re.compile(r"(?i)\b(?:complete|completed|finished|done|ended|end of)\b")
_SAVED_AT = re.compile(r"(?i)\b(?:saving|saved)\b")


def closing_markers(markers: list[tuple[int, int, str]]) -> list[tuple[int, int]]:
    """(seq, epoch) of the epoch markers (`markers`: seq, epoch, text, in order) as openers.
    Where the markers say their epoch is over (`_CLOSES`; a save at an epoch, `_SAVED_AT`, may
    stand beside them, but one at least says it), the steps before each are its epoch's and
    those after it the next one's (FoodSeg_mask2former's tqdm bar `2492/2492 [20:50<00:00,
    1.99it/s]` then `Epoch 6 complete. Avg Training Loss: 16.8108`, fresh23 AA17): each
    marker opens the epoch after its own, and the first one's epoch opens the log. A log with
    any marker that opens an epoch (`Epoch 7/10`), or whose only markers are saves
    (tensorflow-yolov3's `=> Epoch:  1 Time: … Saving …ckpt`, fresh21 Y06), keeps them as
    printed."""
    closes = [bool(_CLOSES.search(text)) for _, _, text in markers]
    if not any(closes) or not all(c or _SAVED_AT.search(text)
                                  for c, (_, _, text) in zip(closes, markers, strict=True)):
        return [(seq, epoch) for seq, epoch, _ in markers]
    return [(-1, markers[0][1])] + [(seq, epoch + 1) for seq, epoch, _ in markers]
