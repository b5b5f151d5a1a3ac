"""Launches a log shows before its own first progress record (pure).

`first_launch(items, launches) -> items`: the script's start-up is found by its lines printed
again (`opening.Opening`, `relaunch._launches`), so the launch that printed it the first time is
the log's own, never a relaunch. But where that first print follows a stop line (an error, an
out-of-memory report, a crash traceback) and no progress, the lines above it are an earlier
launch's, cut where the log begins, that stopped: the first print is a relaunch too. From
fresh24 AB10 (a GPT-2 trainer: `WARNING: ran out of memory` nine times, 3 h 13 min later `using
device:cuda:0` and the start-up block, `start training`, then the same block again 19 min later
and batches 10-230 of epoch 1: two relaunches) and AB20 (a TRL GRPO script: an
`IndentationError` traceback with no stamp, then DeepSpeed's `Setting ds_accelerator to cuda`,
a `ValueError` traceback, and the same DeepSpeed line again: three launches). Not a relaunch:
a first print with progress above it (the walk reads the counter going back), nor one with no
stop line above it (the log's first launch, whatever it printed before its start-up), nor one
printed under `GAP_S` after a stamped line before it (the same process going on), nor one a
start-up or launcher line already tells (an init, restart or relaunch mark after the stop).

`markers_fall(items, observations) -> items`: in a log whose progress records are its epochs
(one line an epoch, family `epochs`), epoch markers of the same counter (`<epoch>/<total>`,
the records' planned total) printed before the first record, the last above the record's
epoch, are a run the records do not include (its lines lacked the duration the records carry):
the counter fell where the records begin, so the run began again, as a fall between two records
is (the walk). From fresh24 AB13 (Dino_augseg: `Epoch 1/100 | LR: …` and `Epoch 2/100 | …`
with no duration, then `Epoch 1/100 [38.7s] | …`, `Epoch 2/100 [34.3s]`, then `Epoch 1/100
[138.0s]` .. `Epoch 16/100`: three runs from epoch 1). A marker at or below the first record's
epoch (an epoch's own header above its line) is no fall.
"""

from __future__ import annotations

import re
from typing import Any

from gpuslo.goodput.logs.items import Interruption, Mark
from gpuslo.goodput.logs.opening import Reopened
from gpuslo.goodput.logs.parsedlog import Obs
from gpuslo.goodput.logs.progress import Record

GAP_S = 5.0  # as `relaunch.GAP_S`: a new process starts at least this long after the line before
_TOLD = ("init", "restart", "relaunch")  # marks the walk already reads as a launch after a stop


def _line(item: Any) -> int:
    return item.obs.line if isinstance(item, Mark) else int(item.line)


def first_launch(items: list[Any], launches: list[Reopened]) -> list[Any]:
    """`items` with a `relaunch` mark at the first print of the start-up line the earliest of
    `launches` prints again, where that print is a launch (module docstring)."""
    place = launches[0] if launches else None
    if place is None or place.first is None:
        return items
    line, seq, ts, prev_ts = place.first
    before = [x for x in items if _line(x) < line]
    if any(isinstance(x, Record) for x in before) or not any(
            isinstance(x, Interruption) for x in before):
        return items
    if prev_ts is not None and (ts is None or ts - prev_ts < GAP_S):
        return items  # the same process going on (or an unstamped tail of a stamped line)
    stop = max(_line(x) for x in before if isinstance(x, Interruption))
    if any(isinstance(x, Mark) and x.kind in _TOLD and stop < _line(x) < place.line
           for x in items):
        return items
    at = next((k for k, x in enumerate(items) if _line(x) >= line), len(items))
    out = list(items)
    out.insert(at, Mark("relaunch", Obs("relaunch", line, ts, prev_ts, {}, None,
                                        place.startup, None, seq)))
    return out


def markers_fall(items: list[Any], observations: list[Obs]) -> list[Any]:
    """`items` with a `relaunch` mark before the first progress record where the epoch markers
    above it fall to it (module docstring)."""
    first = next((k for k, x in enumerate(items) if isinstance(x, Record)), None)
    if first is None:
        return items
    rec = items[first]
    if rec.prog.family != "epochs" or not rec.total:
        return items
    same = re.compile(rf"(?<![\d.])(\d+)\s*/\s*{rec.total}(?![\d.])")
    shown = [o for o in observations if o.kind == "epoch" and o.seq < rec.prog.seq]
    last = shown[-1] if shown else None
    found = same.search(last.text) if last is not None else None
    if last is None or found is None or int(found.group(1)) != _int(last.data.get("epoch")):
        return items
    if int(found.group(1)) <= rec.printed or any(
            isinstance(x, Mark) and x.kind in _TOLD for x in items[:first]):
        return items
    out = list(items)
    out.insert(first, Mark("relaunch", Obs("relaunch", rec.line, rec.ts, None, {}, None, "",
                                           None, rec.prog.seq)))
    return out


def _int(value: Any) -> int | None:
    return int(value) if isinstance(value, str) and value.isdigit() else None
