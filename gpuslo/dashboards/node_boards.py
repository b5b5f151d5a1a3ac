"""Node and GPU drill-down dashboard: one node's verdict, GPUs, active problems, Xid/SXid events,
network devices and check status, from the raw metrics of DESIGN.md §4; `$instance` selects
exporters. `instance_variable` is shared with the check-liveness dashboard."""

from __future__ import annotations

from gpuslo.dashboards.panels import (
    BOOL,
    COUNT,
    GPUS,
    Query,
    Spec,
    dashboard,
    query_variable,
)
from gpuslo.slo_spec import SloSpec

SEL = 'instance=~"$instance"'


def instance_variable() -> object:
    """The `$instance` variable: exporters that report gpuslo_node_info."""
    return query_variable("instance", "Node", "label_values(gpuslo_node_info, instance)")


def _node_panels(spec: SloSpec) -> list[Spec]:
    """Node usable, identity, GPU inventory, active problems."""
    return [
        Spec(
            "stat",
            "Node usable",
            "1 iff every GPU is usable and node checks are healthy.",
            BOOL,
            (Query(f"gpuslo_node_usable{{{SEL}}}", "{{instance}}", instant=True),),
            6,
            5,
        ),
        Spec(
            "stat",
            "GPUs expected and seen",
            "GPUs the node should have (node config, --expect-gpus or the learned baseline; "
            "exported even when none is readable) and GPUs it lists now.",
            GPUS,
            (
                Query(f"gpuslo_gpu_expected{{{SEL}}}", "{{instance}} expected", instant=True),
                Query(
                    f"count by (instance) (gpuslo_gpu_info{{{SEL}}})",
                    "{{instance}} seen",
                    instant=True,
                ),
            ),
            6,
            5,
        ),
        Spec(
            "table",
            "Node",
            "Node name, driver and CUDA versions, gpuslo build.",
            "none",
            (
                Query(f"gpuslo_node_info{{{SEL}}}", instant=True),
                Query(f"gpuslo_build_info{{{SEL}}}", instant=True),
            ),
            12,
            5,
        ),
        Spec(
            "table",
            "GPUs",
            "GPUs in the inventory: index, UUID, PCI bus id, model, family.",
            "none",
            (Query(f"gpuslo_gpu_info{{{SEL}}}", instant=True),),
            12,
        ),
        Spec(
            "table",
            "Active problems",
            "Fail or unknown results per GPU with reason, layer "
            "and recovery action. Empty on a healthy fleet.",
            "none",
            (Query(f"gpuslo_gpu_problem{{{SEL}}} == 1", instant=True),),
            12,
        ),
    ]


def _gpu_panels(spec: SloSpec) -> list[Spec]:
    """GPU usable and GPUs per verdict."""
    return [
        Spec(
            "timeseries",
            "GPU usable",
            "1 while the GPU verdict is healthy (the SLI).",
            BOOL,
            (Query(f"gpuslo_gpu_usable{{{SEL}}}", "{{instance}} GPU {{gpu}}"),),
        ),
        Spec(
            "timeseries",
            "GPU verdicts",
            "GPUs per verdict (healthy, unhealthy, unknown).",
            GPUS,
            (Query(f"sum by (verdict) (gpuslo_gpu_verdict{{{SEL}}})", "{{verdict}}"),),
        ),
    ] + _event_panels(spec)


def _event_panels(spec: SloSpec) -> list[Spec]:
    """Xid and SXid events per GPU and NVSwitch."""
    return [
        Spec(
            "timeseries",
            "Xid events",
            "Kernel-log Xid events per GPU and code.",
            COUNT,
            (
                Query(
                    f"sum by (instance, pci_bus_id, xid, class) (increase(gpuslo_xid_events_total"
                    f"{{{SEL}}}[$__rate_interval]))",
                    "{{pci_bus_id}} Xid {{xid}} {{class}}",
                ),
            ),
            8,
        ),
        Spec(
            "timeseries",
            "SXid events",
            "NVSwitch SXid events per switch and code.",
            COUNT,
            (
                Query(
                    f"sum by (instance, nvswitch, sxid, class) (increase(gpuslo_sxid_events_total"
                    f"{{{SEL}}}[$__rate_interval]))",
                    "{{nvswitch}} SXid {{sxid}} {{class}}",
                ),
            ),
            8,
        ),
    ]


def _device_panels(spec: SloSpec) -> list[Spec]:
    """Network devices, check status, node verdict."""
    return [
        Spec(
            "timeseries",
            "Network devices",
            "InfiniBand or EFA devices present against expected; fewer means collectives crawl.",
            COUNT,
            (
                Query(f"gpuslo_network_devices{{{SEL}}}", "{{instance}} {{kind}} present"),
                Query(
                    f"gpuslo_network_devices_expected{{{SEL}}}", "{{instance}} {{kind}} expected"
                ),
            ),
            8,
        ),
        Spec(
            "table",
            "Check status",
            "Current status of each check (ok, warn, fail, unknown).",
            "none",
            (Query(f"gpuslo_check_status{{{SEL}}} == 1", instant=True),),
            12,
        ),
        Spec(
            "stat",
            "Node verdict",
            "The node verdict stateset (the state that is 1).",
            "none",
            (Query(f"gpuslo_node_verdict{{{SEL}}} == 1", "{{verdict}}", instant=True),),
            12,
        ),
    ]


def _scheduler_panels(spec: SloSpec) -> list[Spec]:
    """What the scheduler says: the Slurm node state and reason, the jobs on each GPU."""
    return [
        Spec(
            "table",
            "Slurm node state",
            "The node's Slurm state (up, drained, down, maintenance, unknown) with the reason "
            "and its layer: gpuslo's own drains carry the check's reason; others are platform.",
            "none",
            (Query(f"gpuslo_slurm_node_state{{{SEL}}} == 1", instant=True),),
            12,
        ),
        Spec(
            "table",
            "GPU allocations",
            "Which job holds each GPU (Slurm: the HPC job-mapping directory; Kubernetes: pods).",
            "none",
            (Query(f"gpuslo_gpu_allocation{{{SEL}}} == 1", instant=True),),
            12,
        ),
        Spec(
            "table",
            "Allocation sources",
            "Whether each source of the GPU allocations answered: ok, unknown with the reason "
            "(a hung or missing kubelet socket, an unreadable job-mapping directory: the "
            "allocations are then empty, never stale), or not_configured.",
            "none",
            (Query(f"gpuslo_gpu_allocation_source{{{SEL}}} == 1", instant=True),),
            12,
        ),
    ]


def node_drilldown(spec: SloSpec) -> dict:
    """One node's verdict, GPUs, problems, Xid/SXid events, network devices and scheduler."""
    specs = (_node_panels(spec) + _gpu_panels(spec) + _device_panels(spec)
             + _scheduler_panels(spec))  # fmt: skip
    return dashboard(
        "gpuslo-node-drilldown",
        "gpuslo / Node and GPU drill-down",
        "One node's GPUs, problems and evidence.",
        specs,
        [instance_variable()],
    )
