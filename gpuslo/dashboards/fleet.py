"""Fleet figures over the clusters picked in `$cluster`: one series per panel whether one, several
or all clusters are chosen (DESIGN.md §6: never fold several clusters through `scalar()`).

The recording rules run per cluster (one Prometheus each); a Thanos or Mimir querier returns one
recorded series per cluster, labelled by its external `cluster` label. A single Prometheus has no
`cluster` label at all, and `sum by (cluster)` then keeps one series without it, so every
expression below reads the same there.

- Counts (GPUs provisioned, usable, blind) add up: `sum`.
- Ratios are recomputed from the counts, GPU-time (or check-time) weighted across clusters, never
  the mean of each cluster's ratio: a cluster's GPUs over a window are the mean of its recorded
  count over the window (`avg_over_time`), which does not depend on how often its rules run, and
  the fleet ratio is the sum of the clusters' usable means over the sum of their provisioned
  means. For one cluster this is its recorded SLI (`sum_over_time(good) / sum_over_time(total)`,
  both series recorded at every evaluation), with the same guards (`> 0`, `or vector(0)`,
  `clamp_max`). Job GPU-seconds are recorded as increases, so their sums over the window add up
  across clusters as they are. Limit: a cluster that reported for part of the window weighs as
  if it had run the whole window at its mean size.
- GPU-hours over the dashboard range are, per cluster, the share of that cluster's rule
  evaluations in the range (`sum_over_time(count) / count_over_time(provisioned)`) times the
  range, then summed over clusters: each cluster is normalised by its own evaluations.
"""

from __future__ import annotations

from gpuslo import names
from gpuslo.dashboards.scope import CLUSTER
from gpuslo.slo_spec import slo_record

PROVISIONED = f"gpuslo:gpu_provisioned:count{{{CLUSTER}}}"
USABLE = f"gpuslo:gpu_usable:count{{{CLUSTER}}}"
CHECKS_FRESH = f"gpuslo:check_fresh:count{{{CLUSTER}}}"
CHECKS = f"gpuslo:check_inventory:count{{{CLUSTER}}}"
JOB_SECONDS = "gpuslo:job_gpu_seconds:increase1m"
HOURS_IN_RANGE = "$__range_s / 3600"

# Per SLO: (good series, all series, function over the window): the counts of the recording
# rules (gpuslo/alerts/sli.py) that each recorded SLI divides.
_SLI_PARTS = {
    names.SLO_USABLE_GPU: (USABLE, PROVISIONED, "avg_over_time"),
    names.SLO_CHECK_LIVENESS: (CHECKS_FRESH, CHECKS, "avg_over_time"),
    names.SLO_JOB_GOODPUT: (
        f'{JOB_SECONDS}{{{CLUSTER}, category="{names.CATEGORY_PRODUCTIVE}"}}',
        f"{JOB_SECONDS}{{{CLUSTER}}}",
        "sum_over_time",
    ),
}


def total(series: str) -> str:
    """A count summed over the chosen clusters (one series, no labels)."""
    return f"sum({series})"


def ratio(good: str, all_: str) -> str:
    """sum(good) / sum(all) over the chosen clusters, at most 1; no sample when `all_` is 0."""
    return f"clamp_max(sum({good}) / (sum({all_}) > 0), 1)"


def sli(slo: str, window: str) -> str:
    """The SLI of `slo` over `window` for the chosen clusters together (see the module
    docstring): a ratio 0–1, one series."""
    good, all_, over = _SLI_PARTS[slo]
    return (
        f"clamp_max((sum({over}({good}[{window}])) or vector(0))"
        f" / (sum({over}({all_}[{window}])) > 0), 1)"
    )


def objective(slo: str) -> str:
    """The recorded objective of `slo`, the strictest of the chosen clusters (they normally run
    the same spec; every SLO is a good ratio, so the strictest is the largest)."""
    return f"max({slo_record(slo, 'objective')}{{{CLUSTER}}})"


def hours_in_range(series: str, by: tuple[str, ...] = ()) -> str:
    """GPU-hours of a recorded GPU count over the dashboard range, by `by`, summed over the
    chosen clusters, each normalised by its own rule evaluations (see the module docstring)."""
    inner = ", ".join(("cluster", *by))
    outer = f"sum by ({', '.join(by)}) " if by else "sum "
    share = (
        f"sum by ({inner}) (sum_over_time({series}[$__range]))"
        f" / on (cluster) group_left () sum by (cluster) (count_over_time({PROVISIONED}[$__range]))"
    )
    return f"{outer}({share}) * {HOURS_IN_RANGE}"
