"""Check-liveness recording rules, per check (group `gpuslo-check-liveness`): what the check
liveness dashboard draws, so its panels read a few series per check instead of every node's raw
series ("who watches the checks" at fleet scale; issue 30: every panel < 1 s p95 at 10k GPUs).
One node's raw series stay on the node drill-down.

Recording rules, one series per `check` (per `cluster` where the store adds it), except where
named:
- `gpuslo:check_stale:count` — checks (one per instance and check) in the inventory of the
  last `sli.INVENTORY_HOLD` that did not run within `STALE_INTERVALS` intervals: a check whose
  exporter went silent counts stale, as in the liveness SLI (its inventory − its fresh checks,
  so the sum over checks is `gpuslo:check_inventory:count − gpuslo:check_fresh:count`); 0, not
  absent, while none is stale.
- `gpuslo:check_never_answered:count` — checks that have not produced an answer since their
  exporter started (`gpuslo_check_last_success_timestamp_seconds` 0); 0 while none.
- `gpuslo:check_heartbeat_age_intervals:max` — the oldest heartbeat: seconds since the check
  last ran over its interval, the largest over nodes (stale from `STALE_INTERVALS`).
- `gpuslo:check_answer_age_seconds:max` — seconds since the check last answered, the largest
  over the nodes where it ever answered.
- `gpuslo:check_duration_seconds:max` — the slowest last run, seconds.
- `gpuslo:check_runs:rate5m` — runs per second over 5 min, summed over nodes.
- `gpuslo:check_errors:rate5m` — per check and reason: runs that could not answer, per second.
- `gpuslo:kernel_log_records_lost:rate5m` — fleet-wide (no label): kernel-log records lost per
  second; `gpuslo:unrecognised_messages:rate5m` per `source`; `gpuslo:journal_errors:rate5m` per
  `reason`.
Rates over `RATE_WINDOW` (at least 4 scrapes of the default 30 s); the dashboards average them
over `$__rate_interval`, so no evaluation between two points is skipped.
"""

from __future__ import annotations

from gpuslo.alerts.promtool_case import recorded_case

GROUP = "gpuslo-check-liveness"
STALE_INTERVALS = 3  # DESIGN.md §7: a heartbeat older than 3 × the interval is stale
RATE_WINDOW = "5m"
CHECK_STALE = "gpuslo:check_stale:count"
CHECK_NEVER_ANSWERED = "gpuslo:check_never_answered:count"
HEARTBEAT_AGE = "gpuslo:check_heartbeat_age_intervals:max"
ANSWER_AGE = "gpuslo:check_answer_age_seconds:max"
DURATION = "gpuslo:check_duration_seconds:max"
RUNS = f"gpuslo:check_runs:rate{RATE_WINDOW}"
ERRORS = f"gpuslo:check_errors:rate{RATE_WINDOW}"
KERNEL_LOG_LOST = f"gpuslo:kernel_log_records_lost:rate{RATE_WINDOW}"
UNRECOGNISED = f"gpuslo:unrecognised_messages:rate{RATE_WINDOW}"
JOURNAL_ERRORS = f"gpuslo:journal_errors:rate{RATE_WINDOW}"

_RAN = "gpuslo_check_last_run_timestamp_seconds"
_ANSWERED = "gpuslo_check_last_success_timestamp_seconds"
_INTERVAL = "gpuslo_check_interval_seconds"


def _per_check_count(selected: str, inventory: str) -> str:
    """Checks (once per instance and check) in `selected`, by check; 0 for a check of
    `inventory` with none."""
    return (f"count by (check) (count by (instance, check) ({selected}))\n"
            f"or 0 * count by (check) (count by (instance, check) ({inventory}))")


def stale_expr(hold: str) -> str:
    """`CHECK_STALE`: the inventory of the last `hold` unless fresh, by check."""
    inventory = f"last_over_time({_INTERVAL}[{hold}])"
    fresh = f"(time() - {_RAN}) <= {STALE_INTERVALS} * {_INTERVAL}"
    return _per_check_count(f"{inventory} unless on (instance, check) ({fresh})", inventory)


def recording_rules(hold: str) -> list[dict]:
    """The group's rules (module docstring); `hold` is the check inventory's hold."""
    w = RATE_WINDOW
    return [
        {"record": CHECK_STALE, "expr": stale_expr(hold)},
        {"record": CHECK_NEVER_ANSWERED, "expr": _per_check_count(f"{_ANSWERED} == 0", _ANSWERED)},
        {"record": HEARTBEAT_AGE, "expr": f"max by (check) ((time() - {_RAN}) / {_INTERVAL})"},
        {"record": ANSWER_AGE, "expr": f"max by (check) (time() - ({_ANSWERED} > 0))"},
        {"record": DURATION, "expr": "max by (check) (gpuslo_check_duration_seconds)"},
        {"record": RUNS, "expr": f"sum by (check) (rate(gpuslo_check_runs_total[{w}]))"},
        {"record": ERRORS,
         "expr": f"sum by (check, reason) (rate(gpuslo_check_errors_total[{w}]))"},
        {"record": KERNEL_LOG_LOST,
         "expr": f"sum(rate(gpuslo_kernel_log_records_lost_total[{w}]))"},
        {"record": UNRECOGNISED,
         "expr": f"sum by (source) (rate(gpuslo_unrecognised_messages_total[{w}]))"},
        {"record": JOURNAL_ERRORS,
         "expr": f"sum by (reason) (rate(gpuslo_journal_errors_total[{w}]))"},
    ]


def recording_group(hold: str) -> dict:
    """The `gpuslo-check-liveness` recording group."""
    return {"name": GROUP, "rules": recording_rules(hold)}


def liveness_case() -> dict:
    """promtool test, every minute for 20 min: check xid on two nodes (interval 30 s) and gpu_probe
    on n1. n1's xid runs and answers every minute; n2's xid last ran and answered at 60 s
    (stale from 150 s); gpu_probe runs every minute and never answered (0). At 10m: xid 1 stale
    of 2, oldest heartbeat 540 / 30 = 18 intervals, oldest answer 540 s; gpu_probe 0 stale, 1 never
    answered, no answer age; xid's duration the slower of 0.5 and 2 s; n1's xid 6 runs a minute
    (0.1 per second) and n2's none."""
    n1 = {"instance": "n1:9400", "job": "gpuslo"}
    n2 = {"instance": "n2:9400", "job": "gpuslo"}
    rows = [
        (_RAN, {**n1, "check": "xid"}, "0+60x20"), (_ANSWERED, {**n1, "check": "xid"}, "0+60x20"),
        (_RAN, {**n2, "check": "xid"}, "60x20"), (_ANSWERED, {**n2, "check": "xid"}, "60x20"),
        (_RAN, {**n1, "check": "gpu_probe"}, "0+60x20"),
        (_ANSWERED, {**n1, "check": "gpu_probe"}, "0x20"),
        (_INTERVAL, {**n1, "check": "xid"}, "30x20"), (_INTERVAL, {**n2, "check": "xid"}, "30x20"),
        (_INTERVAL, {**n1, "check": "gpu_probe"}, "30x20"),
        ("gpuslo_check_duration_seconds", {**n1, "check": "xid"}, "0.5x20"),
        ("gpuslo_check_duration_seconds", {**n2, "check": "xid"}, "2x20"),
        ("gpuslo_check_runs_total", {**n1, "check": "xid"}, "0+6x20"),
        ("gpuslo_check_runs_total", {**n2, "check": "xid"}, "5x20"),
    ]
    checks = [
        (CHECK_STALE, [({"check": "gpu_probe"}, 0), ({"check": "xid"}, 1)]),
        (CHECK_NEVER_ANSWERED, [({"check": "gpu_probe"}, 1), ({"check": "xid"}, 0)]),
        (HEARTBEAT_AGE, [({"check": "gpu_probe"}, 0), ({"check": "xid"}, 18)]),
        (ANSWER_AGE, [({"check": "xid"}, 540)]),
        (DURATION, [({"check": "xid"}, 2)]),
        (RUNS, [({"check": "xid"}, 0.1)]),
    ]
    return recorded_case(rows, checks)

