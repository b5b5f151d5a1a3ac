"""Check-liveness dashboard ("who watches the checks"): exporters down, the liveness SLI,
heartbeat age per check and node, time since each check last answered, dependency failures, check
errors, kernel-log records lost, check runs and durations. A check that stops silently gives false
confidence, so every panel here reads something that grows when a check goes quiet."""

from __future__ import annotations

from gpuslo.dashboards.node_boards import SEL, instance_variable
from gpuslo.dashboards.panels import COUNT, RATIO, SECONDS, Query, Spec, dashboard
from gpuslo.slo_spec import SloSpec


def _heartbeat_panels(spec: SloSpec) -> list[Spec]:
    """Exporters down, liveness SLI, heartbeat ages."""
    up = f'up{{job="{spec.exporter_job}"}}'
    age = f"time() - gpuslo_check_last_run_timestamp_seconds{{{SEL}}}"
    return [
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
    ]


def _failure_panels(spec: SloSpec) -> list[Spec]:
    """Time since each check last answered, and dependency failures."""
    return [
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
    ] + _error_panels(spec)


def _error_panels(spec: SloSpec) -> list[Spec]:
    """Check errors by reason, kernel-log records lost and journal errors by reason."""
    return [
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
            "Journal errors by reason",
            "Job journals that could not be read: bad lines, files that are not journals, "
            "truncation, limits (their goodput is missing or partial).",
            COUNT,
            (
                Query(
                    f"sum by (reason) (increase(gpuslo_journal_errors_total{{{SEL}}}"
                    "[$__rate_interval]))",
                    "{{reason}}",
                ),
            ),
            8,
        ),
    ]


def _run_panels(spec: SloSpec) -> list[Spec]:
    """Check runs and durations."""
    return [
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


def check_liveness(spec: SloSpec) -> dict:
    """Heartbeat age per check and node, dependency failures, kernel-log records lost, exporters."""
    specs = _heartbeat_panels(spec) + _failure_panels(spec) + _run_panels(spec)
    return dashboard(
        "gpuslo-check-liveness",
        "gpuslo / Check liveness: who watches the checks",
        "A check that stops silently is worse than none.",
        specs,
        [instance_variable()],
    )
