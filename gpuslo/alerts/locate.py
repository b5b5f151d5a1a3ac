"""The locate rule group: ~one recorded series per node that says where the report
(`gpuslo report --prometheus`, `gpuslo.slo.sources.located`) must read per-step detail, so it
does not read every GPU's raw samples to find out (issue 30: that grew with the fleet).

Evaluated every `names.LOCATE_INTERVAL_S` (pinned in the group), each evaluation at t over the
tile (t - offset - interval, t - offset] (`names.LOCATE_OFFSET_S`): the evaluations tile time,
so every raw sample is in one tile (two on Prometheus' closed ranges when it sits exactly on a
tile edge, which only widens what is located) and none between two evaluations is missed,
whatever the scrape interval:

- `names.LOCATE_NOT_HEALTHY` per instance: 1 when any of its GPUs had a non-healthy verdict
  sample (`gpuslo_gpu_verdict{verdict!="healthy"}` at 1) in the tile, else 0 (no sample: the
  instance had no verdict sample there);
- `names.LOCATE_USABLE_SAMPLES` per instance: its gpuslo_gpu_usable samples in the tile (the
  window one millisecond short of the interval, so on Prometheus' closed ranges a sample on a
  tile edge is not counted twice, which could hide a missing one); a GPU without a gap has
  interval / scrape interval of them in every tile when the scrape interval divides it;
- `names.LOCATE_EVALUATIONS`: 1 at every evaluation, fleet-wide, whatever the data: the reader
  counts the tiles the rules covered and falls back to the raw samples where one is missing.
"""

from __future__ import annotations

from gpuslo import names
from gpuslo.alerts.promtool_case import recorded_case

VERDICT = f'gpuslo_gpu_verdict{{verdict!="{names.VERDICT_HEALTHY}"}}'


def _seconds(seconds: int) -> str:
    """A PromQL duration of whole seconds, in minutes when it divides (`300` -> `5m`)."""
    return f"{seconds // 60}m" if seconds % 60 == 0 else f"{seconds}s"


def recording_group() -> dict:
    """The `gpuslo-locate` rule group (interval pinned; see the module docstring)."""
    interval, offset = names.LOCATE_INTERVAL_S, _seconds(names.LOCATE_OFFSET_S)
    return {
        "name": "gpuslo-locate",
        "interval": _seconds(interval),
        "rules": [
            {"record": names.LOCATE_EVALUATIONS, "expr": "vector(1)"},
            {
                "record": names.LOCATE_NOT_HEALTHY,
                "expr": f"max by (instance) (max_over_time({VERDICT}[{_seconds(interval)}]"
                f" offset {offset}))",
            },
            {
                "record": names.LOCATE_USABLE_SAMPLES,
                "expr": "sum by (instance) (count_over_time(gpuslo_gpu_usable"
                f"[{interval * 1000 - 1}ms] offset {offset}))",
            },
        ],
    }


def locate_case() -> dict:
    """promtool test, samples every minute, the rules evaluated at 10m over the tile [4m, 9m]
    (offset 1m; the usable count's window from 4m + 1 ms): n1's GPU 0 is unhealthy at minute 9
    only (in the tile: 1), n2's GPU at minute 10 only (after it: 0); n1's GPU 1 misses minutes
    6-8 (usable samples 5 + 2 = 7), n2's GPU none (5); one evaluation."""
    n1, n2 = {"instance": "n1:9400", "job": "gpuslo"}, {"instance": "n2:9400", "job": "gpuslo"}
    gpu = {"gpu": "0", "uuid": "GPU-0"}
    unhealthy = {"verdict": names.VERDICT_UNHEALTHY}
    rows = [
        ("gpuslo_gpu_verdict", {**n1, **gpu, **unhealthy}, "0x8 1 0x10"),
        ("gpuslo_gpu_verdict", {**n2, **gpu, **unhealthy}, "0x9 1 0x9"),
        ("gpuslo_gpu_verdict", {**n1, **gpu, "verdict": names.VERDICT_HEALTHY}, "1x8 0 1x10"),
        ("gpuslo_gpu_usable", {**n1, **gpu}, "1x20"),
        ("gpuslo_gpu_usable", {**n1, "gpu": "1", "uuid": "GPU-1"}, "1x5 _x3 1x10"),
        ("gpuslo_gpu_usable", {**n2, **gpu}, "1x20"),
    ]
    checks = [
        (names.LOCATE_EVALUATIONS, [({}, 1)]),
        (names.LOCATE_NOT_HEALTHY, [({"instance": "n1:9400"}, 1), ({"instance": "n2:9400"}, 0)]),
        (names.LOCATE_USABLE_SAMPLES, [({"instance": "n1:9400"}, 7),
                                       ({"instance": "n2:9400"}, 5)]),
    ]
    return recorded_case(rows, checks)
