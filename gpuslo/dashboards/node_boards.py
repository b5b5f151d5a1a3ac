"""Node-side dashboards: check liveness ("who watches the checks") and the node and GPU
drill-down. Both read the raw metrics of DESIGN.md §4; `$instance` selects exporters."""

from __future__ import annotations

from gpuslo.dashboards.panels import (
    BOOL,
    COUNT,
    GPUS,
    RATIO,
    SECONDS,
    Query,
    Spec,
    dashboard,
    query_variable,
)
from gpuslo.slo_spec import SloSpec

SEL = 'instance=~"$instance"'


def _instance_variable() -> object:
    return query_variable("instance", "Node", "label_values(gpuslo_node_info, instance)")


def check_liveness(spec: SloSpec) -> dict:
    """Heartbeat age per check and node, dependency failures, kernel-log records lost, exporters."""
    up = f'up{{job="{spec.exporter_job}"}}'
    age = f"time() - gpuslo_check_last_run_timestamp_seconds{{{SEL}}}"
    specs = [
        Spec(
            "stat",
            "Exporters down",
            f"Scrape targets of job {spec.exporter_job} not answering.",
            COUNT,
            (Query(f"count({up} == 0) or vector(0)", instant=True),),
            6,
            5,
        ),
        Spec(
            "stat",
            "Check liveness (5 min)",
            "Checks with a fresh heartbeat over checks (ratio 0–1).",
            RATIO,
            (Query("gpuslo:check_liveness:ratio_rate5m", instant=True),),
            6,
            5,
        ),
        Spec(
            "table",
            "Heartbeat age in intervals",
            "Seconds since each check last ran divided by "
            "its interval; 3 or more is stale (GpusloCheckHeartbeatStale).",
            "suffix: intervals",
            (Query(f"({age}) / gpuslo_check_interval_seconds", instant=True),),
            12,
            5,
        ),
        Spec(
            "timeseries",
            "Heartbeat age per check and node",
            "Seconds since each check last ran, whatever its outcome.",
            SECONDS,
            (Query(age, "{{instance}} {{check}}"),),
        ),
        Spec(
            "timeseries",
            "Time since last answer",
            "Seconds since each check last produced an "
            "answer (ok, warn or fail); grows while it times out or misses a dependency.",
            SECONDS,
            (
                Query(
                    f"time() - gpuslo_check_last_success_timestamp_seconds{{{SEL}}}",
                    "{{instance}} {{check}}",
                ),
            ),
        ),
        Spec(
            "timeseries",
            "Dependency failures",
            "Check runs that failed because a binary or library is missing, per node and check.",
            COUNT,
            (
                Query(
                    "sum by (instance, check) (increase(gpuslo_check_errors_total{"
                    f'{SEL},reason="dependency_missing"}}[$__rate_interval]))',
                    "{{instance}} {{check}}",
                ),
            ),
            8,
        ),
        Spec(
            "timeseries",
            "Check errors by reason",
            "Runs that could not answer: timeouts, missing dependencies, tool and parse errors.",
            COUNT,
            (
                Query(
                    f"sum by (reason) (increase(gpuslo_check_errors_total{{{SEL}}}"
                    "[$__rate_interval]))",
                    "{{reason}}",
                ),
            ),
            8,
        ),
        Spec(
            "timeseries",
            "Kernel-log records lost",
            "Kernel-log records overwritten before the exporter read them (/dev/kmsg overruns).",
            COUNT,
            (
                Query(
                    f"sum by (instance) (increase(gpuslo_kernel_log_records_lost_total{{{SEL}}}"
                    "[$__rate_interval]))",
                    "{{instance}}",
                ),
            ),
            8,
        ),
        Spec(
            "timeseries",
            "Check runs",
            "Check runs per second per check.",
            "ops",
            (
                Query(
                    f"sum by (check) (rate(gpuslo_check_runs_total{{{SEL}}}[$__rate_interval]))",
                    "{{check}}",
                ),
            ),
        ),
        Spec(
            "timeseries",
            "Check duration",
            "Duration of the last run of each check.",
            SECONDS,
            (Query(f"gpuslo_check_duration_seconds{{{SEL}}}", "{{instance}} {{check}}"),),
        ),
    ]
    return dashboard(
        "gpuslo-check-liveness",
        "gpuslo / Check liveness: who watches the checks",
        "A check that stops silently is worse than none.",
        specs,
        [_instance_variable()],
    )


def node_drilldown(spec: SloSpec) -> dict:
    """One node's verdict, GPUs, problems, Xid/SXid events and network devices."""
    specs = [
        Spec(
            "stat",
            "Node usable",
            "1 iff every GPU is usable and node checks are healthy.",
            BOOL,
            (Query(f"gpuslo_node_usable{{{SEL}}}", "{{instance}}", instant=True),),
            6,
            5,
        ),
        Spec(
            "table",
            "Node",
            "Node name, driver and CUDA versions, gpuslo build.",
            "none",
            (
                Query(f"gpuslo_node_info{{{SEL}}}", instant=True),
                Query(f"gpuslo_build_info{{{SEL}}}", instant=True),
            ),
            18,
            5,
        ),
        Spec(
            "table",
            "GPUs",
            "GPUs in the inventory: index, UUID, PCI bus id, model, family.",
            "none",
            (Query(f"gpuslo_gpu_info{{{SEL}}}", instant=True),),
            12,
        ),
        Spec(
            "table",
            "Active problems",
            "Fail or unknown results per GPU with reason, layer "
            "and recovery action. Empty on a healthy fleet.",
            "none",
            (Query(f"gpuslo_gpu_problem{{{SEL}}} == 1", instant=True),),
            12,
        ),
        Spec(
            "timeseries",
            "GPU usable",
            "1 while the GPU verdict is healthy (the SLI).",
            BOOL,
            (Query(f"gpuslo_gpu_usable{{{SEL}}}", "{{instance}} GPU {{gpu}}"),),
        ),
        Spec(
            "timeseries",
            "GPU verdicts",
            "GPUs per verdict (healthy, unhealthy, unknown).",
            GPUS,
            (Query(f"sum by (verdict) (gpuslo_gpu_verdict{{{SEL}}})", "{{verdict}}"),),
        ),
        Spec(
            "timeseries",
            "Xid events",
            "Kernel-log Xid events per GPU and code.",
            COUNT,
            (
                Query(
                    f"sum by (instance, pci_bus_id, xid, class) (increase(gpuslo_xid_events_total"
                    f"{{{SEL}}}[$__rate_interval]))",
                    "{{pci_bus_id}} Xid {{xid}} {{class}}",
                ),
            ),
            8,
        ),
        Spec(
            "timeseries",
            "SXid events",
            "NVSwitch SXid events per switch and code.",
            COUNT,
            (
                Query(
                    f"sum by (instance, nvswitch, sxid, class) (increase(gpuslo_sxid_events_total"
                    f"{{{SEL}}}[$__rate_interval]))",
                    "{{nvswitch}} SXid {{sxid}} {{class}}",
                ),
            ),
            8,
        ),
        Spec(
            "timeseries",
            "Network devices",
            "InfiniBand or EFA devices present against expected; fewer means collectives crawl.",
            COUNT,
            (
                Query(f"gpuslo_network_devices{{{SEL}}}", "{{instance}} {{kind}} present"),
                Query(
                    f"gpuslo_network_devices_expected{{{SEL}}}", "{{instance}} {{kind}} expected"
                ),
            ),
            8,
        ),
        Spec(
            "table",
            "Check status",
            "Current status of each check (ok, warn, fail, unknown).",
            "none",
            (Query(f"gpuslo_check_status{{{SEL}}} == 1", instant=True),),
            12,
        ),
        Spec(
            "stat",
            "Node verdict",
            "The node verdict stateset (the state that is 1).",
            "none",
            (Query(f"gpuslo_node_verdict{{{SEL}}} == 1", "{{verdict}}", instant=True),),
            12,
        ),
    ]
    return dashboard(
        "gpuslo-node-drilldown",
        "gpuslo / Node and GPU drill-down",
        "One node's GPUs, problems and evidence.",
        specs,
        [_instance_variable()],
    )
