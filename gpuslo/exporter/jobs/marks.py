"""High-water marks of the job counters: what both job tailers (`journals.JournalTailer`,
`logs.JobLogTailer`) put between their recomputed goodput and what the exporter publishes.

The counters are `gpuslo_job_gpu_seconds_total{job, category}` and
`gpuslo_job_interruptions_total{job, layer}` (`collector.add_jobs`, README "Metric reference").
Each is a recomputation of the job's whole input (journal or log) at every update, and a
recomputation can go down: a later line makes earlier seconds mean something else (a re-attribution
of the same seconds: `productive` that a log read again books to another category for a while,
then gives back). Published as is, a counter going down is a counter reset to Prometheus, and
`rate()`/`increase()` then count its whole value again. So each series holds its high-water mark:
a dip is not published, the series stays at its mark until the recomputed value passes it, and
only then moves on (the recomputation is the truth; the mark only keeps the series monotonic).

While a dip is held, the seconds it moved are in two series at once (held in the old category,
counted in the new one), so the sum over categories can exceed the GPU-seconds the job held by
those seconds, until the recomputed value of every category is back at or above its mark (a
re-attribution that is never undone leaves that excess for the job's life). That is the trade
Prometheus counters ask for: each series monotonic, never a sum kept exact by lowering one; the
exporter's settle window (`logs.DEFAULT_SETTLE_S`) keeps most re-readings from being published
in the first place. Pure functions; the tailers keep and persist the marks.
"""

from __future__ import annotations

import copy
import math
from typing import Any

from gpuslo.goodput.calculator import JobGoodput

COUNTERS = ("gpu_seconds", "interruptions")  # JobGoodput fields published as counters
Marks = dict[str, dict[str, float]]  # field -> series key (category or layer) -> high-water


def raised(value: JobGoodput, mark: Marks | None) -> JobGoodput:
    """`value` with every counter at least its high-water `mark` (a copy; pure). A series the
    mark does not name, or a mark that is not a finite number, leaves the value as it is."""
    if not mark:
        return value
    out = copy.deepcopy(value)
    for key in COUNTERS:
        counters = getattr(out, key)
        for name, high in (mark.get(key) or {}).items():
            if (name in counters and isinstance(high, int | float) and math.isfinite(high)
                    and high > counters[name]):
                counters[name] = type(counters[name])(high)
    return out


def marks_of(value: JobGoodput, mark: Marks | None = None) -> Marks:
    """The high-water marks after publishing `value`: per series, the larger of `mark` and
    the value (pure; JSON-ready)."""
    value = raised(value, mark)
    return {key: dict(getattr(value, key)) for key in COUNTERS}


def loaded(raw: Any) -> Marks:
    """Marks read back from a state file, only their well-formed entries (fail closed: a broken
    entry is a missing mark, so the series goes on from its recomputed value)."""
    if not isinstance(raw, dict):
        return {}
    return {key: {str(name): float(high) for name, high in raw[key].items()
                  if isinstance(high, int | float) and math.isfinite(high)}
            for key in COUNTERS if isinstance(raw.get(key), dict)}
