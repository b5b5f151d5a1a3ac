"""A rate of steps printed on a save line times the steps before it, where nothing else does (pure).

`save_rates(records, observations)`: some loops print no time on their progress lines and put
their speed on the save line instead, as steps a second beside the step saved (MicroDuck-RL's
flybrain trainer: `episode=1277 step=18993 reward=… loss=…` once an episode, no clock, then
`saved=<run>/flybrain-online.pt step=19000 env_steps_per_s=6.4` every 1000 environment steps,
fresh24 AB09). Where no record of the log is timed (no stamps, no duration, no rate of its own),
each record gets the seconds per step of the first save line after it in the log that prints
such a rate for a step at or past the record's (the rate covers the steps up to the save),
source `save_rate`. Records after the last such line, or before a save that names an earlier
step (another counter), stay untimed: nothing measured them. A rate of items (`samples_per_s`,
`tokens/s`) is throughput, not steps, and is not read.
"""

from __future__ import annotations

import re
from typing import Any

# `env_steps_per_s=6.4`, `steps_per_second: 2.1`, `it/s=3`: steps (of any prefix) a second
_STEP_RATE = re.compile(r"(?i)(?<![\w/])(?:[a-z]{1,20}_)?(?:steps?|iters?|iterations?|updates?|it)"
                        r"(?:_per_|/)s(?:ec(?:ond)?)?\s*[:=]\s*(\d{1,9}(?:\.\d{1,9})?)(?![\d.])")


def _rate_of(obs: Any) -> float | None:
    """Seconds per step from a save line's steps-a-second rate, None without one (or at 0)."""
    found = _STEP_RATE.search(obs.text)
    if found is None or float(found.group(1)) <= 0:
        return None
    return 1.0 / float(found.group(1))


def save_rates(records: list[Any], observations: list[Any]) -> None:
    """Time untimed records by the rate on the save line after each (module docstring)."""
    if not records or any(r.step_s is not None or r.ts is not None for r in records):
        return
    rated = []
    for obs in observations:
        step = obs.data.get("step") if obs.kind == "save" else None
        seconds = _rate_of(obs) if step is not None and str(step).isdigit() else None
        if seconds is not None:
            rated.append((obs.seq, int(step), seconds))
    if not rated:
        return
    for i, rec in enumerate(records):
        after = next(((step, s) for seq, step, s in rated if seq > rec.prog.seq), None)
        if after is None or after[0] < rec.glob:
            continue
        rec.step_s, rec.source = after[1], "save_rate"
        nxt = records[i + 1] if i + 1 < len(records) else None
        rec.dur = after[1] * (rec.delta or (nxt.delta if nxt is not None and nxt.delta else 1))
