"""Every dashboard expression passes promtool and returns data from a real Prometheus (Debian's
package, on loopback) that holds three hours of backfilled OpenMetrics for every metric in
names.METRICS — two nodes, one GPU unhealthy (Xid 79), one training job, plus the exporter's own
committed fixture exposition replayed as a third node — and evaluates the generated rules. One
Prometheus serves the whole module."""

from __future__ import annotations

import json
import re
import subprocess
import time

import pandas as pd
import pytest
import requests
import yaml
from prometheus_client import CollectorRegistry
from prometheus_client.metrics_core import Metric
from prometheus_client.openmetrics.exposition import generate_latest
from prometheus_client.parser import text_string_to_metric_families

from gpuslo import names
from gpuslo.alerts import generate as rules_generate
from gpuslo.dashboards import generate
from gpuslo.slo_spec import SloSpec
from tests.conftest import REPO, backfill, require_binary, running_prometheus

pytestmark = pytest.mark.prometheus
STEP_S, HOURS = 60, 3
SUBSTITUTE = {
    "$__rate_interval": "5m",
    "$__range_s": str(HOURS * 3600),
    "$__range": f"{HOURS}h",
    "$cluster": ".*",
    "$node": ".*",
    "$exporter": ".*",
    "$job": ".*",
}
NODES = ("n1:9400", "n2:9400")
BAD_GPU = ("n2:9400", "1")  # Xid 79: fallen off the bus
CHECKS = ("xid", "ecc")
NEVER_ANSWERED = ("n1:9400", "gpu_probe")  # runs, but has never produced an answer: 0 exported
# The exporter's committed fixture exposition, replayed as a third node: one GPU fallen off the bus
# with two observability problems, a check 599 s stale, 31 of 32 EFA devices, a job.
EXPORTER_FIXTURE = REPO / "tests" / "golden" / "exposition" / "fixture_node.prom"
EXPORTER_NODE = {"instance": "n3:9835", "job": "gpuslo"}


def substitute(expr: str) -> str:
    """A dashboard expression with Grafana's variables replaced by test values."""
    for variable, value in SUBSTITUTE.items():
        expr = expr.replace(variable, value)
    return expr


def dashboard_targets() -> list[tuple[str, str, str]]:
    """(dashboard uid, panel title or "annotation: name", substituted expression) for every
    panel target and every Prometheus annotation."""
    boards = [json.loads(text) for text in generate.build_files(SloSpec()).values()]
    panels = [
        (board["uid"], panel["title"], substitute(target["expr"]))
        for board in boards
        for panel in board["panels"]
        for target in panel["targets"]
    ]
    annotations = [
        (board["uid"], f"annotation: {note['name']}", substitute(note["target"]["expr"]))
        for board in boards
        for note in board["annotations"]["list"]
        if note["datasource"]["type"] == "prometheus"
    ]
    return panels + annotations


class _Fixture:
    """Collector yielding every series with its samples over the window (timestamps in s)."""

    def __init__(self, end: int) -> None:
        self.times = list(range(end - HOURS * 3600, end + 1, STEP_S))

    def _family(self, name: str, rows: list[tuple[dict, object]]) -> Metric:
        kind, _, help_text = names.METRICS.get(name, ("gauge", (), name))
        family = Metric(name.removesuffix("_total") if kind == "counter" else name, help_text, kind)
        for labelset, value in rows:
            for index, at in enumerate(self.times):
                sample = value(index, at) if callable(value) else value
                family.add_sample(name, dict(sorted(labelset.items())), sample, timestamp=at)
        return family

    def collect(self):
        for name, rows in sorted(fixture_rows().items()):
            yield self._family(name, rows)


def _gpu_rows() -> dict[str, list]:
    rows: dict[str, list] = {
        k: []
        for k in (
            "gpuslo_gpu_info",
            "gpuslo_gpu_usable",
            "gpuslo_gpu_verdict",
            "gpuslo_gpu_problem",
        )
    }
    for instance in NODES:
        for gpu in ("0", "1"):
            ids = {
                "instance": instance,
                "job": "gpuslo",
                "gpu": gpu,
                "uuid": f"GPU-{instance}-{gpu}",
            }
            bad = (instance, gpu) == BAD_GPU
            info = {
                "pci_bus_id": f"00000000:0{gpu}:00.0",
                "model": "NVIDIA H200",
                "family": "hopper",
            }
            rows["gpuslo_gpu_info"].append(({**ids, **info}, 1))
            rows["gpuslo_gpu_usable"].append((ids, 0 if bad else 1))
            for verdict in names.VERDICTS:
                state = verdict == ("unhealthy" if bad else "healthy")
                rows["gpuslo_gpu_verdict"].append(({**ids, "verdict": verdict}, int(state)))
            if bad:
                problem = {
                    "check": "xid",
                    "reason": "fallen_off_bus",
                    "layer": "node",
                    "action": "reboot_node",
                }
                rows["gpuslo_gpu_problem"].append(({**ids, **problem}, 1))
    return rows


def _node_rows() -> dict[str, list]:
    rows: dict[str, list] = {}
    add = lambda name, labels, value: rows.setdefault(name, []).append((labels, value))  # noqa: E731
    for instance in NODES:
        node = {"instance": instance, "job": "gpuslo"}
        bad = instance == BAD_GPU[0]
        add("up", node, 1)
        add("gpuslo_build_info", {**node, "version": "0.1.0"}, 1)
        add(
            "gpuslo_node_info",
            {
                **node,
                "node": instance.split(":")[0],
                "driver_version": "570.124.06",
                "cuda_version": "12.8",
            },
            1,
        )
        add("gpuslo_node_usable", node, 0 if bad else 1)
        for verdict in names.VERDICTS:
            add(
                "gpuslo_node_verdict",
                {**node, "verdict": verdict},
                int(verdict == ("unhealthy" if bad else "healthy")),
            )
        add(
            "kube_node_spec_unschedulable",
            {"instance": "ksm:8080", "job": "kube-state-metrics", "node": instance.split(":")[0]},
            0,
        )
        for check in CHECKS:
            labels = {**node, "check": check}
            for status in names.STATUSES:
                add("gpuslo_check_status", {**labels, "status": status}, int(status == "ok"))
            add("gpuslo_check_last_run_timestamp_seconds", labels, lambda i, at: at)
            add("gpuslo_check_last_success_timestamp_seconds", labels, lambda i, at: at)
            add("gpuslo_check_interval_seconds", labels, 30)
            add("gpuslo_check_duration_seconds", labels, 0.25)
            add("gpuslo_check_runs_total", labels, lambda i, at: 2 * i)
            for reason in ("dependency_missing", "check_timeout"):
                add(
                    "gpuslo_check_errors_total", {**labels, "reason": reason}, lambda i, at: i // 30
                )
        if instance == NEVER_ANSWERED[0]:
            labels = {**node, "check": NEVER_ANSWERED[1]}
            for status in names.STATUSES:
                add("gpuslo_check_status", {**labels, "status": status}, int(status == "unknown"))
            add("gpuslo_check_last_run_timestamp_seconds", labels, lambda i, at: at)
            add("gpuslo_check_last_success_timestamp_seconds", labels, 0)
            add("gpuslo_check_interval_seconds", labels, 30)
        add(
            "gpuslo_xid_events_total",
            {**node, "pci_bus_id": "00000000:01:00.0", "xid": "79", "class": "fatal"},
            lambda i, at: i // 60,
        )
        add(
            "gpuslo_sxid_events_total",
            {**node, "nvswitch": "0", "sxid": "20034", "class": "warn"},
            lambda i, at: i // 90,
        )
        add("gpuslo_kernel_log_records_lost_total", node, lambda i, at: i // 45)
        add("gpuslo_unrecognised_messages_total", {**node, "source": "xid"}, lambda i, at: i // 50)
        for metric, value in (
            ("gpuslo_network_devices", 4),
            ("gpuslo_network_devices_expected", 4),
        ):
            add(metric, {**node, "kind": "efa"}, value)
    return rows


def _job_rows() -> dict[str, list]:
    rows: dict[str, list] = {}
    add = lambda name, labels, value: rows.setdefault(name, []).append((labels, value))  # noqa: E731
    for instance in NODES:
        job = {"instance": instance, "job": "train-a"}
        # 2 GPUs per node: 100 of every 120 GPU-seconds productive, 20 saving checkpoints.
        add(
            "gpuslo_job_gpu_seconds_total", {**job, "category": "productive"}, lambda i, at: 100 * i
        )
        add(
            "gpuslo_job_gpu_seconds_total",
            {**job, "category": "checkpoint_save"},
            lambda i, at: 20 * i,
        )
        add(
            "gpuslo_job_gpu_seconds_total", {**job, "category": "slowdown"}, lambda i, at: 5 * i
        )
        # n2 computes its steps in twice n1's time: a straggler.
        add("gpuslo_job_step_compute_seconds", job, 2.0 if instance == NODES[-1] else 1.0)
        add("gpuslo_job_step", job, lambda i, at: 10 * i)
        add("gpuslo_job_last_step", job, lambda i, at: 10 * i + 5)
        add("gpuslo_job_last_progress_timestamp_seconds", job, lambda i, at: at)
        add("gpuslo_job_interruptions_total", {**job, "layer": "node"}, lambda i, at: i // 60)
    return rows


def _exporter_rows() -> dict[str, list]:
    """EXPORTER_FIXTURE's samples with constant values, except `*_timestamp_seconds` gauges,
    moved so the newest equals each sample's own time (their offsets, a stale check, are kept).
    A `job` label of the exposition (the training job) wins, as with honor_labels."""
    families = list(text_string_to_metric_families(EXPORTER_FIXTURE.read_text()))
    samples = [sample for family in families for sample in family.samples]
    newest = max(s.value for s in samples if s.name.endswith("_timestamp_seconds"))
    rows: dict[str, list] = {}
    for sample in samples:
        value: object = sample.value
        if sample.name.endswith("_timestamp_seconds"):
            value = lambda i, at, behind=newest - sample.value: at - behind  # noqa: E731
        rows.setdefault(sample.name, []).append(({**EXPORTER_NODE, **sample.labels}, value))
    return rows


def fixture_rows() -> dict[str, list]:
    """Metric name -> [(labels, value or f(index, timestamp))]: every metric in names.METRICS."""
    rows: dict[str, list] = {}
    for part in (_gpu_rows(), _node_rows(), _job_rows(), _exporter_rows()):
        for name, entries in part.items():
            rows.setdefault(name, []).extend(entries)
    return rows


@pytest.fixture(scope="module")
def prometheus(tmp_path_factory) -> str:
    binary, promtool = require_binary("prometheus"), require_binary("promtool")
    root = tmp_path_factory.mktemp("prometheus")
    registry = CollectorRegistry()
    registry.register(_Fixture(end=int(time.time()) - 30))
    (root / "fixture.om").write_bytes(generate_latest(registry))
    data = root / "data"
    backfill(promtool, root / "fixture.om", data)
    for name, text in rules_generate.build_files(SloSpec()).items():
        # The job GPU-seconds group is pinned to 1 m (its increases are per minute), the locate
        # group to 5 m; here every group runs each second, so a first evaluation does not wait
        # minutes (what they record is then a per-second share: this test asks for data, not
        # values).
        (root / name).write_text(re.sub(r"^(\s*)interval: \S+$", r"\1interval: 1s", text,
                                        flags=re.MULTILINE))
    config = {"global": {"evaluation_interval": "1s"}, "rule_files": [str(root / "*.rules.yml")]}
    (root / "prometheus.yml").write_text(yaml.safe_dump(config))
    with running_prometheus(binary, root / "prometheus.yml", data) as url:
        _wait_for_rule_evaluations(url, 3)
        yield url


def _wait_for_rule_evaluations(url: str, rounds: int, limit_s: float = 60) -> None:
    """Wait until every rule group has been evaluated `rounds` times (groups run each second:
    a rule reading another group's recorded series needs the rounds before it), so each test
    sees the rules' output whichever runs first."""
    started, deadline = time.time(), time.monotonic() + limit_s
    while time.monotonic() < deadline:
        groups = requests.get(f"{url}/api/v1/rules", timeout=10).json()["data"]["groups"]
        times = [pd.Timestamp(g["lastEvaluation"]).timestamp() for g in groups]
        if groups and min(times) > started + rounds:
            return
        time.sleep(0.5)
    raise AssertionError(f"the rule groups were not evaluated {rounds} times in {limit_s} s")


def _query(url: str, expr: str) -> list:
    answer = requests.get(f"{url}/api/v1/query", params={"query": expr}, timeout=10).json()
    assert answer["status"] == "success", (expr, answer)
    return answer["data"]["result"]


def test_every_dashboard_expression_passes_promtool(tmp_path):
    promtool = require_binary("promtool")
    rules = [
        {"record": f"gpuslo_dashboard_check:{n}", "expr": expr}
        for n, (_, _, expr) in enumerate(dashboard_targets())
    ]
    path = tmp_path / "dashboards.rules.yml"
    path.write_text(yaml.safe_dump({"groups": [{"name": "dashboards", "rules": rules}]}))
    checked = subprocess.run(
        [promtool, "check", "rules", str(path)], capture_output=True, text=True, timeout=60
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr


def test_every_dashboard_expression_returns_data(prometheus):
    pending = {
        target for target in dashboard_targets() if target[1] not in generate.EMPTY_ON_HEALTHY_FLEET
    }
    deadline = time.monotonic() + 30  # recording rules need a few 1 s evaluations
    while pending and time.monotonic() < deadline:
        pending = {t for t in pending if not _query(prometheus, t[2])}
        time.sleep(0.5)
    assert not pending, "no data for:\n" + "\n".join(
        f"{u}: {t}: {e}" for u, t, e in sorted(pending)
    )


def test_problem_panels_show_the_unhealthy_gpu(prometheus):
    lost = _query(prometheus, "gpuslo:gpu_lost:count")
    found = sorted((s["metric"]["layer"], s["metric"]["reason"], s["value"][1]) for s in lost)
    assert found == [
        ("node", "fallen_off_bus", "2"),
        ("observability", "dependency_missing", "1"),
        ("observability", "stale_data", "1"),
    ]
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline and not _query(prometheus, "gpuslo:gpu_usable:ratio_rate5m"):
        time.sleep(0.5)
    # 3 of 5 GPUs usable (n2's GPU 1 and the exporter fixture's GPU 0 are not).
    assert _query(prometheus, "gpuslo:gpu_usable:ratio_rate5m")[0]["value"][1] == "0.6"


def test_generated_rules_evaluate_without_errors_and_alert_on_the_bad_gpu(prometheus):
    deadline = time.monotonic() + 20
    while True:
        groups = requests.get(f"{prometheus}/api/v1/rules", timeout=10).json()["data"]["groups"]
        loaded = [rule for group in groups for rule in group["rules"]]
        evaluated = all(rule.get("lastEvaluation", "").startswith("20") for rule in loaded)
        if evaluated or time.monotonic() > deadline:
            break
        time.sleep(0.5)
    assert len(loaded) == sum(
        len(group["rules"])
        for name, text in rules_generate.build_files(SloSpec()).items()
        if name.endswith(".rules.yml")
        for group in yaml.safe_load(text)["groups"]
    )
    broken = [(rule["name"], rule.get("lastError")) for rule in loaded if rule["health"] != "ok"]
    assert not broken
    active = {
        (
            rule["name"],
            alert["labels"].get("node") or alert["labels"].get("uuid"),
            alert["labels"].get("instance"),
            alert["labels"].get("check"),
        )
        for rule in loaded
        if rule["type"] == "alerting"
        for alert in rule["alerts"]
    }
    assert ("GpusloGpuUnhealthy", "GPU-n2:9400-1", "n2:9400", "xid") in active
    assert ("GpusloNodeUnhealthySchedulable", "n2", None, None) in active
    stale = {
        (instance, check)
        for name, _, instance, check in active
        if name == "GpusloCheckHeartbeatStale"
    }
    assert stale == {("n3:9835", "thermal")}
    assert "GpusloJobStalled" not in {name for name, *_ in active}


def _panel_expr(uid: str, title: str) -> str:
    (expr,) = [e for u, t, e in dashboard_targets() if (u, t) == (uid, title)]
    return expr


def test_node_verdict_reads_as_a_state_per_node(prometheus):
    found = {
        s["metric"]["node"]: s["value"][1]
        for s in _query(prometheus, _panel_expr("gpuslo-node-drilldown", "Node verdict"))
    }
    # healthy, unhealthy, unhealthy (codes: 0 healthy, 1 validating, 2 unknown, 3 unhealthy)
    assert found == {"n1": "0", "n2": "3", "h200-fixture": "3"}


def test_a_check_that_never_answered_is_never_not_1970(prometheus):
    last = {
        (s["metric"]["node"], s["metric"]["check"]): float(s["value"][1])
        for s in _query(prometheus, _panel_expr("gpuslo-node-drilldown", "Last answer"))
    }
    assert last.pop(("n1", NEVER_ANSWERED[1])) == 0  # the panel maps 0 to "never"
    assert last and all(value > 1e12 for value in last.values())  # Unix milliseconds
    since = _query(prometheus, _panel_expr("gpuslo-node-drilldown", "Time since last answer"))
    assert since and NEVER_ANSWERED[1] not in {s["metric"]["check"] for s in since}


def test_every_table_row_names_its_node_or_its_layer(prometheus):
    tables = [
        (board["uid"], panel)
        for board in map(json.loads, generate.build_files(SloSpec()).values())
        for panel in board["panels"]
        if panel["type"] == "table"
    ]
    for uid, panel in tables:
        rows = _query(prometheus, substitute(panel["targets"][0]["expr"]))
        labels = panel["transformations"][0]["options"]["include"]["names"]
        for row in rows:  # the first column (node, layer) names every row
            assert labels[0] in row["metric"], (uid, panel["title"], row)
        seen = set().union(*(row["metric"] for row in rows)) if rows else set(labels)
        # every column is a row's label here, or a label of the metric contract (allocations:
        # this fixture is Slurm, with hpc_job; the pod columns are Kubernetes')
        unknown = set(labels) - {"Value"} - seen - set(names.LABELS)
        assert not unknown, (uid, panel["title"], unknown)
