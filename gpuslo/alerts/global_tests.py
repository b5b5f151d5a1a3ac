"""promtool unit tests for the global rules (`gpuslo.alerts.global_rules`), on the series a global
store holds: the per-cluster recorded counts, each with the `cluster` label its Prometheus
adds on remote write (and a `prometheus` external label, which the sums fold away).

Timelines (one evaluation a minute; checks at 65m30s, so a 1h window holds the evaluations at
minutes 6..65, 60 of them, and no sample sits on its edge):

- two clusters answering: a has 12 GPUs, 9 usable; b 16, 15 usable. The fleet's usable ratio
  is (9 + 15) / (12 + 16) = 24 / 28 = 6/7, the GPU-weighted mean of 0.75 and 0.9375 (the plain
  mean would be 0.84375). Lost now: node/xid_fatal 2 + 1 = 3, observability/no_data 1.
  Checks fresh 10 of 10 and 5 of 10: 15 / 20. Job GPU-seconds a minute: a 60 productive + 20
  recovery, b 30 productive + 30 wasted: goodput 90 / 140. Lost GPU-hours over the day at
  65m30s: 66 evaluations (0..65) × 60 s × 3 node GPUs / 3600 = 3.3.
- cluster b's Prometheus sends its last samples at minute 30: from minute 31 its 16 GPUs stay
  provisioned (held), usable 0, blind and lost to observability/no_data. Fleet usable over the
  hour: 25 evaluations (6..30) × 24 + 35 × 9 = 915 of 60 × 28 = 1680; b's own: 25 × 15 = 375
  of 60 × 16 = 960. GpusloClusterSilent (b) and GpusloGlobalBlind ((1 + 16) / 28 > 0.05) are
  pending at 34 m and fire at 40 m; with both clusters answering neither does.
- with `retired_clusters` in the spec, the first retired cluster going silent leaves the
  fleet's denominator: 12 provisioned at 40 m.
Burn-rate alerts: every reachable window pair at its exact boundary on the fleet SLIs (as the
per-cluster tests do), and end to end from per-cluster counts: a good fleet is silent, a bad
one pages and tickets.
"""

from __future__ import annotations

from gpuslo import names
from gpuslo.alerts import global_rules as g
from gpuslo.alerts import sli
from gpuslo.alerts.inventory import GPU_BLIND_COUNT, GPU_PROVISIONED_COUNT
from gpuslo.alerts.rules import burn_threshold, reachable_pairs
from gpuslo.alerts.tests_gen import BOUNDARY_STEP, case, expect, series
from gpuslo.slo_spec import SloSpec, format_number

RULE_FILE = "gpuslo-global.rules.yml"
AT = "65m30s"
CLUSTERS = {"a": {"prometheus": "a-0"}, "b": {"prometheus": "b-0"}}


def _labels(cluster: str, **extra: str) -> dict[str, str]:
    return {"cluster": cluster, **CLUSTERS[cluster], **extra}


def _sample(expr: str, value: float, **labels: str) -> dict:
    """An expected sample of the series `expr` ("" for an expression's unnamed result)."""
    return {"labels": series(expr, labels, "")["series"] or "{}", "value": value}


def _ratio(level: str, slo: str, cluster: str = "") -> str:
    """The 1h SLI rule's own expression, evaluated at AT (a recorded SLI, evaluated on a
    minute, has a count sample on its window's edge, which Prometheus 2 counts and
    Prometheus 3 and VictoriaMetrics do not)."""
    expr = g.ratio_expr(level, slo, "1h")
    return f'{expr} and on (cluster) {g.PROVISIONED}{{cluster="{cluster}"}}' if cluster else expr


def cluster_series(cluster: str, gpus: int, usable: int, alive: str = "x70") -> list[dict]:
    """One cluster's per-cluster recorded counts as the global store receives them. `alive` is
    the promtool repetition of every value (`x70`, or `x30 stale` for a cluster that goes
    silent after minute 30)."""
    lost = {"a": [("node", "xid_fatal", 2), ("observability", "no_data", 1)],
            "b": [("node", "xid_fatal", 1)]}[cluster]
    fresh = {"a": 10, "b": 5}[cluster]
    jobs = {"a": [("productive", 60), ("recovery", 20)],
            "b": [("productive", 30), ("wasted_progress", 30)]}[cluster]
    out = [
        series(GPU_PROVISIONED_COUNT, _labels(cluster), f"{gpus}{alive}"),
        series(sli.GPU_USABLE_COUNT, _labels(cluster), f"{usable}{alive}"),
        series(GPU_BLIND_COUNT, _labels(cluster), f"{1 if cluster == 'a' else 0}{alive}"),
        series(sli.CHECK_FRESH_COUNT, _labels(cluster), f"{fresh}{alive}"),
        series(sli.CHECK_INVENTORY_COUNT, _labels(cluster), f"10{alive}"),
    ]
    out += [series(sli.GPU_LOST_COUNT, _labels(cluster, layer=layer, reason=reason),
                   f"{count}{alive}") for layer, reason, count in lost]
    out += [series(sli.JOB_SECONDS_INCREASE, _labels(cluster, category=category),
                   f"{seconds}{alive}") for category, seconds in jobs]
    return out


def _checks(at: str, *expected: tuple[str, list[dict]]) -> list[dict]:
    return [{"expr": expr, "eval_time": at, "exp_samples": samples} for expr, samples in expected]


def answering_case() -> dict:
    """Both clusters answer all along (see the module docstring)."""
    usable_1h = _ratio(g.FLEET, names.SLO_USABLE_GPU)
    per_cluster = _ratio(g.CLUSTER, names.SLO_USABLE_GPU)
    # the recorded SLIs too: constant counts give the same ratio whatever the window's edge
    recorded = g.level_sli(g.FLEET, names.SLO_USABLE_GPU, "1h")
    recorded_per_cluster = g.level_sli(g.CLUSTER, names.SLO_USABLE_GPU, "1h")
    liveness = _ratio(g.FLEET, names.SLO_CHECK_LIVENESS)
    goodput = _ratio(g.FLEET, names.SLO_JOB_GOODPUT)
    lost, hours = g.record(g.FLEET, "gpu_lost"), g.record(g.FLEET, "gpu_lost", "hours1d")
    cluster_hours = g.record(g.CLUSTER, "gpu_lost", "hours1d")
    checks = _checks(
        AT,
        (usable_1h, [_sample("", 24 * 60 / (28 * 60))]),
        (per_cluster, [_sample("", 0.75, cluster="a"), _sample("", 0.9375, cluster="b")]),
        (recorded, [_sample(recorded, 24 / 28)]),
        (recorded_per_cluster, [_sample(recorded_per_cluster, 0.75, cluster="a"),
                                _sample(recorded_per_cluster, 0.9375, cluster="b")]),
        (lost, [_sample(lost, 3, layer="node", reason="xid_fatal"),
                _sample(lost, 1, layer="observability", reason="no_data")]),
        (liveness, [_sample("", 15 * 60 / (20 * 60))]),
        (goodput, [_sample("", 90 * 60 / (140 * 60))]),
        (f'{hours}{{layer="node"}}', [_sample(hours, 3 * 66 * 60 / 3600, layer="node")]),
        (f'{cluster_hours}{{cluster="b"}}',
         [_sample(cluster_hours, 1 * 66 * 60 / 3600, cluster="b", layer="node")]),
        (g.SILENT, []),
    )
    test = {"interval": "1m", "input_series": cluster_series("a", 12, 9)
            + cluster_series("b", 16, 15), "promql_expr_test": checks}
    test["alert_rule_test"] = [{"eval_time": AT, "alertname": name, "exp_alerts": []}
                               for name in ("GpusloClusterSilent", "GpusloGlobalBlind")]
    return test


def silent_case(spec: SloSpec) -> dict:
    """Cluster b sends nothing after minute 30 (see the module docstring)."""
    inputs = cluster_series("a", 12, 9) + cluster_series("b", 16, 15, alive="x30 stale")
    usable_1h = _ratio(g.FLEET, names.SLO_USABLE_GPU)
    b_1h = _ratio(g.CLUSTER, names.SLO_USABLE_GPU, "b")
    lost = g.record(g.CLUSTER, "gpu_lost")
    checks = _checks(
        AT,
        (g.FLEET_PROVISIONED, [_sample(g.FLEET_PROVISIONED, 28)]),
        (g.SILENT, [_sample(g.SILENT, 16, cluster="b")]),
        (f'{lost}{{cluster="b"}}',
         [_sample(lost, 16, cluster="b", layer="observability", reason="no_data")]),
        (usable_1h, [_sample("", (25 * 24 + 35 * 9) / (60 * 28))]),
        (b_1h, [_sample("", 25 * 15 / (60 * 16), cluster="b")]),
    )
    alerts = {rule["alert"]: rule for rule in g.alert_rules(spec)}
    silent = expect(alerts["GpusloClusterSilent"], {"cluster": "b"})
    test = case(inputs, "GpusloClusterSilent", "34m", [], promql_expr_test=checks)
    test["alert_rule_test"] += [
        {"eval_time": "40m", "alertname": "GpusloClusterSilent", "exp_alerts": [silent]},
        {"eval_time": "34m", "alertname": "GpusloGlobalBlind", "exp_alerts": []},
        {"eval_time": "40m", "alertname": "GpusloGlobalBlind",
         "exp_alerts": [expect(alerts["GpusloGlobalBlind"], {})]},
    ]
    return test


def retired_case(spec: SloSpec) -> list[dict]:
    """With `retired_clusters`: the first retired cluster goes silent after minute 30 and
    leaves the denominator. None without retired clusters."""
    if not spec.retired_clusters:
        return []
    name = spec.retired_clusters[0]
    retired = [dict(s, series=s["series"].replace('cluster="b"', f'cluster="{name}"'))
               for s in cluster_series("b", 16, 15, alive="x30 stale")]
    checks = _checks("40m", (g.FLEET_PROVISIONED, [_sample(g.FLEET_PROVISIONED, 12)]))
    return [{"interval": "1m", "input_series": cluster_series("a", 12, 9) + retired,
             "promql_expr_test": checks}]


def boundary_cases(spec: SloSpec) -> list[dict]:
    """Per SLO and reachable window pair of the fleet SLIs: at the threshold silent, one
    millionth below it firing."""
    tests = []
    for slo in names.SLOS:
        for severity in names.SEVERITIES:
            rule = g.burn_rule(spec, slo, severity)
            for pair in reachable_pairs(spec, slo, severity):
                at = burn_threshold(spec, slo, pair)
                values = f"{format_number(at)}x10 {format_number(at - BOUNDARY_STEP)}x10"
                inputs = [series(g.level_sli(g.FLEET, slo, w), {}, values)
                          for w in (pair.long_window, pair.short_window)]
                test = case(inputs, rule["alert"], "5m", [])
                test["alert_rule_test"].append(
                    {"eval_time": "15m", "alertname": rule["alert"],
                     "exp_alerts": [expect(rule, {})]})
                tests.append(test)
    return tests


def end_to_end_cases(spec: SloSpec) -> list[dict]:
    """From per-cluster counts over 70 minutes: every cluster good is silent; every cluster
    bad (no usable GPU, no fresh check, no productive job time) pages and tickets."""
    tests = []
    for slo in names.SLOS:
        fired = [g.burn_rule(spec, slo, sev) for sev in names.SEVERITIES]
        expected = [expect(rule, {}) for rule in fired if rule is not None]
        for good in (True, False):
            inputs = []
            for cluster in CLUSTERS:
                inputs += _slo_inputs(slo, cluster, good)
            tests.append(case(inputs, g.BURN_ALERT[slo], AT, [] if good else expected))
    return tests


def _slo_inputs(slo: str, cluster: str, good: bool) -> list[dict]:
    labels = _labels(cluster)
    if slo == names.SLO_USABLE_GPU:
        return [series(GPU_PROVISIONED_COUNT, labels, "8x70"),
                series(sli.GPU_USABLE_COUNT, labels, "8x70" if good else "0x70")]
    if slo == names.SLO_CHECK_LIVENESS:
        return [series(sli.CHECK_INVENTORY_COUNT, labels, "4x70"),
                series(sli.CHECK_FRESH_COUNT, labels, "4x70" if good else "0x70")]
    category = names.CATEGORY_PRODUCTIVE if good else "recovery"
    return [series(sli.JOB_SECONDS_INCREASE, _labels(cluster, category=category), "480x70")]


def global_test_file(spec: SloSpec) -> dict:
    """The global rules' test document (one evaluation a minute)."""
    tests = [answering_case(), silent_case(spec), *retired_case(spec)]
    tests += boundary_cases(spec) + end_to_end_cases(spec)
    order = [group["name"] for group in g.recording_groups(spec) + g.alert_groups(spec)]
    # promtool evaluates groups in an arbitrary order unless told; a ruler evaluates them on
    # their own schedules, each reading the others' latest samples
    return {"rule_files": [RULE_FILE], "evaluation_interval": "1m", "group_eval_order": order,
            "tests": tests}
