"""Rules and dashboards use only known names: metric names from names.METRICS, the recording
rules gpuslo/alerts defines, kube-state-metrics' kube_node_spec_unschedulable, kube_node_info and
kube_node_status_capacity, `up` and Prometheus's `ALERTS` (with its alertname and alertstate);
label names from names.LABELS plus the target labels `instance` and `job`, kube-state-metrics'
`resource` and the `cluster` label a multi-cluster setup adds."""

from __future__ import annotations

import json
import re

import pytest

from gpuslo import names
from gpuslo.alerts import global_rules, rules, sli
from gpuslo.dashboards import generate as dashboards
from gpuslo.slo_spec import SloSpec

FUNCTIONS = {
    "abs",
    "absent",
    "avg",
    "avg_over_time",
    "clamp",
    "clamp_max",
    "clamp_min",
    "count",
    "count_over_time",
    "deriv",
    "increase",
    "last_over_time",
    "max",
    "max_over_time",
    "min",
    "min_over_time",
    "rate",
    "scalar",
    "sum",
    "sum_over_time",
    "time",
    "vector",
    "label_replace",
    "group",
    "sort_desc",
}
KEYWORDS = {
    "by",
    "without",
    "on",
    "ignoring",
    "group_left",
    "group_right",
    "bool",
    "and",
    "or",
    "unless",
    "offset",
}
EXTERNAL = {
    "kube_node_spec_unschedulable",
    "kube_node_info",
    "kube_node_status_capacity",
    "up",
    "ALERTS",
}
TARGET_LABELS = {"instance", "job", "cluster", "alertname", "alertstate"}
EXTERNAL_LABELS = {"resource"}  # kube-state-metrics' kube_node_status_capacity{resource}
GRAFANA = {"$__rate_interval": "5m", "$__range_s": "3600", "$__range": "1h"}


def tokens(expr: str) -> tuple[set[str], set[str]]:
    """(identifiers outside label matchers, label names) of a PromQL expression."""
    for variable, value in GRAFANA.items():
        expr = expr.replace(variable, value)
    labels = set(re.findall(r"([A-Za-z_]\w*)\s*(?:=~|!~|!=|=)\s*\"", expr))
    # Grafana's label_values(metric, label) template query.
    selector = r"((?:[^,{]|\{[^}]*\})+)"  # a series selector, commas inside its braces
    labels |= {m[1] for m in re.findall(r"label_values\(" + selector + r",\s*(\w+)\)", expr)}
    expr = re.sub(r"label_values\(" + selector + r",\s*\w+\)", r"\1", expr)
    for clause in re.findall(
        r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\(([^)]*)\)", expr
    ):
        labels |= {part.strip() for part in clause.split(",") if part.strip()}
    expr = re.sub(r'"[^"]*"', "", expr)
    expr = re.sub(r"\{[^}]*\}|\[[^\]]*\]", "", expr)
    expr = re.sub(r"\b(?:by|without|on|ignoring|group_left|group_right)\s*\([^)]*\)", "", expr)
    expr = re.sub(r"\boffset\s+\d+(?:ms|s|m|h|d|w|y)\b", "offset", expr)
    expr = re.sub(r"\b\d+(?:\.\d+)?(?:e[-+]?\d+)?\b", "", expr)
    return set(re.findall(r"[A-Za-z_:][\w:]*", expr)), labels


def rule_expressions(spec: SloSpec) -> list[str]:
    groups = sli.recording_groups(spec) + rules.alert_groups(spec)
    return [rule["expr"] for group in groups for rule in group["rules"]]


def global_rule_expressions(spec: SloSpec) -> list[str]:
    """The global rules of `gpuslo rules --split global` (gpuslo.alerts.global_rules)."""
    groups = global_rules.recording_groups(spec) + global_rules.alert_groups(spec)
    return [rule["expr"] for group in groups for rule in group["rules"]]


def dashboard_expressions(spec: SloSpec) -> list[str]:
    boards = map(json.loads, dashboards.build_files(spec).values())
    found = []
    for board in boards:
        found += [t["expr"] for p in board["panels"] for t in p["targets"]]
        found += [v["query"] for v in board["templating"]["list"] if v["type"] == "query"]
        found += [
            a["target"]["expr"]
            for a in board["annotations"]["list"]
            if a["datasource"]["type"] == "prometheus"
        ]
    return found


@pytest.mark.parametrize("source", [rule_expressions, global_rule_expressions,
                                    dashboard_expressions])
def test_only_known_metric_and_label_names(source):
    spec = SloSpec()
    recorded = sli.recorded_names(spec) | global_rules.recorded_names(spec)
    allowed = set(names.METRICS) | recorded | EXTERNAL | FUNCTIONS | KEYWORDS
    label_names = set(names.LABELS) | TARGET_LABELS | EXTERNAL_LABELS
    for expr in source(spec):
        identifiers, labels = tokens(expr)
        assert identifiers <= allowed, (expr, identifiers - allowed)
        assert labels <= label_names, (expr, labels - label_names)


def test_the_checker_catches_an_unknown_metric_and_label():
    identifiers, labels = tokens('sum by (host) (rate(gpuslo_gpu_errors_total{gpu="0"}[5m]))')
    assert (
        "gpuslo_gpu_errors_total" in identifiers and "gpuslo_gpu_errors_total" not in names.METRICS
    )
    assert labels == {"host", "gpu"}


def test_every_metric_of_the_contract_is_on_a_dashboard():
    """Read by a panel directly or through a recorded series a panel reads (the fleet-wide
    boards draw recorded series only, so they cost the same on any fleet size)."""
    spec = SloSpec()
    used = set().union(*(tokens(e)[0] for e in dashboard_expressions(spec)))
    rules = [rule for group in sli.recording_groups(spec) for rule in group["rules"]]
    for _ in range(3):  # recorded series read recorded series: follow a few levels
        used |= set().union(*(tokens(r["expr"])[0] for r in rules if r["record"] in used))
    assert set(names.METRICS) <= used, set(names.METRICS) - used
