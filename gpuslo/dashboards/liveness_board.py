"""Check-liveness dashboard ("who watches the checks"): exporters down, the liveness SLI,
heartbeat age per check and node, when each check last answered ("never" for a check that never
did: the exporter exports 0), dependency failures, check errors, kernel-log records lost, check
runs and durations. A check that stops silently gives false confidence, so every panel here reads
something that grows when a check goes quiet."""

from __future__ import annotations

from gpuslo import names
from gpuslo.dashboards import fleet
from gpuslo.dashboards.board import dashboard
from gpuslo.dashboards.panels import (
    COUNT,
    RATIO,
    SECONDS,
    SINCE,
    Columns,
    Query,
    Spec,
    red_below,
    red_from,
    value_mapping,
)
from gpuslo.dashboards.scope import CLUSTER, node_variable, per_node
from gpuslo.slo_spec import SloSpec, format_number

STALE_INTERVALS = 3  # DESIGN.md §7: a heartbeat older than 3 × the interval is stale
NEVER = value_mapping({0: ("never", "red")})


def _liveness_stats(spec: SloSpec) -> list[Spec]:
    """Exporters down (red from 1) and the liveness SLI against its objective."""
    up = f'up{{job="{spec.exporter_job}", {CLUSTER}}}'
    objective = spec.objectives[names.SLO_CHECK_LIVENESS]
    return [
        Spec(
            "stat",
            "Exporters down",
            f"Scrape targets of job {spec.exporter_job} not answering; red from 1.",
            COUNT,
            (Query(f"count({up} == 0) or vector(0)", instant=True),),
            12,
            4,
            steps=red_from(1),
        ),
        Spec(
            "stat",
            "Check liveness (5 min)",
            "Checks with a fresh heartbeat over checks (ratio 0–1); red below the objective "
            f"{format_number(objective)}.",
            RATIO,
            (Query(fleet.sli(names.SLO_CHECK_LIVENESS, "5m"), instant=True),),
            12,
            4,
            steps=red_below(objective),
        ),
    ]


def _heartbeat_panels(spec: SloSpec) -> list[Spec]:
    """Heartbeat age in intervals, when each check last answered, heartbeat age over time."""
    ran = f"gpuslo_check_last_run_timestamp_seconds{{{CLUSTER}}}"
    answered = f"gpuslo_check_last_success_timestamp_seconds{{{CLUSTER}}}"
    interval = f"gpuslo_check_interval_seconds{{{CLUSTER}}}"
    stale = (("green", None), ("orange", STALE_INTERVALS - 1), ("red", STALE_INTERVALS))
    return [
        Spec(
            "table",
            "Heartbeat age in intervals",
            "Seconds since each check last ran divided by its interval; orange from "
            f"{STALE_INTERVALS - 1}, red from {STALE_INTERVALS} (stale: "
            "GpusloCheckHeartbeatStale).",
            "suffix: intervals",
            (Query(per_node(f"(time() - {ran}) / {interval}"), instant=True),),
            12,
            8,
            steps=stale,
            columns=Columns(("node", "check"), "age (intervals)"),
            overrides=(_coloured_cells("age (intervals)"),),
        ),
        Spec(
            "table",
            "Last answer",
            "When each check last produced an answer (ok, warn or fail); never, in red, for a "
            "check that has not answered since the exporter started.",
            SINCE,
            (Query(per_node(f"{answered} * 1000"), instant=True),),
            12,
            8,
            mappings=(NEVER,),
            columns=Columns(("node", "check"), "last answer"),
            overrides=(_coloured_cells("last answer"),),
        ),
        Spec(
            "timeseries",
            "Heartbeat age per check and node",
            "Seconds since each check last ran, whatever its outcome.",
            SECONDS,
            (Query(per_node(f"time() - {ran}"), "{{node}} {{check}}"),),
        ),
    ]


def _coloured_cells(field: str) -> dict:
    """Override: colour the text of `field`'s cells by its thresholds and mappings."""
    return {
        "matcher": {"id": "byName", "options": field},
        "properties": [{"id": "custom.cellOptions", "value": {"type": "color-text"}}],
    }


def _failure_panels(spec: SloSpec) -> list[Spec]:
    """Time since each check last answered, and dependency failures."""
    answered = f"gpuslo_check_last_success_timestamp_seconds{{{CLUSTER}}}"
    return [
        Spec(
            "timeseries",
            "Time since last answer",
            "Seconds since each check last produced an answer (ok, warn or fail); grows while "
            "it times out or misses a dependency. A check that never answered is not drawn "
            "(its time is 0): the Last answer table shows it as never.",
            SECONDS,
            (Query(per_node(f"time() - ({answered} > 0)"), "{{node}} {{check}}"),),
        ),
        Spec(
            "timeseries",
            "Dependency failures",
            "Check runs that failed because a binary or library is missing, per node and check.",
            COUNT,
            (
                Query(
                    per_node(
                        "sum by (cluster, instance, check) (increase(gpuslo_check_errors_total{"
                        f'{CLUSTER}, reason="dependency_missing"}}[$__rate_interval]))'
                    ),
                    "{{node}} {{check}}",
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
                    "sum by (reason) ("
                    + per_node(
                        "sum by (cluster, instance, reason) (increase(gpuslo_check_errors_total"
                        f"{{{CLUSTER}}}[$__rate_interval]))"
                    )
                    + ")",
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
                    per_node(
                        "sum by (cluster, instance) (increase("
                        f"gpuslo_kernel_log_records_lost_total{{{CLUSTER}}}[$__rate_interval]))"
                    ),
                    "{{node}}",
                ),
            ),
            8,
        ),
        Spec(
            "timeseries",
            "Unrecognised log lines by source",
            "Log lines naming a device with an error word that no reader or catalogue knows "
            "(kernel log, fabric manager, host engine): each is a warn naming the line; a rising "
            "count means a catalogue entry is missing.",
            COUNT,
            (
                Query(
                    "sum by (source) ("
                    + per_node(
                        "sum by (cluster, instance, source) (increase("
                        f"gpuslo_unrecognised_messages_total{{{CLUSTER}}}[$__rate_interval]))"
                    )
                    + ")",
                    "{{source}}",
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
                    "sum by (reason) ("
                    + per_node(
                        "sum by (cluster, instance, reason) (increase(gpuslo_journal_errors_total"
                        f"{{{CLUSTER}}}[$__rate_interval]))"
                    )
                    + ")",
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
                    "sum by (check) ("
                    + per_node(
                        "sum by (cluster, instance, check) (rate(gpuslo_check_runs_total"
                        f"{{{CLUSTER}}}[$__rate_interval]))"
                    )
                    + ")",
                    "{{check}}",
                ),
            ),
        ),
        Spec(
            "timeseries",
            "Check duration",
            "Duration of the last run of each check.",
            SECONDS,
            (Query(per_node(f"gpuslo_check_duration_seconds{{{CLUSTER}}}"), "{{node}} {{check}}"),),
        ),
    ]


def check_liveness(spec: SloSpec) -> dict:
    """Heartbeat age per check and node, dependency failures, kernel-log records lost, exporters."""
    specs = (
        _liveness_stats(spec) + _heartbeat_panels(spec) + _failure_panels(spec) + _run_panels(spec)
    )
    return dashboard(
        "gpuslo-check-liveness",
        "gpuslo / Check liveness: who watches the checks",
        "A check that stops silently is worse than none.",
        specs,
        [node_variable()],
        pick_node=True,
    )
