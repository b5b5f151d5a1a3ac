"""The report's section "the crawl": GPU-hours lost to slow steps by job, node and cause, with the
slowest nodes named (from the engine's `crawl` figures, `WeeklyResult.crawl_dict`)."""

from __future__ import annotations

from gpuslo.slo.report.model import TOP, Section, Table, badput_unknown, hours, ratio

TITLE = "The crawl: GPU-hours lost to slow steps"


def _score(value) -> str:
    return "—" if value is None else ratio(value)


def crawl(doc, extra, wow, fig) -> Section:
    """Slowdown GPU-hours per job and cause (layer, reason, node), then the slowest nodes by
    their performance score (compute time of the job's fastest node / theirs). `fig` (the
    report's figures) is unused: the crawl's figures are the journals' own, named as such."""
    figures = doc.get("crawl") or {}
    if not doc.get("jobs"):
        reason = ((doc.get("data_quality") or {}).get("cannot_fill") or {}).get("goodput")
        return Section("crawl", TITLE, missing=reason or "the data has no job journals")
    blind = badput_unknown(doc)
    if blind:  # the slowdown badput is a goodput figure: no log's is known (newcomer8 F4)
        return Section("crawl", TITLE, missing=f"{blind}: the slowdown badput is a share of "
                       "each job's progress, unknown where its goodput is")
    rule = figures.get("rule") or {}
    by_layer = figures.get("by_layer") or {}
    lines = (
        f"{hours(figures.get('slowdown_gpu_hours'))} GPU-hours lost to steps slower than each "
        f"job's own reference (the slowdown badput: the time per step above the reference × "
        f"GPUs, over slowdowns of at least {rule.get('min_intervals', '—')} consecutive logged "
        f"intervals above {rule.get('threshold', '—')}× the reference; one slow interval is a "
        "spike, not a crawl). Attributed to the node layer when a degradation was active on one "
        f"of the job's nodes during the slowdown ({hours(by_layer.get('node'))} GPU-hours), "
        f"else to training ({hours(by_layer.get('training'))} GPU-hours).",
    )
    capacity = figures.get("capacity_slowdown_gpu_hours")
    no_allocations = ((doc.get("data_quality") or {}).get("cannot_fill") or {}).get(
        "allocations")
    if capacity is not None and abs(capacity - (figures.get("slowdown_gpu_hours") or 0)) >= 0.05:
        # newcomer 7 F5: without allocations no job time is allocated at all; blaming unusable
        # GPUs then contradicts the fleet's usable ratio
        why = (f"no job's time is allocated ({no_allocations})" if no_allocations else
               "the rest fell on allocated time that was not usable (unknown or unhealthy GPUs)")
        lines += (f"The capacity accounting counts {hours(capacity)} of them: {why}.",)
    rows = tuple(
        (r["job"], r["layer"], r["reason"], r["cause_node"] or "—", hours(r["gpu_hours"]),
         str(r["slowdowns"]), "—" if r["ratio"] is None else f"{r['ratio']:.3f}×",
         f"{r['slowest_node']} ({_score(r['slowest_score'])})" if r["slowest_node"] else "—")
        for r in (figures.get("rows") or [])[:TOP]
    )
    tables = ()
    if rows:
        tables += (Table(("job", "layer", "cause", "cause node", "GPU-hours", "slowdowns",
                          "worst ratio", "slowest node (score)"), rows),)
    else:
        lines += ("No sustained slowdown in the window.",)
    slowest = [r for r in (figures.get("slowest_nodes") or []) if r.get("score") is not None]
    if slowest:
        tables += (Table(("job", "node", "compute s/step", "score vs fastest node",
                          "score vs own best"),
                         tuple((r["job"], r["node"], f"{r['compute_s']:.3f}", _score(r["score"]),
                                _score(r["individual_score"])) for r in slowest[:TOP])),)
    else:
        lines += ("No node reported compute times per step (Recorder.step(n, compute_s=...)), "
                  "so no straggler can be named.",)
    return Section("crawl", TITLE, lines, tables)
