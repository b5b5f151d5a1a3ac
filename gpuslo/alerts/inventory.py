"""Recording rules for the provisioned GPU inventory: the usable-GPU denominator that blindness
cannot shrink (DESIGN.md §6: "the inventory is what the fleet should have, never only what
answered").

Per node (label `node`, the Kubernetes node name the exporter reports in gpuslo_node_info):

- `gpuslo:node_gpus_seen:count` — GPUs the node's exporter lists now (gpuslo_gpu_info), once per
  (instance, uuid).
- `gpuslo:node_gpus_provisioned:max` — the GPUs the node should have: the largest of
  its exporter's `gpuslo_gpu_expected` (node config, --expect-gpus or the learned baseline, also
  exported when no GPU is readable), the GPUs seen, kube-state-metrics'
  `kube_node_status_capacity{resource="nvidia_com_gpu"}`, and its own previous value. The
  previous value is what keeps a dead node in: the rule carries itself forward
  (`last_over_time` of its own series over `PROVISIONED_HOLD`, which only has to bridge a
  Prometheus restart: each evaluation reads one recorded sample per node, never the raw data of
  the SLO period). It stops carrying a node when the node is retired explicitly:
  * listed in the SLO spec's `retired_nodes`, or
  * it left kube-state-metrics: it was in `kube_node_info` and is not any more while
    kube-state-metrics still answers (`gpuslo:node_kubernetes:info` remembers who was there);
  and while the node's exporter reports `gpuslo_gpu_expected`, that count (with the GPUs seen
  and Kubernetes' capacity) replaces the held one, so an operator who configures fewer GPUs
  shrinks the denominator; silence never does.
- `gpuslo:node_gpus_unseen:count` — provisioned GPUs the exporter does not list now (all of them
  when the exporter is down or gone).
- `gpuslo:node_gpus_blind:count` — provisioned GPUs without a healthy, unhealthy or validating
  verdict now: unseen, or `unknown` (observability loss; a validating GPU is seen, its time the
  platform's). `GpusloFleetBlind` pages on the fleet's share.

Hook for Slurm: a per-node GRES GPU count (`sinfo -N -O NodeList,Gres` as a metric, issue 16)
joins `PROVISIONED_SOURCES` as one more `max by (node) (...)` entry; nothing else changes.
"""

from __future__ import annotations

from gpuslo import names
from gpuslo.slo_spec import SloSpec

PROVISIONED_HOLD = "1h"  # how long a Prometheus outage the held inventory survives

NODE_SEEN = "gpuslo:node_gpus_seen:count"
NODE_PROVISIONED = "gpuslo:node_gpus_provisioned:max"
NODE_KUBERNETES = "gpuslo:node_kubernetes:info"
NODE_UNSEEN = "gpuslo:node_gpus_unseen:count"
NODE_BLIND = "gpuslo:node_gpus_blind:count"
GPU_PROVISIONED_COUNT = "gpuslo:gpu_provisioned:count"
GPU_BLIND_COUNT = "gpuslo:gpu_blind:count"
GPU_BLIND_RATIO = "gpuslo:gpu_blind:ratio"

# instance -> node, one series per exporter (max: a driver upgrade that changes the labels of
# gpuslo_node_info cannot give an instance two series).
NODE_OF = "max by (instance, node) (gpuslo_node_info)"
EXPECTED = f"max by (node) (gpuslo_gpu_expected * on (instance) group_left (node) {NODE_OF})"
KUBERNETES_CAPACITY = 'max by (node) (kube_node_status_capacity{resource="nvidia_com_gpu"})'
# source name -> GPUs per node now (label `node` only). Slurm's GRES count goes here (see above).
PROVISIONED_SOURCES = {
    "expected": EXPECTED,
    "seen": NODE_SEEN,
    "kubernetes": KUBERNETES_CAPACITY,
}
# gpu_inventory says `fail` (fewer GPUs than expected): the unseen GPUs are missing (node layer),
# not merely unobserved.
INVENTORY_FAILS = (
    'max by (node) ((gpuslo_check_status{check="gpu_inventory",status="fail"} == 1)'
    f" * on (instance) group_left (node) {NODE_OF})"
)


def retired_selector(spec: SloSpec) -> str:
    """The label matcher that drops the spec's retired nodes (`{node!~"a|b\\\\.c"}`), or ""."""
    if not spec.retired_nodes:
        return ""
    # Node names are validated ([A-Za-z0-9._-]); only the dot needs escaping in the regex, and
    # its backslash once more inside the PromQL string.
    pattern = "|".join(node.replace(".", "\\\\.") for node in spec.retired_nodes)
    return f'{{node!~"{pattern}"}}'


def left_kubernetes() -> str:
    """Nodes kube-state-metrics listed before and does not list now, while it still answers."""
    return (
        f"(last_over_time({NODE_KUBERNETES}[{PROVISIONED_HOLD}]) unless on (node) kube_node_info)"
        " and on () (count(kube_node_info) > 0)"
    )


def held_expr(spec: SloSpec) -> str:
    """Each node's previous provisioned count, unless retired or re-stated by its exporter."""
    held = f"last_over_time({NODE_PROVISIONED}{retired_selector(spec)}[{PROVISIONED_HOLD}])"
    return f"{held}\nunless on (node) {EXPECTED}\nunless on (node) ({left_kubernetes()})"


def union(aggregation: str, arms: list[tuple[str, str]]) -> str:
    """`aggregation` (e.g. `max by (node)`) over the `or` of named arms. Each arm gets its own
    `part` label first, so `or` keeps every arm's samples (it would drop a sample whose labels
    match one already taken) until the aggregation folds them."""
    body = "\nor ".join(f'label_replace({expr}, "part", "{name}", "", "")' for name, expr in arms)
    return f"{aggregation} (\n{body}\n)"


def provisioned_expr(spec: SloSpec) -> str:
    """The largest of every source and the held value, per node."""
    return union("max by (node)", [*PROVISIONED_SOURCES.items(), ("held", held_expr(spec))])


def per_node_rules(spec: SloSpec) -> list[dict]:
    """Seen, provisioned (self-carried), the Kubernetes membership it retires by, unseen, blind.
    Order matters: a rule reads the rules above it from this evaluation and its own (and the
    rules below it) from the previous one."""
    answered = (
        'count by (instance, uuid) '
        '(gpuslo_gpu_verdict{verdict=~"healthy|unhealthy|validating"} == 1)'
    )
    return [
        {
            "record": NODE_SEEN,
            "expr": "count by (node) (count by (instance, uuid) (gpuslo_gpu_info)"
            f" * on (instance) group_left (node) {NODE_OF})",
        },
        {"record": NODE_PROVISIONED, "expr": provisioned_expr(spec)},
        {
            "record": NODE_KUBERNETES,
            "expr": "group by (node) (kube_node_info)\nor "
            f"(last_over_time({NODE_KUBERNETES}[{PROVISIONED_HOLD}]) unless on () kube_node_info)",
        },
        {
            "record": NODE_UNSEEN,
            "expr": f"clamp_min({NODE_PROVISIONED} - on (node) {NODE_SEEN}, 0)"
            f" or {NODE_PROVISIONED}",
        },
        {
            "record": NODE_BLIND,
            "expr": f"clamp_min({NODE_PROVISIONED} - on (node) count by (node) ({answered}"
            f" * on (instance) group_left (node) {NODE_OF}), 0)\nor {NODE_PROVISIONED}",
        },
    ]


def fleet_rules() -> list[dict]:
    """Fleet totals: provisioned GPUs (the usable-GPU denominator), blind GPUs and their share."""
    return [
        {"record": GPU_PROVISIONED_COUNT, "expr": f"sum({NODE_PROVISIONED})"},
        {"record": GPU_BLIND_COUNT, "expr": f"sum({NODE_BLIND}) or vector(0)"},
        {
            "record": GPU_BLIND_RATIO,
            "expr": f"clamp_max({GPU_BLIND_COUNT} / ({GPU_PROVISIONED_COUNT} > 0), 1)",
        },
    ]


def unseen_lost_arms() -> list[tuple[str, str]]:
    """Unseen provisioned GPUs as `union` arms labelled (layer, reason): missing
    (`node`/`gpu_missing`) where the node's gpu_inventory check fails, otherwise blind
    (`observability`/`no_data`). An arm with no GPU gives no sample."""
    missing = f"sum({NODE_UNSEEN} and on (node) {INVENTORY_FAILS}) > 0"
    blind = f"sum({NODE_UNSEEN} unless on (node) {INVENTORY_FAILS}) > 0"
    return [
        ("missing", with_labels(missing, names.LAYER_NODE, "gpu_missing")),
        ("unseen", with_labels(blind, names.LAYER_OBSERVABILITY, "no_data")),
    ]


def with_labels(expr: str, layer: str, reason: str) -> str:
    """`expr` with its `layer` and `reason` labels set."""
    return (
        f'label_replace(label_replace({expr}, "layer", "{layer}", "", ""),'
        f' "reason", "{reason}", "", "")'
    )
