"""Inference serving dashboard (issue 29), generated only for an SLO spec with a `serving`
section, like the serving rules it reads (`gpuslo.alerts.serving`): every panel is on a series
those rules record, so the board and the rules cannot drift.

Panels: TTFT and inter-token attainment over the SLO period against their targets (fleet), the
same per replica over 5 min, serving GPUs (allocated, ready, idle capacity), GPUs of replicas
allocated but not ready (crash loops, loading, restarts: empty on a healthy fleet), idle GPUs per
replica, and Triton's mean request latency (engines without histograms)."""

from __future__ import annotations

from gpuslo.dashboards.board import dashboard
from gpuslo.dashboards.panels import GPUS, RATIO, SECONDS, Query, Spec, red_below
from gpuslo.dashboards.scope import CLUSTER
from gpuslo.slo_spec import SloSpec, format_number

UID = "gpuslo-serving"
GPU_SERIES = {"allocated": "gpuslo:serving_replica_gpus:allocated",
              "ready": "gpuslo:serving_replica_gpus:ready",
              "idle": "gpuslo:serving_replica_gpus:idle"}
NOT_READY_TITLE = "GPUs of replicas not ready"
SLIS = (("serving_ttft", "Time to first token", "ttft_seconds", "ttft_target",
         "requests whose first token came within"),
        ("serving_itl", "Inter-token latency", "itl_seconds", "itl_target",
         "output tokens (after the first) that came within"))


def _attainment(spec: SloSpec) -> list[Spec]:
    out = []
    window = spec.sli_windows[0]
    for sli, title, seconds, target, what in SLIS:
        objective = format_number(getattr(spec.serving, seconds))
        goal = getattr(spec.serving, target)
        out.append(Spec(
            "stat", f"{title} attainment over {spec.period}",
            f"Share of {what} {objective} s, over the fleet's replicas that hold GPUs, from the "
            f"engines' own histograms (bucket bound {objective} s, never interpolated); red "
            f"below the target {format_number(goal)}.",
            RATIO, (Query(f"gpuslo:{sli}:ratio_rate{spec.period}{{{CLUSTER}}}", instant=True),),
            6, 5, steps=red_below(goal)))
        out.append(Spec(
            "timeseries", f"{title} attainment per replica",
            f"Share of {what} {objective} s per replica (namespace/pod) over {window}; a "
            "replica whose histogram has no bucket at the objective has no line "
            "(GpusloServingObjectiveNotABucket names it).",
            RATIO, (Query(f"gpuslo:{sli}_pod:ratio_rate{window}{{{CLUSTER}}}",
                          "{{namespace}}/{{pod}}"),), 18, 5))
    return out


def _capacity() -> list[Spec]:
    allocated, ready, idle = (f"{GPU_SERIES[k]}{{{CLUSTER}}}" for k in ("allocated", "ready",
                                                                         "idle"))
    return [
        Spec("timeseries", "Serving GPUs",
             "GPUs held by serving replicas (pods that hold GPUs and run an engine), those of "
             "ready replicas, and idle capacity: ready with no request running or waiting "
             "(neither serving nor lost).", GPUS,
             (Query(f"sum({allocated})", "allocated"), Query(f"sum({ready})", "ready"),
              Query(f"sum({idle})", "idle capacity"))),
        Spec("timeseries", NOT_READY_TITLE,
             "GPUs of replicas that hold GPUs but are not ready (model loading, crash loops, "
             "failed probes, restarts), per replica; empty when every replica is ready.", GPUS,
             (Query(f"{allocated} unless on (namespace, pod) {ready}",
                    "{{namespace}}/{{pod}}"),)),
        Spec("bargauge", "Idle GPUs per replica",
             "GPUs per ready replica with no request running or waiting now: idle capacity, "
             "not a fault.", GPUS, (Query(f"sum by (namespace, pod) ({idle})",
                                          "{{namespace}}/{{pod}}", instant=True),)),
        Spec("timeseries", "Mean request latency (engines without histograms)",
             "Triton's mean request duration over 5 min (nv_inference_request_duration_us / "
             "nv_inference_request_success), seconds: the only latency Triton gives without "
             "--metrics-config histogram_latencies=true; no attainment can come from it.",
             SECONDS, (Query(f"gpuslo:serving_request_latency_seconds:mean5m{{{CLUSTER}}}",
                             "{{namespace}}/{{pod}}"),)),
    ]


def serving(spec: SloSpec) -> dict:
    """The serving dashboard for `spec` (which must have a `serving` section)."""
    return dashboard(UID, "gpuslo: inference serving",
                     "Serving replicas: latency attainment against the serving objectives, "
                     "serving GPUs and idle capacity, replicas not ready (issue 29).",
                     _attainment(spec) + _capacity())
