"""No full garbage collection while one log is read and assembled (the reader's edge).

`young_collections_only()` is a context manager: inside it CPython's cyclic collector still
runs its young collections (generations 0 and 1, every 700 allocations as usual, so a cycle
made and dropped while reading is found as before), but never a full one; on leaving, the
thresholds are put back and the full collection owed runs when CPython next finds it due.

Why: a big log's reader holds up to `reader.MAX_PROGRESS` progress records (each a `Prog` and
the regex match it is read from later), all tracked by the collector; every ~10^5 records that
survive, CPython walks every tracked object again (a full collection), and the records are
garbage only by reference count (thinning drops them; they hold no cycles), so those walks find
nothing. On a 64 MiB tqdm-bar log (854,313 redraws) they were 40 % of the read's CPU time
(`bench/training_log_read.py`: 22 full collections of ~6 x 10^5 objects).
"""

from __future__ import annotations

import gc
from collections.abc import Iterator
from contextlib import contextmanager

NEVER = 1 << 30  # young collections between two full ones: never, while reading


@contextmanager
def young_collections_only() -> Iterator[None]:
    """See the module docstring; the thresholds before are restored however the body ends."""
    before = gc.get_threshold()
    if before[0] == 0:  # the collector is off (a caller's choice): leave it so
        yield
        return
    gc.set_threshold(before[0], before[1], NEVER)
    try:
        yield
    finally:
        gc.set_threshold(*before)
