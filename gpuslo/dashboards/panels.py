"""Panel building blocks on grafanalib's core classes (TimeSeries, Stat, Table, BarGauge).

Every panel gets a unit and a description, every target reads the `$datasource` template
variable, and `layout` places panels left to right on Grafana's 24-column grid with explicit,
stable ids (1, 2, … in dashboard order). grafanalib builds the panels; `grafana11` then rewrites
its output into Grafana 11's panel JSON. grafanalib is imported in gpuslo/dashboards/ only.

Colour is a judgement: a stat with threshold `steps` or coloured `mappings` is drawn in the
colour of its state (and every such stat can turn red); a stat without them is informational and
drawn in the text colour, never a green it has not earned.
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
SINCE = "dateTimeFromNow"  # a Unix time in milliseconds, shown as "5 minutes ago"

Step = tuple[str, float | None]  # (colour, from this value on; None = from minus infinity)


def red_below(good_from: float) -> tuple[Step, ...]:
    """Threshold steps: red below `good_from` (an objective), green from it."""
    return (("red", None), ("green", good_from))


def red_from(bad_from: float) -> tuple[Step, ...]:
    """Threshold steps: green below `bad_from`, red from it (a count of bad things)."""
    return (("green", None), ("red", bad_from))


def value_mapping(states: dict[object, tuple[str, str]]) -> dict:
    """A Grafana value mapping: value -> (text, colour), e.g. {0: ("No", "red")}."""
    options = {
        str(value): {"text": text, "color": colour, "index": index}
        for index, (value, (text, colour)) in enumerate(states.items())
    }
    return {"type": "value", "options": options}


@dataclass(frozen=True)
class Query:
    """One PromQL expression with its legend; `instant` for tables and stats (tables also
    ask for Grafana's table format: one row per series, one column per label)."""

    expr: str
    legend: str = ""
    instant: bool = False


@dataclass(frozen=True)
class Columns:
    """Which columns a table shows: `labels` in this order, then the value under the header
    `value` (None hides it: info metrics, always 1). Every other column (Time, __name__,
    instance, job, …) is hidden."""

    labels: tuple[str, ...]
    value: str | None = None


@dataclass(frozen=True)
class Spec:
    """What a panel shows: kind (timeseries|stat|table|bargauge), title, description (what it
    shows, its unit, when it is empty), unit (a Grafana unit id), queries, width and height;
    threshold `steps` and value `mappings` (see the module docstring), table `columns` and
    field `overrides` (Grafana's override JSON)."""

    kind: str
    title: str
    description: str
    unit: str
    queries: tuple[Query, ...]
    width: int = 12
    height: int = 8
    steps: tuple[Step, ...] = ()
    mappings: tuple[dict, ...] = ()
    columns: Columns | None = None
    overrides: tuple[dict, ...] = ()

    @property
    def judged(self) -> bool:
        """True when the panel's colour says good or bad (steps or coloured mappings)."""
        return bool(self.steps) or any(
            "color" in option for m in self.mappings for option in m["options"].values()
        )


def datasource_variable() -> core.Template:
    """The `$datasource` template variable (any Prometheus-compatible data source)."""
    return core.Template(
        name="datasource", label="Data source", query="prometheus", type="datasource", default=""
    )


def query_variable(
    name: str, label: str, query: str, pick_one: bool = False, hidden: bool = False
) -> core.Template:
    """A `label_values(...)` variable, refreshed when the time range changes (nodes come and go).
    By default multi-value with an All option matching `.*` (which also matches a series without
    the label, so `cluster` works on a Prometheus without one); `pick_one`: single-select, no
    All (Grafana picks the first value); `hidden`: not shown, All by default, and All is the
    alternation of the values Grafana found (not `.*`), so it selects exactly those series."""
    if pick_one:
        choice = {"includeAll": False, "multi": False}
    else:
        choice = {"includeAll": True, "multi": True, "default": "$__all",
                  "allValue": None if hidden else ".*"}
    return core.Template(
        name=name,
        label=label,
        query=query,
        dataSource=DATASOURCE,
        refresh=2,
        hide=core.HIDE_VARIABLE if hidden else core.SHOW,
        **choice,
    )


def _targets(spec: Spec) -> list[core.Target]:
    return [
        core.Target(
            expr=query.expr,
            legendFormat=query.legend,
            refId=chr(ord("A") + index),
            instant=query.instant,
            format="table" if spec.kind == "table" else "time_series",
            datasource=DATASOURCE,
        )
        for index, query in enumerate(spec.queries)
    ]


def thresholds(spec: Spec) -> list[dict]:
    """Grafana threshold steps from `spec.steps`; an informational panel gets one neutral
    step (Grafana needs at least one)."""
    steps = spec.steps or (("text", None),)
    return [{"color": colour, "value": value} for colour, value in steps]


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
        "mappings": list(spec.mappings),
        "overrides": list(spec.overrides),
    }
    if spec.kind == "timeseries":
        return core.TimeSeries(unit=spec.unit, legendDisplayMode="list", **common)
    if spec.kind == "stat":
        return core.Stat(
            format=spec.unit,
            reduceCalc="lastNotNull",
            graphMode="none",
            noValue="no data",
            colorMode="value" if spec.judged else "none",
            **common,
        )
    if spec.kind == "table":
        return core.Table(unit=spec.unit, **common)
    if spec.kind == "bargauge":
        mappings = common.pop("mappings")
        common.pop("overrides")
        return core.BarGauge(
            format=spec.unit, calc="lastNotNull", valueMaps=mappings, min=0, max=None, **common
        )
    raise ValueError(f"unknown panel kind {spec.kind!r}")


def layout(specs: list[Spec]) -> list[tuple[Spec, core.Panel]]:
    """Place panels in reading order, wrapping at 24 columns; ids 1..n."""
    panels, x, y, row_height = [], 0, 0, 0
    for panel_id, spec in enumerate(specs, start=1):
        if x + spec.width > GRID_COLUMNS:
            x, y, row_height = 0, y + row_height, 0
        grid = core.GridPos(h=spec.height, w=spec.width, x=x, y=y)
        panels.append((spec, build_panel(spec, panel_id, grid)))
        x, row_height = x + spec.width, max(row_height, spec.height)
    return panels
