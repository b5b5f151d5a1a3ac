"""What a template was read as (`Reading`) and each field's role (`Role`): the shapes
`roles.read_template` fills and the later passes (`durations`, `recheck`, `learn`) refine. Pure
data; see `roles` for what each role means.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gpuslo.goodput.logs.templates import Template

ROLES = ("step", "total", "epoch", "elapsed", "remaining", "step_s", "window_s", "smoothed_s",
         "line_s", "unit_s", "rate_ips", "rate_spi", "metric")


@dataclass(frozen=True)
class Role:
    """A field's role; `scale` turns its number into seconds (durations) or 1."""

    role: str
    scale: float = 1.0
    why: str = ""
    day: bool = False  # an `elapsed` that is the time of day: its differences only are a clock


@dataclass
class Reading:
    """What a template was read as. `roles` by value index; `step`, `total`, `epoch` the indexes
    of those fields (None when absent); `per_epoch` the step counter restarts every epoch;
    `bar` the template is a progress bar (elapsed time since it began); `progress` whether its
    records are training progress, `why` the reason in words; `numbers_bar` its counter is the
    job-wide number of the steps of a bar it is glued to (`glued`); `window_steps` the steps a
    timing line's duration covers where it times many (`windowlines`)."""

    template: Template
    roles: dict[int, Role] = field(default_factory=dict)
    step: int | None = None
    total: int | None = None
    epoch: int | None = None
    per_epoch: bool = False
    bar: bool = False
    progress: bool = False
    epoch_marker: bool = False
    why: str = ""
    numbers_bar: bool = False
    window_steps: int | None = None
