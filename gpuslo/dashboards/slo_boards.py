"""Fleet dashboards driven by the SLO spec: SLOs and error budget, lost GPU-hours by layer and
reason (job goodput lives in job_board.py).

They read the recording rules of gpuslo/alerts (names from `slo_spec.sli_record` and the
`gpuslo:*:count` series) and the raw metrics of DESIGN.md §4. Every fleet figure is one series
for the clusters picked in `$cluster`, however many (`gpuslo.dashboards.fleet`): counts add up,
ratios are GPU-time weighted across clusters, GPU-hours over the range are each cluster's share
of its rule evaluations times the range, so the figure does not depend on the evaluation
interval; a GPU lost for two reasons counts under each (the report's accounting gives one).
"""

from __future__ import annotations

from gpuslo import names
from gpuslo.dashboards import clusters, fleet
from gpuslo.dashboards.board import dashboard
from gpuslo.dashboards.panels import BURN, GPU_HOURS, GPUS, RATIO, Columns, Query, Spec, red_below
from gpuslo.dashboards.scope import CLUSTER
from gpuslo.slo_spec import SloSpec, format_number

TITLES = {
    names.SLO_USABLE_GPU: "Usable GPU ratio",
    names.SLO_CHECK_LIVENESS: "Check liveness",
    names.SLO_JOB_GOODPUT: "Job goodput",
}
LOST = f"gpuslo:gpu_lost:count{{{CLUSTER}}}"
# The usable-GPU denominator: what the fleet should have, which blindness cannot shrink (a dead
# exporter's GPUs stay in it as blind time until the node is retired).
PROVISIONED = fleet.PROVISIONED
USABLE = fleet.USABLE
UNUSABLE = f"gpuslo:gpu_unusable:count{{{CLUSTER}}}"
BLIND = f"gpuslo:gpu_blind:count{{{CLUSTER}}}"
NODE_BLIND = f"gpuslo:node_gpus_blind:count{{{CLUSTER}}}"


def budget_remaining(spec: SloSpec, slo: str) -> str:
    """Share of the period's error budget not yet spent by the chosen clusters together."""
    budget = format_number(spec.error_budget(slo))
    return f"1 - (1 - {fleet.sli(slo, spec.period)}) / {budget}"


def _slo_specs(spec: SloSpec, slo: str) -> list[Spec]:
    """One SLO's SLI over the period against its objective (red below it)."""
    title, period = TITLES[slo], spec.period
    objective = spec.objectives[slo]
    return [
        Spec(
            "stat",
            f"{title} over {period} (objective {format_number(objective * 100)} %)",
            f"Good ratio over the SLO period ({period}); red below the objective "
            f"{format_number(objective)}.",
            RATIO,
            (Query(fleet.sli(slo, period), instant=True),),
            6,
            5,
            steps=red_below(objective),
        ),
    ] + _slo_specs_more(spec, slo)


def _slo_specs_more(spec: SloSpec, slo: str) -> list[Spec]:
    """Error budget remaining and burn rate per alert window of one SLO."""
    title, period = TITLES[slo], spec.period
    budget = format_number(spec.error_budget(slo))
    burn = [
        Query(f"(1 - {fleet.sli(slo, pair.long_window)}) / {budget}", pair.long_window)
        for pair in spec.burn_rate_alerts()
    ]
    return [
        Spec(
            "stat",
            f"{title}: error budget remaining",
            f"Share of the {period} error budget ({budget}) not yet spent; red below 0 "
            "(overspent).",
            RATIO,
            (Query(budget_remaining(spec, slo), instant=True),),
            6,
            5,
            steps=red_below(0),
        ),
        Spec(
            "timeseries",
            f"{title}: burn rate",
            "Bad ratio over each alert window divided by the error budget; 1 spends the budget "
            "exactly over the period. Page and ticket factors: "
            + ", ".join(
                f"{p.long_window} {format_number(p.factor)}" for p in spec.burn_rate_alerts()
            ),
            BURN,
            tuple(burn),
            12,
            5,
        ),
    ]


def fleet_slo(spec: SloSpec) -> dict:
    """Fleet SLOs and error budget: one row per SLO, then the SLIs against their objectives,
    then the clusters side by side (`gpuslo.dashboards.clusters`)."""
    specs = [s for slo in names.SLOS for s in _slo_specs(spec, slo)]
    for slo in names.SLOS:
        specs.append(
            Spec(
                "timeseries",
                f"{TITLES[slo]}: SLI and objective",
                "The SLI over 1 h and 1 d against the objective (ratio 0–1); a gap is missing "
                "data, which the SLI never counts as good.",
                RATIO,
                (
                    Query(fleet.sli(slo, "1h"), "1h"),
                    Query(fleet.sli(slo, "1d"), "1d"),
                    Query(fleet.objective(slo), "objective"),
                ),
                8,
                8,
            )
        )
    specs.append(_blind_share(spec))
    specs += clusters.cluster_specs(spec)  # one bar or line per cluster
    return dashboard(
        "gpuslo-fleet-slo",
        "gpuslo / Fleet SLOs and error budget",
        f"SLOs over {spec.period} from the gpuslo SLO spec.",
        specs,
    )


def _blind_share(spec: SloSpec) -> Spec:
    """The share of provisioned GPUs with no verdict, against GpusloFleetBlind's threshold."""
    threshold = format_number(spec.fleet_blind_threshold)
    return Spec(
        "timeseries",
        "Blind share of provisioned GPUs",
        "Provisioned GPUs with no healthy, unhealthy or validating verdict over all provisioned "
        "GPUs (ratio "
        f"0–1); GpusloFleetBlind pages above {threshold}. Blind time counts against the usable "
        "GPU SLI as observability loss.",
        RATIO,
        (
            Query(fleet.ratio(BLIND, PROVISIONED), "blind"),
            Query(f"vector({threshold})", "page threshold"),
        ),
        8,
        8,
    )


def _lost_total_panels(spec: SloSpec) -> list[Spec]:
    """GPUs provisioned, usable and blind now."""
    threshold = format_number(spec.fleet_blind_threshold)
    return [
        Spec(
            "stat",
            "Provisioned GPUs",
            "GPUs the fleet should have, per node the largest of gpuslo_gpu_expected, the GPUs "
            "seen and kube-state-metrics' capacity, held while a node is silent (the usable-GPU "
            "denominator); informational.",
            GPUS,
            (Query(fleet.total(PROVISIONED), instant=True),),
            4,
            5,
        ),
        Spec(
            "stat",
            "Usable GPUs",
            "GPUs whose verdict is healthy now, on schedulable nodes; informational (the ratio "
            "is judged on the fleet SLO dashboard).",
            GPUS,
            (Query(fleet.total(USABLE), instant=True),),
            4,
            5,
        ),
        Spec(
            "stat",
            "Blind GPUs",
            "Provisioned GPUs with no healthy or unhealthy verdict now (exporter down or gone, "
            f"GPUs unreadable, verdict unknown); orange from 1, GpusloFleetBlind pages above "
            f"{threshold} of the provisioned GPUs.",
            GPUS,
            (Query(fleet.total(BLIND), instant=True),),
            4,
            5,
            steps=(("green", None), ("orange", 1)),
        ),
    ] + _lost_hours_panels(spec)


def _lost_hours_panels(spec: SloSpec) -> list[Spec]:
    """Lost GPU-hours in the range, in total and by layer."""
    return [
        Spec(
            "stat",
            "Lost GPU-hours in range",
            "Provisioned GPU-hours not usable in the range (unhealthy, unknown or no data); "
            "informational.",
            GPU_HOURS,
            (Query(fleet.hours_in_range(UNUSABLE), instant=True),),
            12,
            5,
        ),
        Spec(
            "bargauge",
            "Lost GPU-hours by layer",
            "GPU-hours with an active problem (by the layer that owns its reason) or healthy on "
            "a cordoned node (platform). Empty on a healthy fleet.",
            GPU_HOURS,
            (Query(fleet.hours_in_range(LOST, ("layer",)), "{{layer}}", instant=True),),
            12,
            8,
        ),
    ]


def _lost_breakdown_panels(spec: SloSpec) -> list[Spec]:
    """Lost GPU-hours by layer and reason, lost GPUs over time."""
    return [
        Spec(
            "table",
            "Lost GPU-hours by layer and reason",
            "GPU-hours by layer and reason over the range. Empty on a healthy fleet.",
            GPU_HOURS,
            (Query(fleet.hours_in_range(LOST, ("layer", "reason")), instant=True),),
            12,
            8,
            columns=Columns(("layer", "reason"), "GPU-hours"),
        ),
        Spec(
            "timeseries",
            "Lost GPUs by layer",
            "GPUs with an active problem, or healthy on a cordoned node (platform), by layer. "
            "Empty on a healthy fleet.",
            GPUS,
            (Query(f"sum by (layer) ({LOST})", "{{layer}}"),),
        ),
        Spec(
            "timeseries",
            "Lost GPUs by reason",
            "GPUs with an active problem, or healthy on a cordoned node (cordoned), by reason. "
            "Empty on a healthy fleet.",
            GPUS,
            (Query(f"sum by (reason) ({LOST})", "{{reason}}"),),
        ),
        Spec(
            "timeseries",
            "Unusable, blind and provisioned GPUs",
            "Unusable GPUs (any cause, including missing data) and blind GPUs (no verdict) "
            "against the provisioned GPUs.",
            GPUS,
            (
                Query(fleet.total(UNUSABLE), "unusable"),
                Query(fleet.total(BLIND), "blind"),
                Query(fleet.total(PROVISIONED), "provisioned"),
            ),
        ),
        Spec(
            "table",
            "Blind GPUs by node",
            "Per provisioned node, the GPUs that report no verdict now (0 when the node "
            "answers for every GPU); a node whose exporter died stays listed until retired.",
            GPUS,
            (Query(f"sort_desc({NODE_BLIND})", instant=True),),
            columns=Columns(("node",), "blind GPUs"),
        ),
    ]


def lost_gpu_hours(spec: SloSpec) -> dict:
    """Lost GPU-hours by layer and reason over the dashboard range, and lost GPUs over time."""
    specs = _lost_total_panels(spec) + _lost_breakdown_panels(spec)
    return dashboard(
        "gpuslo-lost-gpu-hours",
        "gpuslo / Lost GPU-hours by layer and reason",
        "Where usable GPU time goes: node, platform, training, observability.",
        specs,
    )
