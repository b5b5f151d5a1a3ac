"""One builder per weekly-report section: `builder(doc, extra, wow, fig) -> Section`.

`doc` is the engine's JSON twin (`WeeklyResult.to_json_dict()`), `extra` the report block
(`build.derived`: the engine's fleet figures and the cost), `wow` the week-over-week table (or
None), `fig` the report's one model of its numbers (`gpuslo.slo.report.figures.Figures`): every
quantity the header also shows is read from `fig`, so a section cannot print another value for
it. Cells are formatted here, once, so Markdown and HTML show the same text. A section without
data sets `missing` to the reason: the source's own `data_quality.cannot_fill[key]` when it gave
one, else a sentence naming what is absent.
"""

from __future__ import annotations

from gpuslo import names
from gpuslo.slo.report.badput import goodput
from gpuslo.slo.report.crawl import crawl
from gpuslo.slo.report.jobs_hit import jobs_hit
from gpuslo.slo.report.model import (
    TOP,
    Section,
    Table,
    badput_unknown,
    cannot,
    goodput_covers,
    hours,
    mttr_text,
    ratio,
    rules_check,
    rules_check_text,
    share,
    window_name,
)

MAX_ROWS = 62  # longer spans list availability per 7 days


def capacity(doc, extra, wow, fig) -> Section:
    total = fig.provisioned
    if not total and "capacity" in ((doc.get("data_quality") or {}).get("cannot_fill") or {}):
        return Section("capacity", "Capacity accounting", missing=cannot(doc, "capacity", ""))
    cats = doc.get("categories_gpu_hours") or {}
    label = {names.ACCOUNTING_IDLE: fig.not_allocated_label,
             names.CATEGORY_UNCOMMITTED: names.UNCOMMITTED_LABEL}
    at_risk = " + uncommitted" if names.CATEGORY_UNCOMMITTED in cats else ""
    rows = tuple(
        (label.get(name, name), hours(value), share(value, total)) for name, value in cats.items()
    )
    rows += (("total (provisioned)", hours(total), share(total, total)),)
    lines = (
        f"{doc.get('gpus', 0):,} GPUs on {doc.get('nodes', 0):,} nodes; every provisioned "
        f"GPU-hour has exactly one category; usable = productive + badput{at_risk} + "
        f"{fig.not_allocated_label}, the rest is unusable.",
    )
    return Section("capacity", "Capacity accounting", lines,
                   (Table(("category", "GPU-hours", "share"), rows),))


def availability(doc, extra, wow, fig) -> Section:
    if not fig.provisioned and "capacity" in ((doc.get("data_quality") or {}).get("cannot_fill")
                                              or {}):
        return Section("availability", "Availability", missing=cannot(doc, "capacity", ""))
    objective = ((doc.get("slos") or {}).get(names.SLO_USABLE_GPU) or {}).get("objective")
    usable = doc.get("usable_ratio")
    of = (f"{hours(doc.get('usable_gpu_hours'))} usable of "
          f"{hours(doc.get('provisioned_gpu_hours'))} provisioned GPU-hours")
    if usable is None:
        line = f"No usable ratio: no provisioned GPU-hours in the window ({of})."
    elif objective is None:
        line = f"Usable ratio {ratio(usable)} ({of}); no objective set."
    else:
        verdict = "meets" if usable >= objective else "misses"
        line = (f"Usable ratio {ratio(usable)} against the objective {ratio(objective)}: "
                f"{verdict} the objective ({of}).")
    lines = (line,)
    daily = doc.get("daily") or []
    period = 1 if len(daily) <= MAX_ROWS else 7
    rows = tuple(_period_row(daily[i:i + period]) for i in range(0, len(daily), period))
    first = "day" if period == 1 else "7 days from"
    tables = (
        (Table((first, "provisioned GPU-h", "usable GPU-h", "usable ratio"), rows),) if rows else ()
    )
    return Section("availability", "Availability", lines, tables)


def _period_row(days: list[dict]) -> tuple[str, ...]:
    provisioned = sum(d["provisioned_gpu_hours"] or 0.0 for d in days)
    usable = sum(d["usable_gpu_hours"] or 0.0 for d in days)
    return (
        str(days[0]["day"])[:10],
        hours(provisioned),
        hours(usable),
        share(usable, provisioned),
    )


def slos(doc, extra, wow, fig) -> Section:
    cannot = (doc.get("data_quality") or {}).get("cannot_fill") or {}
    covers = goodput_covers(doc)
    rows, notes = (), ()
    for s in (doc.get("slos") or {}).values():
        if s["name"] in cannot:
            rows += ((s["name"], ratio(s["objective"]), "—", "—", "—", "—"),)
            notes += (f"{s['name']}: not measured — {cannot[s['name']]}.",)
            continue
        met = "—" if s["compliant"] is None else ("yes" if s["compliant"] else "no")
        if s["name"] == names.SLO_JOB_GOODPUT and s["compliant"] is not None and covers:
            met += f" (partial: {covers})"  # a met SLO over part of the logs says so
            notes += (f"{s['name']}: measured over part of the data only — {covers}; the "
                      "rest is listed under data quality.",)
        rows += ((s["name"], ratio(s["objective"]), ratio(s["sli"]), met,
                  ratio(s["error_budget_remaining"]), ratio(s["burn_rate"])),)
    burn = tuple(
        (
            b["severity"],
            f"{b['long_window']}/{b['short_window']}",
            ratio(b["factor"]),
            ratio(b["long_burn_rate"]),
            ratio(b["short_burn_rate"]),
            "yes" if b["firing"] else "no",
        )
        for b in doc.get("burn_rates") or []
    )
    tables = (
        Table(("SLO", "objective", "SLI", "met", "error budget remaining", "burn rate"), rows),
    )
    if burn:
        tables += (
            Table(("alert", "windows", "factor", "long burn", "short burn", "firing at end"), burn),
        )
    return Section("slos", "SLO status and error budget", (
        "Error budget remaining is the share of the SLO period's budget left after this window.",
        *notes), tables)


def _rate_line(doc: dict, fig) -> str:
    """The interruption rate with its basis spelled out: job interruptions per allocated GPU-day
    when the data has jobs, faults (and the GPUs they hit, the rate's unit) per provisioned
    GPU-day when it has none."""
    rate, basis = doc.get("interruptions_per_1000_gpu_days"), doc.get("interruption_basis")
    if basis == "jobs":
        return (
            f"{doc.get('interruptions', 0)} job interruptions: {ratio(rate)} per 1000 allocated "
            "GPU-days."
        )
    if basis == "faults":
        why = cannot(doc, "interruptions", "the data has no jobs")
        return (
            f"No job interruptions can be counted ({why}); instead {fig.faults:,} faults hit "
            f"{doc.get('gpu_fault_starts', 0):,} GPUs (GPU fault starts, the table's GPUs hit): "
            f"{ratio(rate)} GPU fault starts per 1000 provisioned GPU-days."
        )
    return "No provisioned or allocated GPU-time: no interruption rate."


def _return_to_service(gate: dict) -> tuple[str, ...]:
    """One line on the return-to-service gate when a GPU went through it (none otherwise):
    validations and their GPU-hours (platform), failed gates and theirs (node)."""
    if not gate.get("validations") and not gate.get("gates_failed"):
        return ()
    return (
        f"Return to service: {gate['validations']:,} GPU validations after a cleared fault "
        f"({hours(gate['validating_gpu_hours'])} GPU-hours validating, lost to the platform "
        f"layer); {gate['gates_failed']:,} failed gates ({hours(gate['failed_gate_gpu_hours'])} "
        "GPU-hours unhealthy after them, node layer).",
    )


def interruptions(doc, extra, wow, fig) -> Section:
    if fig.mtti_hours is None:
        mtti = "MTTI not available: " + cannot(
            doc, "interruptions", "the data has no job interruptions"
        )
    else:
        mtti = f"MTTI {hours(fig.mtti_hours)} h (job wall hours per interruption)"
    lines = (_rate_line(doc, fig), f"{mtti}.", f"MTTR {mttr_text(fig)}.",
             *_return_to_service(doc.get("return_to_service") or {}))
    rows = tuple((r["reason"], r["layer"], f"{r['faults']:,}", f"{r.get('gpu_faults', 0):,}",
                  f"{r['open']:,}", hours(r["mtbf_gpu_hours"]), hours(r["mttr_hours"]))
                 for r in doc.get("reliability") or [])
    columns = ("reason", "layer", "faults", "GPUs hit", "still open", "MTBF GPU-h", "MTTR h")
    tables = (Table(columns, rows),) if rows else ()
    if fig.mttr_by_layer:
        tables += (
            Table(
                ("layer", "faults ended", "MTTR h"),
                tuple(
                    (layer, f"{v['faults']:,}", hours(v["mttr_hours"]))
                    for layer, v in fig.mttr_by_layer.items()
                ),
            ),
        )
    return Section("interruptions", "Interruptions, MTTI and MTTR", lines, tables)


def causes(doc, extra, wow, fig) -> Section:
    """Lost GPU-hours = unusable capacity (provisioned − usable) + job badput (usable, allocated
    time without progress), by layer; reasons are fault reasons and badput categories, each with
    the layer it is counted in (names.REASON_LAYER; badput not attributed to a fault: training)."""
    by_layer, unusable, badput = fig.lost_by_layer, fig.unusable_by_layer, fig.job_badput_by_layer
    blind = badput_unknown(doc)  # no log's wasted progress known: badput and lost unknown
    total = None if blind else fig.lost
    layer_rows = tuple((layer, hours(None if unusable is None else unusable.get(layer, 0.0)),
                        hours(None if blind else badput.get(layer, 0.0)),
                        hours(None if blind else by_layer.get(layer, 0.0)),
                        share(by_layer.get(layer, 0.0), total))
                       for layer in names.LAYERS)
    by_reason = sorted(
        (doc.get("lost_gpu_hours_by_reason") or {}).items(), key=lambda kv: (-kv[1], kv[0])
    )
    reason_rows = tuple((reason, names.REASON_LAYER.get(reason, names.LAYER_TRAINING), hours(value),
                         share(value, total)) for reason, value in by_reason[:TOP] if value > 0)
    return Section(
        "causes",
        "Top causes by layer and reason",
        (
            f"{_lost_text(total, blind)}: {_unusable_text(doc, unusable)} and "
            f"{_badput_text(badput, blind)} (usable, allocated time the jobs did not "
            "turn into progress, by the layer of the fault that caused it).",
        ),
        (
            Table(
                (
                    "layer",
                    "unusable GPU-hours",
                    "job badput GPU-hours",
                    "lost GPU-hours",
                    "share of lost",
                ),
                layer_rows,
            ),
            Table(("reason", "layer", "lost GPU-hours", "share of lost"), reason_rows),
        ),
    )


def _lost_text(total: float | None, blind: str | None) -> str:
    """The causes line's head: the lost total, or that it is unknown (`badput_unknown`)."""
    if blind:
        return "GPU-hours lost in total unknown (—)"
    return f"{hours(total)} GPU-hours lost in total"


def _badput_text(badput: dict[str, float], blind: str | None) -> str:
    """The causes line's job badput: its GPU-hours, or why they are unknown (never 0.0)."""
    if blind:
        return (f"job badput unknown (—: {blind}, so no job's wasted progress can be told "
                "from its progress)")
    return f"{hours(sum(badput.values()))} job badput"


def _unusable_text(doc: dict, unusable: dict[str, float] | None) -> str:
    """The causes line's unusable part: its GPU-hours, or why they are not known."""
    if unusable is None:
        return f"unusable capacity not available ({cannot(doc, 'capacity', 'no inventory')})"
    return f"{hours(sum(unusable.values()))} unusable (provisioned but not usable; the daily plot)"


def blast_radius(doc, extra, wow, fig) -> Section:
    rows = sorted(
        doc.get("blast_radius") or [], key=lambda r: (-(r.get("job_lost_gpu_hours") or 0), r["job"])
    )
    if not rows:
        return Section("blast_radius", "Blast radius", missing=cannot(
            doc, "blast_radius", "no job interruption was attributed to a fault on its nodes"))
    table = tuple(
        (
            r["job"],
            str(r["time"]),
            r["fault_node"],
            r["reason"],
            hours(r["job_lost_gpu_hours"]),
            hours(r["fault_gpu_hours"]),
            ratio(r["blast_radius"]),
        )
        for r in rows[:TOP]
    )
    return Section(
        "blast_radius",
        "Blast radius",
        ("GPU-hours a job lost to an interruption per GPU-hour of the faulty device.",),
        (
            Table(
                ("job", "time", "node", "reason", "job lost GPU-h", "fault GPU-h", "blast radius"),
                table,
            ),
        ),
    )


def lemon_nodes(doc, extra, wow, fig) -> Section:
    rows = doc.get("lemon_nodes") or []
    if not rows:
        return Section(
            "lemon_nodes", "Lemon nodes", ("No node had 3 or more faults in the window.",)
        )
    table = tuple(
        (r["node"], str(r["faults"]), hours(r["faulty_hours"]), r["reasons"]) for r in rows[:TOP]
    )
    return Section("lemon_nodes", "Lemon nodes", (
        f"{len(rows)} nodes with 3 or more faults (top {min(len(rows), TOP)} shown).",),
        (Table(("node", "faults", "faulty hours", "reasons"), table),))


def cost(doc, extra, wow, fig) -> Section:
    money = extra["cost"]
    if money is None:
        return Section(
            "cost",
            "Cost of lost GPU-hours",
            missing=(
                "no price per GPU-hour given (--price-per-gpu-hour, or price_per_gpu_hour in the "
                "SLO spec)"
            ),
        )
    price = money["price_per_gpu_hour"]
    rows = tuple((layer, f"{value:,.2f}") for layer, value in money["by_layer"].items())
    rows += (("total lost", f"{money['lost']:,.2f}"),)
    idle = fig.not_allocated
    return Section("cost", "Cost of lost GPU-hours", (
        f"At {price:,.2f} per GPU-hour; usable capacity {fig.not_allocated_label} "
        f"({hours(idle)} GPU-hours, {idle * price:,.2f}) is not a fault and is not included.",),
        (Table(("layer", "cost"), rows),))


def data_quality(doc, extra, wow, fig) -> Section:
    dq = doc.get("data_quality") or {}
    lines = (
        f"No data: {hours(dq.get('no_data_gpu_hours'))} GPU-hours; unknown verdicts: "
        f"{hours(dq.get('unknown_gpu_hours'))} GPU-hours; "
        f"blind ratio {ratio(dq.get('blind_ratio'))}. "
        "Blind time counts as lost (observability), never as usable.",
    )
    check = rules_check(doc)
    if check:
        lines += (f"The recording rules' usable ratio: {rules_check_text(check)}.",)
    if dq.get("jobs_without_journal"):
        lines += (f"Jobs without a journal: {', '.join(dq['jobs_without_journal'][:TOP])}.",)
    rows = tuple(
        (reason, hours(value))
        for reason, value in sorted((dq.get("blind_gpu_hours_by_reason") or {}).items())
    )
    missing = tuple((key, why) for key, why in sorted((dq.get("cannot_fill") or {}).items()))
    tables = (Table(("blind reason", "GPU-hours"), rows),) if rows else ()
    tables += (Table(("section the data cannot fill", "why"), missing),) if missing else ()
    return Section("data_quality", "Data quality", lines, tables)


def week_over_week(doc, extra, wow, fig) -> Section:
    title = ("Week over week" if window_name(doc) == "weekly report"
             else "Against the previous window of the same length")
    if wow is None:
        return Section("week_over_week", title, missing=(
            "the data does not cover the previous window of the same length"))
    fmt = {"usable_ratio": ratio, "goodput_ratio": ratio, "interruptions_per_1000_gpu_days": ratio}
    rows = tuple(
        (
            key,
            fmt.get(key, hours)(v["current"]),
            fmt.get(key, hours)(v["previous"]),
            fmt.get(key, hours)(v["change"]),
        )
        for key, v in wow.items()
        if key != "lost_gpu_hours_by_layer"
    )
    rows += tuple(
        (
            f"lost GPU-hours (unusable + job badput), {layer}",
            hours(v["current"]),
            hours(v["previous"]),
            hours(
                None
                if v["current"] is None or v["previous"] is None
                else v["current"] - v["previous"]
            ),
        )
        for layer, v in wow["lost_gpu_hours_by_layer"].items()
    )
    return Section(
        "week_over_week",
        title,
        (),
        (Table(("figure", "this window", "previous", "change"), rows),),
    )


BUILDERS = (capacity, availability, slos, goodput, crawl, interruptions, causes, jobs_hit,
            blast_radius, lemon_nodes, cost, data_quality, week_over_week)
