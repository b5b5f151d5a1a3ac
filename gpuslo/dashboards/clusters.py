"""The fleet SLO dashboard's cluster panels: one bar or line per cluster picked in `$cluster`,
read from the global store (Thanos Query, Mimir or VictoriaMetrics) where every cluster's
recorded series carry the `cluster` label its Prometheus adds on remote write (README "Many
clusters, one SLO").

Each figure is computed per cluster from that cluster's recorded counts, as the fleet figures of
`gpuslo.dashboards.fleet` are for the clusters together: the usable ratio GPU-time weighted
(`avg_over_time` of the counts, whatever the cluster's evaluation interval), lost GPU-hours the
cluster's share of its own rule evaluations times the range. On a single Prometheus (no
`cluster` label) each panel shows one bar or line, the fleet's. `Clusters silent` reads the
global rules (`gpuslo rules --split global`): a cluster whose Prometheus sends nothing, with
the GPUs it last reported; it is empty while every cluster answers, and without global rules.
"""

from __future__ import annotations

from gpuslo import names
from gpuslo.dashboards import fleet
from gpuslo.dashboards.panels import GPU_HOURS, GPUS, RATIO, Query, Spec, red_below, red_from
from gpuslo.dashboards.scope import CLUSTER
from gpuslo.slo_spec import SloSpec, format_number

LEGEND = "{{cluster}}"
LOST = f"gpuslo:gpu_lost:count{{{CLUSTER}}}"
SILENT = f"gpuslo_cluster:gpu_silent:count{{{CLUSTER}}}"  # gpuslo.alerts.global_rules.SILENT
SILENT_TITLE = "Clusters silent (global rules)"


def usable_ratio(window: str) -> str:
    """Each cluster's usable GPU ratio over `window` (0–1, one series per cluster); a cluster
    with no usable sample reads 0, one with nothing provisioned gives no sample."""
    mean = "sum by (cluster) (avg_over_time({}[{}]))"
    usable, provisioned = mean.format(fleet.USABLE, window), mean.format(fleet.PROVISIONED,
                                                                         window)
    return f"clamp_max(({usable} or 0 * {provisioned}) / ({provisioned} > 0), 1)"


def lost_hours() -> str:
    """Each cluster's lost GPU-hours over the dashboard range (every layer)."""
    return (f"sum by (cluster) (sum_over_time({LOST}[$__range]))\n/ on (cluster) "
            f"sum by (cluster) (count_over_time({fleet.PROVISIONED}[$__range]))\n"
            f"* {fleet.HOURS_IN_RANGE}")


def cluster_specs(spec: SloSpec) -> list[Spec]:
    """The cluster panels (see the module docstring), after the fleet's."""
    objective = spec.objectives[names.SLO_USABLE_GPU]
    shown = format_number(objective)
    return [
        Spec("bargauge", "Usable GPU ratio by cluster in range",
             "Each cluster's usable GPU ratio over the dashboard range (GPU-time weighted, ratio "
             f"0–1); red below the objective {shown}. The fleet's is the GPU-time weighted mean "
             "of these, never their average.",
             RATIO, (Query(usable_ratio("$__range"), LEGEND, instant=True),), 8, 8,
             steps=red_below(objective)),
        Spec("timeseries", "Usable GPU ratio by cluster (1 h)",
             "Each cluster's usable GPU ratio over the last hour (ratio 0–1): which cluster "
             "burns the fleet's error budget.",
             RATIO, (Query(usable_ratio("1h"), LEGEND),), 8, 8),
        Spec("bargauge", "Provisioned GPUs by cluster",
             "GPUs each cluster should have now (its held inventory: silent nodes stay in it).",
             GPUS, (Query(f"sum by (cluster) ({fleet.PROVISIONED})", LEGEND, instant=True),),
             8, 8),
        Spec("bargauge", "Lost GPU-hours in range by cluster",
             "Provisioned GPU-hours each cluster lost over the dashboard range, every layer "
             "(GPU-hours; a GPU lost for two reasons counts under each).",
             GPU_HOURS, (Query(lost_hours(), LEGEND, instant=True),), 12, 8),
        Spec("bargauge", SILENT_TITLE,
             "GPUs of clusters whose Prometheus sends nothing to the global store (down, or "
             "remote write broken): held in the fleet's denominator as blind time "
             "(GpusloClusterSilent). Empty on a healthy fleet (every cluster answers), and "
             "where the global rules do not run.",
             GPUS, (Query(f"sum by (cluster) ({SILENT}) > 0", LEGEND, instant=True),), 12, 8,
             steps=red_from(1)),
    ]
