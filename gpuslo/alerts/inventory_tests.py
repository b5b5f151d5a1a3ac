"""promtool tests for the provisioned inventory (`gpuslo.alerts.inventory`): blindness never
shrinks the usable-GPU denominator; only an explicit retirement does.

Timelines, each hand-computable (2 GPUs per node unless said, inputs and evaluations every 30 min):

- a node's exporter dies (stale at 30 min) and stays dead for the whole SLO period: at period +
  1 h its 2 GPUs are still provisioned, the 28-day usable ratio is 2 usable of 4 = 0.5 (the old
  rule, `last_over_time(gpuslo_gpu_info[1h])`, read 1.0), and the blind share is 0.5;
- a node with `--expect-gpus 8` whose GPUs vanish (driver gone: gpu_inventory `unknown`), and
  one whose inventory check fails (GPUs missing): 8 provisioned each, 0 usable, lost to
  `observability`/`no_data` and `node`/`gpu_missing` respectively;
- a node kube-state-metrics lists with 8 GPUs and no exporter at all: 8 provisioned, all blind;
- a node that leaves kube-state-metrics (deleted) after its exporter died: retired, its GPUs
  leave the denominator; one whose exporter dies while it stays in Kubernetes: kept;
- with `retired_nodes` in the spec, a retired node's held GPUs leave the denominator.
"""

from __future__ import annotations

from gpuslo.alerts.inventory import (
    GPU_BLIND_COUNT,
    GPU_BLIND_RATIO,
    GPU_PROVISIONED_COUNT,
    NODE_PROVISIONED,
)
from gpuslo.alerts.sli import GPU_LOST_COUNT, GPU_USABLE_COUNT
from gpuslo.alerts.tests_gen import INFO, RULE_FILES, series
from gpuslo.slo_spec import SloSpec, duration_seconds, sli_record

STEP_S = 1800
DRIVER = {"driver_version": "570.124.06", "cuda_version": "12.8"}


def _steps(duration: str) -> int:
    return duration_seconds(duration) // STEP_S


def until(duration: str, value: int = 1, then: str = "stale") -> str:
    """promtool values: `value` from 0 to `duration`, then `then` (`stale`: the series is gone;
    "" for nothing more)."""
    return f"{value}x{_steps(duration)} {then}".strip()


def node_series(
    node: str,
    gpus: int,
    alive: str,
    gpus_alive: str = "",
    expected: int | None = None,
    inventory: str = "",
    up: str = "",
) -> list[dict]:
    """One exporter's series: `up` (default `alive`), node info, the expected count and the
    gpu_inventory status when given, and `gpus` healthy GPUs. `alive` is the promtool notation
    of the samples while the exporter answers (`until("30m")`: 0–30 min, then gone); `gpus_alive`
    (default `alive`) the same for its GPU series."""
    target = {"instance": f"{node}:9835", "job": "gpuslo"}
    out = [
        series("up", target, up or alive),
        series("gpuslo_node_info", {**target, "node": node, **DRIVER}, alive),
    ]
    if expected is not None:
        out.append(series("gpuslo_gpu_expected", target, alive.replace("1x", f"{expected}x", 1)))
    if inventory:
        status = {**target, "check": "gpu_inventory", "status": inventory}
        out.append(series("gpuslo_check_status", status, alive))
    for index in range(gpus):
        gpu = {**target, "gpu": str(index), "uuid": f"GPU-{node}-{index}"}
        values = gpus_alive or alive
        out.append(series("gpuslo_gpu_info", {**gpu, **INFO}, values))
        out.append(series("gpuslo_gpu_usable", gpu, values))
        out.append(series("gpuslo_gpu_verdict", {**gpu, "verdict": "healthy"}, values))
    return out


def _sample(expr: str, value: float, **labels: str) -> dict:
    inner = ",".join(f'{key}="{labels[key]}"' for key in sorted(labels))
    return {"labels": f"{expr}{{{inner}}}" if inner else expr, "value": value}


def _checks(at: str, *expected: tuple[str, list[dict]]) -> list[dict]:
    return [{"expr": expr, "eval_time": at, "exp_samples": samples} for expr, samples in expected]


def dead_exporter_case(spec: SloSpec) -> dict:
    """n1 answers for the whole period + 1 h; n2's exporter dies at 30 min and never returns."""
    at = f"{duration_seconds(spec.period) // 3600 + 1}h"
    dead = until("30m", then=f"0x{_steps(at) - _steps('30m') - 1}")
    inputs = node_series("n1", 2, until(at, then="")) + node_series("n2", 2, until("30m"), up=dead)
    ratio = sli_record("usable_gpu", spec.period)
    return {
        "interval": f"{STEP_S}s",
        "input_series": inputs,
        "promql_expr_test": _checks(
            at,
            (GPU_PROVISIONED_COUNT, [_sample(GPU_PROVISIONED_COUNT, 4)]),
            (NODE_PROVISIONED, [_sample(NODE_PROVISIONED, 2, node=n) for n in ("n1", "n2")]),
            (ratio, [_sample(ratio, 0.5)]),
            (sli_record("usable_gpu", "1h"), [_sample(sli_record("usable_gpu", "1h"), 0.5)]),
            (GPU_BLIND_RATIO, [_sample(GPU_BLIND_RATIO, 0.5)]),
            (GPU_LOST_COUNT, [_sample(GPU_LOST_COUNT, 2, layer="observability", reason="no_data")]),
        ),
    }


def expected_gpus_case() -> dict:
    """n3 and n4 configured with 8 GPUs; their GPU series stop at 30 min (n3's gpu_inventory
    then reads `unknown`, n4's `fail`); both exporters keep answering."""
    alive, gone = until("2h", then=""), until("30m")
    inputs = node_series("n3", 8, alive, gone, expected=8, inventory="unknown")
    inputs += node_series("n4", 8, alive, gone, expected=8, inventory="fail")
    lost = [
        _sample(GPU_LOST_COUNT, 8, layer="node", reason="gpu_missing"),
        _sample(GPU_LOST_COUNT, 8, layer="observability", reason="no_data"),
    ]
    return {
        "interval": f"{STEP_S}s",
        "input_series": inputs,
        "promql_expr_test": _checks(
            "2h",
            (NODE_PROVISIONED, [_sample(NODE_PROVISIONED, 8, node=n) for n in ("n3", "n4")]),
            (GPU_USABLE_COUNT, [_sample(GPU_USABLE_COUNT, 0)]),
            (GPU_BLIND_COUNT, [_sample(GPU_BLIND_COUNT, 16)]),
            (GPU_LOST_COUNT, lost),
        ),
    }


def kubernetes_case() -> dict:
    """kube-state-metrics lists n5 (8 GPUs, never an exporter), n6 (stays; exporter dies at
    30 min) and n7 (exporter dies at 30 min, node deleted from Kubernetes at 1 h). At 2 h: n5's
    8 and n6's 2 are provisioned and blind; n7 is retired."""
    ksm = {"instance": "ksm:8080", "job": "kube-state-metrics"}
    capacity = {**ksm, "resource": "nvidia_com_gpu", "unit": "integer"}
    inputs = [
        series("kube_node_status_capacity", {**capacity, "node": "n5"}, until("2h", 8, "")),
        series("kube_node_info", {**ksm, "node": "n5"}, until("2h", then="")),
        series("kube_node_info", {**ksm, "node": "n6"}, until("2h", then="")),
        series("kube_node_info", {**ksm, "node": "n7"}, until("1h")),
    ]
    inputs += node_series("n6", 2, until("30m")) + node_series("n7", 2, until("30m"))
    kept = [_sample(NODE_PROVISIONED, 8, node="n5"), _sample(NODE_PROVISIONED, 2, node="n6")]
    return {
        "interval": f"{STEP_S}s",
        "input_series": inputs,
        "promql_expr_test": _checks(
            "2h",
            (NODE_PROVISIONED, kept),
            (GPU_BLIND_COUNT, [_sample(GPU_BLIND_COUNT, 10)]),
        )
        + _checks("1h", (GPU_PROVISIONED_COUNT, [_sample(GPU_PROVISIONED_COUNT, 12)])),
    }


def retired_case(spec: SloSpec) -> list[dict]:
    """With `retired_nodes` in the spec: the first retired node's exporter dies at 30 min; at
    1 h only the other node's 2 GPUs are provisioned. None without retired nodes."""
    if not spec.retired_nodes:
        return []
    retired = node_series(spec.retired_nodes[0], 2, until("30m"))
    inputs = node_series("n1", 2, until("2h", then="")) + retired
    checks = _checks("1h", (GPU_PROVISIONED_COUNT, [_sample(GPU_PROVISIONED_COUNT, 2)]))
    return [{"interval": f"{STEP_S}s", "input_series": inputs, "promql_expr_test": checks}]


def fleet_test_file(spec: SloSpec) -> dict:
    """The provisioned-inventory test document (30-minute evaluations: the dead-exporter case
    spans the whole SLO period)."""
    tests = [dead_exporter_case(spec), expected_gpus_case(), kubernetes_case()]
    tests += retired_case(spec)
    return {"rule_files": list(RULE_FILES), "evaluation_interval": f"{STEP_S}s", "tests": tests}
