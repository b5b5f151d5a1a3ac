"""Job goodput and badput dashboard: fleet goodput against its objective, goodput per job, GPUs
busy by goodput category, badput GPU-hours by category (ML Goodput Measurement's taxonomy), step
time, time since last progress, interruptions by layer, and the crawl (slowdown share per job,
node performance scores, compute time per step by node). `$job` selects training jobs (the
exporter's `job` label, kept by scraping with honor_labels). Every panel but the per-node compute
time reads per-job recorded series (`gpuslo.alerts.job_series`, the crawl's), so it costs the
same on any fleet size (issue 30)."""

from __future__ import annotations

from gpuslo import names
from gpuslo.dashboards import fleet
from gpuslo.dashboards.board import dashboard
from gpuslo.dashboards.panels import (
    GPU_HOURS,
    GPUS,
    RATIO,
    Columns,
    Query,
    Spec,
    query_variable,
    red_below,
)
from gpuslo.dashboards.scope import CLUSTER
from gpuslo.slo_spec import SloSpec, format_number

JOB = f'job=~"$job", {CLUSTER}'


# Per job and category: GPU-seconds per second (gpuslo.alerts.job_series), averaged over the
# panel's interval so no rule evaluation between two points is skipped.
RATE = "gpuslo:job_gpu_seconds:rate5m"


def _busy(extra: str = "", window: str = "$__rate_interval") -> str:
    """GPUs busy (GPU-seconds per second) per job and category, averaged over `window`."""
    return f"avg_over_time({RATE}{{{JOB}{extra}}}[{window}])"


def _goodput_panels(spec: SloSpec) -> list[Spec]:
    """Fleet goodput over the period and goodput per job."""
    productive = _busy(f', category="{names.CATEGORY_PRODUCTIVE}"')
    return [
        Spec(
            "stat",
            f"Fleet goodput over {spec.period}",
            "Productive over allocated GPU-time; red below the objective "
            f"{format_number(spec.objectives[names.SLO_JOB_GOODPUT])}.",
            RATIO,
            (Query(fleet.sli(names.SLO_JOB_GOODPUT, spec.period), instant=True),),
            6,
            5,
            steps=red_below(spec.objectives[names.SLO_JOB_GOODPUT]),
        ),
        Spec(
            "timeseries",
            "Goodput per job",
            "Productive over allocated GPU-seconds per job (ratio 0–1).",
            RATIO,
            (
                Query(
                    f"sum by (job) ({productive}) / (sum by (job) ({_busy()}) > 0)", "{{job}}"
                ),
            ),
            18,
            5,
        ),
    ] + _category_panels(spec)


def _category_panels(spec: SloSpec) -> list[Spec]:
    """GPUs busy and badput GPU-hours by goodput category."""
    badput = _busy(f', category!="{names.CATEGORY_PRODUCTIVE}"', "$__range")
    return [
        Spec(
            "timeseries",
            "GPUs busy by category",
            "GPU-seconds per second by goodput category "
            "(productive or a badput category): GPUs spent on each.",
            GPUS,
            (Query(f"sum by (category) ({_busy()})", "{{category}}"),),
        ),
        Spec(
            "bargauge",
            "Badput GPU-hours by category",
            "GPU-hours in the range in each badput category (ML Goodput Measurement's "
            "taxonomy): GPUs busy in it, averaged over the range, times its length "
            "(approximate; the report's figures are exact).",
            GPU_HOURS,
            (
                Query(
                    f"sum by (category) ({badput}) * $__range_s / 3600",
                    "{{category}}",
                    instant=True,
                ),
            ),
        ),
    ]


GOODPUT_UNKNOWN_TITLE = "Jobs whose goodput is unknown"


def _progress_panels(spec: SloSpec) -> list[Spec]:
    """Step time per job, steps seen and committed, and the jobs whose goodput is unknown."""
    return [
        Spec(
            "timeseries",
            "Step time",
            "Seconds per step over the last 6 h (recorded from progress timestamps and steps).",
            "s",
            (Query(f"gpuslo:job_step_time:seconds{{{JOB}}}", "{{job}}"),),
            8,
        ),
        Spec(
            "timeseries",
            "Steps seen and committed",
            "Last training step seen and last step committed by a checkpoint, per job (the "
            "highest over its nodes); the gap is progress a restart would lose.",
            "short",
            (Query(f"max by (job) (gpuslo_job_last_step{{{JOB}}})", "{{job}} seen"),
             Query(f"max by (job) (gpuslo_job_step{{{JOB}}})", "{{job}} committed")),
            8,
        ),
        Spec(
            "table",
            GOODPUT_UNKNOWN_TITLE,
            "Jobs whose logs show progress but cannot give goodput, and why (no commit "
            "evidence, no clock, ...): their progress is shown, their GPU-seconds are not "
            "counted. Empty on a healthy fleet.",
            "none",
            (Query(f"max by (job, reason) (gpuslo_job_goodput_unknown{{{JOB}}})",
                   instant=True),),
            8,
            columns=Columns(("job", "reason"), value=None),
        ),
    ] + _stall_panels(spec)


def _stall_panels(spec: SloSpec) -> list[Spec]:
    """Time since last progress and interruptions by layer."""
    return [
        Spec(
            "timeseries",
            "Time since last progress",
            "Seconds since each job last advanced a "
            f"step; GpusloJobStalled fires past {format_number(spec.job_stall_factor)} step "
            "times.",
            "s",
            (
                Query(
                    "time() - max by (job) "
                    f"(gpuslo:job_last_progress_timestamp_seconds:max{{{JOB}}})",
                    "{{job}}",
                ),
            ),
            8,
        ),
        Spec(
            "bargauge",
            "Interruptions by layer",
            "Job interruptions in the range by the layer they are attributed to: their rate "
            "averaged over the range times its length (approximate).",
            "short",
            (
                Query(
                    "sum by (layer) (avg_over_time(gpuslo:job_interruptions:rate5m"
                    f"{{{JOB}}}[$__range])) * $__range_s",
                    "{{layer}}",
                    instant=True,
                ),
            ),
            8,
        ),
    ]


def _crawl_panels(spec: SloSpec) -> list[Spec]:
    """The crawl: slowdown share per job, node performance scores and compute time per step."""
    return [
        Spec(
            "timeseries",
            "Crawl: slowdown share per job",
            "Share of each job's GPU-time lost to steps slower than its own reference over 30 min "
            f"(ratio 0–1); GpusloJobCrawling fires above {format_number(spec.crawl_alert_ratio)}.",
            RATIO,
            (Query(f"gpuslo:job_slowdown:ratio_rate30m{{{JOB}}}", "{{job}}"),),
            8,
        ),
        Spec(
            "timeseries",
            "Node performance score",
            "Compute time per step of the job's fastest node / this node's (1 = the fastest); "
            f"GpusloStragglerNode fires below {format_number(spec.straggler_score)}.",
            RATIO,
            (Query(f"gpuslo:job_node_performance:score{{{JOB}}}", "{{job}} {{instance}}"),),
            8,
        ),
        Spec(
            "timeseries",
            "Compute time per step by node",
            "Seconds each node's ranks compute per step (Recorder.step(n, compute_s=...)); "
            "empty for jobs that do not report section timings.",
            "s",
            (Query(f"gpuslo_job_step_compute_seconds{{{JOB}}}", "{{job}} {{instance}}"),),
            8,
        ),
    ]


def job_goodput(spec: SloSpec) -> dict:
    """Job goodput and badput, fleet-wide and per job (`$job`)."""
    specs = _goodput_panels(spec) + _progress_panels(spec) + _crawl_panels(spec)
    variable = query_variable("job", "Job", f"label_values(gpuslo_job_step{{{CLUSTER}}}, job)")
    return dashboard(
        "gpuslo-job-goodput",
        "gpuslo / Job goodput and badput",
        "Productive and badput GPU-time of training jobs.",
        specs,
        [variable],
    )
