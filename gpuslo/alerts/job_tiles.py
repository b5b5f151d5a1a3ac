"""The job tiles rule group: the report's job GPU-seconds per (job, category) at a coarse
interval (`gpuslo report --prometheus` reads it, `gpuslo.slo.sources.job_tiles`), so the week's
goodput sums a few series per job instead of reading every node's counters at both ends of the
window (issue 30: that read grew with the fleet).

Evaluated every `names.JOB_TILE_INTERVAL_S` (pinned in the group), each evaluation at t over the
tile (t - interval, t]:

- `names.JOB_TILE_SECONDS` per (job, category): the increase of `gpuslo_job_gpu_seconds_total`
  over the tile, summed over the job's nodes — each counter's last value in the tile minus its
  last value in the `names.JOB_TILE_HOLD` before the tile (the report's raw read's rule at its
  window start), or its whole last value when it has none there (a job first seen). No
  `increase()` extrapolation, so Prometheus and VictoriaMetrics record the same numbers; the
  increases of back-to-back tiles telescope to last - first of every counter. A counter silent
  for longer than the hold counts whole again when it comes back (a reset after an exporter
  restart is right to; a counter that kept running through a partition is not): hence
- `names.JOB_TILE_WHOLE` per counter the tile counted whole, its value (no sample when none:
  a sample per counter first seen, or back after the hold). The reader finds a counter
  counted whole twice, or once after a value in the day before the window, and reads its job
  from the counters (`gpuslo.slo.sources.job_tiles`), so no GPU-second is counted twice.
- `names.JOB_TILE_EVALUATIONS`: 1 at every evaluation, fleet-wide: the reader finds the tiles
  the rules covered and reads the counters themselves where one is missing.

Cost of one evaluation: every job counter's samples over the hold (a day), once an hour.
"""

from __future__ import annotations

from gpuslo import names
from gpuslo.alerts.promtool_case import recorded_case

GROUP = "gpuslo-job-tiles"
COUNTER = "gpuslo_job_gpu_seconds_total"


def _duration(seconds: int) -> str:
    """A PromQL duration of whole seconds, in hours or minutes when it divides."""
    for unit, size in (("h", 3600), ("m", 60)):
        if seconds % size == 0:
            return f"{seconds // size}{unit}"
    return f"{seconds}s"


def increase_expr(window: str) -> str:
    """The tile's increase per (job, category) over (t − window, t] (module docstring): the
    rule's expression (window `1h`), and the value `gpuslo.slo.sources.job_tiles._span` computes
    in three cheaper steps for a span the rule did not cover (tests/slo/test_job_tiles.py)."""
    after = f"last_over_time({COUNTER}[{window}])"
    before = f"last_over_time({COUNTER}[{names.JOB_TILE_HOLD}] offset {window})"
    return f"sum by (job, category) (\n  ({after} - {before})\nor\n  {after}\n)"


def whole_expr(window: str) -> str:
    """The counters `increase_expr(window)` counts whole at t (a value in the window, none in
    the hold before it), each with its value (module docstring)."""
    after = f"last_over_time({COUNTER}[{window}])"
    before = f"last_over_time({COUNTER}[{names.JOB_TILE_HOLD}] offset {window})"
    return f"{after}\nunless\n{before}"


def recording_group() -> dict:
    """The `gpuslo-job-tiles` rule group (interval pinned; see the module docstring)."""
    interval = _duration(names.JOB_TILE_INTERVAL_S)
    return {
        "name": GROUP,
        "interval": interval,
        "rules": [
            {"record": names.JOB_TILE_EVALUATIONS, "expr": "vector(1)"},
            {"record": names.JOB_TILE_SECONDS, "expr": increase_expr(interval)},
            {"record": names.JOB_TILE_WHOLE, "expr": whole_expr(interval)},
        ],
    }


def job_tiles_case() -> dict:
    """promtool test, samples every minute, the group evaluated at 2h over the tile (1h, 2h]:
    job a on n1 and n2, each gaining 60 productive GPU-seconds a minute from 600 before the
    test (3,600 each in the tile: 7,200); job b first seen on n2 at minute 70 with 120
    initialization GPU-seconds, gaining 60 a minute (no value before the tile: its whole last
    value, 120 + 50 × 60 = 3,120: one counter counted whole); job c silent after minute 50
    (nothing in the tile: no sample); one evaluation."""
    n1, n2 = {"instance": "n1:9400"}, {"instance": "n2:9400"}
    productive = {"job": "train-a", "category": names.CATEGORY_PRODUCTIVE}
    init = {"job": "train-b", "category": "initialization"}
    rows = [
        (COUNTER, {**n1, **productive}, "600+60x130"),
        (COUNTER, {**n2, **productive}, "600+60x130"),
        (COUNTER, {**n2, **init}, "_x70 120+60x60"),
        (COUNTER, {**n1, "job": "train-c", "category": names.CATEGORY_PRODUCTIVE}, "0+60x50"),
    ]
    checks = [
        (names.JOB_TILE_EVALUATIONS, [({}, 1)]),
        (names.JOB_TILE_SECONDS, [(init, 3120), (productive, 7200)]),
        (names.JOB_TILE_WHOLE, [({**n2, **init}, 3120)]),
    ]
    return recorded_case(rows, checks, at="2h")
