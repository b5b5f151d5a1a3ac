"""The report's section "Jobs most hit": per job, the GPU-hours it lost — the unusable time of the
GPUs it held plus its own badput — with the layer and reason of its largest loss and the nodes
its losses name (from the engine's `jobs_hit`, `gpuslo.slo.job_losses.jobs_hit`)."""

from __future__ import annotations

from gpuslo.slo.report.model import TOP, Section, Table, hours, ratio

TITLE = "Jobs most hit"
_NODES = 3  # nodes named per row; the rest are counted


def _nodes(text: str) -> str:
    nodes = [n for n in (text or "").split(",") if n]
    if len(nodes) <= _NODES:
        return ", ".join(nodes) or "—"
    return ", ".join(nodes[:_NODES]) + f" (+{len(nodes) - _NODES})"


def jobs_hit(doc, extra, wow, fig) -> Section:
    """Top TOP jobs by lost GPU-hours. `fig` is unused: every figure is the job's own."""
    rows = [r for r in doc.get("jobs_hit") or [] if (r.get("lost_gpu_hours") or 0) > 0]
    if not rows:
        why = ((doc.get("data_quality") or {}).get("cannot_fill") or {}).get("allocations")
        return Section("jobs_hit", TITLE, missing=why or (
            "no job held a GPU that lost time, and no job has badput (the data has no job "
            "allocations, or none was hit)" if not doc.get("jobs_hit") else
            "no job lost GPU-time in the window"))
    held = sum(r.get("held_gpu_hours") or 0.0 for r in rows)  # by the jobs that lost, "they"
    lost = sum(r["lost_gpu_hours"] for r in rows)
    unusable = sum(r.get("unusable_gpu_hours") or 0.0 for r in rows)
    lines = (
        f"{len(rows):,} job{'' if len(rows) == 1 else 's'} lost {hours(lost)} of the "
        f"{hours(held)} GPU-hours they held: "
        f"{hours(unusable)} while the GPUs they held were not usable (by the fault's layer and "
        f"reason) and {hours(lost - unusable)} of their own badput (wasted progress and recovery "
        "by the layer of the interruption's fault, slowdown by the crawl's cause, the rest "
        "training). Summed over jobs this is the fleet's loss inside allocations.",
    )
    table = tuple(
        (r["job"], hours(r.get("held_gpu_hours")), hours(r["lost_gpu_hours"]),
         ratio(r["lost_gpu_hours"] / r["held_gpu_hours"]) if r.get("held_gpu_hours") else "—",
         hours(r.get("unusable_gpu_hours")), hours(r.get("badput_gpu_hours")),
         r.get("layer") or "—", r.get("reason") or "—", hours(r.get("layer_reason_gpu_hours")),
         _nodes(r.get("nodes")))
        for r in rows[:TOP]
    )
    columns = ("job (most hit first)", "held GPU-h", "lost GPU-h", "lost share", "unusable GPU-h",
               "badput GPU-h", "main layer", "main reason", "of it GPU-h", "nodes")
    return Section("jobs_hit", TITLE, lines, (Table(columns, table),))
