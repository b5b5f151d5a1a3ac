"""Every fleet panel gives the right figure for one, several and all clusters (issue 27, item 1).

The panels' own generated expressions run as promtool unit tests over the recorded series of
two clusters as a Thanos or Mimir querier returns them (`cluster` from each Prometheus' external
labels): cluster `a` has 8 GPUs and evaluates its rules every 10 min, cluster `b` has 16 GPUs and
evaluates every 20 min (every other sample is missing), so a figure that counts rule evaluations
across clusters, folds them through `scalar()` or averages the clusters' ratios is caught.

The fleet, per evaluation of each cluster's rules:

    cluster  provisioned  usable  blind  lost (layer/reason)            checks fresh/all
    a        8            6       2      2 node/fallen_off_bus           19 / 20
    b        16           15      1      1 observability/no_data         78 / 80

    job GPU-seconds per 10 min: a productive 90, checkpoint_save 10; b productive 150,
    checkpoint_save 50 (the job group runs every minute in both clusters).

Selections: one cluster `b`, several `(a|b)` (Grafana's multi-value regex) and All `.*`.
The check-liveness board's per-check lines fold the clusters' per-check series (counts and rates
summed, ages the largest). Per-node and per-job panels keep `cluster` in their join and are
listed by node or job; `test_every_panel_is_checked_here_or_per_entity` makes a new fleet panel
join this table.
"""

from __future__ import annotations

import json
import math
import subprocess

import pytest
import yaml

from gpuslo.dashboards import generate
from gpuslo.slo_spec import SloSpec
from tests.conftest import require_binary

pytestmark = pytest.mark.prometheus
STEPS = 28 * 24 * 6  # 10-minute steps in 28 days: the input runs from 0 to 28d
EVAL = "28d"
RANGE_H = 1
ONE, SEVERAL, ALL = "b", "(a|b)", ".*"
SELECTIONS = (ONE, SEVERAL, ALL)
A = {"cluster": "a"}
B = {"cluster": "b"}
GRID = 2**-20  # exact in binary: 9.5367431640625e-07


def _values(value: float, cluster: dict) -> str:
    """Samples every 10 min (cluster a) or every 20 min (cluster b: its rules run half as often)."""
    if cluster is A:
        return f"{value}x{STEPS}"
    return " ".join([f"{value} _"] * (STEPS // 2) + [str(value)])


def _series(name: str, labels: dict, value: float, cluster: dict) -> dict:
    inner = ",".join(f'{k}="{v}"' for k, v in sorted({**cluster, **labels}.items()))
    return {"series": f"{name}{{{inner}}}", "values": _values(value, cluster)}


def _inputs() -> list[dict]:
    fleet = {
        # cluster: provisioned, usable, blind, (layer, reason, lost), fresh, checks, per-node blind
        "a": (8, 6, 2, ("node", "fallen_off_bus", 2), 19, 20, {"a-gpu-1": 2}),
        "b": (16, 15, 1, ("observability", "no_data", 1), 78, 80, {"b-gpu-1": 1, "b-gpu-2": 0}),
    }
    jobs = {
        "a": {"productive": 90, "checkpoint_save": 10},
        "b": {"productive": 150, "checkpoint_save": 50},
    }
    objectives = {"gpu_usable": 0.98, "check_liveness": 0.999, "job_goodput": 0.9}
    rows = []
    for name, cluster in (("a", A), ("b", B)):
        prov, usable, blind, (layer, reason, lost), fresh, checks, nodes = fleet[name]

        def add(metric: str, value: float, cluster: dict = cluster, **labels: str) -> None:
            rows.append(_series(metric, labels, value, cluster))

        add("gpuslo:gpu_provisioned:count", prov)
        add("gpuslo:gpu_usable:count", usable)
        add("gpuslo:gpu_unusable:count", prov - usable)
        add("gpuslo:gpu_blind:count", blind)
        add("gpuslo:gpu_blind:ratio", blind / prov)
        add("gpuslo:gpu_lost:count", lost, layer=layer, reason=reason)
        if name == "b":  # the global rules' view: b's Prometheus has gone silent
            add("gpuslo_cluster:gpu_silent:count", prov)
        add("gpuslo:check_fresh:count", fresh)
        add("gpuslo:check_inventory:count", checks)
        for node, count in nodes.items():
            add("gpuslo:node_gpus_blind:count", count, node=node)
        for node in nodes:
            add("up", 1, job="gpuslo", instance=f"{node}:9400")
        add("up", 0, job="gpuslo", instance=f"{name}-down:9400")
        for slo, objective in objectives.items():
            add(f"gpuslo:{slo}:objective", objective)
        # Each cluster's own recorded SLIs (constant here, so every window reads the same).
        for window in ("5m", "1h", "6h", "1d", "3d", "28d"):
            add(f"gpuslo:gpu_usable:ratio_rate{window}", usable / prov)
            add(f"gpuslo:check_liveness:ratio_rate{window}", fresh / checks)
            good, all_ = jobs[name]["productive"], sum(jobs[name].values())
            add(f"gpuslo:job_goodput:ratio_rate{window}", good / all_)
        for slo, ratio in (
            ("gpu_usable", usable / prov),
            ("check_liveness", fresh / checks),
            ("job_goodput", jobs[name]["productive"] / sum(jobs[name].values())),
        ):
            budget = 1 - objectives[slo]
            add(f"gpuslo:{slo}:error_budget_remaining", 1 - (1 - ratio) / budget)
        for record, rows_of in CHECKS[name].items():
            for labels, value in rows_of:
                add(record, value, **labels)
        for category, seconds in jobs[name].items():
            # The job group runs every minute in every cluster: dense in both.
            rows.append(
                {
                    "series": f'gpuslo:job_gpu_seconds:increase1m{{category="{category}",'
                    f'cluster="{name}"}}',
                    "values": f"{seconds}x{STEPS}",
                }
            )
    return rows


def _fleet(usable, provisioned, fresh, checks, productive, allocated, lost, blind, down, nodes):
    """The expected figure of every fleet panel for a selection holding these totals."""
    usable_ratio = usable / provisioned
    liveness = fresh / checks
    goodput = productive / allocated
    burn = {
        "Usable GPU ratio": ((1 - usable_ratio) / 0.02, 1 - (1 - usable_ratio) / 0.02),
        "Check liveness": ((1 - liveness) / 0.001, 1 - (1 - liveness) / 0.001),
        "Job goodput": ((1 - goodput) / 0.1, 1 - (1 - goodput) / 0.1),
    }
    figures = {
        ("gpuslo-fleet-slo", "Usable GPU ratio over 28d (objective 98 %)", ""): usable_ratio,
        ("gpuslo-fleet-slo", "Check liveness over 28d (objective 99.9 %)", ""): liveness,
        ("gpuslo-fleet-slo", "Job goodput over 28d (objective 90 %)", ""): goodput,
        ("gpuslo-fleet-slo", "Usable GPU ratio: SLI and objective", "objective"): 0.98,
        ("gpuslo-fleet-slo", "Check liveness: SLI and objective", "objective"): 0.999,
        ("gpuslo-fleet-slo", "Job goodput: SLI and objective", "objective"): 0.9,
        ("gpuslo-fleet-slo", "Blind share of provisioned GPUs", "blind"): blind / provisioned,
        ("gpuslo-fleet-slo", "Blind share of provisioned GPUs", "page threshold"): 0.05,
        ("gpuslo-job-goodput", "Fleet goodput over 28d", ""): goodput,
        ("gpuslo-check-liveness", "Check liveness (5 min)", ""): liveness,
        ("gpuslo-check-liveness", "Exporters down", ""): down,
        ("gpuslo-lost-gpu-hours", "Provisioned GPUs", ""): provisioned,
        ("gpuslo-lost-gpu-hours", "Usable GPUs", ""): usable,
        ("gpuslo-lost-gpu-hours", "Blind GPUs", ""): blind,
        ("gpuslo-lost-gpu-hours", "Lost GPU-hours in range", ""): (provisioned - usable) * RANGE_H,
        ("gpuslo-lost-gpu-hours", "Unusable, blind and provisioned GPUs", "unusable"): (
            provisioned - usable
        ),
        ("gpuslo-lost-gpu-hours", "Unusable, blind and provisioned GPUs", "blind"): blind,
        ("gpuslo-lost-gpu-hours", "Unusable, blind and provisioned GPUs", "provisioned"): (
            provisioned
        ),
        ("gpuslo-lost-gpu-hours", "Lost GPU-hours by layer", "{{layer}}"): [
            ({"layer": layer}, gpus * RANGE_H) for layer, _, gpus in lost
        ],
        ("gpuslo-lost-gpu-hours", "Lost GPU-hours by layer and reason", ""): [
            ({"layer": layer, "reason": reason}, gpus * RANGE_H) for layer, reason, gpus in lost
        ],
        ("gpuslo-lost-gpu-hours", "Lost GPUs by layer", "{{layer}}"): [
            ({"layer": layer}, gpus) for layer, _, gpus in lost
        ],
        ("gpuslo-lost-gpu-hours", "Lost GPUs by reason", "{{reason}}"): [
            ({"reason": reason}, gpus) for _, reason, gpus in lost
        ],
        ("gpuslo-lost-gpu-hours", "Blind GPUs by node", ""): [
            ({**cluster, "node": node}, gpus) for cluster, node, gpus in nodes
        ],
    }
    figures.update(_per_cluster(lost))
    for title, (burn_rate, remaining) in burn.items():
        figures[("gpuslo-fleet-slo", f"{title}: error budget remaining", "")] = remaining
        for window in ("1h", "6h", "1d", "3d"):
            figures[("gpuslo-fleet-slo", f"{title}: burn rate", window)] = burn_rate
        for window in ("1h", "1d"):
            figures[("gpuslo-fleet-slo", f"{title}: SLI and objective", window)] = {
                "Usable GPU ratio": usable_ratio,
                "Check liveness": liveness,
                "Job goodput": goodput,
            }[title]
    return figures


# Per cluster (the cluster panels): usable, provisioned, lost GPUs; b's Prometheus silent.
PER_CLUSTER = {"a": (6, 8, 2), "b": (15, 16, 1)}


def _per_cluster(lost) -> dict:
    """The cluster panels' figures: one row per cluster of the selection (the clusters whose
    lost reasons are in `lost`: a has node/fallen_off_bus, b observability/no_data)."""
    picked = sorted({"node": "a", "observability": "b"}[layer] for layer, _, _ in lost)
    board = "gpuslo-fleet-slo"
    ratio = [({"cluster": c}, PER_CLUSTER[c][0] / PER_CLUSTER[c][1]) for c in picked]
    return {
        (board, "Usable GPU ratio by cluster in range", "{{cluster}}"): ratio,
        (board, "Usable GPU ratio by cluster (1 h)", "{{cluster}}"): ratio,
        (board, "Provisioned GPUs by cluster", "{{cluster}}"): [
            ({"cluster": c}, PER_CLUSTER[c][1]) for c in picked],
        (board, "Lost GPU-hours in range by cluster", "{{cluster}}"): [
            ({"cluster": c}, PER_CLUSTER[c][2] * RANGE_H) for c in picked],
        (board, "Clusters silent (global rules)", "{{cluster}}"): [({"cluster": "b"}, 16)],
    }


# The per-check liveness series of each cluster (gpuslo.alerts.liveness): stale 1 of a's 20
# checks and 2 of b's 80 (as fresh/all above); rates per second, drawn per minute.
CHECKS = {
    "a": {
        "gpuslo:check_stale:count": [({"check": "xid"}, 1), ({"check": "ecc"}, 0)],
        "gpuslo:check_never_answered:count": [({"check": "gpu_probe"}, 1)],
        "gpuslo:check_heartbeat_age_intervals:max": [({"check": "xid"}, 20), ({"check": "ecc"}, 1)],
        "gpuslo:check_answer_age_seconds:max": [({"check": "xid"}, 600)],
        "gpuslo:check_duration_seconds:max": [({"check": "xid"}, 2)],
        "gpuslo:check_runs:rate5m": [({"check": "xid"}, 0.5)],
        "gpuslo:check_errors:rate5m": [({"check": "xid", "reason": "dependency_missing"}, 0.1)],
        "gpuslo:unrecognised_messages:rate5m": [({"source": "xid"}, 0.5)],
        "gpuslo:kernel_log_records_lost:rate5m": [({}, 0.5)],
        "gpuslo:journal_errors:rate5m": [({"reason": "bad_line"}, 0.25)],
    },
    "b": {
        "gpuslo:check_stale:count": [({"check": "xid"}, 1), ({"check": "ecc"}, 1)],
        "gpuslo:check_never_answered:count": [({"check": "gpu_probe"}, 0)],
        "gpuslo:check_heartbeat_age_intervals:max": [({"check": "xid"}, 5), ({"check": "ecc"}, 4)],
        "gpuslo:check_answer_age_seconds:max": [({"check": "xid"}, 100)],
        "gpuslo:check_duration_seconds:max": [({"check": "xid"}, 3)],
        "gpuslo:check_runs:rate5m": [({"check": "xid"}, 1.5)],
        "gpuslo:check_errors:rate5m": [({"check": "xid", "reason": "dependency_missing"}, 0.05),
                                       ({"check": "ecc", "reason": "check_timeout"}, 0.2)],
        "gpuslo:unrecognised_messages:rate5m": [({"source": "xid"}, 0.25)],
        "gpuslo:kernel_log_records_lost:rate5m": [({}, 0.25)],
        "gpuslo:journal_errors:rate5m": [({"reason": "bad_line"}, 0.5)],
    },
}


def _across(clusters: list[str], record: str, by: str, fold, scale: float = 1, **where) -> list:
    """`record`'s rows of `clusters` (those matching `where`) folded by the label `by`."""
    out: dict = {}
    for cluster in clusters:
        for labels, value in CHECKS[cluster][record]:
            if all(labels.get(k) == v for k, v in where.items()):
                key = {**labels, "cluster": cluster}[by]
                out[key] = fold(out[key], value) if key in out else value
    return [({by: key}, scale * value) for key, value in sorted(out.items())]


def _liveness(clusters: list[str]) -> dict:
    """The check-liveness board's figures for the selected clusters: counts summed, ages and
    durations the largest, rates summed and drawn per minute."""
    board, add = "gpuslo-check-liveness", lambda x, y: x + y
    total = lambda record: sum(v for c in clusters for _, v in CHECKS[c][record])  # noqa: E731
    per_minute = {"scale": 60, "fold": add}
    return {
        (board, "Stale checks", ""): total("gpuslo:check_stale:count"),
        (board, "Checks that never answered", ""): total("gpuslo:check_never_answered:count"),
        (board, "Stale checks per check", "{{check}}"):
            _across(clusters, "gpuslo:check_stale:count", "check", add),
        (board, "Checks that never answered per check", "{{check}}"):
            _across(clusters, "gpuslo:check_never_answered:count", "check", add),
        (board, "Oldest heartbeat per check", "{{check}}"):
            _across(clusters, "gpuslo:check_heartbeat_age_intervals:max", "check", max),
        (board, "Oldest answer per check", "{{check}}"):
            _across(clusters, "gpuslo:check_answer_age_seconds:max", "check", max),
        (board, "Slowest check duration", "{{check}}"):
            _across(clusters, "gpuslo:check_duration_seconds:max", "check", max),
        (board, "Check runs", "{{check}}"):
            _across(clusters, "gpuslo:check_runs:rate5m", "check", **per_minute),
        (board, "Dependency failures", "{{check}}"):
            _across(clusters, "gpuslo:check_errors:rate5m", "check", **per_minute,
                    reason="dependency_missing"),
        (board, "Check errors by reason", "{{reason}}"):
            _across(clusters, "gpuslo:check_errors:rate5m", "reason", **per_minute),
        (board, "Unrecognised log lines by source", "{{source}}"):
            _across(clusters, "gpuslo:unrecognised_messages:rate5m", "source", **per_minute),
        (board, "Kernel-log records lost and journal errors", "kernel-log records lost "
         "{{cluster}}"):
            _across(clusters, "gpuslo:kernel_log_records_lost:rate5m", "cluster", **per_minute),
        (board, "Kernel-log records lost and journal errors", "journal errors: {{reason}}"):
            _across(clusters, "gpuslo:journal_errors:rate5m", "reason", **per_minute),
    }


B_NODES = [(B, "b-gpu-1", 1), (B, "b-gpu-2", 0)]
EXPECTED = {
    # One cluster: b alone.
    ONE: _fleet(15, 16, 78, 80, 150, 200, [("observability", "no_data", 1)], 1, 1, B_NODES),
    # Several and All: a and b together, as GPU-time and check-time weighted sums:
    # usable (6 + 15) / (8 + 16) = 0.875, not the mean of 0.75 and 0.9375;
    # liveness (19 + 78) / (20 + 80) = 0.97; goodput (90 + 150) / (100 + 200) = 0.8.
    **{
        selection: _fleet(
            21,
            24,
            97,
            100,
            240,
            300,
            [("node", "fallen_off_bus", 2), ("observability", "no_data", 1)],
            3,
            2,
            [(A, "a-gpu-1", 2), *B_NODES],
        )
        for selection in (SEVERAL, ALL)
    },
}
for _selection, _clusters in ((ONE, ["b"]), (SEVERAL, ["a", "b"]), (ALL, ["a", "b"])):
    EXPECTED[_selection].update(_liveness(_clusters))


def _legend(target: dict) -> str:
    """A target's legend, "" where Grafana picks it (`__auto`)."""
    legend = target.get("legendFormat", "")
    return "" if legend == "__auto" else legend


def _targets() -> dict[tuple[str, str, str], str]:
    """(uid, title, legend) -> expression with its Grafana variables, for every panel target."""
    boards = [json.loads(text) for text in generate.build_files(SloSpec()).values()]
    return {
        (board["uid"], panel["title"], _legend(target)): target["expr"]
        for board in boards
        for panel in board["panels"]
        for target in panel["targets"]
    }


def _substitute(expr: str, cluster: str) -> str:
    for variable, value in (
        ("$__range_s", str(RANGE_H * 3600)),
        ("$__range", f"{RANGE_H}h"),
        ("$__rate_interval", "5m"),
        ("$cluster", cluster),
        ("$node", ".*"),
        ("$job", ".*"),
    ):
        expr = expr.replace(variable, value)
    return expr


def _checks(expr: str, figure) -> list[dict]:
    """promtool checks that `expr` gives `figure`: one series per row (`count by` the row's
    labels is 1) holding the row's value (`sum by` them); a scalar figure is one series,
    whatever labels it carries. Values are compared on a grid of 2^-20 (about 1e-6), computed
    alike by PromQL's round() and here, so the order of float operations cannot matter; NaN
    equals nothing, so a NaN fails."""
    rows = figure if isinstance(figure, list) else [({}, figure)]
    keys = sorted({key for labels, _ in rows for key in labels})
    by = f"by ({', '.join(keys)}) " if keys else ""

    def samples(value_of) -> list[dict]:
        return [
            {
                "labels": "{" + ",".join(f'{k}="{labels[k]}"' for k in keys) + "}",
                "value": value_of(value),
            }
            for labels, value in rows
        ]

    return [
        {"expr": f"count {by}({expr})", "eval_time": EVAL, "exp_samples": samples(lambda v: 1)},
        {
            "expr": f"round(sum {by}({expr}), {GRID})",
            "eval_time": EVAL,
            "exp_samples": samples(lambda v: math.floor(v / GRID + 0.5) * GRID),
        },
    ]


def _promtool_tests(selection: str) -> dict:
    targets = _targets()
    checks = [
        check
        for key, figure in sorted(EXPECTED[selection].items())
        for check in _checks(_substitute(targets[key], selection), figure)
    ]
    return {
        "rule_files": ["none.rules.yml"],
        "evaluation_interval": "10m",
        "tests": [{"interval": "10m", "input_series": _inputs(), "promql_expr_test": checks}],
    }


@pytest.mark.parametrize("selection", SELECTIONS, ids=["one", "several", "all"])
def test_every_fleet_panel_is_right_for_one_several_and_all_clusters(tmp_path, selection):
    (tmp_path / "none.rules.yml").write_text("groups: []\n")
    (tmp_path / "panels_test.yml").write_text(yaml.safe_dump(_promtool_tests(selection)))
    tested = subprocess.run(
        [require_binary("promtool"), "test", "rules", "panels_test.yml"],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert tested.returncode == 0, tested.stdout[-6000:] + tested.stderr[-2000:]


# Panels that list one node, job or check per series: `cluster` stays in their join, so two
# clusters give two rows or lines, each named by its node or job, never a folded figure.
PER_ENTITY_MARKS = ("on (cluster, instance)", 'job=~"$job"')


def test_every_panel_is_checked_here_or_per_entity():
    unchecked = [
        key
        for key, expr in _targets().items()
        if key not in EXPECTED[ALL] and not any(mark in expr for mark in PER_ENTITY_MARKS)
    ]
    assert not unchecked, f"fleet panels without a two-cluster figure: {unchecked}"
