"""promtool unit tests for the direct alerts: one firing and one non-firing case each, written as
short timelines (1-minute samples, `0+60x20` is a timestamp that keeps up with the clock)."""

from __future__ import annotations

from gpuslo import names
from gpuslo.alerts import crawl
from gpuslo.alerts import rules as alert_rules
from gpuslo.alerts.inventory_tests import node_series
from gpuslo.alerts.tests_gen import GPU1, NODE, NODE_INFO, RULE_FILES, case, expect, series
from gpuslo.slo_spec import SloSpec

CHECK = {**NODE, "check": "xid"}
JOB = {**NODE, "job": "train-a"}
KSM = {"instance": "ksm:8080", "job": "kube-state-metrics", "node": "n1"}


def _rules(spec: SloSpec) -> dict[str, dict]:
    found = {}
    for group in alert_rules.alert_groups(spec):
        for rule in group["rules"]:
            found.setdefault(rule["alert"], rule)
    return found


def _pair(rule: dict, at: str, bad: list[dict], good: list[dict], labels: dict) -> list[dict]:
    return [case(bad, rule["alert"], at, [expect(rule, labels)]), case(good, rule["alert"], at, [])]


def check_cases(spec: SloSpec) -> list[dict]:
    """Heartbeat stale, dependency missing, kernel-log records lost, exporter down and absent,
    fleet blind."""
    rules = _rules(spec)
    stale = _pair(
        rules["GpusloCheckHeartbeatStale"],
        "10m",
        [
            series("gpuslo_check_last_run_timestamp_seconds", CHECK, "0x20"),
            series("gpuslo_check_interval_seconds", CHECK, "30x20"),
        ],
        [
            series("gpuslo_check_last_run_timestamp_seconds", CHECK, "0+60x20"),
            series("gpuslo_check_interval_seconds", CHECK, "30x20"),
        ],
        CHECK,
    )
    dependency = {**CHECK, "reason": "dependency_missing"}
    missing = _pair(
        rules["GpusloCheckDependencyMissing"],
        "10m",
        [series("gpuslo_check_errors_total", dependency, "0+1x20")],
        [series("gpuslo_check_errors_total", dependency, "0x20")],
        dependency,
    )
    lost = _pair(
        rules["GpusloKernelLogRecordsLost"],
        "10m",
        [series("gpuslo_kernel_log_records_lost_total", NODE, "0+5x20")],
        [series("gpuslo_kernel_log_records_lost_total", NODE, "3x20")],
        NODE,
    )
    return stale + missing + lost + exporter_cases(spec)


def exporter_cases(spec: SloSpec) -> list[dict]:
    """GpusloExporterDown: a target answering 0 and a job with no target at all both fire."""
    rules = _rules(spec)
    up = {"instance": NODE["instance"], "job": spec.exporter_job}
    down = _pair(
        rules["GpusloExporterDown"],
        "10m",
        [series("up", up, "0x20")],
        [series("up", up, "1x20")],
        up,
    )
    absent = case(
        [],
        "GpusloExporterDown",
        "10m",
        [expect(rules["GpusloExporterDown"], {"job": spec.exporter_job})],
    )
    return down + [absent] + fleet_blind_cases(spec)


def fleet_blind_cases(spec: SloSpec) -> list[dict]:
    """GpusloFleetBlind: a node configured for 2 GPUs that lists none (blind share 1) fires
    after 5 min; the same node with both GPUs healthy (share 0) is quiet."""
    rule = _rules(spec)["GpusloFleetBlind"]
    blind = node_series("n1", 0, "1x20", expected=2)
    seen = node_series("n1", 2, "1x20", expected=2)
    return _pair(rule, "10m", blind, seen, {})


def gpu_cases() -> list[dict]:
    """GpusloGpuUnhealthy per action: an active problem fires; a resolved one does not; a GPU
    being validated does not."""
    tests = []
    for rule in alert_rules.gpu_unhealthy_rules():
        action = rule["expr"].split('"')[1]
        if action == names.ACTION_NONE:
            validating = {**GPU1, "check": "validation", "reason": names.REASON_VALIDATION,
                          "layer": names.LAYER_PLATFORM, "action": action}
            tests.append(case([series("gpuslo_gpu_problem", validating, "1x20")], rule["alert"],
                              "10m", []))
        reason = "xid_fatal" if action != "none" else "thermal_slowdown"
        labels = {
            **GPU1,
            "check": "xid",
            "reason": reason,
            "layer": names.layer_of(reason),
            "action": action,
        }
        bad = [series("gpuslo_gpu_problem", labels, "1x20")]
        good = [series("gpuslo_gpu_problem", labels, "1 1 _x18")]
        tests.append(case(bad, rule["alert"], "10m", [expect(rule, labels)]))
        tests.append(case(good, rule["alert"], "10m", []))
    return tests


def node_and_job_cases(spec: SloSpec) -> list[dict]:
    """Unhealthy node still schedulable (and cordoned or Slurm-drained: silent), a stalled job
    (and a running one),
    network devices below expected (and as expected; and missing outright)."""
    rules = _rules(spec)
    node = [
        series("gpuslo_node_usable", NODE, "0x20"),
        series("gpuslo_node_info", NODE_INFO, "1x20"),
    ]
    schedulable = _pair(
        rules["GpusloNodeUnhealthySchedulable"],
        "10m",
        [*node, series("kube_node_spec_unschedulable", KSM, "0x20")],
        [*node, series("kube_node_spec_unschedulable", KSM, "1x20")],
        {"node": "n1"},
    )
    slurm = _pair(  # Slurm: the exporter's own node state, drained (by gpuslo or anyone) = quiet
        rules["GpusloNodeUnhealthySchedulable"],
        "10m",
        [*node, series("gpuslo_slurm_node_state", {**NODE, "state": "up", "reason_layer": "",
                                                   "reason": ""}, "1x20")],
        [*node, series("gpuslo_slurm_node_state", {**NODE, "state": "drained",
                                                   "reason_layer": "node",
                                                   "reason": "xid_fatal"}, "1x20")],
        {"node": "n1"},
    )  # fmt: skip
    return schedulable + slurm + job_cases(spec) + network_cases(spec)


def job_cases(spec: SloSpec) -> list[dict]:
    """GpusloJobStalled: 10 steps a minute = 6 s a step; stuck from minute 30, so at minute 40
    600 s have passed without progress, above the stall factor (10) x 6 s. A running job is
    quiet. Three kinds of job, each stalled and running: one the exporter reads from a log that
    shows no commit (`gpuslo_job_last_step` only, goodput unknown: its stall still pages), one
    with both step series (its committed step lags: steps come from the progress counter), and
    one with the committed step only (an exporter without `gpuslo_job_last_step`)."""
    rules = _rules(spec)
    unknown = series("gpuslo_job_goodput_unknown", {**JOB, "reason": "no_commit_evidence"},
                     "1x50")
    stuck = series("gpuslo_job_last_progress_timestamp_seconds", JOB, "0+60x30 1800x20")
    going = series("gpuslo_job_last_progress_timestamp_seconds", JOB, "0+60x50")
    kinds = (
        ([series("gpuslo_job_last_step", JOB, "0+10x30 300x20"), unknown],
         [series("gpuslo_job_last_step", JOB, "0+10x50"), unknown]),
        ([series("gpuslo_job_last_step", JOB, "0+10x30 300x20"),
          series("gpuslo_job_step", JOB, "0x10 100x10 200x10 300x20")],
         [series("gpuslo_job_last_step", JOB, "0+10x50"),
          series("gpuslo_job_step", JOB, "0x10 100x10 200x10 300x10 400x10")]),
        ([series("gpuslo_job_step", JOB, "0+10x30 300x20")],
         [series("gpuslo_job_step", JOB, "0+10x50")]),
    )
    return [c for bad, good in kinds
            for c in _pair(rules["GpusloJobStalled"], "40m", [*bad, stuck], [*good, going],
                           {"job": "train-a"})]


def network_cases(spec: SloSpec) -> list[dict]:
    """GpusloNetworkDevicesBelowExpected: 3 of 4 EFA devices, and none reported, fire; 4 of 4 is
    quiet."""
    rules = _rules(spec)
    efa = {**NODE, "kind": "efa"}
    below = _pair(
        rules["GpusloNetworkDevicesBelowExpected"],
        "10m",
        [
            series("gpuslo_network_devices", efa, "3x20"),
            series("gpuslo_network_devices_expected", efa, "4x20"),
        ],
        [
            series("gpuslo_network_devices", efa, "4x20"),
            series("gpuslo_network_devices_expected", efa, "4x20"),
        ],
        efa,
    )
    gone = case(
        [series("gpuslo_network_devices_expected", efa, "4x20")],
        "GpusloNetworkDevicesBelowExpected",
        "10m",
        [expect(rules["GpusloNetworkDevicesBelowExpected"], efa)],
    )
    return below + [gone]


def crawl_cases(spec: SloSpec) -> list[dict]:
    """GpusloJobCrawling: 100 productive and 10 slowdown GPU-seconds a minute is a share of
    10/110 = 0.0909, above the spec's 0.03; without slowdown it is quiet. GpusloStragglerNode:
    n2 computes a step in 2 s from minute 5 where n1 takes 1 s (score 1/2 = 0.5, below 0.9; its
    own best was 1 s: individual score 0.5 too); when both take 1 s it is quiet. The recorded
    scores are checked too."""
    rules = _rules(spec)
    train = {**JOB, "category": "productive"}
    slow = {**JOB, "category": names.CATEGORY_SLOWDOWN}
    crawling = _pair(
        rules["GpusloJobCrawling"],
        "40m",
        [series("gpuslo_job_gpu_seconds_total", train, "0+100x40"),
         series("gpuslo_job_gpu_seconds_total", slow, "0+10x40")],
        [series("gpuslo_job_gpu_seconds_total", train, "0+100x40"),
         series("gpuslo_job_gpu_seconds_total", slow, "0x40")],
        {"job": "train-a"},
    )
    n2 = {"instance": "n2:9400", "job": "train-a"}
    fast = series("gpuslo_job_step_compute_seconds", JOB, "1x40")
    scores = [
        {"expr": crawl.NODE_SCORE, "eval_time": "20m", "exp_samples": [
            {"labels": series(crawl.NODE_SCORE, JOB, "")["series"], "value": 1},
            {"labels": series(crawl.NODE_SCORE, n2, "")["series"], "value": 0.5},
        ]},
        {"expr": crawl.NODE_INDIVIDUAL_SCORE, "eval_time": "20m", "exp_samples": [
            {"labels": series(crawl.NODE_INDIVIDUAL_SCORE, JOB, "")["series"], "value": 1},
            {"labels": series(crawl.NODE_INDIVIDUAL_SCORE, n2, "")["series"], "value": 0.5},
        ]},
    ]
    straggler = [
        case([fast, series("gpuslo_job_step_compute_seconds", n2, "1x5 2x35")],
             "GpusloStragglerNode", "30m", [expect(rules["GpusloStragglerNode"], n2)],
             promql_expr_test=scores),
        case([fast, series("gpuslo_job_step_compute_seconds", n2, "1x40")],
             "GpusloStragglerNode", "30m", []),
    ]
    return crawling + straggler


def alerts_test_file(spec: SloSpec) -> dict:
    """The direct-alert test document."""
    tests = check_cases(spec) + gpu_cases() + node_and_job_cases(spec) + crawl_cases(spec)
    return {"rule_files": list(RULE_FILES), "evaluation_interval": "5m", "tests": tests}
