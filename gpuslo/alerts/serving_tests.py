"""promtool unit tests for the serving rules (`gpuslo.alerts.serving`), on the engines' real
metric names and label shapes (vLLM `model_name`, Triton `model`/`version`; tests/data/serving)."""

from __future__ import annotations

from gpuslo.alerts import serving
from gpuslo.alerts.tests_gen import expect, series
from gpuslo.slo_spec import SloSpec

POD = {"namespace": "serve", "pod": "vllm-0"}
ALLOC = {"namespace": "serve", "pod": "vllm-0", "gpu": "0", "uuid": "GPU-0", "container": "vllm",
         "hpc_job": "", "instance": "n1:9400", "job": "gpuslo"}
VLLM = {**POD, "model_name": "meta-llama/Llama-3.1-8B-Instruct"}


def _le(seconds: float) -> str:
    return repr(float(seconds))  # vLLM's spelling: 0.5, 1.0


def _vllm_ttft(spec: SloSpec, good: int, total: int, labels=VLLM) -> list[dict]:
    family = "vllm:time_to_first_token_seconds"
    return [series(f"{family}_bucket", {**labels, "le": _le(spec.serving.ttft_seconds)},
                   f"0+{good}x90"),
            series(f"{family}_bucket", {**labels, "le": "+Inf"}, f"0+{total}x90"),
            series(f"{family}_count", labels, f"0+{total}x90")]


def _rule(spec: SloSpec, name: str, severity: str | None = None) -> dict:
    return next(r for r in serving.alert_rules(spec) if r["alert"] == name
                and (severity is None or r["labels"]["severity"] == severity))


def _case(inputs, alert, at, expected, **extra) -> dict:
    test = {"interval": "1m", "input_series": inputs,
            "alert_rule_test": [{"eval_time": at, "alertname": alert, "exp_alerts": expected}]}
    test.update(extra)
    return test


def tests(spec: SloSpec) -> list[dict]:
    """Burn page firing and silent, a pod without GPUs ignored, Triton's millisecond histogram
    and vLLM V0's inter-token name recorded, the bucket check firing."""
    alloc = [series(serving.ALLOCATED, ALLOC, "1x90")]
    page = _rule(spec, serving.ALERT["serving_ttft"], "page")
    ticket = _rule(spec, serving.ALERT["serving_ttft"], "ticket")
    bad = _vllm_ttft(spec, 10, 100)
    triton = {"namespace": "serve", "pod": "triton-0", "model": "llama", "version": "1"}
    triton_alloc = {**ALLOC, "pod": "triton-0", "container": "triton"}
    ms = "nv_inference_first_response_histogram_ms"
    objective_ms = f"{int(spec.serving.ttft_seconds * 1000)}"
    tpot = "vllm:time_per_output_token_seconds"
    itl_le = _le(spec.serving.itl_seconds)
    no_bucket = _rule(spec, "GpusloServingObjectiveNotABucket")
    return [
        _case(alloc + bad, page["alert"], "70m", [expect(page, {}), expect(ticket, {})]),
        _case(bad, page["alert"], "70m", []),  # no gpuslo_gpu_allocation: not a GPU replica
        _case(alloc + _vllm_ttft(spec, 100, 100), page["alert"], "70m", []),
        _case([series(serving.ALLOCATED, triton_alloc, "1x30"),
               series(f"{ms}_bucket", {**triton, "le": objective_ms}, "0+3x30"),
               series(f"{ms}_bucket", {**triton, "le": "+Inf"}, "0+4x30"),
               series(f"{ms}_count", triton, "0+4x30"),
               series(serving.ALLOCATED, ALLOC, "1x30"),
               series(f"{tpot}_bucket", {**VLLM, "le": itl_le}, "0+9x30"),
               series(f"{tpot}_count", VLLM, "0+10x30")],
              no_bucket["alert"], "20m", [],  # both objectives are bucket bounds here
              promql_expr_test=[
                  {"expr": "gpuslo:serving_ttft_pod:ratio_rate5m", "eval_time": "20m",
                   "exp_samples": [{"labels": 'gpuslo:serving_ttft_pod:ratio_rate5m'
                                              '{namespace="serve",pod="triton-0"}',
                                    "value": 0.75}]},
                  {"expr": "gpuslo:serving_itl:ratio_rate5m", "eval_time": "20m",
                   "exp_samples": [{"labels": "gpuslo:serving_itl:ratio_rate5m",
                                    "value": 0.9}]}]),
        _case(alloc + [series("vllm:time_to_first_token_seconds_bucket",
                              {**VLLM, "le": "0.25"}, "0+1x30"),
                       series("vllm:time_to_first_token_seconds_bucket",
                              {**VLLM, "le": "100.0"}, "0+2x30"),
                       series("vllm:time_to_first_token_seconds_count", VLLM, "0+2x30")],
              no_bucket["alert"], "20m", [expect(no_bucket, POD)]),
    ]


def test_file(spec: SloSpec) -> dict:
    """The promtool test file for RULE_FILE."""
    return {"rule_files": [serving.RULE_FILE], "evaluation_interval": "1m",
            "tests": tests(spec)}
