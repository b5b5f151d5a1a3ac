"""promtool unit tests for the generated rules (`promtool test rules *_test.yml`, run from the
output directory).

Every alert gets at least one firing and one non-firing case; every burn-rate window pair gets a
test at its exact boundary: the good ratio *at* the threshold (burn rate = factor) does not fire,
one millionth below it (burn rate just above the factor) fires. Expected annotations are rendered
from the rule's own templates, so a changed annotation cannot drift from its test.
"""

from __future__ import annotations

import re

from gpuslo import names
from gpuslo.alerts import job_series, job_tiles, liveness, locate
from gpuslo.alerts import rules as alert_rules
from gpuslo.alerts.promtool_case import series
from gpuslo.alerts.sli import GOODPUT_INTERVAL, JOB_SECONDS_INCREASE, JOB_STEP_TIME, ratio_expr
from gpuslo.slo_spec import SloSpec, format_number, sli_record

RULE_FILES = ("gpuslo-slo.rules.yml", "gpuslo-alerts.rules.yml")
NODE = {"instance": "n1:9400", "job": "gpuslo"}
GPU0 = {**NODE, "gpu": "0", "uuid": "GPU-00000000-0000-0000-0000-000000000000"}
GPU1 = {**NODE, "gpu": "1", "uuid": "GPU-11111111-1111-1111-1111-111111111111"}
INFO = {"pci_bus_id": "00000000:00:06.0", "model": "NVIDIA H200", "family": "hopper"}
NODE_INFO = {**NODE, "node": "n1", "driver_version": "570.124.06", "cuda_version": "12.8"}
BOUNDARY_STEP = (
    alert_rules.MIN_THRESHOLD
)  # how far past the factor the "just above" case burns (as a good ratio)


def _render(template: str, labels: dict[str, str]) -> str:
    return re.sub(r"\{\{ \$labels\.(\w+) \}\}", lambda m: labels.get(m.group(1), ""), template)


def expect(rule: dict, labels: dict[str, str]) -> dict:
    """The promtool `exp_alerts` entry for `rule` firing on a series with `labels`."""
    full = dict(sorted({**labels, **rule.get("labels", {})}.items()))
    notes = {key: _render(text, full) for key, text in sorted(rule["annotations"].items())}
    return {"exp_labels": full, "exp_annotations": notes}


def case(inputs: list[dict], alert: str, at: str, expected: list[dict], **extra) -> dict:
    """One test group: input series, one alert check at `at`, optional promql checks."""
    test = {"interval": "1m", "input_series": inputs}
    test["alert_rule_test"] = [{"eval_time": at, "alertname": alert, "exp_alerts": expected}]
    test.update(extra)
    return test


def boundary_cases(spec: SloSpec) -> list[dict]:
    """Per SLO and reachable window pair: at the threshold silent, just past it firing."""
    tests = []
    for slo in names.SLOS:
        for severity in names.SEVERITIES:
            rule = alert_rules.burn_rule(spec, slo, severity)
            for pair in alert_rules.reachable_pairs(spec, slo, severity):
                at = alert_rules.burn_threshold(spec, slo, pair)
                past = format_number(at - BOUNDARY_STEP)
                values = f"{format_number(at)}x10 {past}x10"
                inputs = [
                    series(sli_record(slo, pair.long_window), {}, values),
                    series(sli_record(slo, pair.short_window), {}, values),
                ]
                test = case(inputs, rule["alert"], "5m", [])
                test["alert_rule_test"].append(
                    {
                        "eval_time": "15m",
                        "alertname": rule["alert"],
                        "exp_alerts": [expect(rule, {})],
                    }
                )
                tests.append(test)
    return tests


def _slo_inputs(slo: str, good: bool | None) -> list[dict]:
    """Raw series for 70 minutes: all good, all bad, or (None) inventory without the SLI data."""
    if slo == names.SLO_USABLE_GPU:
        inputs = [series("gpuslo_gpu_info", {**gpu, **INFO}, "1x70") for gpu in (GPU0, GPU1)]
        inputs.append(series("gpuslo_node_info", NODE_INFO, "1x70"))
        if good is not None:
            value = "1x70" if good else "0x70"
            inputs += [series("gpuslo_gpu_usable", gpu, value) for gpu in (GPU0, GPU1)]
        return inputs
    if slo == names.SLO_CHECK_LIVENESS:
        check = {**NODE, "check": "xid"}
        inputs = [series("gpuslo_check_interval_seconds", check, "30x70")]
        if good is not None:
            inputs.append(
                series(
                    "gpuslo_check_last_run_timestamp_seconds", check, "0+60x70" if good else "0x70"
                )
            )
        return inputs
    category = names.CATEGORY_PRODUCTIVE if good else "recovery"
    job = {"instance": NODE["instance"], "job": "train-a", "category": category}
    return [series("gpuslo_job_gpu_seconds_total", job, "0+480x70")]


def end_to_end_cases(spec: SloSpec) -> list[dict]:
    """From raw metrics: a good fleet is silent; a bad one (and one with its SLI series missing:
    missing data is bad) pages and tickets — every window is fully bad."""
    tests = []
    for slo in names.SLOS:
        fired = [alert_rules.burn_rule(spec, slo, sev) for sev in names.SEVERITIES]
        expected = [expect(rule, {}) for rule in fired if rule is not None]
        alert = alert_rules.BURN_ALERT[slo]
        tests.append(case(_slo_inputs(slo, True), alert, "65m", []))
        tests.append(case(_slo_inputs(slo, False), alert, "65m", expected))
        if slo != names.SLO_JOB_GOODPUT:
            tests.append(case(_slo_inputs(slo, None), alert, "65m", expected))
    return tests


def recording_cases(spec: SloSpec) -> list[dict]:
    """Hand-computable recording-rule values: one of two GPUs usable is a ratio of 0.5; the
    unusable one is lost to the node layer for xid_fatal; 6 s per step (60 s over the 10 steps
    seen a minute; the committed step's 100 a minute would give 0.6 s: steps are those seen)."""
    inputs = [series("gpuslo_gpu_info", {**gpu, **INFO}, "1x70") for gpu in (GPU0, GPU1)]
    inputs.append(series("gpuslo_node_info", NODE_INFO, "1x70"))
    inputs.append(series("gpuslo_gpu_usable", GPU0, "1x70"))
    inputs.append(series("gpuslo_gpu_usable", GPU1, "0x70"))
    problem = {
        **GPU1,
        "check": "xid",
        "reason": "xid_fatal",
        "layer": "node",
        "action": "reset_gpu",
    }
    inputs.append(series("gpuslo_gpu_problem", problem, "1x70"))
    inputs.append(series("gpuslo_job_last_step", {**NODE, "job": "train-a"}, "0+10x70"))
    inputs.append(series("gpuslo_job_step", {**NODE, "job": "train-a"}, "0+100x70"))
    inputs.append(
        series("gpuslo_job_last_progress_timestamp_seconds", {**NODE, "job": "train-a"}, "0+60x70")
    )
    checks = [
        (sli_record(names.SLO_USABLE_GPU, "1h"), {}, 0.5),
        ("gpuslo:gpu_lost:count", {"layer": "node", "reason": "xid_fatal"}, 1),
        (JOB_STEP_TIME, {"job": "train-a"}, 6),
    ]
    promql = [
        {
            "expr": expr,
            "eval_time": "65m",
            "exp_samples": [{"labels": series(expr, labels, "")["series"], "value": value}],
        }
        for expr, labels, value in checks
    ]
    return [
        {"interval": "1m", "input_series": inputs, "promql_expr_test": promql},
        relabel_case(),
        cordon_case(),
        goodput_case(),
        liveness.liveness_case(),
        job_series.job_series_case(),
        locate.locate_case(),
        job_tiles.job_tiles_case(),
    ]


def goodput_case() -> dict:
    """Job GPU-seconds, two levels, evaluated every minute. Job a (running before the test)
    gains 60 productive and 20 recovery GPU-seconds a minute; its node is silent for minutes
    20–38 and comes back with what it gained meanwhile. Job b is first seen at minute 29 with 120
    initialization GPU-seconds (nothing productive yet: counted whole) and gains 60 a minute.
    The hour before 65m30s holds the evaluations at minutes 6..65 (no sample on the window's
    edge, so closed and half-open windows agree); their increases sum to last − first:
    productive 3960 − 900 = 3060, recovery 1320 − 300 = 1020, initialization 120 + 36 × 60 =
    2280; goodput 3060 / 6360."""
    a = {"instance": NODE["instance"], "job": "train-a"}
    b = {"instance": "n2:9400", "job": "train-b"}
    gap = "_x19"
    inputs = [
        series("gpuslo_job_gpu_seconds_total", {**a, "category": "productive"},
               f"600+60x19 {gap} 2400+60x30"),
        series("gpuslo_job_gpu_seconds_total", {**a, "category": "recovery"},
               f"200+20x19 {gap} 800+20x30"),
        series("gpuslo_job_gpu_seconds_total", {**b, "category": "initialization"},
               "_x29 120+60x40"),
        series("gpuslo_job_gpu_seconds_total", {**b, "category": "productive"}, "_x29 0x40"),
    ]
    sums = [{"labels": series("", {"category": c}, "")["series"], "value": v}
            for c, v in (("initialization", 2280), ("productive", 3060), ("recovery", 1020))]
    ratio = [{"labels": "{}", "value": 3060 / 6360}]
    promql = [
        {"expr": f"sum_over_time({JOB_SECONDS_INCREASE}[1h])", "eval_time": "65m30s",
         "exp_samples": sums},
        {"expr": ratio_expr(names.SLO_JOB_GOODPUT, "1h"), "eval_time": "65m30s",
         "exp_samples": ratio},
    ]
    return {"interval": "1m", "input_series": inputs, "promql_expr_test": promql}


def cordon_case() -> dict:
    """Node n1 cordoned (kube_node_spec_unschedulable 1): its healthy GPU 0 is not usable and is
    lost to `platform`/`cordoned`; its unhealthy GPU 1 stays lost to its own problem only."""
    inputs = [series("gpuslo_gpu_info", {**gpu, **INFO}, "1x20") for gpu in (GPU0, GPU1)]
    inputs.append(series("gpuslo_gpu_usable", GPU0, "1x20"))
    inputs.append(series("gpuslo_gpu_usable", GPU1, "0x20"))
    problem = {
        **GPU1,
        "check": "xid",
        "reason": "xid_fatal",
        "layer": "node",
        "action": "reset_gpu",
    }
    inputs.append(series("gpuslo_gpu_problem", problem, "1x20"))
    inputs.append(series("gpuslo_node_info", NODE_INFO, "1x20"))
    ksm = {"instance": "ksm:8080", "job": "kube-state-metrics", "node": "n1"}
    inputs.append(series("kube_node_spec_unschedulable", ksm, "1x20"))
    lost = [
        {"labels": series("gpuslo:gpu_lost:count", labels, "")["series"], "value": 1}
        for labels in (
            {"layer": "node", "reason": "xid_fatal"},
            {"layer": "platform", "reason": "cordoned"},
        )
    ]
    usable = [{"labels": "gpuslo:gpu_usable:count", "value": 0}]
    return {
        "interval": "1m",
        "input_series": inputs,
        "promql_expr_test": [
            {"expr": "gpuslo:gpu_usable:count", "eval_time": "10m", "exp_samples": usable},
            {"expr": "gpuslo:gpu_lost:count", "eval_time": "10m", "exp_samples": lost},
        ],
    }


def relabel_case() -> dict:
    """GPU 0's model string changes at minute 30 (a driver upgrade) while the old series still
    lingers (no staleness marker, so it answers for the 5 min lookback): the node is seen with
    two GPUs, not three, and the provisioned inventory stays at two."""
    renamed = {**INFO, "model": "NVIDIA H200 NVL"}
    inputs = [
        series("gpuslo_gpu_info", {**GPU0, **INFO}, "1x30"),
        series("gpuslo_gpu_info", {**GPU0, **renamed}, "_x28 1x42"),
        series("gpuslo_gpu_info", {**GPU1, **INFO}, "1x70"),
        series("gpuslo_node_info", NODE_INFO, "1x70"),
    ]
    check = [
        {"expr": expr, "eval_time": at, "exp_samples": [{"labels": labels, "value": 2}]}
        for expr, labels, at in (
            ("gpuslo:node_gpus_seen:count", 'gpuslo:node_gpus_seen:count{node="n1"}', "30m"),
            ("gpuslo:gpu_provisioned:count", "gpuslo:gpu_provisioned:count", "45m"),
        )
    ]
    return {"interval": "1m", "input_series": inputs, "promql_expr_test": check}


def slo_test_file(spec: SloSpec) -> dict:
    """The burn-rate and recording-rule test document."""
    tests = boundary_cases(spec) + end_to_end_cases(spec) + recording_cases(spec)
    # every minute: the job GPU-seconds group is pinned to GOODPUT_INTERVAL, and promtool
    # evaluates every group at the file's interval
    return {"rule_files": list(RULE_FILES), "evaluation_interval": GOODPUT_INTERVAL,
            "tests": tests}
