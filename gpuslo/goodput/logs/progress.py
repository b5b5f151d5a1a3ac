"""Progress records → steps on one counter (job-wide where the log shows it), each with its step
time (pure).

`build_records(progress, epochs, named) -> (records, info)`:

1. Other loops and no steps: a bar's opening draw at 0 that says no iteration was timed yet
   (`0/3746 [00:00<?, ?it/s]`) and carries nothing else is its creation, not a step
   (`bars.opening_draw`). Within one bar family, records whose total is not the family's usual
   total are another loop's bar (evaluation, prediction) and are left out (`info["other_bars"]`),
   unless the family is one loop a bar (`bars.per_call`: finished bars of varying N, a Keras
   `fit` per clip): then each bar is kept, its steps counted on from the bars before it.
2. Epochs: a per-epoch counter takes the epoch printed on its line, else the last epoch marker's
   (`Epoch 96/100` above a Keras bar) unless it kept rising where the marker's epoch changed
   (a job-wide bar under epoch lines). Where its records span two or more epochs, or a save or
   restore line names a step on the job-wide scale (above N, or beside its epoch: MMEngine's
   `resumed epoch: 81, iter: 6966`), the step is the job-wide (epoch - first epoch) × N + n
   (`Epoch [12][500/643]` → 7573), the first epoch read from the log (`epochs.epoch_base`).
   Within ONE epoch otherwise, the step is the counter as printed (MMCV's `Epoch [2][100/267]`
   → 100): the job-wide count would rest on a guessed epoch base (torchvision counts epochs
   from 0, PaddleClas from 1), a whole epoch off in fresh4 F02 and fresh3 E13 (issue 23, the
   lead's decision; `epochs.printed_scale`). B03 and C33's collectors chose the job-wide count.
   The printed in-epoch counter stays in `steps.printed_first/last` either way.
3. Duplicates: a record with the step of the one before it (a bar redrawn, a line printed by
   two handlers) counts once (`info["duplicates"]`); the time a duplicate gives for its own
   part of a step (`line_s`, lit-gpt's `iter time` of each micro-batch) is added to the next.
4. Step time (`steptimes`, as is 5.), from whichever the line gives, in this order of preference:
   a. a per-step duration printed on the line, named in any wording (`elapsed time per
      iteration`, `time:`, `iter_time`, `sec/step`, `batch_cost`, open_clip's `Batch (t)`,
      DeepSpeed-Chat's `E2E latency`; `roles` says which names), or a window duration divided
      by the steps of the window (MMF's `time:` per 100 updates): the line's own measure;
      Else the durations of a record printed once per step with no step number, between the
      numbered ones (`perstep`: `[timing] sample processed in 14.73s` 25 times between `[step
      25]` and `[step 50]`), each its step's. Unless the trainer's clock (b., or a bar's
      elapsed time over its steps) is longer on every clean window of the run than the timer,
      and at most twice it: the timer leaves part of each step out (SSD's `Cost:` with its tic
      taken after the logging, PaddleGAN's averaged `batch_cost`) and the clock is the steps'
      GPU time (`wholestep`);
   b. the clock between records (`windows`): stamp deltas, then a cumulative elapsed time's
      deltas, over a span of at least 20 × their resolution within one stretch of records with
      no other work between;
   c. for a bar with no such span, its elapsed time over the steps since it began, over at
      least `ELAPSED_MIN_S` (a bar's clock has whole seconds), kept out of the statistics
      where spans between the bar's captures measure its steps (`bartime.since_start`) -
      unless the bar prints its mean seconds per step more precisely (precise over rounded:
      Keras's `- 3s 134ms/step` is read 0.134, its `- 142s 1s/step` 1.42; tqdm's rate, an EMA,
      is never preferred this way);
   d. an average printed on the line (`step_avg`, `AvgTime`);
   e. a rate (`it/s`, `s/it`; tqdm's an EMA);
   f. finally coarse stamp differences, then a line's cumulative clock's (not a bar's: its
      mean since it began is c.) between two records (ParlAI's `time:2.0s` every 2 s).
   Where a bar began: a bar that starts mid-way (step n at `00:00`) counts from n - 1, and its
   rate, when it counts from 0 (n / elapsed), is scaled to the steps it really ran; a bar first
   seen mid-way whose n × seconds per step is over `MID_WAY_RATE_RATIO` × its elapsed
   (`FINAL_RATE_RATIO` at its final n = N) began at a resumed step (tqdm's `initial=`): it ran
   elapsed / rate steps, so its per-step time is its rate, not elapsed / n. A per-epoch bar
   drawn anew (its n back at or below the last one's) begins again (Keras's `100/100` each
   epoch).
5. Warm-up: the first record of a run whose step time is more than twice the slowest or less
   than half the fastest of the run's other records is not a full step (compilation, a partial
   first window) and is kept out of the step-time statistics (`warm`), as is a step time
   measured over a window that held other work (`windows`; a duration printed for the step
   itself stays). A first time within the run's own jitter is a step like the others
   (MMEngine's `time: 0.010` then 0.002-0.008 on a toy run; open_clip's first
   `Batch (t): 18.240` before 0.45-0.56 is start-up). So is each epoch's first record of a
   per-epoch counter, by the same test (`epochs.epoch_openers`).
"""

from __future__ import annotations

from collections import Counter

from gpuslo.goodput.logs.bars import (
    inner_total,
    now_and_then,
    opening_draw,
    per_call,
    reset_draw,
)
from gpuslo.goodput.logs.bartime import epoch_bar_anew
from gpuslo.goodput.logs.coarserate import coarse_rates
from gpuslo.goodput.logs.epochs import (
    Untotalled,
    across_estimate,
    epoch_base,
    lagging_labels,
    printed_scale,
    reset_at_markers,
    run_across_markers,
)
from gpuslo.goodput.logs.glued import number_bars
from gpuslo.goodput.logs.matchers import Prog
from gpuslo.goodput.logs.perstep import per_step
from gpuslo.goodput.logs.runmean import undo_running_means
from gpuslo.goodput.logs.steptimes import ELAPSED_MIN_S, MID_WAY_ELAPSED_S, quick, step_times, warm

MID_WAY_MIN_STEP = 10  # (with steptimes.MID_WAY_ELAPSED_S: a bar at step n ≥ this resumed)
MID_WAY_RATE_RATIO = 1.5  # a bar's n × s/it over this × its elapsed: it began mid-way
FINAL_RATE_RATIO = 5.0  # the same at a bar's final draw (n = N), whose rate holds the loop's end


class Record:
    """One step of the job-wide counter: `prog` the line, `glob` the job-wide step, `printed`
    the step as printed, `delta` steps since the previous record of the run (None for a
    run's first), `step_s` seconds per step (None when unknown) and `source` what gave it,
    `dur` seconds the record's steps took, `warm` not a full step, `bar_start` the step a bar
    counts from, `resumed` the step a bar that started mid-way resumed from, `t0`/`t1` its
    interval on the log's clock (set by the timeline), `again` the log positions (seq) of the
    lines that printed the same step after it (dropped as duplicates), `tail` the step's last
    line of another template (its own line when none), `parts` its steps' own times printed on
    unnumbered lines once per step (`perstep`; None when not), `copied` the seq of the last
    line of its own template that printed its step again with no later stamp (its own where
    none did)."""

    __slots__ = ("prog", "glob", "printed", "epoch", "total", "delta", "step_s", "source",
                 "dur", "warm", "bar_start", "resumed", "carry", "t0", "t1", "run", "again",
                 "tail", "parts", "copied")

    def __init__(self, prog: Prog, glob: int, epoch: int | None) -> None:
        self.prog, self.glob, self.printed, self.epoch = prog, glob, prog.printed, epoch
        self.total = prog.total
        self.delta: int | None = None
        self.step_s: float | None = None
        self.source = ""
        self.dur: float | None = None
        self.warm = False
        self.bar_start: int | None = None
        self.resumed: int | None = None
        self.carry = 0.0
        self.t0 = self.t1 = 0.0
        self.run = 0
        self.again: list[int] = []  # seqs of the duplicates of this step dropped after it
        self.tail = prog
        self.parts: list[float] | None = None  # its steps' own times (`perstep`)
        self.copied = prog.seq  # its last copy's seq: the same template printing it again

    @property
    def line(self) -> int:
        """The record's physical line."""
        return self.prog.line

    @property
    def ts(self) -> float | None:
        """The record's own stamp (Unix seconds), None when it has none."""
        return self.prog.ts


def _usual_totals(progress: list[Prog]) -> dict[str, int | None]:
    """Each bar family's usual N: its most common, a tie going to the N the bars of every
    family draw most (superpoint_graph's unnamed bars, an evaluation's `4/4` and the training's
    `1/11` once each, beside the `11/11` bars under `Epoch 88/450`: the training's 11); never
    the N of an inner loop drawn once inside another N's bars (`bars.inside_one_gap`), nor
    one drawn again and again in a few of its gaps (`bars.now_and_then`), which is never the
    outer loop of another N (the training bar drawn between two evaluations, fresh18 V14)."""
    counts: dict[str, Counter[int]] = {}
    overall: Counter[int] = Counter()
    seqs: dict[tuple[str, int], list[int]] = {}
    steps: dict[tuple[str, int], list[int]] = {}
    last: dict[tuple[str, int], int] = {}
    draws: dict[tuple[str, int], list[tuple[int, int]]] = {}
    for p in progress:
        if p.bar and p.total is not None:
            draws.setdefault((p.family, p.total), []).append((p.seq, p.printed))
            counts.setdefault(p.family, Counter())[p.total] += 1
            overall[p.total] += 1
            key = (p.family, p.total)
            seqs.setdefault(key, []).append(p.seq)
            if p.printed != last.get(key):  # a redraw of the same n is no step of its loop
                steps.setdefault(key, []).append(p.seq)
            last[key] = p.printed
    evals = {key for key in draws if now_and_then(draws, *key)}
    outer = {key: v for key, v in seqs.items() if key not in evals}  # an eval bar nests nothing
    return {f: max(c, key=lambda n, f=f, c=c: (
        not ((f, n) in evals or inner_total(steps, outer, f, n)), c[n], overall[n]))
        for f, c in counts.items()}


def _globals(progress: list[Prog], epochs: list[tuple[int, int]],
             named: list[tuple[int, bool]], calls: set[str]) -> list[Record]:
    """Records with their job-wide steps (stages 1-2 of the module docstring)."""
    usual = _usual_totals(progress)
    markers = sorted(epochs)
    running = run_across_markers(progress, markers)
    resetting = reset_at_markers(progress, markers)  # a per-epoch counter with no N
    base = epoch_base(progress, [e for _, e in markers])
    untotalled = Untotalled(progress)
    lagging = lagging_labels(progress)  # an epoch label printed before it rose
    done: dict[str, int] = {}  # per-call family -> the batches of its bars before
    out: list[Record] = []
    built: list[Record] = []  # records whose job-wide count was built from their epoch
    k, context = 0, None
    drawn: dict[str, Prog] = {}  # each family's previous record (`reset_draw`)
    for p in progress:
        while k < len(markers) and markers[k][0] < p.seq:
            context, k = markers[k][1], k + 1
        before, drawn[p.family] = drawn.get(p.family), p
        if p.family in calls and p.bar and p.total is not None:
            out.append(Record(p, done.get(p.family, 0) + p.printed, None))
            done[p.family] = done.get(p.family, 0) + p.total
            continue
        if p.bar and p.total is not None and usual.get(p.family) not in (None, p.total) or (
                opening_draw(p) or reset_draw(p, before)):  # (no step yet: `bars`)
            continue
        reading = p.matcher.reading if p.matcher is not None else None
        epoch = lagging.get(p.seq, p.epoch)
        per_epoch = bool(reading and reading.per_epoch)
        if epoch is None and context is not None and (p.total is not None or (
                p.family in resetting)) and (
                reading is None or reading.epoch is None) and p.family not in running:
            epoch, per_epoch = context, True
        glob = p.printed
        if per_epoch and epoch is not None:
            glob = max(epoch - base, 0) * p.total + p.printed if p.total else (
                untotalled.glob(p, epoch))
        out.append(Record(p, glob, epoch))
        if per_epoch and epoch is not None:
            built.append(out[-1])
    if printed_scale([(r.epoch or 0, r.total) for r in built], named):
        for rec in built:
            rec.glob = rec.printed
    return out


def build_records(progress: list[Prog], epochs: list[tuple[int, int]],
                  named: list[tuple[int, bool]] | None = None
                  ) -> tuple[list[Record], dict[str, int]]:
    """The records of a log (see the module docstring). `epochs`: (seq, epoch) of the epoch
    markers; `named`: the steps save/restore lines name (`epochs.named_steps`). Returns the
    records and counts (`other_bars`, `duplicates`)."""
    calls = per_call(progress)  # one loop a bar: steps are its batches in order (`bars`)
    records = _globals(progress, epochs, named or [], calls)
    number_bars(records)  # a bar's in-epoch n numbered by the trainer's line glued to it
    info = {"other_bars": sum(1 for p in progress if p.bar) - sum(1 for r in records
                                                                  if r.prog.bar),
            "duplicates": 0, "per_call": sum(1 for p in progress if p.family in calls)}
    kept: list[Record] = []
    carry = 0.0  # line_s of the duplicates since the last kept record: part of the next step
    for rec in records:
        if kept and rec.glob == kept[-1].glob:
            info["duplicates"] += 1
            carry += rec.prog.line_s or 0.0
            kept[-1].again.append(rec.prog.seq)
            if rec.prog.matcher is kept[-1].prog.matcher and rec.prog.ts in (None, kept[-1].ts):
                kept[-1].copied = rec.prog.seq  # a copy that takes no time (`windows._gap`)
            _of_another_kind(kept[-1], rec.prog)
            _clock_of_step(kept[-1].prog, rec.prog)
            continue
        rec.carry, carry = carry, 0.0
        kept.append(rec)
    _runs(kept)
    step_times(kept)
    undo_running_means(kept)  # a per-epoch mean since the epoch began (`runmean`)
    per_step(kept)  # unnumbered records printed once per step time the steps (`perstep`)
    warm(kept)
    for i in across_estimate(kept):  # the steps between are a guess: no step time
        kept[i].warm = True
    coarse_rates(kept)  # a rate printed to one figure where the stamps measure the steps
    return kept, info


def _of_another_kind(kept: Record, dup: Prog) -> None:
    """A line of another template printing the kept record's step is a later stage of that step
    (an evaluation record after the training record of its step, ms-swift's JSON lines): the
    step's clock ends at it (`tail`), so the next window does not hold that work. The same
    template again (ranks, two handlers) is a copy: the first stands."""
    if dup.matcher is not kept.prog.matcher:
        kept.tail = dup


def _clock_of_step(kept: Prog, dup: Prog) -> None:
    """A cumulative clock printed with a later line of the kept record's step is that step's
    clock (LightGBM prints `Iteration:998, training's auc: …`, `Iteration:998, training's log
    loss: …`, then `2.432232 seconds elapsed, finished 998 iteration`, a timing line whose time
    goes to the line above it: the second); a bar's elapsed is its own bar's."""
    if kept.elapsed is None and dup.elapsed is not None and not dup.bar and not kept.bar:
        kept.elapsed = dup.elapsed


def _runs(records: list[Record]) -> None:
    """Number the runs (a counter that goes back starts one) and find where bars begin."""
    run, start, last_elapsed = 0, None, None
    for i, rec in enumerate(records):
        prev = records[i - 1] if i else None
        new_run = prev is not None and rec.glob < prev.glob
        run += new_run
        rec.run = run
        elapsed = rec.prog.elapsed if rec.prog.bar else None
        jumped = elapsed is not None and elapsed <= MID_WAY_ELAPSED_S and prev is not None and (
            rec.glob - prev.glob >= MID_WAY_MIN_STEP) and not _paced(prev, rec)
        reset = prev is not None and rec.printed <= prev.printed  # a per-epoch bar drawn anew
        anew = epoch_bar_anew(prev, rec, last_elapsed, start)
        if elapsed is not None and (new_run or start is None or last_elapsed is None
                                    or elapsed < last_elapsed or prev is None or jumped or reset
                                    or prev.prog.family != rec.prog.family or anew):
            start = prev.glob if anew and prev is not None else _bar_start(rec)
        if elapsed is not None:
            rec.bar_start = start
            last_elapsed = elapsed
        if prev is not None and not new_run and rec.glob > prev.glob:
            rec.delta = rec.glob - prev.glob


def _paced(prev: Record, rec: Record) -> bool:
    """Whether the steps a bar's counter jumped since its previous draw fit the clock that passed
    at the bar's own rate, a second of slack for its whole seconds (a fast bar redrawn every
    tqdm `mininterval`, 0.1 s: `10/2590 [00:00<00:26, 97.32it/s]`, then `22/2590 [00:00<…]`,
    fresh18 V15): the bar going on, not one first seen mid-way at `00:00` (a resumed bar)."""
    a, b = prev.prog, rec.prog
    if not (a.bar and b.bar) or a.family != b.family or None in (a.elapsed, b.elapsed) or (
            b.rate_s is None or rec.printed <= prev.printed):
        return False
    passed = b.elapsed - a.elapsed  # type: ignore[operator]
    return passed >= 0 and (rec.glob - prev.glob) * b.rate_s <= passed + 1.0


def _bar_start(rec: Record) -> int:
    elapsed = rec.prog.elapsed or 0.0
    if elapsed <= MID_WAY_ELAPSED_S and rec.printed >= MID_WAY_MIN_STEP and not (
            quick(rec) or _fast_from_zero(rec)):
        rec.resumed = rec.glob - 1
        return rec.glob - 1
    ran = _ran_by_rate(rec)
    if ran is not None:
        return rec.glob - ran
    return rec.glob - rec.printed if rec.glob >= rec.printed else 0


def _fast_from_zero(rec: Record) -> bool:
    """Whether a bar first seen with under a second elapsed could have run its `n` steps from 0
    in that second at its own rate (tqdm's EMA, `100/100 [00:00<00:00, 324.18it/s]`: 0.31 s):
    nothing then says it began mid-way, and no resume is made up from it (newcomer6 #2,
    Lightning#14428: a fresh `fit` after its banner and model summary, its bar pasted as its
    last state). A bar at `3376/?` with `363.52it/s` at `00:00` would need 9.3 s: it resumed."""
    p = rec.prog
    return p.rate_s is not None and rec.printed * p.rate_s <= (p.elapsed or 0.0) + (
        MID_WAY_ELAPSED_S)


def _ran_by_rate(rec: Record) -> int | None:
    """Steps a bar first seen mid-way has really run, from its rate, when its `n` × seconds per
    step exceeds `MID_WAY_RATE_RATIO` × its elapsed time: the bar began at a resumed step
    (tqdm's `initial=`, accelerate/diffusers scripts), so its elapsed covers only elapsed / rate
    steps; None otherwise (a bar that counts from 0, or whose clock is too short to say). A
    bar's final draw at n = N needs `FINAL_RATE_RATIO`: its EMA rate holds the loop's end
    (OpenRLHF's `128/128 [23:32<00:00, 26.11s/it]` for 11.03 s steps, 2.4 ×)."""
    p = rec.prog
    if p.rate_s is None or not p.elapsed or p.elapsed < ELAPSED_MIN_S:
        return None
    final = rec.total is not None and rec.printed >= rec.total
    ran = round(p.elapsed / p.rate_s)
    ratio = FINAL_RATE_RATIO if final else MID_WAY_RATE_RATIO
    if ran < 1 or rec.printed * p.rate_s <= ratio * p.elapsed:
        return None
    return min(ran, rec.glob)
