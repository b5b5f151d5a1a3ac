"""Alerting rules: multiwindow, multi-burn-rate SLO alerts and the direct alerts.

Burn-rate alerts follow the SRE Workbook, "Alerting on SLOs" (multiwindow, multi-burn-rate): a
window pair fires when both its long and short window burn the error budget faster than its factor
(`SloSpec.burn_rate_alerts()`, derived from the period). Burn rate = bad ratio / error budget, so
"burn rate > factor" is written as "good ratio < 1 − factor × budget": the threshold is one number
printed with fixed formatting, and the promtool boundary tests compare against the same number
(no `1 - x` float rounding at the boundary). A pair whose threshold is (about) 0 or below cannot
fire (the budget is too large for that factor: job goodput's 1h page pair at a 0.90 objective)
and is left out; `unreachable_pairs` lists them and the rule file header names them.

Direct alerts: names, expressions and the label joins are documented beside each one.
"""

from __future__ import annotations

from gpuslo import names
from gpuslo.alerts import crawl
from gpuslo.alerts.inventory import GPU_BLIND_RATIO, NODE_BLIND
from gpuslo.alerts.sli import JOB_STEP_TIME, STEP_TIME_HOLD
from gpuslo.slo_spec import BurnRateAlert, SloSpec, format_number, sli_record

BURN_ALERT = {
    names.SLO_USABLE_GPU: "GpusloUsableGpuBudgetBurn",
    names.SLO_CHECK_LIVENESS: "GpusloCheckLivenessBudgetBurn",
    names.SLO_JOB_GOODPUT: "GpusloJobGoodputBudgetBurn",
}
SLO_TITLE = {
    names.SLO_USABLE_GPU: "usable GPU ratio",
    names.SLO_CHECK_LIVENESS: "check liveness",
    names.SLO_JOB_GOODPUT: "job goodput",
}
# A pair whose good-ratio threshold is below this cannot fire in practice (and would leave its
# "just past the boundary" test no room above a ratio of 0); such pairs are left out.
MIN_THRESHOLD = 1e-6
# One-line runbook per recovery action (NVIDIA Xid catalogue "Resolution" vocabulary).
RUNBOOK = {
    "none": "No recovery action is required; watch the GPU for recurrence.",
    "restart_app": "Restart the application; the GPU itself needs no service.",
    "reset_gpu": "Move work off the GPU and reset it (nvidia-smi -r); return it once checks pass.",
    "drain_and_reset": "Cordon and drain the node, reset the GPU; uncordon once checks pass.",
    "reboot_node": "Cordon and drain the node, then reboot it; uncordon once checks pass.",
    "contact_support": "Keep the node cordoned and open a hardware case (RMA) with the vendor.",
    "check_cabling": "Cordon the node and check NVLink and network cables and their seating.",
    "update_software": "Cordon the node and install the supported driver and firmware versions.",
}


def burn_threshold(spec: SloSpec, slo: str, pair: BurnRateAlert) -> float:
    """Good-ratio threshold of a window pair: 1 − factor × error budget (ratio 0–1)."""
    return float(format_number(1.0 - pair.factor * spec.error_budget(slo)))


def reachable_pairs(spec: SloSpec, slo: str, severity: str) -> list[BurnRateAlert]:
    """Window pairs of `severity` that can fire for `slo` (threshold above 0)."""
    return [
        pair
        for pair in spec.burn_rate_alerts()
        if pair.severity == severity and burn_threshold(spec, slo, pair) >= MIN_THRESHOLD
    ]


def unreachable_pairs(spec: SloSpec) -> list[str]:
    """`slo long/short` of the pairs left out because their factor exceeds 1 / error budget."""
    return [
        f"{slo} {pair.long_window}/{pair.short_window} (factor {format_number(pair.factor)})"
        for slo in names.SLOS
        for pair in spec.burn_rate_alerts()
        if burn_threshold(spec, slo, pair) < MIN_THRESHOLD
    ]


def burn_rule(spec: SloSpec, slo: str, severity: str) -> dict | None:
    """One alert per SLO and severity: the `or` of its reachable window pairs."""
    pairs = reachable_pairs(spec, slo, severity)
    if not pairs:
        return None
    arms = []
    for pair in pairs:
        threshold = format_number(burn_threshold(spec, slo, pair))
        arms.append(
            f"({sli_record(slo, pair.long_window)} < {threshold}"
            f" and {sli_record(slo, pair.short_window)} < {threshold})"
        )
    windows = ", ".join(
        f"{p.long_window}/{p.short_window} above {format_number(p.factor)}x" for p in pairs
    )
    title = SLO_TITLE[slo]
    return {
        "alert": BURN_ALERT[slo],
        "expr": "\nor\n".join(arms),
        "labels": {"severity": severity, "slo": slo},
        "annotations": {
            "summary": f"The {title} SLO is burning its error budget too fast ({severity}).",
            "description": (
                f"Objective {format_number(spec.objectives[slo])} over {spec.period}; burn rate "
                f"in both windows of a pair: {windows}."
            ),
        },
    }


def burn_rules(spec: SloSpec) -> list[dict]:
    """Page and ticket burn-rate alerts for every SLO."""
    rules = [burn_rule(spec, slo, sev) for slo in names.SLOS for sev in names.SEVERITIES]
    return [rule for rule in rules if rule is not None]


def _alert(
    name: str, expr: str, severity: str, summary: str, description: str, hold: str = ""
) -> dict:
    """An alerting rule in Prometheus' documented key order; `hold` is its `for` duration."""
    rule = {"alert": name, "expr": expr}
    if hold:
        rule["for"] = hold
    rule["labels"] = {"severity": severity}
    rule["annotations"] = {"summary": summary, "description": description}
    return rule


def check_alerts(spec: SloSpec) -> list[dict]:
    """Who watches the checks: stale heartbeats, missing dependencies, exporters down or absent,
    a fleet gone blind, kernel-log records lost."""
    up = f'up{{job="{spec.exporter_job}"}}'
    return [
        _alert(
            "GpusloCheckHeartbeatStale",
            "time() - gpuslo_check_last_run_timestamp_seconds > 3 * gpuslo_check_interval_seconds",
            "ticket",
            "Check {{ $labels.check }} on {{ $labels.instance }} has not run for 3 intervals.",
            "A check that stops silently gives false confidence; its GPUs count as unknown.",
        ),
        _alert(
            "GpusloCheckDependencyMissing",
            'increase(gpuslo_check_errors_total{reason="dependency_missing"}[10m]) > 0',
            "ticket",
            "Check {{ $labels.check }} on {{ $labels.instance }} misses a dependency.",
            "A binary or library the check needs is gone (after an upgrade?); the check fails "
            "closed and the node is not usable until it is restored.",
        ),
        _alert(
            "GpusloExporterDown",
            f"{up} == 0 or absent({up})",
            "ticket",
            "The gpuslo exporter {{ $labels.instance }} (job {{ $labels.job }}) is down or absent.",
            "No health data from this target: its GPUs stay in the usable-GPU SLI's denominator "
            "as observability loss until the node is retired.",
            hold="5m",
        ),
        fleet_blind_alert(spec),
        _alert(
            "GpusloKernelLogRecordsLost",
            "increase(gpuslo_kernel_log_records_lost_total[10m]) > 0",
            "ticket",
            "The kernel log on {{ $labels.instance }} overran; records were lost.",
            "Xid or SXid events may have been missed (/dev/kmsg overrun); treat the node's GPU "
            "verdicts with suspicion and check dmesg by hand.",
        ),
    ]


def fleet_blind_alert(spec: SloSpec) -> dict:
    """GpusloFleetBlind: the share of provisioned GPUs with no verdict (exporters down or gone,
    GPUs unreadable, verdicts unknown) is above the spec's `fleet_blind_threshold`. A page: the
    usable-GPU SLI then measures less than it should, and a dead exporter alone only tickets."""
    threshold = format_number(spec.fleet_blind_threshold)
    return _alert(
        "GpusloFleetBlind",
        f"{GPU_BLIND_RATIO} > {threshold}",
        "page",
        f"More than {threshold} of the fleet's provisioned GPUs report no verdict.",
        "Exporters are down or gone, or their GPUs cannot be read: that time counts as "
        f"observability loss. See {NODE_BLIND} for the nodes and GpusloExporterDown for targets.",
        hold="5m",
    )


def gpu_unhealthy_rules() -> list[dict]:
    """GpusloGpuUnhealthy, one rule per recovery action so each carries a one-line runbook.
    Labels reason, layer and action come from gpuslo_gpu_problem itself. A GPU being validated
    (reason `validation`: its fault cleared, the return-to-service gate running) is no alert:
    a failed gate is (reason `validation_failed`, action drain_and_reset)."""
    return [
        _alert(
            "GpusloGpuUnhealthy",
            f'gpuslo_gpu_problem{{action="{action}", reason!="{names.REASON_VALIDATION}"}} == 1',
            "ticket",
            "GPU {{ $labels.gpu }} ({{ $labels.uuid }}) on {{ $labels.instance }}: "
            "{{ $labels.reason }} ({{ $labels.layer }} layer), action {{ $labels.action }}.",
            f"Check {{{{ $labels.check }}}} reports the GPU not usable. Runbook: {RUNBOOK[action]}",
            hold="1m",
        )
        | {"labels": {"action": action, "severity": "ticket"}}
        for action in names.ACTIONS
    ]


def node_and_job_alerts(spec: SloSpec) -> list[dict]:
    """Unhealthy node still schedulable, job stalled, network devices below expected."""
    stall = format_number(spec.job_stall_factor)
    return [
        _alert(
            "GpusloNodeUnhealthySchedulable",
            # The exporter's `instance` maps to the Kubernetes node name through
            # gpuslo_node_info{node}; kube-state-metrics labels kube_node_spec_unschedulable with
            # the same `node`, so the join is `on (node)` (its own instance/job are ignored).
            # On Slurm the exporter's own gpuslo_slurm_node_state{state="up"} says the same.
            "max by (node) (gpuslo_node_info * on (instance) group_left ()"
            " (gpuslo_node_usable == bool 0)) == 1"
            "\nand on (node)\n(\n  kube_node_spec_unschedulable == 0\n  or on (node)\n"
            "  max by (node) (gpuslo_node_info * on (instance) group_left ()"
            ' (gpuslo_slurm_node_state{state="up"} == 1))\n)',
            "page",
            "Node {{ $labels.node }} is not usable but the scheduler still offers it work.",
            "Cordon the node (kubectl cordon {{ $labels.node }}; on Slurm, scontrol update "
            "nodename={{ $labels.node }} state=drain, or run gpuslo check --format slurm --drain) "
            "and see GpusloGpuUnhealthy for the reason; jobs placed here will crawl or fail.",
        ),
        _alert(
            "GpusloJobStalled",
            # Step time comes from the recorded gpuslo:job_step_time:seconds (progress span /
            # steps over 6h); last_over_time keeps it through a stall that outlasts the window.
            "time() - max by (job) (gpuslo_job_last_progress_timestamp_seconds)\n> "
            f"{stall} * max by (job) (last_over_time({JOB_STEP_TIME}[{STEP_TIME_HOLD}]))",
            "page",
            "Job {{ $labels.job }} made no progress for " + stall + " step times.",
            "A gang-scheduled job waits on its slowest rank: look for an unhealthy GPU, a "
            "degraded network device or a hung collective on the job's nodes.",
        ),
        _alert(
            "GpusloNetworkDevicesBelowExpected",
            "gpuslo_network_devices < gpuslo_network_devices_expected"
            "\nor (gpuslo_network_devices_expected > 0"
            " unless on (instance, kind) gpuslo_network_devices)",
            "ticket",
            "{{ $labels.instance }} has fewer {{ $labels.kind }} devices than expected.",
            "Collectives still run over fewer links, at a fraction of the bandwidth: cordon the "
            "node and check the adapters and their driver.",
            hold="5m",
        ),
    ]


def alert_groups(spec: SloSpec) -> list[dict]:
    """Rule groups of alerting rules."""
    return [
        {"name": "gpuslo-slo-burn-rate", "rules": burn_rules(spec)},
        {"name": "gpuslo-checks", "rules": check_alerts(spec)},
        {"name": "gpuslo-gpus", "rules": gpu_unhealthy_rules()},
        {"name": "gpuslo-nodes-and-jobs", "rules": node_and_job_alerts(spec)},
        crawl.alert_group(spec),
    ]
