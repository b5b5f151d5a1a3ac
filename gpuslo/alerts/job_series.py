"""Per-job recording rules (group `gpuslo-job-series`): what the job goodput dashboard draws, so
its panels read a few series per job instead of every node's counters (issue 30: every panel
< 1 s p95 at 10k GPUs, flat in fleet size).

- `gpuslo:job_gpu_seconds:rate5m` — per job and goodput category: GPU-seconds per second over
  5 min, summed over the job's nodes (GPUs busy in the category).
- `gpuslo:job_last_progress_timestamp_seconds:max` — per job: the newest progress timestamp any
  of its nodes reports (Unix seconds).
- `gpuslo:job_interruptions:rate5m` — per job and layer: interruptions per second over 5 min.
A figure over a dashboard's range is the rate averaged over it times its length (GPU-seconds or
interruptions): the rates' extrapolation makes it approximate; the report's exact figures come
from `gpuslo:job_gpu_seconds:increase1m` and the journals.
"""

from __future__ import annotations

from gpuslo.alerts.promtool_case import recorded_case

GROUP = "gpuslo-job-series"
RATE_WINDOW = "5m"
JOB_SECONDS_RATE = f"gpuslo:job_gpu_seconds:rate{RATE_WINDOW}"
JOB_LAST_PROGRESS = "gpuslo:job_last_progress_timestamp_seconds:max"
JOB_INTERRUPTIONS_RATE = f"gpuslo:job_interruptions:rate{RATE_WINDOW}"


def recording_group() -> dict:
    """The `gpuslo-job-series` recording group (module docstring)."""
    w = RATE_WINDOW
    return {"name": GROUP, "rules": [
        {"record": JOB_SECONDS_RATE,
         "expr": f"sum by (job, category) (rate(gpuslo_job_gpu_seconds_total[{w}]))"},
        {"record": JOB_LAST_PROGRESS,
         "expr": "max by (job) (gpuslo_job_last_progress_timestamp_seconds)"},
        {"record": JOB_INTERRUPTIONS_RATE,
         "expr": f"sum by (job, layer) (rate(gpuslo_job_interruptions_total[{w}]))"},
    ]}


def job_series_case() -> dict:
    """promtool test, every minute for 20 min: job train-a on two nodes, each gaining 60
    productive GPU-seconds a minute (1 GPU busy on each: 2 together), n1 also 6 checkpoint_save
    GPU-seconds a minute (0.1); n2's progress 60 s ahead of n1's (at 10m: 660); n2 counts 6
    node-layer interruptions a minute (0.1 per second)."""
    a1 = {"instance": "n1:9400", "job": "train-a"}
    a2 = {"instance": "n2:9400", "job": "train-a"}
    rows = [
        ("gpuslo_job_gpu_seconds_total", {**a1, "category": "productive"}, "0+60x20"),
        ("gpuslo_job_gpu_seconds_total", {**a2, "category": "productive"}, "0+60x20"),
        ("gpuslo_job_gpu_seconds_total", {**a1, "category": "checkpoint_save"}, "0+6x20"),
        ("gpuslo_job_last_progress_timestamp_seconds", a1, "0+60x20"),
        ("gpuslo_job_last_progress_timestamp_seconds", a2, "60+60x20"),
        ("gpuslo_job_interruptions_total", {**a2, "layer": "node"}, "0+6x20"),
    ]
    checks = [
        (JOB_SECONDS_RATE, [({"category": "checkpoint_save", "job": "train-a"}, 0.1),
                            ({"category": "productive", "job": "train-a"}, 2)]),
        (JOB_LAST_PROGRESS, [({"job": "train-a"}, 660)]),
        (JOB_INTERRUPTIONS_RATE, [({"job": "train-a", "layer": "node"}, 0.1)]),
    ]
    return recorded_case(rows, checks)

