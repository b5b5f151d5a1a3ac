"""A step counter that starts again inside one process: a new phase, not a relaunch (pure).

`new_phases(items, notes) -> items`: a counter that goes back is read by the walk as a restart
(the job was launched again). A script may also run its loop several times in one process: a
new trial (SUBLIME's `for trial in range(ntrials)`: `Epoch 04000 | CL Loss 3.9097`, `Trial: 1`,
`Best val ACC: …`, then `Epoch 00001 | CL Loss 7.9036` 1.3 s later, fresh14 Q15) or a new
`model.fit` call on the same model (a Keras 1 script fitting three times: `Epoch 10/10`, `Train
on 400000 samples, …`, `Epoch 1/10`; and after `Epoch 00008: early stopping`, `Epoch 1/10`
again, fresh14 Q16). A fall of the counter is such a new phase when all of these hold:

- the new phase counts from its beginning: its first job-wide step is 0 or 1, or the stride of a
  counter printed every few (`_from_start`; a relaunch that resumes starts mid-way: Keras's
  `Epoch 6/40` after early stopping, a new fit resumed with `initial_epoch`, is a restart,
  fresh8 K02);
- the phase before was over: stamped, the new phase's first record comes within `NEW_PHASE_S`
  of the last record before it (no process is started, imports its framework and builds its
  model in that time); else its last record printed its counter at its own N (`Epoch 10/10`),
  or an end line follows it (`end` wording: `Training completed`, Keras's `Epoch 00008: early
  stopping`), and, stamped, the pause before the new phase is no longer than the longest
  between two records of the phase before (csm-1b's LoRA script at `Starting epoch 13/13`,
  `Finetuning completed successfully!`, then 11 minutes later `Starting epoch 1/13` of a
  relaunch whose `Loading CSM model` line no rule reads, fresh13 P07, stays a restart). A
  counter that falls after a phase cut short with no stamps (GateNet's `[iter 50000]` then its
  arguments printed and `[iter 1]`, fresh5 G28) stays a restart;
- nothing between them tells a start or a stop: no init, train_start, restart or relaunch
  mark, no restore, no interruption (a save and an end line may come between).

The new phase's records are then numbered on from the last step before it (the steps of one
process add up: job-wide step = last step of the phase before + printed step), the end line
between them is kept as a word (`phase_end`: the job went on), and a note names the line.
"""

from __future__ import annotations

from typing import Any

from gpuslo.goodput.logs.items import Interruption, Mark, Restore
from gpuslo.goodput.logs.progress import Record
from gpuslo.goodput.logs.stamps import TransportTime

NEW_PHASE_S = 2.0
_STARTS = ("init", "train_start", "restart", "relaunch")


def new_phases(items: list[Any], notes: list[str]) -> list[Any]:
    """`items` with each new phase of one process (module docstring) numbered on."""
    out = list(items)
    last: tuple[int, Record] | None = None
    offset = runs = 0  # steps and runs added to the records after a new phase
    start = 0  # the index of the current phase's first record
    for k, item in enumerate(out):
        if not isinstance(item, Record):
            continue
        printed = item.glob
        item.glob, item.run = item.glob + offset, item.run - runs
        if last is not None and item.glob < last[1].glob:
            ended = _ended(out, start, last[0], k) if _from_start(out, k, printed) else None
            start = k
            if ended is not None:
                shift = last[1].glob + max(printed, 1) - item.glob
                offset, item.glob = offset + shift, item.glob + shift
                runs, item.run = runs + 1, item.run - 1
                notes.append(f"line {item.line}: the counter starts again after {ended} with "
                             "nothing between telling a start or a stop: a new phase of the "
                             f"same process, counted on from step {last[1].glob}, not a "
                             "restart")
                _quiet_ends(out, last[0], k)
        last = (k, item)
    return out


def _from_start(items: list[Any], k: int, printed: int) -> bool:
    """Whether the record `items[k]`, printed as `printed`, counts its phase from the beginning:
    0 or 1, or the stride of a counter printed every few (the next record of its template
    prints 2 x `printed`: GoDaddy's LSTM `[5/30]`, `[10/30]` .. after nn.Linear's `[6/6]`, a
    new model of one process, fresh17 U18). A resume mid-way (`Epoch 6/40`, then `Epoch 7/40`)
    is none."""
    if printed <= 1:
        return True
    record = items[k]
    nxt = next((x for x in items[k + 1:] if isinstance(x, Record)
                and x.prog.family == record.prog.family), None)
    return nxt is not None and nxt.printed == 2 * printed


def _ended(items: list[Any], start: int, a: int, b: int) -> str | None:
    """How the phase whose records are `items[start..a]` is seen over before the record
    `items[b]` (words for the note), None when it is not, or when a line between tells a
    start or a stop (module docstring)."""
    before, after = items[a], items[b]
    between = items[a + 1:b]
    if any(isinstance(x, (Restore, Interruption)) or (
            isinstance(x, Mark) and x.kind in _STARTS) for x in between):
        return None
    gap = after.ts - before.ts if _own(before.ts) and _own(after.ts) else None
    if gap is not None and 0 <= gap <= NEW_PHASE_S:
        return f"{gap:.2f} s (under {NEW_PHASE_S:g} s: no new process)"
    if gap is not None and gap > _slowest(items[start:a + 1]):
        return None  # a pause longer than any of the phase's own: a process may have started
    if before.total is not None and before.printed == before.total:
        return f"its N ({before.printed}/{before.total})"
    end = next((x for x in between if isinstance(x, Mark) and x.kind == "end"), None)
    return f"an end line (line {end.obs.line})" if end is not None else None


def _own(ts: float | None) -> bool:
    """Whether `ts` is the trainer's own stamp: a collector's (`stamps.TransportTime`) is when a
    line reached the pipe, and Python block-buffers a pipe, so its pauses are the buffer's
    flushes (many lines at one time, then a gap), not the run's pace."""
    return ts is not None and not isinstance(ts, TransportTime)


def _slowest(items: list[Any]) -> float:
    """The longest time between two stamped records in a row among `items` (0 with none)."""
    stamps = [x.ts for x in items if isinstance(x, Record) and _own(x.ts)]
    return max((b - a for a, b in zip(stamps, stamps[1:], strict=False)), default=0.0)


def _quiet_ends(items: list[Any], a: int, b: int) -> None:
    """The end lines between two phases of one process become words: the job went on."""
    for i in range(a + 1, b):
        x = items[i]
        if isinstance(x, Mark) and x.kind == "end":
            items[i] = Mark("phase_end", x.obs, x.t0, x.t1)
