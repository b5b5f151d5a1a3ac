"""The picked node's checks on the node drill-down (moved from the check-liveness dashboard,
which draws one line per check from recorded series): heartbeat age in intervals, when each
check last answered ("never" for a check that never did: the exporter exports 0), time since
the last answer, durations, runs, errors by check and reason, kernel-log records lost,
unrecognised log lines and journal errors. Every selector is `scope.NODE`: the node's own raw
series."""

from __future__ import annotations

from gpuslo.dashboards.panels import (
    COUNT,
    SECONDS,
    SINCE,
    Columns,
    Query,
    Spec,
    value_mapping,
)
from gpuslo.dashboards.scope import NODE, per_node

STALE_INTERVALS = 3  # DESIGN.md §7: a heartbeat older than 3 × the interval is stale
NEVER = value_mapping({0: ("never", "red")})
RAN = f"gpuslo_check_last_run_timestamp_seconds{{{NODE}}}"
ANSWERED = f"gpuslo_check_last_success_timestamp_seconds{{{NODE}}}"


def coloured_cells(field: str) -> dict:
    """Override: colour the text of `field`'s cells by its thresholds and mappings."""
    return {
        "matcher": {"id": "byName", "options": field},
        "properties": [{"id": "custom.cellOptions", "value": {"type": "color-text"}}],
    }


def _increase(metric: str, by: tuple[str, ...], legend: str) -> Query:
    """Increase of `metric` per `$__rate_interval` on the node, summed by the labels `by`."""
    labels = ", ".join(("cluster", "instance", *by))
    return Query(
        per_node(f"sum by ({labels}) (increase({metric}{{{NODE}}}[$__rate_interval]))"), legend
    )


def heartbeat_panels() -> list[Spec]:
    """Heartbeat age in intervals and the last answer (tables), time since the last answer."""
    interval = f"gpuslo_check_interval_seconds{{{NODE}}}"
    stale = (("green", None), ("orange", STALE_INTERVALS - 1), ("red", STALE_INTERVALS))
    return [
        Spec(
            "table",
            "Heartbeat age in intervals",
            "Seconds since each of the node's checks last ran divided by its interval; orange "
            f"from {STALE_INTERVALS - 1}, red from {STALE_INTERVALS} (stale: "
            "GpusloCheckHeartbeatStale).",
            "suffix: intervals",
            (Query(per_node(f"(time() - {RAN}) / {interval}"), instant=True),),
            12,
            8,
            steps=stale,
            columns=Columns(("node", "check"), "age (intervals)"),
            overrides=(coloured_cells("age (intervals)"),),
        ),
        Spec(
            "table",
            "Last answer",
            "When each of the node's checks last produced an answer (ok, warn or fail); never, "
            "in red, for a check that has not answered since the exporter started.",
            SINCE,
            (Query(per_node(f"{ANSWERED} * 1000"), instant=True),),
            12,
            8,
            mappings=(NEVER,),
            columns=Columns(("node", "check"), "last answer"),
            overrides=(coloured_cells("last answer"),),
        ),
        Spec(
            "timeseries",
            "Time since last answer",
            "Seconds since each of the node's checks last produced an answer (ok, warn or "
            "fail); grows while it times out or misses a dependency. A check that never "
            "answered is not drawn (its time is 0): the Last answer table shows it as never.",
            SECONDS,
            (Query(per_node(f"time() - ({ANSWERED} > 0)"), "{{node}} {{check}}"),),
        ),
    ]


def run_panels() -> list[Spec]:
    """Durations, runs and errors of the node's checks; kernel-log, log-line and journal losses."""
    return [
        Spec(
            "timeseries",
            "Check duration",
            "Duration of the last run of each of the node's checks.",
            SECONDS,
            (Query(per_node(f"gpuslo_check_duration_seconds{{{NODE}}}"), "{{node}} {{check}}"),),
        ),
        Spec(
            "timeseries",
            "Check runs and errors on the node",
            "Runs of each check, and runs that could not answer by check and reason (timeouts, "
            "missing dependencies, tool and parse errors), per $__rate_interval.",
            COUNT,
            (
                _increase("gpuslo_check_runs_total", ("check",), "{{check}} runs"),
                _increase("gpuslo_check_errors_total", ("check", "reason"),
                          "{{check}} errors: {{reason}}"),
            ),
        ),
        Spec(
            "timeseries",
            "Records and lines lost on the node",
            "Kernel-log records overwritten before the exporter read them (/dev/kmsg overruns), "
            "log lines no reader or catalogue knows by source, and job-journal errors by reason, "
            "per $__rate_interval.",
            COUNT,
            (
                _increase("gpuslo_kernel_log_records_lost_total", (),
                          "kernel-log records lost"),
                _increase("gpuslo_unrecognised_messages_total", ("source",),
                          "unrecognised: {{source}}"),
                _increase("gpuslo_journal_errors_total", ("reason",), "journal errors: {{reason}}"),
            ),
            24,
        ),
    ]


def check_panels() -> list[Spec]:
    """Every panel of this module, in reading order."""
    return heartbeat_panels() + run_panels()
