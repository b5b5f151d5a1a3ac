"""Rewrite grafanalib's output into Grafana 11's dashboard JSON (grafanalib 0.7 writes the
schemaVersion 12 layout: `span`, `height`, `error`, `rows`, targets with `step` and
`intervalFactor`, tables queried as time series, pre-Grafana-8 stat and table options).

What comes out is checked against the dashboard types Grafana publishes (@grafana/schema 11.6
with tsc, tests/dashboards/test_dashboards_schema.py): schemaVersion 41 (Grafana 11.6's
`defaultDashboard`), each panel's options as its plugin declares them, Prometheus targets as the
Prometheus data source stores them (`editorMode`, `range`/`instant`, `format: table` for
tables), no `null` where Grafana's types want a value or nothing. Pure functions over plain dicts.

Intervals: time series panels have a 1 m minimum interval (two samples of deploy/prometheus's 30 s
scrape and rule evaluation interval, so `$__interval` never asks for finer data than exists) and
no `maxDataPoints` cap, so Grafana asks for one point per pixel of the panel's width; instant
queries (stats, tables, bar gauges) fetch one point and need neither.
"""

from __future__ import annotations

import json

from grafanalib._gen import DashboardEncoder

SCHEMA_VERSION = 41
PLUGIN_VERSION = "11.6.0"
MIN_INTERVAL = "1m"
LEGEND = {"calcs": [], "displayMode": "list", "placement": "bottom", "showLegend": True}
REDUCE = {"calcs": ["lastNotNull"], "fields": "", "values": False}


def plain(data: object) -> object:
    """grafanalib objects encoded to plain JSON data (dicts, lists, str, numbers, None)."""
    return json.loads(json.dumps(data, cls=DashboardEncoder))


def _without_none(data: dict) -> dict:
    return {key: value for key, value in data.items() if value is not None}


def target(raw: dict) -> dict:
    """One Prometheus query: expression, legend, instant or range, table or time-series format."""
    return {
        "datasource": raw["datasource"],
        "editorMode": "code",
        "expr": raw["expr"],
        "format": raw["format"],
        "instant": raw["instant"],
        "legendFormat": raw["legendFormat"] or "__auto",
        "range": not raw["instant"],
        "refId": raw["refId"],
    }


def _stat_options(raw: dict) -> dict:
    return {
        "colorMode": raw["options"]["colorMode"],
        "graphMode": "none",
        "justifyMode": "auto",
        "orientation": "auto",
        "percentChangeColorMode": "standard",
        "reduceOptions": REDUCE,
        "showPercentChange": False,
        "textMode": "auto",
        "wideLayout": True,
    }


def _table_options(raw: dict) -> dict:
    footer = {"countRows": False, "fields": [], "reducer": ["sum"], "show": False}
    return {
        "cellHeight": "sm",
        "footer": footer,
        "frameIndex": 0,
        "showHeader": True,
        "sortBy": [],
    }


def _timeseries_options(raw: dict) -> dict:
    return {"legend": LEGEND, "tooltip": {"mode": "multi", "sort": "desc"}}


def _bargauge_options(raw: dict) -> dict:
    return {
        "displayMode": "gradient",
        "legend": {**LEGEND, "showLegend": False},
        "maxVizHeight": 300,
        "minVizHeight": 16,
        "minVizWidth": 8,
        "namePlacement": "auto",
        "orientation": "horizontal",
        "reduceOptions": REDUCE,
        "showUnfilled": True,
        "sizing": "auto",
        "valueMode": "color",
    }


OPTIONS = {
    "stat": _stat_options,
    "table": _table_options,
    "timeseries": _timeseries_options,
    "bargauge": _bargauge_options,
}


def _custom(raw: dict, kind: str) -> dict:
    """The plugin's own field config: grafanalib's time-series keys without its nulls."""
    if kind == "timeseries":
        custom = _without_none(raw["fieldConfig"]["defaults"]["custom"])
        return {**custom, "stacking": {"group": "A", "mode": "none"}}
    if kind == "table":
        return {
            "align": "auto",
            "cellOptions": {"type": "auto"},
            "filterable": False,
            "inspect": False,
        }
    return {}


def field_config(raw: dict, kind: str) -> dict:
    """Defaults (unit, thresholds, value mappings, colour) and overrides of one panel."""
    defaults = raw["fieldConfig"]["defaults"]
    unit = defaults.get("unit") or raw.get("format") or "short"
    colour = {"mode": "palette-classic"} if kind == "timeseries" else {"mode": "thresholds"}
    out = {
        "color": colour,
        "custom": _custom(raw, kind),
        "mappings": defaults.get("mappings") or raw.get("mappings") or raw.get("valueMaps") or [],
        "thresholds": {"mode": "absolute", "steps": defaults["thresholds"]["steps"]},
        "unit": unit,
    }
    if kind in ("timeseries", "bargauge"):
        out["min"] = 0
    if kind == "stat":
        out["noValue"] = defaults["noValue"]
    return {"defaults": out, "overrides": raw["fieldConfig"].get("overrides") or []}


def columns_transformations(labels: tuple[str, ...], value: str | None) -> list[dict]:
    """Show `labels` in order, then the value as `value` (None hides it); hide the rest."""
    shown = [*labels, *(["Value"] if value else [])]
    return [
        {"id": "filterFieldsByName", "options": {"include": {"names": shown}}},
        {
            "id": "organize",
            "options": {
                "excludeByName": {},
                "indexByName": {name: index for index, name in enumerate(shown)},
                "renameByName": {"Value": value} if value else {},
            },
        },
    ]


def panel(raw: dict, kind: str, columns=None) -> dict:
    """One panel in Grafana 11's JSON from grafanalib's `raw` (plain data); `columns`
    (panels.Columns) for a table."""
    out = {key: raw[key] for key in ("datasource", "description", "gridPos", "id", "title")}
    out.update(
        type=kind,
        pluginVersion=PLUGIN_VERSION,
        fieldConfig=field_config(raw, kind),
        options=OPTIONS[kind](raw),
        targets=[target(t) for t in raw["targets"]],
    )
    if kind == "timeseries":
        out["interval"] = MIN_INTERVAL
    if columns is not None:
        out["transformations"] = columns_transformations(columns.labels, columns.value)
    return out


def variable(raw: dict) -> dict:
    """A template variable without grafanalib's legacy tag and interval keys."""
    keep = ("allValue", "datasource", "hide", "includeAll", "label", "multi", "name")
    out = _without_none({key: raw.get(key) for key in keep})
    current = raw["current"]
    if current["value"] is not None:  # none: Grafana picks the first value on load
        out["current"] = {key: current[key] for key in ("selected", "text", "value")}
    out.update(
        options=[],
        query=raw["query"],
        refresh=raw["refresh"],
        regex="",
        sort=raw["sort"],
        type=raw["type"],
    )
    return out


def dashboard(raw: dict, panels: list[dict], annotations: list[dict]) -> dict:
    """The dashboard in Grafana 11's JSON from grafanalib's `raw` (plain data)."""
    keep = ("description", "editable", "refresh", "tags", "time", "timezone", "title", "uid")
    out = {key: raw[key] for key in keep}
    out.update(
        annotations={"list": annotations},
        fiscalYearStartMonth=0,
        graphTooltip=1,  # shared crosshair: one time under the cursor on every panel
        id=None,
        links=[],
        panels=panels,
        schemaVersion=SCHEMA_VERSION,
        templating={"list": [variable(v) for v in raw["templating"]["list"]]},
        timepicker={},
        version=1,
        weekStart="",
    )
    return out
