"""The weekly report's "Inference serving" section (issue 29), from the engine's `serving` block
(`gpuslo.slo.serving_week`, the JSON twin's `serving` key); nothing is recomputed here.

Four tables: capacity (serving GPU-hours by category, idle capacity on its own row and kept out
of the lost total), latency goodput (per objective: the share of requests or output tokens within
it against its target; unknown, with why, where no histogram has a bucket at the objective),
lost serving GPU-hours by layer and reason, and the replicas most hit. The section is present
only when the source has serving replicas (`gpuslo simulate --serving-nodes`, or `report
--prometheus` with the serving rules), so reports of training-only fleets are unchanged.
"""

from __future__ import annotations

import dataclasses

from gpuslo import names
from gpuslo.slo.report.model import Section, Table, hours, ratio

KEY, TITLE = "serving", "Inference serving"
_LABEL = {"serving": "serving (ready, answering)",
          "idle_capacity": "idle capacity (ready, no request; not lost)",
          "model_loading": "model loading", "not_ready": "not ready (crash loops, restarts)",
          "draining": "draining", "other": "other (no source describes it)"}


def _share(part: float, whole: float) -> str:
    return ratio(part / whole) if whole else "—"


def _capacity(block: dict) -> Table:
    total = block.get("allocated_gpu_hours") or 0.0
    cats = block.get("categories_gpu_hours") or {}
    rows = tuple((_LABEL.get(c, c), hours(cats.get(c, 0.0)), _share(cats.get(c, 0.0), total))
                 for c in names.SERVING_CATEGORIES)
    rows += (("total (allocated to replicas)", hours(total), _share(total, total)),)
    return Table(("category", "GPU-hours", "share"), rows)


def _latency(block: dict) -> Table:
    rows = []
    for sli, title in (("ttft", "time to first token"), ("itl", "inter-token latency")):
        fig = (block.get("latency") or {}).get(sli) or {}
        attained = fig.get("attainment")
        target = fig.get("target")
        verdict = ("—" if attained is None or target is None
                   else "meets" if attained >= target else "misses")
        known = (f"{fig.get('replicas_known', 0):,} known, "
                 f"{fig.get('replicas_unknown', 0):,} unknown")
        rows.append((title, f"≤ {fig.get('objective_seconds', 0):g} s", ratio(attained),
                     ratio(target), verdict, known, fig.get("why") or ""))
    return Table(("objective", "within", "attainment", "target", "verdict", "replicas", "why"),
                 tuple(rows))


def _lost(block: dict) -> Table:
    rows = tuple((r["layer"], r["reason"], r["category"], hours(r["gpu_hours"]))
                 for r in block.get("lost") or [] if r.get("gpu_hours"))
    return Table(("layer", "reason", "category", "GPU-hours"), rows)


def _most_hit(block: dict) -> Table:
    rows = tuple((r["replica"], r["engine"] or "—", r["node"], f"{r['gpus']:,}",
                  hours(r["allocated_gpu_hours"]), hours(r["lost_gpu_hours"]),
                  f"{r['layer']} / {r['reason']}", ratio(r.get("ttft_attainment")),
                  ratio(r.get("itl_attainment")))
                 for r in block.get("replicas_most_hit") or [])
    return Table(("replica", "engine", "node", "GPUs", "allocated GPU-hours", "lost GPU-hours",
                  "main cause", "TTFT attainment", "inter-token attainment"), rows)


def serving_section(doc: dict) -> Section | None:
    """The section for the engine's JSON twin `doc`, or None when it has no `serving` block."""
    block = doc.get("serving")
    if not block:
        return None
    cats = block.get("categories_gpu_hours") or {}
    by_layer = block.get("lost_gpu_hours_by_layer") or {}
    quality = block.get("data_quality") or {}
    silent = quality.get("replicas_without_histograms") or {}
    layers = ", ".join(f"{layer} {hours(by_layer.get(layer, 0.0))}" for layer in names.LAYERS)
    lines = [
        f"{block.get('replicas', 0):,} serving replicas held up to {block.get('gpus', 0):,} GPUs "
        f"for {hours(block.get('allocated_gpu_hours'))} GPU-hours: "
        f"{hours(cats.get('serving'))} serving, {hours(cats.get('idle_capacity'))} idle capacity "
        f"(ready, no request: neither serving nor lost), "
        f"{hours(block.get('lost_gpu_hours'))} lost.",
        f"Lost serving GPU-hours by layer: {layers} (the workload layer, `training`, is the "
        "serving engine itself for a replica). In the capacity accounting the replicas' "
        "usable allocated time is one category, serving_replicas: they are no training job, so "
        "neither the goodput figures nor the jobs most hit count them.",
        f"Latency goodput from the engines' own histograms, exact at bucket bounds, never "
        f"interpolated. {quality.get('goodput_why', '')}: unknown.",
        f"Other: {hours(quality.get('other_gpu_hours'))} GPU-hours of "
        f"{quality.get('other_why', 'time no source describes')} (observability).",
    ]
    if silent.get("count"):
        lines.append(f"{silent['count']:,} replicas published no latency histogram in the window "
                     f"(engines: {', '.join(silent.get('engines') or [])}): their latency is "
                     "unknown.")
    return Section(KEY, TITLE, tuple(lines),
                   (_capacity(block), _latency(block), _lost(block), _most_hit(block)))


def with_serving_quality(sections: list[Section], doc: dict) -> list[Section]:
    """`sections` with the serving replicas' undescribed time added to the data-quality
    section's lines (unchanged without a `serving` block or a data-quality section)."""
    quality = (doc.get("serving") or {}).get("data_quality") or {}
    if not quality:
        return sections
    line = (f"Serving replicas: {hours(quality.get('other_gpu_hours'))} GPU-hours of "
            f"{quality.get('other_why')} are `other` (observability), never serving.")
    return [dataclasses.replace(s, lines=(*s.lines, line))
            if s.key == "data_quality" and not s.missing else s for s in sections]
