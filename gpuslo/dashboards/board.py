"""One dashboard from panel specs: grafanalib lays it out and encodes it, `grafana11` rewrites
the result into Grafana 11's JSON, `scope` adds the variables and annotations."""

from __future__ import annotations

from grafanalib import core

from gpuslo.dashboards import grafana11, scope
from gpuslo.dashboards.panels import Spec, datasource_variable, layout


def dashboard(
    uid: str,
    title: str,
    description: str,
    specs: list[Spec],
    variables=(),
    pick_node: bool = False,
) -> dict:
    """A dashboard as plain JSON data: `$datasource`, `$cluster`, then `variables`; the
    annotations of `scope.annotations(pick_node)`."""
    placed = layout(specs)
    board = core.Dashboard(
        title=title,
        uid=uid,
        description=description,
        tags=["gpuslo"],
        editable=False,
        timezone="utc",
        refresh="1m",
        time=core.Time("now-24h", "now"),
        templating=core.Templating(
            list=[datasource_variable(), scope.cluster_variable(), *variables]
        ),
        panels=[panel for _, panel in placed],
    )
    raw = grafana11.plain(board.to_json_data())
    panels = [
        grafana11.panel(data, spec.kind, spec.columns)
        for (spec, _), data in zip(placed, raw["panels"], strict=True)
    ]
    return grafana11.dashboard(raw, panels, scope.annotations(pick_node))
