"""Panel building blocks on grafanalib's core classes (TimeSeries, Stat, Table, BarGauge).

Every panel gets a unit and a description, every target reads the `$datasource` template
variable, and `layout` places panels left to right on Grafana's 24-column grid with explicit,
stable ids (1, 2, … in dashboard order). grafanalib is imported in gpuslo/dashboards/ only.
"""

from __future__ import annotations

from dataclasses import dataclass

from grafanalib import core

DATASOURCE = {"type": "prometheus", "uid": "${datasource}"}
GRID_COLUMNS = 24
RATIO = "percentunit"  # ratios 0–1
SECONDS = "s"
GPU_HOURS = "suffix: GPU-h"
GPUS = "suffix: GPUs"
COUNT = "short"
BURN = "suffix: x"  # burn rate: multiples of the error budget's sustainable rate
BOOL = "bool_yes_no"


@dataclass(frozen=True)
class Query:
    """One PromQL expression with its legend; `instant` for tables and stats."""

    expr: str
    legend: str = ""
    instant: bool = False


@dataclass(frozen=True)
class Spec:
    """What a panel shows: kind (timeseries|stat|table|bargauge), title, description (what it
    shows, its unit, when it is empty), unit (a Grafana unit id), queries, width and height."""

    kind: str
    title: str
    description: str
    unit: str
    queries: tuple[Query, ...]
    width: int = 12
    height: int = 8
    good_from: float | None = None  # stats: red below this value, green from it (an objective)


def datasource_variable() -> core.Template:
    """The `$datasource` template variable (any Prometheus-compatible data source)."""
    return core.Template(
        name="datasource", label="Data source", query="prometheus", type="datasource", default=""
    )


def query_variable(name: str, label: str, query: str) -> core.Template:
    """A multi-value `label_values(...)` variable with an All option matching `.*`."""
    return core.Template(
        name=name,
        label=label,
        query=query,
        dataSource=DATASOURCE,
        includeAll=True,
        multi=True,
        allValue=".*",
        default="$__all",
    )


def _targets(spec: Spec) -> list[core.Target]:
    return [
        core.Target(
            expr=query.expr,
            legendFormat=query.legend,
            refId=chr(ord("A") + index),
            instant=query.instant,
            datasource=DATASOURCE,
        )
        for index, query in enumerate(spec.queries)
    ]


def thresholds(spec: Spec) -> list[dict]:
    """Grafana threshold steps: green throughout, or red below `good_from` and green from it.
    (grafanalib's Stat default is an empty string, which Grafana cannot read as steps.)"""
    if spec.good_from is None:
        return [{"color": "green", "value": None}]
    return [{"color": "red", "value": None}, {"color": "green", "value": spec.good_from}]


def build_panel(spec: Spec, panel_id: int, grid: core.GridPos) -> core.Panel:
    """The grafanalib panel for `spec` at `grid`."""
    common = {
        "thresholds": thresholds(spec),
        "title": spec.title,
        "description": spec.description,
        "dataSource": DATASOURCE,
        "targets": _targets(spec),
        "gridPos": grid,
        "id": panel_id,
    }
    if spec.kind == "timeseries":
        return core.TimeSeries(unit=spec.unit, **common)
    if spec.kind == "stat":
        return core.Stat(
            format=spec.unit,
            reduceCalc="lastNotNull",
            graphMode="none",
            noValue="no data",
            **common,
        )
    if spec.kind == "table":
        return core.Table(unit=spec.unit, **common)
    if spec.kind == "bargauge":
        # grafanalib writes BarGauge units in the pre-Grafana-7 `fieldOptions`; Grafana reads
        # `fieldConfig.defaults`, so the unit and the reduction go there too (extraJson).
        modern = {
            "fieldConfig": {"defaults": {"unit": spec.unit, "min": 0}},
            "options": {"reduceOptions": {"calcs": ["lastNotNull"], "values": False}},
        }
        return core.BarGauge(
            format=spec.unit, calc="lastNotNull", max=None, extraJson=modern, **common
        )
    raise ValueError(f"unknown panel kind {spec.kind!r}")


def layout(specs: list[Spec]) -> list[core.Panel]:
    """Place panels in reading order, wrapping at 24 columns; ids 1..n."""
    panels, x, y, row_height = [], 0, 0, 0
    for panel_id, spec in enumerate(specs, start=1):
        if x + spec.width > GRID_COLUMNS:
            x, y, row_height = 0, y + row_height, 0
        grid = core.GridPos(h=spec.height, w=spec.width, x=x, y=y)
        panels.append(build_panel(spec, panel_id, grid))
        x, row_height = x + spec.width, max(row_height, spec.height)
    return panels


def dashboard(uid: str, title: str, description: str, specs: list[Spec], variables=()) -> dict:
    """A dashboard as a JSON-ready dict (grafanalib's encoder does the rest)."""
    board = core.Dashboard(
        title=title,
        uid=uid,
        description=description,
        tags=["gpuslo"],
        editable=False,
        timezone="utc",
        refresh="1m",
        time=core.Time("now-24h", "now"),
        templating=core.Templating(list=[datasource_variable(), *variables]),
        panels=layout(specs),
    )
    return board.to_json_data()
