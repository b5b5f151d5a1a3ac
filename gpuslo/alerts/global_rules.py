"""Global rules: the fleet SLO over several clusters, for a global store that holds every
cluster's series with a `cluster` label (a Thanos or Mimir ruler, or vmalert over
VictoriaMetrics; `gpuslo rules --split per-cluster,global`).

Where `cluster` exists: a Prometheus adds its `external_labels` only to what leaves it (remote
write, federation, alerts), so the per-cluster rules, evaluated inside each cluster's
Prometheus, never see `cluster` and aggregate without it (they are today's rules,
`gpuslo.alerts.sli`). Their recorded series reach the global store with `cluster` set; these
rules sum them `by (cluster)` and over the fleet. They read only the per-cluster recorded counts
(one sample per cluster and evaluation, never the raw per-GPU series).

Recording rules, in evaluation order (a rule reads the ones above it from this evaluation):

- `gpuslo_cluster:gpu_provisioned:count` — each cluster's provisioned GPUs
  (`gpuslo:gpu_provisioned:count`), held from its own previous value while the cluster sends
  nothing (Prometheus down, remote write broken: the last sample is older than the store's
  lookback), so a silent cluster stays in the fleet's denominator as blind time, as a silent
  node does inside a cluster (DESIGN.md §6). It carries itself forward (`last_over_time` of its
  own series over `HOLD`) until the cluster is listed in the spec's `retired_clusters`.
- `gpuslo_cluster:gpu_silent:count` — the held GPUs of clusters that send nothing now.
- `gpuslo_cluster:gpu_usable:count` — usable GPUs per cluster; 0 for a silent cluster.
- `gpuslo_cluster:gpu_blind:count` — GPUs without a verdict per cluster, all of a silent one.
- `gpuslo_cluster:gpu_lost:count` — GPUs lost now by (cluster, layer, reason); a silent
  cluster's as `observability`/`no_data`.
- `gpuslo_cluster:check_inventory:count` (held the same way) and `gpuslo_cluster:check_fresh:count`.
- `gpuslo_fleet:*:count` — the sums over clusters, and `gpuslo_fleet:gpu_blind:ratio`.
- SLIs per cluster and for the fleet at every window of the spec
  (`gpuslo_cluster:gpu_usable:ratio_rate1h`, `gpuslo_fleet:gpu_usable:ratio_rate1h`, ...):
  ratios of sums over the window of the counts above, so the fleet's usable ratio is the
  GPU-time-weighted mean of the clusters' (a cluster with twice the GPUs weighs twice), never an
  average of ratios. Job goodput sums the clusters' `gpuslo:job_gpu_seconds:increase1m` over the
  window directly (exact increases, evaluated every minute in each cluster: they add up).
- objectives and remaining error budgets for the fleet, budgets per cluster;
- `gpuslo_cluster:gpu_lost:hours<w>` and `gpuslo_fleet:gpu_lost:hours<w>` — GPU-hours lost by
  layer over the last day and the period: the lost counts summed over the window's evaluations
  × the seconds between evaluations, measured from `gpuslo_fleet:evaluation:timestamp_seconds`
  (time() recorded at each evaluation of the group), so it holds for any evaluation interval.

Alerts: `GpusloGlobal*BudgetBurn` (multiwindow, multi-burn-rate on the fleet SLIs, thresholds
as `gpuslo.alerts.rules`), `GpusloClusterSilent` (a cluster's Prometheus sends nothing) and
`GpusloGlobalBlind` (the fleet's blind share above `fleet_blind_threshold`). The per-cluster
alerts stay in each cluster's Prometheus, and reach Alertmanager with `cluster` set.

A highly available pair of Prometheus servers per cluster must be deduplicated by the store
(Thanos `--query.replica-label`, Mimir's HA tracker, VictoriaMetrics `-dedup.minScrapeInterval`
with identical labels on both): `sum by (cluster)` adds up shards, not replicas.
"""

from __future__ import annotations

from gpuslo import names
from gpuslo.alerts import inventory, sli
from gpuslo.alerts.rules import burn_threshold, reachable_pairs
from gpuslo.slo_spec import SLI_METRIC, SloSpec, format_number

CLUSTER, FLEET = "gpuslo_cluster", "gpuslo_fleet"  # recording levels: by cluster, the fleet
HOLD = "1h"  # a held count finds its own previous value within this
SILENT_HOLD = "5m"  # GpusloClusterSilent fires after a cluster is silent this long
LOST_HOURS_WINDOWS = ("1d",)  # plus the SLO period


def record(level: str, metric: str, operation: str = "count") -> str:
    """`<level>:<metric>:<operation>` (`gpuslo_fleet:gpu_usable:count`)."""
    return f"{level}:{metric}:{operation}"


def level_sli(level: str, slo: str, window: str) -> str:
    """The SLI of `slo` over `window` at `level` (`gpuslo_fleet:gpu_usable:ratio_rate1h`)."""
    return record(level, SLI_METRIC[slo], f"ratio_rate{window}")


PROVISIONED = record(CLUSTER, "gpu_provisioned")
SILENT = record(CLUSTER, "gpu_silent")
USABLE = record(CLUSTER, "gpu_usable")
BLIND = record(CLUSTER, "gpu_blind")
LOST = record(CLUSTER, "gpu_lost")
CHECK_INVENTORY = record(CLUSTER, "check_inventory")
CHECK_FRESH = record(CLUSTER, "check_fresh")
FLEET_PROVISIONED = record(FLEET, "gpu_provisioned")
FLEET_BLIND_RATIO = record(FLEET, "gpu_blind", "ratio")
EVALUATED = record(FLEET, "evaluation", "timestamp_seconds")  # time() at each evaluation
INCREASE = sli.JOB_SECONDS_INCREASE
BURN_ALERT = {
    names.SLO_USABLE_GPU: "GpusloGlobalUsableGpuBudgetBurn",
    names.SLO_CHECK_LIVENESS: "GpusloGlobalCheckLivenessBudgetBurn",
    names.SLO_JOB_GOODPUT: "GpusloGlobalJobGoodputBudgetBurn",
}


def retired_selector(spec: SloSpec) -> str:
    """`{cluster!~"a|b\\\\.c"}` for the spec's retired clusters, or ""."""
    if not spec.retired_clusters:
        return ""
    pattern = "|".join(name.replace(".", "\\\\.") for name in spec.retired_clusters)
    return f'{{cluster!~"{pattern}"}}'


def held(spec: SloSpec, name: str, source: str) -> str:
    """`source` summed by cluster, or, for a cluster that sends nothing now, its own last value
    (`name` is the rule's own series) unless the cluster is retired."""
    return (f"sum by (cluster) ({source})\n"
            f"or max by (cluster) (last_over_time({name}{retired_selector(spec)}[{HOLD}]))")


def own(name: str) -> str:
    """A global cluster-level series read back, by `cluster` only: a Thanos ruler (or vmalert
    with -external.label) adds its own labels to what it records, which would otherwise keep
    `or` and `unless` from matching the per-cluster sums."""
    return f"max by (cluster) ({name})"


def cluster_counts(spec: SloSpec) -> list[dict]:
    """Per-cluster instant counts (see the module docstring), in evaluation order."""
    silent = inventory.with_labels(own(SILENT), names.LAYER_OBSERVABILITY, "no_data")
    return [
        {"record": PROVISIONED, "expr": held(spec, PROVISIONED, inventory.GPU_PROVISIONED_COUNT)},
        {"record": SILENT,
         "expr": f"{own(PROVISIONED)} unless on (cluster) {inventory.GPU_PROVISIONED_COUNT}"},
        {"record": USABLE, "expr": f"sum by (cluster) ({sli.GPU_USABLE_COUNT})\n"
                                   f"or 0 * {own(PROVISIONED)}"},
        {"record": BLIND, "expr": f"sum by (cluster) ({inventory.GPU_BLIND_COUNT})\n"
                                  f"or {own(SILENT)}"},
        {"record": LOST, "expr": f"sum by (cluster, layer, reason) ({sli.GPU_LOST_COUNT})\n"
                                 f"or {silent}"},
        {"record": CHECK_INVENTORY,
         "expr": held(spec, CHECK_INVENTORY, sli.CHECK_INVENTORY_COUNT)},
        {"record": CHECK_FRESH, "expr": f"sum by (cluster) ({sli.CHECK_FRESH_COUNT})\n"
                                        f"or 0 * {own(CHECK_INVENTORY)}"},
    ]


def fleet_counts() -> list[dict]:
    """The fleet's instant counts: sums over the clusters; the blind share."""
    sums = [(metric, "sum", "") for metric in ("gpu_provisioned", "check_inventory")]
    sums += [(metric, "sum", " or vector(0)")
             for metric in ("gpu_usable", "gpu_blind", "check_fresh")]
    rules = [{"record": record(FLEET, metric),
              "expr": f"{how}({record(CLUSTER, metric)}){tail}"} for metric, how, tail in sums]
    blind = record(FLEET, "gpu_blind")
    rules.append({"record": FLEET_BLIND_RATIO,
                  "expr": f"clamp_max({blind} / ({FLEET_PROVISIONED} > 0), 1)"})
    rules.append({"record": record(FLEET, "gpu_lost"),
                  "expr": f"sum by (layer, reason) ({LOST})"})
    return rules


def ratio_expr(level: str, slo: str, window: str) -> str:
    """Good ratio of `slo` over `window`, per cluster (`level` CLUSTER) or for the fleet; no
    sample when the window holds no inventory (or no job GPU-time)."""
    by = "sum by (cluster) " if level == CLUSTER else "sum "
    if slo == names.SLO_JOB_GOODPUT:
        productive = f'{INCREASE}{{category="{names.CATEGORY_PRODUCTIVE}"}}'
        total = f"{by}(sum_over_time({INCREASE}[{window}]))"
        zero = f"0 * {total}" if level == CLUSTER else "vector(0)"
        return (f"clamp_max(({by}(sum_over_time({productive}[{window}])) or {zero})"
                f" / ({total} > 0), 1)")
    good, whole = (("gpu_usable", "gpu_provisioned") if slo == names.SLO_USABLE_GPU
                   else ("check_fresh", "check_inventory"))
    return (f"clamp_max(sum_over_time({record(level, good)}[{window}])"
            f" / (sum_over_time({record(level, whole)}[{window}]) > 0), 1)")


def slo_rules(spec: SloSpec, level: str, slo: str) -> list[dict]:
    """`slo`'s SLI at every window at `level`, the remaining error budget over the period, and
    (fleet only) the objective."""
    rules = [{"record": level_sli(level, slo, w), "expr": ratio_expr(level, slo, w)}
             for w in spec.sli_windows]
    if level == FLEET:
        objective = format_number(spec.objectives[slo])
        rules.append({"record": record(level, SLI_METRIC[slo], "objective"),
                      "expr": f"vector({objective})"})
    budget = format_number(spec.error_budget(slo))
    rules.append({"record": record(level, SLI_METRIC[slo], "error_budget_remaining"),
                  "expr": f"1 - (1 - {level_sli(level, slo, spec.period)}) / {budget}"})
    return rules


def lost_hours_rules(spec: SloSpec) -> list[dict]:
    """GPU-hours lost by layer over the last day and the period, per cluster and fleet-wide:
    the window's lost-count samples × the seconds between evaluations (from EVALUATED, recorded
    with the counts: no interval is assumed, and a window the store has evaluated only in part
    is not extrapolated) / 3600. No sample before the second evaluation in the window."""
    rules = []
    for window in (*LOST_HOURS_WINDOWS, spec.period):
        every = (f"(max_over_time({EVALUATED}[{window}]) - min_over_time({EVALUATED}[{window}]))"
                 f" / (count_over_time({EVALUATED}[{window}]) - 1 > 0)")
        for level, by in ((CLUSTER, "cluster, layer"), (FLEET, "layer")):
            rules.append({
                "record": record(level, "gpu_lost", f"hours{window}"),
                "expr": f"sum by ({by}) (sum_over_time({record(level, 'gpu_lost')}[{window}]))\n"
                        f"* on () group_left () ({every})\n/ 3600",
            })
    return rules


def recording_groups(spec: SloSpec) -> list[dict]:
    """The global recording groups: counts first, then one group per SLO, then lost hours."""
    clock = [{"record": EVALUATED, "expr": "time()"}]  # in lockstep with the counts
    groups = [{"name": "gpuslo-global-counts",
               "rules": clock + cluster_counts(spec) + fleet_counts()}]
    for slo in names.SLOS:
        groups.append({"name": f"gpuslo-global-slo-{slo}",
                       "rules": slo_rules(spec, CLUSTER, slo) + slo_rules(spec, FLEET, slo)})
    groups.append({"name": "gpuslo-global-lost-hours", "rules": lost_hours_rules(spec)})
    return groups


def burn_rule(spec: SloSpec, slo: str, severity: str) -> dict | None:
    """The fleet's burn-rate alert for `slo` and `severity`: the `or` of its reachable window
    pairs on the fleet SLIs, with the thresholds of the per-cluster alerts."""
    pairs = reachable_pairs(spec, slo, severity)
    if not pairs:
        return None
    arms = []
    for pair in pairs:
        threshold = format_number(burn_threshold(spec, slo, pair))
        arms.append(f"({level_sli(FLEET, slo, pair.long_window)} < {threshold}"
                    f" and {level_sli(FLEET, slo, pair.short_window)} < {threshold})")
    windows = ", ".join(f"{p.long_window}/{p.short_window} above {format_number(p.factor)}x"
                        for p in pairs)
    title = slo.replace("_", " ")
    return {
        "alert": BURN_ALERT[slo],
        "expr": "\nor\n".join(arms),
        "labels": {"severity": severity, "slo": slo},
        "annotations": {
            "summary": f"The fleet's {title} SLO, over every cluster, is burning its error "
                       f"budget too fast ({severity}).",
            "description": f"Objective {format_number(spec.objectives[slo])} over "
                           f"{spec.period}; burn rate in both windows of a pair: {windows}. "
                           f"See {level_sli(CLUSTER, slo, '1h')} for the clusters burning it.",
        },
    }


def alert_rules(spec: SloSpec) -> list[dict]:
    """Fleet burn-rate alerts, GpusloClusterSilent and GpusloGlobalBlind."""
    burns = [burn_rule(spec, slo, sev) for slo in names.SLOS for sev in names.SEVERITIES]
    threshold = format_number(spec.fleet_blind_threshold)
    return [rule for rule in burns if rule is not None] + [
        {
            "alert": "GpusloClusterSilent",
            "expr": f"{SILENT} > 0",
            "for": SILENT_HOLD,
            "labels": {"severity": "ticket"},
            "annotations": {
                "summary": "Cluster {{ $labels.cluster }} sends no gpuslo series to the global "
                           "store.",
                "description": "Its Prometheus is down or its remote write is broken: its "
                               "GPUs count as blind (observability loss) in the fleet SLO "
                               "until it is back or listed in retired_clusters.",
            },
        },
        {
            "alert": "GpusloGlobalBlind",
            "expr": f"{FLEET_BLIND_RATIO} > {threshold}",
            "for": SILENT_HOLD,
            "labels": {"severity": "page"},
            "annotations": {
                "summary": f"More than {threshold} of the fleet's provisioned GPUs, over every "
                           "cluster, report no verdict.",
                "description": f"See {BLIND} for the clusters, GpusloClusterSilent for clusters "
                               "whose Prometheus sends nothing, and each cluster's "
                               "GpusloFleetBlind.",
            },
        },
    ]


def alert_groups(spec: SloSpec) -> list[dict]:
    """The global alerting group."""
    return [{"name": "gpuslo-global-alerts", "rules": alert_rules(spec)}]


def recorded_names(spec: SloSpec) -> set[str]:
    """Every series name the global recording rules define."""
    return {rule["record"] for group in recording_groups(spec) for rule in group["rules"]}
