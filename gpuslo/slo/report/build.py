"""The weekly report, built: sections from the engine's result, rendered by
`gpuslo.slo.report.markdown` and `gpuslo.slo.report.html` (the whole pipeline from sources to
files: `gpuslo.slo.report.pipeline.build_report`).

`report_of(current, previous, price_per_gpu_hour, fleet)` is pure: `current`/`previous` are
`gpuslo.slo.engine.WeeklyResult.to_json_dict()` dicts (previous = the week before, or None),
`fleet` is `WeeklyResult.fleet_figures()` (fleet ETTR, MTTI, MTTR, lost GPU-hours: computed by
the engine, never here; None = the engine gave none). It returns a `Report`: the JSON document
(the engine's keys plus `report` with those figures) and an ordered list of `Section`s. A
section the data cannot fill carries `missing` = why, and no table is invented for it. Units:
GPU-hours, hours, ratios 0–1; money in the price's currency.

The one figure computed here, because the price is the report's input: cost of lost GPU-hours
= the engine's lost GPU-hours (every layer: unusable capacity plus job badput) × price per
GPU-hour; idle capacity is shown apart, it is not a fault.
"""

from __future__ import annotations

from gpuslo import names
from gpuslo.slo.report.clusters import clusters_section
from gpuslo.slo.report.figures import Figures, figures
from gpuslo.slo.report.model import GENERATED_BY, Report
from gpuslo.slo.report.sections import BUILDERS
from gpuslo.slo.report.serving import serving_section, with_serving_quality


def _get(doc: dict, *path, default=None):
    for key in path:
        if not isinstance(doc, dict) or key not in doc:
            return default
        doc = doc[key]
    return doc


FLEET_FIGURES = ("fleet_ettr", "mtti_hours", "mttr_hours", "lost_gpu_hours")


def derived(doc: dict, fleet: dict | None, price: float | None) -> dict:
    """The report block's figures: the engine's `fleet` figures (FLEET_FIGURES; None each when
    `fleet` is None; its mttr_by_layer goes to the `Figures` model), idle_gpu_hours (the JSON
    twin's idle category) and cost (None without a price)."""
    extra = {key: (fleet or {}).get(key) for key in FLEET_FIGURES}
    lost_by_layer = doc.get("lost_gpu_hours_by_layer") or {}
    cost = None
    if price is not None:
        lost = extra["lost_gpu_hours"] or 0.0
        cost = {"price_per_gpu_hour": price, "lost": round(lost * price, 2),
                "by_layer": {k: round(v * price, 2) for k, v in sorted(lost_by_layer.items())}}
    return {**extra, "idle_gpu_hours": _get(doc, "categories_gpu_hours", names.ACCOUNTING_IDLE),
            "cost": cost}


HEADLINE = ("provisioned_gpu_hours", "usable_gpu_hours", "usable_ratio", "job_productive_gpu_hours",
            "goodput_ratio", "interruptions_per_1000_gpu_days")


def week_over_week(current: dict, previous: dict | None) -> dict | None:
    """Headline figures now, before and the change (now − before); None without a previous week."""
    if previous is None:
        return None
    out = {}
    for key in HEADLINE:
        now, before = current.get(key), previous.get(key)
        change = None if now is None or before is None else round(now - before, 6)
        out[key] = {"current": now, "previous": before, "change": change}
    out["lost_gpu_hours_by_layer"] = {
        layer: {"current": _get(current, "lost_gpu_hours_by_layer", layer),
                "previous": _get(previous, "lost_gpu_hours_by_layer", layer)}
        for layer in names.LAYERS
    }
    return out


def report_of(current: dict, previous: dict | None, price: float | None,
              fleet: dict | None = None) -> Report:
    """The report for `current` (see the module docstring). Pure; raises nothing on sparse data:
    empty sections say why."""
    extra = derived(current, fleet, price)
    wow = week_over_week(current, previous)
    by_layer = (fleet or {}).get("mttr_by_layer") or {}
    model = Figures(**_rounded(figures(current, extra, by_layer).to_dict()))
    document = {**current, "generated_by": GENERATED_BY,
                "report": {**extra, "figures": model.to_dict(), "week_over_week": wow}}
    sections = [builder(current, extra, wow, model) for builder in BUILDERS]
    if current.get("clusters"):  # a global store: the per-cluster table after the capacity
        sections.insert(1, clusters_section(current))
    served = serving_section(current)
    if served is not None:  # serving replicas: after the jobs most hit
        keys = [section.key for section in sections]
        sections.insert(keys.index("jobs_hit") + 1 if "jobs_hit" in keys else len(keys), served)
        sections = with_serving_quality(sections, current)
    return Report(document, sections)


def _rounded(value):
    """`value` with floats rounded to 6 decimals, as the engine's JSON twin rounds them."""
    if isinstance(value, dict):
        return {key: _rounded(v) for key, v in value.items()}
    return round(value, 6) + 0.0 if isinstance(value, float) else value
