"""The crawl's rules, in their own groups: slowdown GPU-seconds and share per job, per-node
performance scores, and the alerts GpusloJobCrawling and GpusloStragglerNode.

Recording rules (group `gpuslo-crawl`):
- `gpuslo:job_slowdown_gpu_seconds:sum` — per job, the slowdown GPU-seconds of all its nodes
  (`gpuslo_job_gpu_seconds_total{category="slowdown"}` summed): its increase over a week is the
  report's crawl figure for the job (the simulated week of tests/alerts checks they agree).
- `gpuslo:job_slowdown:ratio_rate30m` — per job, the share of its GPU-time lost to slowdown over
  30 min (0–1; no sample when the job spent no GPU-time).
- `gpuslo:job_node_performance:score` — per job and node (`instance`): the compute time per step
  of the job's fastest node / this node's (`gpuslo_job_step_compute_seconds`): 1 = the fastest,
  0.5 = twice as slow. nvidia-resiliency-ext's relative performance score, per node.
- `gpuslo:job_node_individual_performance:score` — the node's own best compute time over
  `BEST_WINDOW` / its current one: 1 = as fast as it has been (the individual score).
Both scores leave out a zero or absent compute time (`> 0`), so a node that stopped reporting
cannot become the fastest.

Alerts: GpusloJobCrawling when a job's slowdown share over 30 min stays above the spec's
`crawl_alert_ratio` for `CRAWL_HOLD`; GpusloStragglerNode when a node's score stays below the
spec's `straggler_score` for `STRAGGLER_HOLD`.
"""

from __future__ import annotations

from gpuslo import names
from gpuslo.slo_spec import SloSpec, format_number

GROUP = "gpuslo-crawl"
ALERT_GROUP = "gpuslo-crawl-alerts"
JOB_SLOWDOWN_SUM = "gpuslo:job_slowdown_gpu_seconds:sum"
JOB_SLOWDOWN_RATIO = "gpuslo:job_slowdown:ratio_rate30m"
NODE_SCORE = "gpuslo:job_node_performance:score"
NODE_INDIVIDUAL_SCORE = "gpuslo:job_node_individual_performance:score"
RATIO_WINDOW = "30m"
BEST_WINDOW = "1d"
CRAWL_HOLD = "10m"
STRAGGLER_HOLD = "15m"
_SECONDS = "gpuslo_job_gpu_seconds_total"
_COMPUTE = "(gpuslo_job_step_compute_seconds > 0)"


def recording_rules() -> list[dict]:
    """The crawl's recording rules (see the module docstring)."""
    slow = f'{_SECONDS}{{category="{names.CATEGORY_SLOWDOWN}"}}'
    w = RATIO_WINDOW
    return [
        {"record": JOB_SLOWDOWN_SUM, "expr": f"sum by (job) ({slow})"},
        {
            "record": JOB_SLOWDOWN_RATIO,
            "expr": f"clamp_max(sum by (job) (rate({slow}[{w}]))"
            f" / (sum by (job) (rate({_SECONDS}[{w}])) > 0), 1)",
        },
        {
            "record": NODE_SCORE,
            "expr": f"min by (job) {_COMPUTE}\n/ on (job) group_right ()\n{_COMPUTE}",
        },
        {
            "record": NODE_INDIVIDUAL_SCORE,
            "expr": f"(min_over_time(gpuslo_job_step_compute_seconds[{BEST_WINDOW}]) > 0)"
            f" / {_COMPUTE}",
        },
    ]


def recording_group() -> dict:
    """The `gpuslo-crawl` recording group."""
    return {"name": GROUP, "rules": recording_rules()}


def alert_rules(spec: SloSpec) -> list[dict]:
    """GpusloJobCrawling and GpusloStragglerNode, thresholds from `spec`."""
    share = format_number(spec.crawl_alert_ratio)
    score = format_number(spec.straggler_score)
    return [
        {
            "alert": "GpusloJobCrawling",
            "expr": f"{JOB_SLOWDOWN_RATIO} > {share}",
            "for": CRAWL_HOLD,
            "labels": {"severity": "ticket"},
            "annotations": {
                "summary": "Job {{ $labels.job }} is crawling: more than " + share
                + " of its GPU-time goes to steps slower than its own reference.",
                "description": (
                    "A sustained slowdown, not a spike: look for a straggler node "
                    "(GpusloStragglerNode) and for degradations on the job's nodes (SW power or "
                    "thermal capping, port errors, link flaps, fewer network devices)."
                ),
            },
        },
        {
            "alert": "GpusloStragglerNode",
            "expr": f"{NODE_SCORE} < {score}",
            "for": STRAGGLER_HOLD,
            "labels": {"severity": "ticket"},
            "annotations": {
                "summary": "{{ $labels.instance }} is a straggler in job {{ $labels.job }}.",
                "description": (
                    f"It computes each step slower than {score} x the speed of the job's fastest "
                    "node, and the whole gang waits on it: check its GPU clocks, PCIe links and "
                    "network ports, or move the job off it."
                ),
            },
        },
    ]


def alert_group(spec: SloSpec) -> dict:
    """The `gpuslo-crawl-alerts` alerting group."""
    return {"name": ALERT_GROUP, "rules": alert_rules(spec)}
