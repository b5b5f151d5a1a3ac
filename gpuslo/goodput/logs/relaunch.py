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
another wording. Epoch markers printed again are `items._Grouper._header_again`'s.
"""

from __future__ import annotations

import re
from typing import Any

from gpuslo.goodput.logs.items import Interruption, Mark
from gpuslo.goodput.logs.progress import Record

_DIGITS = re.compile(r"\d+")


def headers_again(items: list[Any]) -> list[Any]:
    """`items` with each repeated run header (module docstring) made a `restart` mark."""
    last: dict[str, int] = {}  # header shape -> index of its last print
    out = list(items)
    for k, item in enumerate(items):
        if not (isinstance(item, Mark) and item.kind == "train_start"):
            continue
        shape = _DIGITS.sub("#", item.obs.text.strip())
        before = last.get(shape)
        last[shape] = k
        if before is not None and any(isinstance(x, (Record, Interruption))
                                      for x in items[before + 1:k]):
            out[k] = Mark("restart", item.obs, item.t0, item.t1)
    return out
