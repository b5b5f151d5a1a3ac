"""The steps a run's first progress line stands for, where a line before it names the step its
loop starts from (pure).

`from_start(items)`: a progress line may print a mean over the steps since the line before it
(Megatron's `elapsed time per iteration (ms)`: its interval timer over the iterations since the
last log; on a run's first line, since the loop began). A run's first record has no record
before it, so `steptimes` takes the next record's stride, else one step, for the steps it
stands for. Where a `train_start` line names the step the loop starts from (its `step` group:
Megatron's train() prints `Setting rerun_state_machine.current_iteration to {iteration}...`,
the iteration loaded from the checkpoint or 0, just before it starts its interval timer), the
run's first record after it stands for its counter minus that step, each at the record's step
time (newcomer5 #12: Megatron-Bridge's lone `iteration 10/10 | … (ms): 4647.8` after `… to
0...` ran 10 iterations, 46.5 s, not one). A start line that names no step changes nothing;
the record must follow it with only words between (no save, restore or stop) and be the first
of its run (no stride of its own).
"""

from __future__ import annotations

from typing import Any

from gpuslo.goodput.logs.progress import Record
from gpuslo.goodput.logs.story import Mark, _int


def from_start(items: list[Any]) -> None:
    """Set `dur` of each run's first record that a step-naming start line precedes (module
    docstring); `items`: the log's items in order (`items.group_events`)."""
    start: int | None = None
    for item in items:
        if isinstance(item, Mark) and item.kind == "train_start":
            start = _int(item.obs.data.get("step"))
        elif isinstance(item, Record):
            if start is not None and item.delta is None and item.step_s is not None and (
                    item.glob > start):
                item.dur = item.step_s * (item.glob - start)
            start = None
        elif not isinstance(item, Mark):
            start = None  # a save, restore or stop between: the record is not the loop's first
