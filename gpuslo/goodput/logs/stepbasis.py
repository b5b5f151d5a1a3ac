"""Goodput by steps for a log with commits and steps but no clock (pure).

`step_goodput(items, job, hang_min_s) -> dict | None`. A log whose lines give no time at all
(no stamps, durations, elapsed times or rates: darkflow's `step N - loss …` with `Checkpoint at
step N`) cannot apportion GPU-seconds, yet its commits and restarts say which steps were
productive. Each progress record is given its own steps as its duration (one time unit per
step; a run's first record - the log's first, or the first after a restore or a stop - counts
one: the steps before it are not in the log), every other item none, and the same walk
(`walk.Walk`) and the one calculator (`compute_goodput`) run on that step
clock: the steps re-run after a restart are wasted progress and the steps after the last proven
commit are uncommitted, by the very rules the time-based goodput follows. The ratio productive /
accounted is then goodput by steps, assuming equal step times; every GPU-second figure stays
unknown (None). Items are copied: the log's own timeline, facts and journal events (what the
exporter and `gpuslo report --training-log` book as GPU-seconds) are not touched.

A restart whose resumed step the log does not give (neither printed nor inferable from the
counter: improved-diffusion's `loading model from checkpoint: MAINMOD_70K/ema_0.9999_070000.pt`
whose counter starts again at 0, fresh8 K10; a second run header with no restore line) leaves
the step basis nothing to settle: which of the steps around it re-ran steps the checkpoint
already held, or ran past it and were lost, cannot be counted, and with no clock the restart's
own cost (restore, re-initialisation) is invisible too - every restart costs something, so
"1.0" would be a claim the lines cannot back. An operator reading goodput 1.0 beside a restart
would take it as "the restart lost nothing". Then goodput is `unknown` (status `unknown`,
`goodput` None) with a reason naming the restart's line; `steps.accounted` (the steps the
log shows run) is still given, the productive/wasted/uncommitted split is None. A restart whose
resumed step is known (`Loading checkpoint from ckpt/model_step10.pt`, a counter that goes
back) is counted as before. (The time basis is not changed by this rule: it has the clock.)

Returns the goodput object's step fields, `goodput_basis` `steps`, with `steps` {productive,
wasted, uncommitted, accounted}; None when no step was accounted (no progress to apportion).
"""

from __future__ import annotations

import copy
from typing import Any

from gpuslo import names
from gpuslo.goodput.calculator import compute_goodput
from gpuslo.goodput.logs.items import Interruption, Restore
from gpuslo.goodput.logs.journal_writer import Journal
from gpuslo.goodput.logs.progress import Record
from gpuslo.goodput.logs.timeline import place
from gpuslo.goodput.logs.walk import Walk

BASIS_STEPS = "steps"
BASIS_GPU_SECONDS = "gpu_seconds"
NOTE = "no clock in the log: goodput by steps, assuming equal step times; GPU-seconds unknown"
_TIMES = ("ts", "start_ts", "end_ts", "part_ts", "prev_ts", "seconds", "ran_for_s")


def _on_step_clock(items: list[Any]) -> list[Any]:
    """A copy of `items` timed by steps: a record lasts its steps, nothing else takes time."""
    out = copy.deepcopy(items)
    fresh = True  # the next record opens a run: its steps before it are not in the log
    for item in out:
        if isinstance(item, Record):
            item.dur = float(item.delta) if item.delta and item.delta > 0 and not fresh else 1.0
            item.step_s = None  # no step time: no hang, slowdown or save pause is read
            item.prog.ts = item.prog.elapsed = None
            fresh = False
            continue
        fresh = fresh or isinstance(item, (Restore, Interruption))
        for name in _TIMES:
            if hasattr(item, name):
                setattr(item, name, None)
        if hasattr(item, "obs"):
            item.obs.ts = None
    return out


def step_goodput(items: list[Any], job: str, hang_min_s: float) -> dict[str, Any] | None:
    """Goodput by steps (see the module docstring)."""
    timed = _on_step_clock(items)
    place(timed)
    journal = Journal(job, 1)
    restarts = Walk(timed, journal, [], hang_min_s).run()["restarts"]
    result = compute_goodput(journal.events)
    productive = result.gpu_seconds[names.CATEGORY_PRODUCTIVE]
    wasted = result.gpu_seconds["wasted_progress"]
    accounted = sum(result.gpu_seconds.values()) + result.uncommitted_gpu_s
    if accounted <= 0:
        return None
    out = {
        "status": "ok",
        "goodput_basis": BASIS_STEPS,
        "goodput": round(productive / accounted, 6),
        "steps": {"productive": round(productive), "wasted": round(wasted),
                  "uncommitted": round(result.uncommitted_gpu_s), "accounted": round(accounted)},
        "gpu_seconds": {k: None for k in result.gpu_seconds},
        "uncommitted_gpu_s": None,
        "accounted_gpu_s": None,
        "slowdown_gpu_s": None,
        "reason": NOTE,
    }
    blind = [r["line"] for r in restarts if r["resumed_from_step"] is None]
    if blind:  # see the module docstring: the split cannot be settled
        out.update(status=names.STATUS_UNKNOWN, goodput=None, reason=(
            f"{NOTE}; the restart at line {blind[0]} does not say the step it resumed from, so "
            "the steps it re-ran or lost, and its own cost, cannot be counted: goodput unknown"))
        out["steps"].update(productive=None, wasted=None, uncommitted=None)
    return out
