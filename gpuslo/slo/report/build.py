"""The weekly report, built: sections from the engine's JSON twin, rendered by
`gpuslo.slo.report.markdown` and `gpuslo.slo.report.html`, written by `gpuslo report`.

`build_report(current, previous, price_per_gpu_hour)` is pure: `current`/`previous` are
`gpuslo.slo.engine.WeeklyResult.to_json_dict()` dicts (previous = the week before, or None).
It returns a `Report`: the JSON document (the engine's keys plus `report` with derived figures)
and an ordered list of `Section`s. A section the data cannot fill carries `missing` = why, and no
table is invented for it. Units: GPU-hours, hours, ratios 0–1; money in the price's currency.

Derived figures (documented here because they are computed here):
- fleet ETTR = Σ productive GPU-seconds / Σ (GPUs × wall seconds) over the jobs (Kokolis et al.,
  arXiv:2410.21680 define ETTR per job as productive time / wall time);
- MTTI (mean time to interruption, hours) = Σ job wall hours / job interruptions;
- MTTR (hours) = mean duration of the faults that ended in the window, weighted by fault count
  over the reliability table's reasons (faults − open);
- cost of lost GPU-hours = lost GPU-hours (every layer: unusable capacity plus job badput) ×
  price per GPU-hour; idle capacity is shown apart, it is not a fault.
"""

from __future__ import annotations

from gpuslo import names
from gpuslo.slo.report.figures import Figures, figures
from gpuslo.slo.report.model import GENERATED_BY, Report
from gpuslo.slo.report.sections import BUILDERS


def _get(doc: dict, *path, default=None):
    for key in path:
        if not isinstance(doc, dict) or key not in doc:
            return default
        doc = doc[key]
    return doc


def derived(doc: dict, price: float | None) -> dict:
    """Figures the report adds to the engine's: fleet_ettr, mtti_hours, mttr_hours,
    lost_gpu_hours, idle_gpu_hours, cost (None without a price)."""
    jobs = doc.get("jobs") or []
    wall = sum((j.get("wall_seconds") or 0) * (j.get("gpus") or 0) for j in jobs)
    productive = sum(j.get(names.CATEGORY_PRODUCTIVE) or 0 for j in jobs)
    job_hours = sum((j.get("wall_seconds") or 0) for j in jobs) / 3600
    count = doc.get("interruptions") or 0
    closed = [(r["mttr_hours"], r["faults"] - r["open"]) for r in doc.get("reliability") or []
              if r.get("mttr_hours") is not None and r["faults"] > r["open"]]
    weight = sum(n for _, n in closed)
    lost_by_layer = doc.get("lost_gpu_hours_by_layer") or {}
    lost = sum(lost_by_layer.values())
    cost = None
    if price is not None:
        cost = {"price_per_gpu_hour": price, "lost": round(lost * price, 2),
                "by_layer": {k: round(v * price, 2) for k, v in sorted(lost_by_layer.items())}}
    return {
        "fleet_ettr": round(productive / wall, 6) if wall else None,
        "mtti_hours": round(job_hours / count, 6) if jobs and count else None,
        "mttr_hours": round(sum(h * n for h, n in closed) / weight, 6) if weight else None,
        "lost_gpu_hours": round(lost, 6),
        "idle_gpu_hours": _get(doc, "categories_gpu_hours", names.ACCOUNTING_IDLE),
        "cost": cost,
    }


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


def build_report(current: dict, previous: dict | None, price: float | None) -> Report:
    """The report for `current` (see the module docstring). Pure; raises nothing on sparse data:
    empty sections say why."""
    extra = derived(current, price)
    wow = week_over_week(current, previous)
    model = Figures(**_rounded(figures(current, extra).to_dict()))
    document = {**current, "generated_by": GENERATED_BY,
                "report": {**extra, "figures": model.to_dict(), "week_over_week": wow}}
    sections = [builder(current, extra, wow, model) for builder in BUILDERS]
    return Report(document, sections)


def _rounded(value):
    """`value` with floats rounded to 6 decimals, as the engine's JSON twin rounds them."""
    if isinstance(value, dict):
        return {key: _rounded(v) for key, v in value.items()}
    return round(value, 6) + 0.0 if isinstance(value, float) else value
