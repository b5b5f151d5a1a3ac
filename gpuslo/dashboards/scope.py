"""What a dashboard looks at: the `cluster`, `node` and `job` variables, the label selectors
that read them, the join that names a node on every series, and the annotations (gpuslo alerts
firing, node verdict changes).

`node` comes from `gpuslo_node_info` (the exporter's own node name), not from Prometheus's
`instance` (a pod IP in Kubernetes): series are selected by cluster and joined to
`gpuslo_node_info` on (cluster, instance), which keeps the nodes picked in `$node` and adds their
`node` label for legends and table columns. `cluster` is the label a multi-cluster setup adds
(an external label in Thanos or Mimir, a target label otherwise); its All value `.*` also matches
series without it, so the dashboards work unchanged on a single Prometheus.

A drill-down looks at one node: `$node` is single-select, and the hidden `$exporter` holds the
`instance` values gpuslo_node_info gives that node (usually one; all of them, as a regex
alternation Grafana escapes, when its exporter moved). Raw series are selected with `NODE`
(`instance=~"$exporter"`), so a panel reads one node's series from the index, whatever the fleet's
size (issue 30: every panel < 1 s p95 at 10,000 GPUs), instead of every node's joined and dropped.
"""

from __future__ import annotations

from gpuslo.dashboards.panels import DATASOURCE, query_variable

CLUSTER = 'cluster=~"$cluster"'
NODE = 'cluster=~"$cluster", instance=~"$exporter"'  # the picked node's own series
ALERTS = 'ALERTS{alertstate="firing", alertname=~"Gpuslo.+", cluster=~"$cluster"}'


def node_info(pick_node: bool) -> str:
    """One series per (cluster, instance, node) of the nodes in scope (value 1)."""
    node = ', node=~"$node"' if pick_node else ""
    return f"max by (cluster, instance, node) (gpuslo_node_info{{{CLUSTER}{node}}})"


def per_node(expr: str, pick_node: bool = True) -> str:
    """`expr` (series with cluster and instance labels) kept for the nodes in scope and given
    their `node` label; values unchanged (the node-info side is 1)."""
    return f"({expr}) * on (cluster, instance) group_left (node) {node_info(pick_node)}"


def cluster_variable() -> object:
    """The `$cluster` variable: clusters that report gpuslo_node_info."""
    return query_variable("cluster", "Cluster", "label_values(gpuslo_node_info, cluster)")


def node_variables() -> list[object]:
    """`$node`, one of gpuslo_node_info's node names in the chosen clusters (single-select, no
    All: a drill-down is one node), and the hidden `$exporter`: that node's `instance` values."""
    return [
        query_variable("node", "Node", f"label_values(gpuslo_node_info{{{CLUSTER}}}, node)",
                       pick_one=True),
        query_variable(
            "exporter",
            "Exporter",
            f'label_values(gpuslo_node_info{{{CLUSTER}, node=~"$node"}}, instance)',
            hidden=True,
        ),
    ]


def _prometheus_annotation(name: str, colour: str, expr: str, **formats: object) -> dict:
    """A Prometheus annotation: an event or region where `expr` has a series."""
    query = {
        "datasource": DATASOURCE,
        "editorMode": "code",
        "expr": expr,
        "instant": False,
        "interval": "1m",
        "range": True,
        "refId": "Anno",
    }
    return {
        "datasource": DATASOURCE,
        "enable": formats.pop("enable", True),
        "hide": False,
        "iconColor": colour,
        "name": name,
        "target": query,
        "useValueForTime": False,
        **formats,
    }


def annotations(pick_node: bool) -> list[dict]:
    """Grafana's built-in annotations, gpuslo alerts firing, and node verdict changes: a region
    from a node's change to unhealthy or unknown until it is healthy again (on by default where
    a node is picked, a toggle on the fleet dashboards)."""
    scope = NODE if pick_node else CLUSTER
    verdict = per_node(f'gpuslo_node_verdict{{verdict!="healthy", {scope}}} == 1', pick_node)
    return [
        {
            "builtIn": 1,
            "datasource": {"type": "grafana", "uid": "-- Grafana --"},
            "enable": True,
            "hide": True,
            "iconColor": "rgba(0, 211, 255, 1)",
            "name": "Annotations & Alerts",
            "type": "dashboard",
        },
        _prometheus_annotation(
            "gpuslo alerts firing",
            "red",
            ALERTS,
            titleFormat="{{alertname}}",
            textFormat="{{severity}} {{node}} {{instance}} {{check}} {{reason}}",
            tagKeys="severity",
        ),
        _prometheus_annotation(
            "Node verdict changes",
            "orange",
            verdict,
            titleFormat="{{node}}: {{verdict}}",
            textFormat="node verdict {{verdict}} (instance {{instance}})",
            tagKeys="verdict",
            enable=pick_node,
        ),
    ]
