"""Serving rules (issue 29): latency attainment of inference replicas, from the engines' own
histograms, joined with `gpuslo_gpu_allocation` by (namespace, pod) so only replicas that hold
GPUs count; capacity figures from kube-state-metrics readiness; burn-rate alerts; promtool tests.

Generated only when the SLO spec has a `serving` section (`gpuslo.serving_spec`); the bucket
rule is stated there (objective = a bucket bound, both spellings of `le` matched, never
interpolated; `GpusloServingObjectiveNotABucket` when a replica's histogram has no such bound).

Sources (metric names as the engines publish them; real pages in tests/data/serving):
- TTFT, per request: vLLM `vllm:time_to_first_token_seconds`, SGLang
  `sglang:time_to_first_token_seconds`, Triton `nv_inference_first_response_histogram_ms`
  (milliseconds; only with `--metrics-config histogram_latencies=true`).
- Inter-token latency, one observation per output token after the first: vLLM
  `vllm:inter_token_latency_seconds` (V1) else `vllm:time_per_output_token_seconds` (V0, same
  observation), SGLang `sglang:inter_token_latency_seconds`.
- TGI has no TTFT histogram and only a per-request mean time per token: not an attainment source.
  Triton without histograms: only mean latency (`nv_inference_request_duration_us` /
  `nv_inference_request_success`), recorded as `gpuslo:serving_request_latency_seconds:mean5m`.
"""

from __future__ import annotations

from gpuslo.slo_spec import SloSpec, format_number

ALLOCATED = "gpuslo_gpu_allocation"
BY = "namespace, pod"
TTFT = (("vllm:time_to_first_token_seconds", 1), ("sglang:time_to_first_token_seconds", 1),
        ("nv_inference_first_response_histogram_ms", 1000))
ITL = (("vllm:inter_token_latency_seconds", 1), ("vllm:time_per_output_token_seconds", 1),
       ("sglang:inter_token_latency_seconds", 1))
SLIS = {"serving_ttft": (TTFT, "ttft_seconds", "ttft_target", "time to first token"),
        "serving_itl": (ITL, "itl_seconds", "itl_target", "inter-token latency")}
ALERT = {"serving_ttft": "GpusloServingTtftBudgetBurn", "serving_itl": "GpusloServingItlBudgetBurn"}
ENGINE_UP = ("vllm:num_requests_running", "sglang:num_running_reqs",
             "nv_inference_request_success", "tgi_queue_size")
RULE_FILE = "gpuslo-serving.rules.yml"
TEST_FILE = "gpuslo-serving_test.yml"


def le_regex(seconds: float, scale: int) -> str:
    """Regex for the `le` label of a bound: `0\\\\.5`; an integral bound matches `10` and `10.0`."""
    value = float(format_number(seconds * scale))
    if value.is_integer():
        return f"{int(value)}(\\\\.0)?"
    return format_number(value).replace(".", "\\\\.")


def _on_gpus(expr: str) -> str:
    return f"({expr}) and on ({BY}) {ALLOCATED}"


def _sum(sources, suffix: str, window: str, spec_seconds: float | None) -> str:
    arms = []
    for family, scale in sources:
        match = f'{{le=~"{le_regex(spec_seconds, scale)}"}}' if spec_seconds else ""
        arms.append(f"sum by ({BY}) (rate({family}_{suffix}{match}[{window}]))")
    return _on_gpus(" or ".join(arms))


def _names(sli: str, window: str) -> tuple[str, str, str, str]:
    return (f"gpuslo:{sli}_good:rate{window}", f"gpuslo:{sli}_total:rate{window}",
            f"gpuslo:{sli}:ratio_rate{window}", f"gpuslo:{sli}_pod:ratio_rate{window}")


def recording_rules(spec: SloSpec) -> list[dict]:
    """Per SLI and window: good and total per replica, the replica's and the fleet's ratio; then
    capacity (GPUs of ready replicas, of all replicas, of idle ready replicas), the objectives
    themselves (`gpuslo:serving_objective_seconds{sli}`, so a reader of the recorded good counts
    knows their bound: `gpuslo.slo.sources.serving`) and mean latency."""
    serving = spec.serving
    rules = []
    for sli, (sources, seconds, _, _) in SLIS.items():
        for w in spec.sli_windows:
            good, total, fleet, pod = _names(sli, w)
            rules += [
                {"record": good, "expr": _sum(sources, "bucket", w, getattr(serving, seconds))},
                {"record": total, "expr": _sum(sources, "count", w, None)},
                {"record": pod, "expr": f"clamp_max({good} / ({total} > 0), 1)"},
                {"record": fleet, "expr": f"clamp_max(sum({good}) / (sum({total}) > 0), 1)"},
            ]
    replica = f"group by ({BY}) ({' or '.join(ENGINE_UP)})"
    gpus = f"count by ({BY}) ({ALLOCATED}) and on ({BY}) {replica}"
    ready = f'max by ({BY}) (kube_pod_status_ready{{condition="true"}}) == 1'
    idle = (f"max by ({BY}) (vllm:num_requests_running + vllm:num_requests_waiting"
            f" or sglang:num_running_reqs) == 0")
    rules += [
        {"record": "gpuslo:serving_replica_gpus:allocated", "expr": gpus},
        {"record": "gpuslo:serving_replica_gpus:ready",
         "expr": f"({gpus}) and on ({BY}) ({ready})"},
        {"record": "gpuslo:serving_replica_gpus:idle",
         "expr": f"gpuslo:serving_replica_gpus:ready and on ({BY}) ({idle})"},
        *({"record": "gpuslo:serving_objective_seconds", "labels": {"sli": sli},
           "expr": f"vector({format_number(getattr(serving, field))})"}
          for sli, field in (("ttft", "ttft_seconds"), ("itl", "itl_seconds"))),
        {"record": "gpuslo:serving_request_latency_seconds:mean5m",
         "expr": _on_gpus(f"sum by ({BY}) (rate(nv_inference_request_duration_us[5m])) / 1e6"
                          f" / (sum by ({BY}) (rate(nv_inference_request_success[5m])) > 0)")},
    ]
    return rules


def _threshold(spec: SloSpec, target: float, factor: float) -> float:
    return float(format_number(1.0 - factor * (1.0 - target)))


def alert_rules(spec: SloSpec) -> list[dict]:
    """Burn-rate alerts (page, ticket) per SLI on the fleet ratio, and the bucket check."""
    out = []
    for sli, (_, seconds, target_field, title) in SLIS.items():
        target = getattr(spec.serving, target_field)
        for severity in ("page", "ticket"):
            pairs = [p for p in spec.burn_rate_alerts() if p.severity == severity
                     and _threshold(spec, target, p.factor) >= 1e-6]
            arms = [f"(gpuslo:{sli}:ratio_rate{p.long_window} < "
                    f"{format_number(_threshold(spec, target, p.factor))} and "
                    f"gpuslo:{sli}:ratio_rate{p.short_window} < "
                    f"{format_number(_threshold(spec, target, p.factor))})" for p in pairs]
            if arms:
                out.append({"alert": ALERT[sli], "expr": "\nor\n".join(arms),
                            "labels": {"severity": severity, "slo": sli},
                            "annotations": {
                                "summary": f"Serving {title} is burning its error budget "
                                           f"({severity}).",
                                "description": (
                                    f"Target {format_number(target)} within "
                                    f"{format_number(getattr(spec.serving, seconds))} s over "
                                    f"{spec.period}.")}})
    out.append(_bucket_alert(spec))
    return out


def _bucket_alert(spec: SloSpec) -> dict:
    arms = []
    for sources, seconds, _, _ in SLIS.values():
        for family, scale in sources:
            bound = le_regex(getattr(spec.serving, seconds), scale)
            arms.append(f"(group by ({BY}) ({family}_count) unless on ({BY}) "
                        f'group by ({BY}) ({family}_bucket{{le=~"{bound}"}}))')
    return {"alert": "GpusloServingObjectiveNotABucket",
            "expr": _on_gpus(" or ".join(arms)), "for": "15m",
            "labels": {"severity": "ticket"},
            "annotations": {
                "summary": "A serving latency objective is not a bucket bound of "
                           "{{ $labels.namespace }}/{{ $labels.pod }}'s histogram.",
                "description": "gpuslo never interpolates: set the objective to one of the "
                               "engine's le bounds (gpuslo.serving_spec)."}}


def groups(spec: SloSpec) -> list[dict]:
    """The rule groups of RULE_FILE."""
    return [{"name": "gpuslo-serving", "rules": recording_rules(spec)},
            {"name": "gpuslo-serving-alerts", "rules": alert_rules(spec)}]
