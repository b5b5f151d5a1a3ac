"""Check-liveness dashboard ("who watches the checks"): exporters down, the liveness SLI, and one
line per check, never one per node: stale checks, checks that never answered, the oldest
heartbeat and answer, dependency failures, errors, runs and the slowest duration; kernel-log
records lost, unrecognised log lines and journal errors fleet-wide. A check that stops silently
gives false confidence, so every panel here reads something that grows when a check goes quiet.

Every panel reads the recorded series of `gpuslo.alerts.liveness` (a few series per check), so
the board costs the same on 10 or 10,000 nodes (issue 30); which node a check went quiet on is the
node drill-down's (`node_checks`), or the GpusloCheckHeartbeatStale alert's labels. Rates are
averaged over `$__rate_interval`, so no rule evaluation between two points is skipped."""

from __future__ import annotations

from gpuslo import names
from gpuslo.dashboards import fleet
from gpuslo.dashboards.board import dashboard
from gpuslo.dashboards.node_checks import STALE_INTERVALS
from gpuslo.dashboards.panels import COUNT, RATIO, SECONDS, Query, Spec, red_below, red_from
from gpuslo.dashboards.scope import CLUSTER
from gpuslo.slo_spec import SloSpec, format_number

PER_MINUTE = "cpm"  # counts per minute


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


def _recorded(name: str, extra: str = "") -> str:
    """A recorded series of `gpuslo.alerts.liveness` in the chosen clusters."""
    return f"{name}{{{CLUSTER}{extra}}}"


def _per_minute(name: str, by: str, extra: str = "") -> str:
    """A recorded per-second rate as a count per minute, summed by `by`, averaged over
    `$__rate_interval`."""
    return f"60 * sum by ({by}) (avg_over_time({_recorded(name, extra)}[$__rate_interval]))"


def _stale_panels() -> list[Spec]:
    """Stale checks and checks that never answered (stats and lines per check)."""
    stale = _recorded("gpuslo:check_stale:count")
    never = _recorded("gpuslo:check_never_answered:count")
    return [
        Spec(
            "stat",
            "Stale checks",
            f"Checks (one per node and check) that have not run for {STALE_INTERVALS} intervals, "
            "or whose exporter went silent in the last hour; red from 1 "
            "(GpusloCheckHeartbeatStale names the nodes).",
            COUNT,
            (Query(f"sum({stale})", instant=True),),
            12,
            4,
            steps=red_from(1),
        ),
        Spec(
            "stat",
            "Checks that never answered",
            "Checks (one per node and check) that have run but never produced an answer since "
            "their exporter started; red from 1 (the node drill-down's Last answer: never).",
            COUNT,
            (Query(f"sum({never})", instant=True),),
            12,
            4,
            steps=red_from(1),
        ),
        Spec(
            "timeseries",
            "Stale checks per check",
            f"Per check: nodes where it has not run for {STALE_INTERVALS} intervals or whose "
            "exporter went silent in the last hour; 0 while all are fresh.",
            COUNT,
            (Query(f"sum by (check) ({stale})", "{{check}}"),),
        ),
        Spec(
            "timeseries",
            "Checks that never answered per check",
            "Per check: nodes where it runs but has never produced an answer (ok, warn or fail) "
            "since the exporter started.",
            COUNT,
            (Query(f"sum by (check) ({never})", "{{check}}"),),
        ),
    ]


def _age_panels() -> list[Spec]:
    """The oldest heartbeat and answer per check, and the slowest duration."""
    return [
        Spec(
            "timeseries",
            "Oldest heartbeat per check",
            "Per check, over every node: the most intervals since it last ran, whatever its "
            f"outcome; stale from {STALE_INTERVALS}.",
            "suffix: intervals",
            (Query(f"max by (check) ({_recorded('gpuslo:check_heartbeat_age_intervals:max')})",
                   "{{check}}"),),
            8,
        ),
        Spec(
            "timeseries",
            "Oldest answer per check",
            "Per check, over the nodes where it ever answered: the most seconds since it last "
            "produced an answer (ok, warn or fail); grows while it times out or misses a "
            "dependency somewhere.",
            SECONDS,
            (Query(f"max by (check) ({_recorded('gpuslo:check_answer_age_seconds:max')})",
                   "{{check}}"),),
            8,
        ),
        Spec(
            "timeseries",
            "Slowest check duration",
            "Per check, over every node: the duration of the slowest last run.",
            SECONDS,
            (Query(f"max by (check) ({_recorded('gpuslo:check_duration_seconds:max')})",
                   "{{check}}"),),
            8,
        ),
    ]


def _error_panels() -> list[Spec]:
    """Runs, dependency failures and errors per check; records and lines lost fleet-wide."""
    errors = "gpuslo:check_errors:rate5m"
    return [
        Spec(
            "timeseries",
            "Check runs",
            "Check runs per minute per check, over every node.",
            PER_MINUTE,
            (Query(_per_minute("gpuslo:check_runs:rate5m", "check"), "{{check}}"),),
        ),
        Spec(
            "timeseries",
            "Dependency failures",
            "Check runs per minute that failed because a binary or library is missing, per "
            "check.",
            PER_MINUTE,
            (Query(_per_minute(errors, "check", ', reason="dependency_missing"'), "{{check}}"),),
        ),
        Spec(
            "timeseries",
            "Check errors by reason",
            "Runs per minute that could not answer: timeouts, missing dependencies, tool and "
            "parse errors.",
            PER_MINUTE,
            (Query(_per_minute(errors, "reason"), "{{reason}}"),),
            8,
        ),
        Spec(
            "timeseries",
            "Unrecognised log lines by source",
            "Log lines per minute naming a device with an error word that no reader or "
            "catalogue knows (kernel log, fabric manager, host engine): each is a warn naming "
            "the line; a rising count means a catalogue entry is missing.",
            PER_MINUTE,
            (Query(_per_minute("gpuslo:unrecognised_messages:rate5m", "source"), "{{source}}"),),
            8,
        ),
        Spec(
            "timeseries",
            "Kernel-log records lost and journal errors",
            "Per minute, fleet-wide: kernel-log records overwritten before the exporter read "
            "them (/dev/kmsg overruns), and job journals that could not be read by reason (bad "
            "lines, not journals, truncation, limits: their goodput is missing or partial).",
            PER_MINUTE,
            (
                Query(_per_minute("gpuslo:kernel_log_records_lost:rate5m", "cluster"),
                      "kernel-log records lost {{cluster}}"),
                Query(_per_minute("gpuslo:journal_errors:rate5m", "reason"),
                      "journal errors: {{reason}}"),
            ),
            8,
        ),
    ]


def check_liveness(spec: SloSpec) -> dict:
    """Exporters down, the liveness SLI and every check's liveness, one line per check."""
    specs = _liveness_stats(spec) + _stale_panels() + _age_panels() + _error_panels()
    return dashboard(
        "gpuslo-check-liveness",
        "gpuslo / Check liveness: who watches the checks",
        "A check that stops silently is worse than none. One line per check, from recorded "
        "series; the node drill-down shows one node's checks.",
        specs,
    )
