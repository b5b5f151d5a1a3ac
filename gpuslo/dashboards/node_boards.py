"""Node and GPU drill-down dashboard: the node picked in `$node` (one of gpuslo_node_info's node
names): usable or not (red on No), verdict by name, GPUs, active problems and degradations,
Xid/SXid events, network devices, check status and its checks' liveness (`node_checks`), from
the raw metrics of DESIGN.md §4. Every selector is `scope.NODE` (`instance=~"$exporter"`): the
node's own series, so a panel costs the same on any fleet size (issue 30)."""

from __future__ import annotations

from gpuslo import names
from gpuslo.dashboards import node_checks
from gpuslo.dashboards import scope as node_scope
from gpuslo.dashboards.board import dashboard
from gpuslo.dashboards.panels import (
    BOOL,
    COUNT,
    GPUS,
    Columns,
    Query,
    Spec,
    red_below,
    value_mapping,
)
from gpuslo.dashboards.scope import NODE, per_node
from gpuslo.slo_spec import SloSpec

# Node verdict as a number a stat can colour: 0 healthy, 1 validating (a cleared fault, the
# return-to-service gate not passed yet), 2 unknown, 3 unhealthy.
VERDICT_CODE = {"healthy": 0, "validating": 1, "unknown": 2, "unhealthy": 3}
VERDICT_COLOUR = {"healthy": "green", "validating": "blue", "unknown": "orange",
                  "unhealthy": "red"}
STATUS_COLOUR = {"ok": "green", "warn": "yellow", "fail": "red", "unknown": "orange"}


def _verdict_expr() -> str:
    """One series per node: VERDICT_CODE of the verdict whose stateset series is 1."""
    verdict = f"gpuslo_node_verdict{{{NODE}"
    return per_node(
        f'max by (cluster, instance) (3 * {verdict}, verdict="unhealthy"}} '
        f'or 2 * {verdict}, verdict="unknown"}} or {verdict}, verdict="validating"}})'
    )


def _node_panels(spec: SloSpec) -> list[Spec]:
    """Node usable, node verdict, identity."""
    return [
        Spec(
            "stat",
            "Node usable",
            "Yes iff every GPU is usable and node checks are healthy; No in red.",
            BOOL,
            (Query(per_node(f"gpuslo_node_usable{{{NODE}}}"), "{{node}}", instant=True),),
            6,
            5,
            steps=red_below(1),
            mappings=(value_mapping({0: ("No", "red"), 1: ("Yes", "green")}),),
        ),
        Spec(
            "stat",
            "Node verdict",
            "The node verdict by name: healthy (green), validating (blue: a GPU's fault "
            "cleared, the return-to-service gate has not passed yet), unknown (orange: a check "
            "could not tell, never counted as healthy), unhealthy (red).",
            "none",
            (Query(_verdict_expr(), "{{node}}", instant=True),),
            6,
            5,
            steps=(("green", None), ("blue", 1), ("orange", 2), ("red", 3)),
            mappings=(
                value_mapping({VERDICT_CODE[v]: (v, VERDICT_COLOUR[v]) for v in names.VERDICTS}),
            ),
        ),
        Spec(
            "stat",
            "GPUs expected and seen",
            "GPUs the node should have (node config, --expect-gpus or the learned baseline; "
            "exported even when none is readable) and GPUs it lists now; informational (the "
            "gpu_inventory check fails on fewer).",
            GPUS,
            (
                Query(
                    per_node(f"gpuslo_gpu_expected{{{NODE}}}"), "{{node}} expected", instant=True
                ),
                Query(
                    per_node(f"count by (cluster, instance) (gpuslo_gpu_info{{{NODE}}})"),
                    "{{node}} seen",
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
                Query(
                    per_node(
                        f"gpuslo_build_info{{{NODE}}} * on (cluster, instance) "
                        f"group_left (driver_version, cuda_version) gpuslo_node_info{{{NODE}}}"
                    ),
                    instant=True,
                ),
            ),
            6,
            5,
            columns=Columns(("node", "driver_version", "cuda_version", "version")),
        ),
    ] + _inventory_panels(spec)


def _inventory_panels(spec: SloSpec) -> list[Spec]:
    """GPU inventory and active problems."""
    return [
        Spec(
            "table",
            "GPUs",
            "GPUs in the inventory: index, UUID, PCI bus id, model, family.",
            "none",
            (Query(per_node(f"gpuslo_gpu_info{{{NODE}}}"), instant=True),),
            12,
            columns=Columns(("node", "gpu", "uuid", "pci_bus_id", "model", "family")),
        ),
        Spec(
            "table",
            "Active problems",
            "Fail or unknown results per GPU with reason, layer "
            "and recovery action. Empty on a healthy fleet.",
            "none",
            (Query(per_node(f"gpuslo_gpu_problem{{{NODE}}} == 1"), instant=True),),
            12,
            columns=Columns(("node", "gpu", "uuid", "check", "reason", "layer", "action")),
        ),
        Spec(
            "table",
            "Active degradations",
            "Warn-level signals that keep the node usable but slow it (SW power or thermal "
            "capping, port error rates, link flaps) on a GPU, a network device or the node: "
            "the causes of a job's crawl. Empty while none is active.",
            "none",
            (Query(per_node(f"gpuslo_node_degradation{{{NODE}}} == 1"), instant=True),),
            24,
            columns=Columns(("node", "gpu", "uuid", "device", "check", "reason")),
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
            (Query(per_node(f"gpuslo_gpu_usable{{{NODE}}}"), "{{node}} GPU {{gpu}}"),),
        ),
        Spec(
            "timeseries",
            "GPU verdicts",
            "GPUs per verdict (healthy, validating, unhealthy, unknown).",
            GPUS,
            (
                Query(
                    f"sum by (verdict) ({per_node(f'gpuslo_gpu_verdict{{{NODE}}}')})",
                    "{{verdict}}",
                ),
            ),
        ),
        Spec(
            "timeseries",
            "Return-to-service gate",
            "GPUs the return-to-service gate holds, by state: held (a fault not cleared yet), "
            "validating (cleared, validators not passed: not usable, platform time), failed "
            "(no pass within the tries: unhealthy, validation_failed); and 1 while no validator "
            "is available on the node (gate unavailable: a hold-down of clean cycles instead).",
            GPUS,
            (
                Query(
                    "sum by (state) "
                    f"({per_node(f'gpuslo_gpu_validation_state{{{NODE}}}')})",
                    "{{state}}",
                ),
                Query(
                    "max by (node) "
                    f"({per_node(f'gpuslo_gpu_validation_gate_unavailable{{{NODE}}}')})",
                    "{{node}} gate unavailable",
                ),
            ),
        ),
    ] + _gate_panels() + _event_panels(spec)


def _gate_panels() -> list[Spec]:
    """The return-to-service gate's tries, gates ended and validators, and the active probe's
    runs that did not judge speed (busy GPUs)."""
    series = lambda name: per_node(f"{name}{{{NODE}}}")  # noqa: E731
    return [
        Spec(
            "timeseries",
            "Validation tries and time in the gate",
            "Per GPU the gate holds: validation tries spent in its current gate, the clean "
            "cycles a hold-down lasts (when no validator is available), and the seconds since "
            "it entered its gate state.",
            COUNT,
            (
                Query(series("gpuslo_gpu_validation_tries"), "{{node}} GPU {{gpu}} tries"),
                Query(series("gpuslo_gpu_validation_hold_down_cycles"),
                      "{{node}} hold-down cycles"),
                Query(f"time() - {series('gpuslo_gpu_validation_since_timestamp_seconds')}",
                      "{{node}} GPU {{gpu}} seconds in state"),
            ),
        ),
        Spec(
            "timeseries",
            "Gates ended, validators, probe speed not judged",
            "Gates ended over the range by outcome (passed, held_down: no validator, failed); "
            "the node's validators by state (probe, dcgm_diag: available, unavailable, "
            "not_configured); active-probe runs that did not judge speed, by why (busy: another "
            "process on the GPU; no_context; activity_unknown).",
            COUNT,
            (
                Query(per_node("sum by (cluster, instance, outcome) (increase("
                               f"gpuslo_gpu_validation_gates_total{{{NODE}}}[$__range]))"),
                      "{{node}} gates {{outcome}}"),
                Query(f"{series('gpuslo_gpu_validation_validator')} == 1",
                      "{{node}} {{validator}} {{state}}"),
                Query(per_node("sum by (cluster, instance, why) (increase("
                               f"gpuslo_gpu_probe_speed_not_judged_total{{{NODE}}}"
                               "[$__range]))"),
                      "{{node}} probe speed not judged: {{why}}"),
            ),
        ),
    ]


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
                    per_node(
                        "sum by (cluster, instance, pci_bus_id, xid, class) (increase("
                        f"gpuslo_xid_events_total{{{NODE}}}[$__rate_interval]))"
                    ),
                    "{{node}} {{pci_bus_id}} Xid {{xid}} {{class}}",
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
                    per_node(
                        "sum by (cluster, instance, nvswitch, sxid, class) (increase("
                        f"gpuslo_sxid_events_total{{{NODE}}}[$__rate_interval]))"
                    ),
                    "{{node}} NVSwitch {{nvswitch}} SXid {{sxid}} {{class}}",
                ),
            ),
            8,
        ),
    ]


def _device_panels(spec: SloSpec) -> list[Spec]:
    """Network devices and check status."""
    return [
        Spec(
            "timeseries",
            "Network devices",
            "InfiniBand or EFA devices present against expected; fewer means collectives crawl.",
            COUNT,
            (
                Query(
                    per_node(f"gpuslo_network_devices{{{NODE}}}"), "{{node}} {{kind}} present"
                ),
                Query(
                    per_node(f"gpuslo_network_devices_expected{{{NODE}}}"),
                    "{{node}} {{kind}} expected",
                ),
            ),
            8,
        ),
        Spec(
            "table",
            "Check status",
            "Current status of each check: ok (green), warn (yellow), fail (red), unknown "
            "(orange).",
            "none",
            (Query(per_node(f"gpuslo_check_status{{{NODE}}} == 1"), instant=True),),
            24,
            columns=Columns(("node", "check", "status")),
            overrides=(_status_colours(),),
        ),
    ]


def _status_colours() -> dict:
    """Override: the status column's text in its state's colour."""
    mapping = value_mapping({status: (status, STATUS_COLOUR[status]) for status in names.STATUSES})
    return {
        "matcher": {"id": "byName", "options": "status"},
        "properties": [
            {"id": "mappings", "value": [mapping]},
            {"id": "custom.cellOptions", "value": {"type": "color-text"}},
        ],
    }


def _scheduler_panels(spec: SloSpec) -> list[Spec]:
    """What the scheduler says: the Slurm node state and reason, the jobs on each GPU."""
    return [
        Spec(
            "table",
            "Slurm node state",
            "The node's Slurm state (up, drained, down, maintenance, unknown) with the reason "
            "and its layer: gpuslo's own drains carry the check's reason; others are platform.",
            "none",
            (Query(per_node(f"gpuslo_slurm_node_state{{{NODE}}} == 1"), instant=True),),
            12,
            columns=Columns(("node", "state", "reason", "reason_layer")),
        ),
        Spec(
            "table",
            "GPU allocations",
            "Which job holds each GPU (Slurm: the HPC job-mapping directory; Kubernetes: pods).",
            "none",
            (Query(per_node(f"gpuslo_gpu_allocation{{{NODE}}} == 1"), instant=True),),
            12,
            columns=Columns(("node", "gpu", "uuid", "hpc_job", "namespace", "pod", "container")),
        ),
        Spec(
            "table",
            "Allocation sources",
            "Whether each source of the GPU allocations answered: ok, unknown with the reason "
            "(a hung or missing kubelet socket, an unreadable job-mapping directory: the "
            "allocations are then empty, never stale), or not_configured.",
            "none",
            (Query(per_node(f"gpuslo_gpu_allocation_source{{{NODE}}} == 1"), instant=True),),
            12,
            columns=Columns(("node", "source", "status", "reason")),
            overrides=(_status_colours(),),
        ),
    ]


def node_drilldown(spec: SloSpec) -> dict:
    """One node's verdict, GPUs, problems, Xid/SXid events, network devices, checks and
    scheduler."""
    specs = (_node_panels(spec) + _gpu_panels(spec) + _device_panels(spec)
             + node_checks.check_panels() + _scheduler_panels(spec))
    return dashboard(
        "gpuslo-node-drilldown",
        "gpuslo / Node and GPU drill-down",
        "One node's GPUs, problems, checks and evidence.",
        specs,
        node_scope.node_variables(),
        pick_node=True,
    )
