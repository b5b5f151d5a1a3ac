"""A run header printed again: a relaunch (pure), read from the items of a log in order.

`headers_again(items) -> items`: a `train_start` line (`Starting training...`, `***** Running
training *****`) is printed once a run, before its loop. The same line (digits masked) printed
again after progress or a stop line since its last print is a second run header: the process
was launched again. It becomes a `restart` mark (the walk then counts one restart, and, with no
stop line before it, one interruption of unknown cause; the lines of one relaunch count once).
The class comes from a research trainer's `training.log` (fresh12 O10: `__main__ - INFO -
Starting training...` at 14:52:20, a RuntimeError traceback, the same line at 14:53:23, `Step 50
| Loss: …`, and again at 14:55:25 with no line between: three launches). A train_start printed
again with nothing in between (two loggers echoing one start) is no relaunch; nor is one of
another wording. Its first print in the log after the loop stepped is a relaunch too, where the
loop does not go on after it (`_header_after_steps`: the launch before printed its header
above the log's first line; fresh21 Y08). Printed again with only a checkpoint load between
(no progress, no stop line: the launch before died silently), the load opens another launch: a
`relaunch` mark before it (`_loaded_between`; fresh20 X14's four `Resume training from … @
41`, `Start Training...!!`). Epoch markers printed again are `items._Grouper._header_again`'s.

`reopenings(items, parsed) -> items`: the script's start-up printed again (`opening.Opening` finds
the places: two of its lines again, in order, numbers and all) is a relaunch where a new launch
follows (`_launches`: a restore, or a counter or epoch that does not go on from where it was; or,
with nothing after it, where the log never stepped before or after a pause the run never took,
`_paused`; a lone first line counts after such a pause too, and, unstamped, when printed again in a
row where the log's own launch printed it once: fresh22 Z01, Z19). Each becomes a `relaunch` mark,
one restart each (the walk: with no stop line open, one interruption of unknown cause; none after a
run that ended). From fresh13 P04 (a banner and configuration printed again 1 min 45 s later, then
epoch 1), P07 (five launches of a LoRA script after a finished run, one cut after its first line)
and fresh12 O19 (a framed banner again 16 s after a pipeline stopped in its second stage). A rule
that read any line printed again as a relaunch read the status lines of eleven other logs so; the
guards (the log's own first two lines, their numbers, the gap of a new process, what follows) keep a
loop's status pair (fresh12 O15), a table header over each row (fresh4 F22) and debug prints as a
log ends (fresh6 H12) out. A place with no stamp right after a stamped record is that record's tail,
never a new process (another program's configuration dump after training, its first line differing:
fresh14 Q04). What follows a place is read up to the next place that may begin another launch
(`_next_launch`): a later start-up line printed again at once goes on with the same launch (fresh17
U14).

`epochs_again(items, parsed) -> items`: in a log whose only counter is its epoch markers, a
stamped marker that falls to epoch 1 after a pause a new process needs is a relaunch (fresh17
U11); unstamped, or at the run's own pace, it is none (a new model of one process, U18).
"""

from __future__ import annotations

import re
from collections import Counter
from typing import Any

from gpuslo.goodput.logs.firstlaunch import first_launch, markers_fall
from gpuslo.goodput.logs.items import Interruption, Mark, Restore
from gpuslo.goodput.logs.opening import Reopened
from gpuslo.goodput.logs.parsedlog import Obs, ParsedLog
from gpuslo.goodput.logs.progress import Record

_DIGITS = re.compile(r"\d+")


def headers_again(items: list[Any]) -> list[Any]:
    """`items` with each repeated run header (module docstring) made a `restart` mark, and a
    `relaunch` mark before the checkpoint load between two prints with no progress or stop
    line between (`_loaded_between`)."""
    last: dict[str, int] = {}  # header shape -> index of its last print
    out = list(items)
    loads: list[int] = []  # indexes of the restores that open a launch
    for k, item in enumerate(items):
        if not (isinstance(item, Mark) and item.kind == "train_start"):
            continue
        shape = _DIGITS.sub("#", item.obs.text.strip())
        before = last.get(shape)
        last[shape] = k
        if before is None:
            if _header_after_steps(items, k):
                out[k] = Mark("restart", item.obs, item.t0, item.t1)
            continue
        if any(isinstance(x, (Record, Interruption)) for x in items[before + 1:k]):
            out[k] = Mark("restart", item.obs, item.t0, item.t1)
        elif (load := _loaded_between(items, before, k)) is not None:
            loads.append(load)
    for load in reversed(loads):
        start = items[next(j for j in range(load, len(items)) if isinstance(items[j], Mark))]
        out.insert(load, Mark("relaunch", start.obs, items[load].t0, items[load].t0))
    return out


def _header_after_steps(items: list[Any], k: int) -> bool:
    """Whether the run header `items[k]`, its first print in the log, is a new launch's: the
    loop had stepped before it (a record at step 1 or above: the launch that printed its own
    header before the log's first line had run), and the loop does not simply go on after it
    (no record follows; or the next one is not above the last before the header; or a
    checkpoint load comes between). From fresh21 Y08 (CogVideo's finetune trainer: its bar at
    `1/54 [43:50<…]`, then the base model's shards loaded again, `Initialized Trainer`,
    `Accelerator state:` .. `Starting training`, the log ending in that start-up). A header
    printed between records of one counter that goes on (a script's second stage in one
    process: `Starting training stage 2`, then the next step) is none, nor is one before any
    step (the header of the log's own launch, each rank's print of it included), nor one after
    a record the loop's clock does not time (no step time, no elapsed time: a configuration
    line read as a counter, `Batch=256 RAM : ~6.3 MB (data)` above `Starting training — 50
    epochs, batch=256`, fresh14 Q20)."""
    last = next((x for x in reversed(items[:k]) if isinstance(x, Record)), None)
    if last is None or last.glob < 1 or (last.step_s is None and last.prog.elapsed is None):
        return False
    for later in items[k + 1:]:
        if isinstance(later, Restore):
            return True
        if isinstance(later, Record):
            return later.glob <= last.glob
    return True


def _loaded_between(items: list[Any], before: int, k: int) -> int | None:
    """The index of the first checkpoint load between two prints of one run header (`before`,
    `k`) with nothing but unread lines, loads and start-up marks between: the run that printed
    `before` died silently and the process was launched again, loaded the checkpoint and began
    again (kaggle-siim's train.py: `Resume training from …_best_metric.pth @ 41`, `Start
    Training...!!`, four times, three with no line after them, fresh20 X14). Two loggers echoing
    one start print nothing between; one process prints its start once (a load after it is the
    same launch's: HF's `***** Running training *****`, then `Continuing training from
    checkpoint`)."""
    for j in range(before + 1, k):
        if isinstance(items[j], Restore):
            return j
    return None


GAP_S = 5.0  # a relaunch starts at least this long after the line before it (a new process)


def reopenings(items: list[Any], parsed: ParsedLog, notes: list[str] | None = None
               ) -> list[Any]:
    """`items` with a `relaunch` mark before each place the script's opening is printed again
    and a new launch follows (`_launches`); see `opening.Opening` for the places. A place that
    starts another script after a clean end (`next_script`) is a new job step, not a launch:
    no mark, a note in `notes`."""
    if not parsed.reopened or _opening_loops(items, parsed.opening_seqs):
        return items
    epochs = [(o.seq, _epoch(o)) for o in parsed.observations if o.kind == "epoch"]
    paces = sorted([(p.seq, p.ts) for p in parsed.progress if p.ts is not None] + [
        (o.seq, o.ts) for o in parsed.observations if o.kind == "epoch" and o.ts is not None])
    out = list(items)
    first, second = parsed.opening_seqs
    once = bool(first) and second == first + 1  # the log's own launch printed its first line once
    launches = _launches(items, parsed.progress, parsed.reopened, epochs, once, paces)
    for place in reversed(launches):
        obs = Obs("relaunch", place.line, place.ts, place.prev_ts, {}, None, place.text,
                  None, place.seq)
        at = next((k for k, x in enumerate(out) if _line(x) >= place.line), len(out))
        stepped = any(isinstance(x, Record) for x in out[:at])
        if next_script(out[:at], place):
            if notes is not None:
                notes.append(f"line {place.line}: another script starts after the run's own "
                             "end line: a new job step, not a restart")
        elif not _told(out[at:], stepped):
            out.insert(at, Mark("relaunch", obs))
    return first_launch(out, launches)  # the first print a launch too, after a stop


# a script's file name (`train.py`, `run_eval.sh`), as a start or end mark prints it
_SCRIPT = re.compile(r"[\w-]+\.(?:py|sh|ipynb|jl|lua|R)\b")


def next_script(before: list[Any], place: Reopened) -> bool:
    """Whether `place` starts another script after a clean end: the items `before` it end with
    an `end` mark (the run's own end line, `END train.py`, `Training completed`) and nothing
    after it but events that are no stop (no progress, no interruption), and the place names a
    script other than the one the start-up line it prints again names. A restart is a relaunch
    after a failure or an unclean stop; a new script after a clean end is the job's next step
    (fresh17 U03: `START train.py` .. `Save models (cv)`, `END train.py`, then `START
    predict.py` 3 min later, its `Load test df` like `Load train df`: a prediction step, not a
    seventh relaunch). The same script launched again after its clean end stays a relaunch
    (fresh13 P07: `Finetuning completed successfully!`, then the same `Loading CSM model` line
    five more times, five restarts by its facts), and so does another script after a crash or
    a log that just stops (no end line)."""
    end = next((k for k in range(len(before) - 1, -1, -1)
                if isinstance(before[k], Mark) and before[k].kind == "end"), None)
    if end is None or any(isinstance(x, (Record, Interruption)) for x in before[end + 1:]):
        return False
    named, first = set(_SCRIPT.findall(place.text)), set(_SCRIPT.findall(place.startup))
    return bool(named) and bool(first) and named != first


def _told(rest: list[Any], stepped: bool) -> bool:
    """Whether the launch is told already, before its first progress record: by a restart mark
    (a run header printed again, `headers_again`), or, after progress, by a restore (the walk
    reads it as the restart: Lightning's `Restoring states from the checkpoint path at …`
    five lines after its AMP line printed again, shared h200). One launch, one restart."""
    for item in rest:
        if isinstance(item, Record):
            return False
        if isinstance(item, Mark) and item.kind == "restart" or (
                stepped and isinstance(item, Restore)):
            return True
    return False


LOOP_PLACES = 2  # a start-up line printed again this often with the loop going on after it


def _launches(items: list[Any], progress: list[Any], places: list[Reopened],
              epochs: list[tuple[int, int | None]], once: bool = False,
              paces: list[tuple[int, float]] | None = None) -> list[Reopened]:
    """The places that begin a launch: two start-up lines printed again in order (`pair`), or
    the first alone right before such a place, stamped apart (a launch cut after its first
    line), at least `GAP_S` after the line before when stamped and never an unstamped line
    after a stamped one (its record's tail) unless the process stopped between them
    (`_stopped`); and then a launch shown by
    what follows before the next place: a restore, a counter or an epoch that is not above the
    last one before it (the run began again), or the next place being a launch too. With
    nothing between it and the log's end, or the next place, it is one only where no progress
    came before (a launch that never stepped, launched again: fresh12 O19), and, unstamped,
    only after a stop (`_stopped`): the processes of one launch each print the start-up before
    any step (fresh18 V04: eight DDP processes' `Loaded …/train_list.json` / `Loaded
    …/output.json`, then their eight tqdm bars at `0/200`). A place followed
    by progress that goes on is a status line of the loop, not a launch, unless the process
    stopped right before the pair (`_stopped`: a stop line after the last progress, the shell's
    `Killed` glued to a bar): a dead process prints no status line, so the counter going on is
    a new launch's (newcomer6 #21, LandMark#65: `331/1063 [01:06<…]Killed`, the shell prompt and
    `Training with a single process on 1 GPUs.` again, then `348/1063 [01:08<…]Killed`); and a
    start-up line printed again so `LOOP_PLACES` times or more is the loop's own header (a
    profiler's stage lines printed twice an epoch, the first pair before any progress: fresh15
    R10), whose places are launches only where the run visibly began again (a restore, a
    counter gone back). Unstamped, the first line printed again alone, right before another
    print of it, is a launch cut after its first line where the log's own launch printed that
    line once (`once`: its second start-up line right after it): one process prints it once a
    launch, so three `INFO: Using device cuda` in a row, then the start-up, are three launches
    (fresh22 Z19, Pytorch-UNet's train.py); where the log's launch printed it several times in
    a row (each rank of a launch its own copy), a run of copies stays one launch's (ranks
    once)."""
    verdicts: list[tuple[Reopened, str | None]] = []
    for k, place in enumerate(places):
        after = places[k + 1] if k + 1 < len(places) else None
        cut = after is not None and after.pair and after.seq == place.seq + 1 and (
            place.ts is not None and after.ts is not None and after.ts > place.ts)
        cut = cut or once and after is not None and after.seq == place.seq + 1 and (
            place.at == after.at == 0 and place.ts is None and after.ts is None)
        stamped = place.ts is not None and place.prev_ts is not None
        inside = place.ts is None and place.prev_ts is not None and not _stopped(items, place)
        paused = _paused(paces or [], place)
        if not (place.pair or cut or paused and place.at == 0) or inside or (
                stamped and place.ts - place.prev_ts < GAP_S):
            verdicts.append((place, "none"))
            continue
        verdict = _followed(items, progress, place, _next_launch(places, k), epochs)
        if verdict is None and paused:
            verdict = "fresh"  # a launch that died in its start-up, long after the run before
        if verdict == "on" and place.pair and _stopped(items, place):
            verdict = "again"  # the process died: what follows is a new one's (_launches)
        if verdict is None and stamped and not any(p.seq < place.seq for p in progress):
            verdict = "fresh"
        if verdict == "fresh" and place.ts is None and not _stopped(items, place):
            verdict = "none"  # unstamped, nothing stopped: another process's start-up
        verdicts.append((place, verdict))
    ons = Counter(place.at for place, verdict in verdicts if verdict == "on")
    chosen: list[Reopened] = []
    later_launch = False
    for place, verdict in reversed(verdicts):
        if ons[place.at] >= LOOP_PLACES and verdict != "again":
            verdict = "on"  # the loop's header: only a run begun again is a launch
        launch = verdict in ("again", "fresh") or (verdict is None and later_launch)
        if launch:
            chosen.append(place)
        later_launch = launch
    return chosen[::-1]


def _paused(paces: list[tuple[int, float]], place: Reopened) -> bool:
    """Whether `place` is stamped `GAP_S` or more after the line before and after a pause
    longer than any between two stamped progress records or epoch markers before it (`paces`:
    their seqs and stamps, in order; at least two): the run's
    own pace never left such a gap, a new process did (fresh22 Z01: `Loaded I-JEPA encoder …`,
    the script's one start-up line, 13 min after epoch 10 of a run printing an epoch each 30
    s, then `Epoch 1` again; and once more 20 h later, the log's last line)."""
    if place.ts is None or place.prev_ts is None or place.ts - place.prev_ts < GAP_S:
        return False
    stamps = [ts for seq, ts in paces if seq < place.seq]
    gaps = [b - a for a, b in zip(stamps, stamps[1:], strict=False)]
    return bool(gaps) and place.ts - place.prev_ts > max(gaps)


def _stopped(items: list[Any], place: Reopened) -> bool:
    """Whether the process stopped right before `place`: an interruption after the last progress
    record above it. An unstamped place after a stamped record is then no tail of that record
    but a new process's start-up (DCGAN-tensorflow under TF 1.15: `… F
    tensorflow/stream_executor/lib/statusor.cc:34] … no supported devices found for platform
    CUDA`, `Fatal Python error: Aborted` and its stack, then `WARNING:tensorflow:` and the
    contrib notice the log opens with, unstamped, 45 s before the next stamp)."""
    for item in reversed(items):
        if _line(item) >= place.line:
            continue
        if isinstance(item, Record):
            return False
        if isinstance(item, Interruption):
            return True
    return False


def _next_launch(places: list[Reopened], k: int) -> Reopened | None:
    """The first place after `places[k]` that may begin another launch: one that prints a
    start-up line no later than `places[k]`'s, or comes at least `GAP_S` after the line before
    it. A later start-up line printed again right after its own line (under `GAP_S`) goes on
    with the same launch's start-up, other lines between (fresh17 U14: the opening again at
    20:41:57 after a traceback, a dtype listing, then the class-count lines of the start-up
    again 0.001 s after the line before, then `Fold 1/2`): what follows it is this launch's."""
    place = places[k]
    for later in places[k + 1:]:
        quick = later.ts is not None and later.prev_ts is not None and (
            later.ts - later.prev_ts < GAP_S)
        if later.at <= place.at or not quick:
            return later
    return None


def _followed(items: list[Any], progress: list[Any], place: Reopened, after: Reopened | None,
              epochs: list[tuple[int, int | None]]) -> str | None:
    """What follows `place` (before `after`): `again` when it shows the run begun again (a
    restore, a counter not above the last before it), `fresh` when progress follows where none
    came before (a launch that never stepped, launched again), `on` when it shows the loop going
    on, None when nothing follows (`_launches`). The counters are the progress lines' as printed
    (epoch, then step), duplicates kept: a relaunch's first line may repeat the last one read."""
    end_line = after.line if after is not None else float("inf")
    end_seq = after.seq if after is not None else float("inf")
    if any(isinstance(x, Restore) and place.line < x.line < end_line for x in items):
        return "again"
    before = [p for p in progress if p.seq < place.seq]
    nxt = next((p for p in progress if place.seq < p.seq < end_seq), None)
    if nxt is not None:
        return "fresh" if not before else "again" if _key(nxt) <= _key(before[-1]) else "on"
    shown = [e for s, e in epochs if place.seq < s < end_seq and e is not None]
    last = [e for s, e in epochs if s < place.seq and e is not None]
    if shown:
        return "fresh" if not last else "again" if shown[0] <= last[-1] else "on"
    return None


def _key(prog: Any) -> tuple[int, float]:
    return (prog.epoch or 0, prog.printed if prog.printed is not None else 0)


def _opening_loops(items: list[Any], seqs: tuple[int, int]) -> bool:
    """Whether an opening line is a progress line of a template the loop repeats (3 records or
    more of its family): then the opening is the loop's, and no place a launch."""
    families = [x.prog.family for x in items if isinstance(x, Record) and x.prog.seq in seqs]
    return any(sum(1 for x in items if isinstance(x, Record) and x.prog.family == family) >= 3
               for family in families)


def _epoch(o: Obs) -> int | None:
    value = o.data.get("epoch", "")
    return int(value) if value.isdigit() else None


def _line(item: Any) -> int:
    if isinstance(item, Mark):
        return item.obs.line
    return int(item.line)


def epochs_again(items: list[Any], parsed: ParsedLog) -> list[Any]:
    """`items` with a `relaunch` mark where a stamped epoch marker goes back to the first epoch
    after a pause a new process needs, in a log with no progress record (the walk reads a
    counter's fall from the steps; here the epochs are all the log counts). One shape of
    marker (digits masked) is followed at a time: its epoch falls to 0 or 1, and the pause
    since its last print is at least `GAP_S` and longer than any between two of its prints
    since the run before began (fresh17 U11, PPI-predictor: `Epoch 20/20, Train Loss` at
    19:15:01, then `Epoch 1/20, Train Loss` at 22:03:57, 2024-11-27 and 2024-11-29, each run
    5 s an epoch: four launches; its `Validation Loss` markers fall with them, one launch each
    time). Unstamped markers that fall tell nothing of a new process (a
    script training one model after another prints `[1/6]` again at once: fresh17 U18), nor
    does a fall within the run's own pace (a new model of one process), so neither is one."""
    if any(isinstance(x, Record) for x in items):
        return markers_fall(items, parsed.observations)  # markers above the records that fall
    runs: dict[str, tuple[int, float, float]] = {}  # shape -> last epoch, its stamp, longest gap
    marks: list[Mark] = []
    for o in parsed.observations:
        epoch = _epoch(o) if o.kind == "epoch" else None
        if epoch is None or o.ts is None:
            continue
        shape = _DIGITS.sub("#", o.text)
        last = runs.get(shape)
        if last is None:
            runs[shape] = (epoch, o.ts, 0.0)
            continue
        gap = o.ts - last[1]
        if epoch < last[0] and epoch <= 1 and gap >= max(GAP_S, last[2]) and gap > last[2]:
            if not (marks and marks[-1].obs.ts is not None and marks[-1].obs.ts > last[1]):
                marks.append(Mark("relaunch", o))  # one launch: another shape told it already
            runs[shape] = (epoch, o.ts, 0.0)
        else:
            runs[shape] = (epoch, o.ts, max(last[2], gap))
    out = list(items)
    for mark in reversed(marks):
        at = next((k for k, x in enumerate(out) if _line(x) >= mark.obs.line), len(out))
        out.insert(at, mark)
    return out
