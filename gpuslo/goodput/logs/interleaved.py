"""An error report printed before the one bar state it stopped (pure).

A Python job writes its traceback to stderr at once; a bar redrawn with `\\r` keeps its last
state on the line it started, so a notebook or a paste of both streams can show the error
first and the bar state it died in after it (ultralytics/yolov3 on Colab, 2020, fresh19 W20:
`RuntimeError: CUDA out of memory …`, then `0/299 … 63% 34/54 [00:42<00:25,  1.26s/it]`, the
end of the paste). Read in order, that bar state looks like progress that went on after the
error, and the error is dropped. `error_first(items)` moves the bar state before the error
where it holds that: no progress comes before the error, one unstamped bar record (and nothing
but marks) comes after it, and the log ends there. A stamped record is left where it is (its
stamp orders it), as is progress on more than one line after an error: the job went on.
"""

from __future__ import annotations

from typing import Any

from gpuslo.goodput.logs.progress import Record
from gpuslo.goodput.logs.story import Interruption, Mark


def error_first(items: list[Any]) -> list[Any]:
    """`items` with a lone final bar record moved before the error report it follows (see the
    module docstring); the same list object, changed in place, or unchanged."""
    stops = [k for k, x in enumerate(items) if isinstance(x, Interruption)]
    if len(stops) != 1 or items[stops[0]].hang:
        return items
    k = stops[0]
    if any(isinstance(x, Record) for x in items[:k]):
        return items
    after = [x for x in items[k + 1:] if not isinstance(x, Mark)]
    if len(after) != 1 or not isinstance(after[0], Record) or items[-1] is not after[0]:
        return items
    rec = after[0]
    if not rec.prog.bar or rec.prog.ts is not None:
        return items
    items.remove(rec)
    items.insert(k, rec)
    return items
