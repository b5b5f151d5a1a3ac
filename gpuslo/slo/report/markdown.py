"""Markdown rendering of the weekly report (`gpuslo.slo.report.model.Report`): deterministic text
with a generated-file header; table cells have `|` and newlines escaped so a label cannot break a
row, and every text that comes from the inputs has `&`, `<` and `>` written as HTML entities, so a
trace holding `<script>` shows as text in any Markdown renderer instead of becoming HTML; the
backslash and the brackets are backslash-escaped, so no link or image can form: a job named
`[x](javascript:alert(1))` in a trace is text, never a clickable link (CommonMark 0.31:
backslash escapes, links, images; an autolink `<javascript:...>` is closed by the `<` entity)."""

from __future__ import annotations

from gpuslo import names
from gpuslo.slo.report import figures
from gpuslo.slo.report.model import (
    GENERATED_BY,
    Report,
    Table,
    goodput_covers,
    hours,
    mttr_text,
    ratio,
    rules_check,
    rules_check_text,
    window_name,
    window_text,
)


def _safe(text: object) -> str:
    """`text` with the characters that start raw HTML in Markdown written as entities and those
    that open a link or image (and the backslash itself) escaped."""
    escaped = str(text).replace("\\", "\\\\").replace("[", "\\[").replace("]", "\\]")
    return escaped.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def _cell(text: str) -> str:
    return _safe(text).replace("|", "\\|").replace("\n", " ")


def _table(table: Table) -> list[str]:
    lines = ["| " + " | ".join(map(_cell, table.columns)) + " |",
             "|" + "|".join("---" for _ in table.columns) + "|"]
    lines += ["| " + " | ".join(map(_cell, row)) + " |" for row in table.rows]
    return lines


def title(doc: dict) -> str:
    """Report title naming the window by its length and its dates (ISO 8601 UTC), or saying it
    has none: 'GPU fleet weekly report <start> to <end>', 'GPU fleet report over 349 days …',
    'GPU fleet report over 0.2 hours, undated (relative to the log's start)'."""
    sep = ", " if (doc.get("window") or {}).get("dated") is False else " "
    return f"GPU fleet {window_name(doc)}{sep}{window_text(doc)}"


def _by_layer(values: dict | None) -> str:
    return ", ".join(f"{k} {hours(v)}" for k, v in (values or {}).items())


def coverage(doc: dict) -> str | None:
    """'A to B only' when the window reaches before or past the data (data_quality.covered)."""
    covered = (doc.get("data_quality") or {}).get("covered") or {}
    if not covered.get("partial"):
        return None
    if covered.get("start") == covered.get("end"):
        return "nothing in this window"
    return (
        f"{covered.get('start')} to {covered.get('end')} only; the rest of the window has no data"
    )


def headline(doc: dict) -> list[tuple[str, str]]:
    """The headline figures shown first, as (label, formatted value), from the report's one
    model (`figures`). Capacity (provisioned = usable + unusable) and the jobs' goodput ratio
    are labelled apart, so no two figures invite a sum that does not hold."""
    fig = figures.of(doc)
    covers = coverage(doc)
    check = rules_check(doc)
    differs = check is not None and not check["agree"]
    return [
        *((("data covers", covers),) if covers else ()),
        *((("recording rules' usable ratio", rules_check_text(check)),) if differs else ()),
        *_capacity_headline(doc, fig),
        *_job_headline(fig, goodput_covers(doc), _unallocated(doc, fig)),
        ("MTTR (mean fault duration)", mttr_text(fig)),
    ]


def _capacity_headline(doc: dict, fig: figures.Figures) -> list[tuple[str, str]]:
    """Provisioned, usable, usable ratio and unusable by layer; each 'not available' (the first
    with the reason) when the data cannot know them (`figures.capacity_missing`), never 0.0."""
    why = figures.capacity_missing(doc)
    missing = "— (not available)"
    return [
        ("provisioned GPU-hours", f"— (not available: {why})" if why else hours(fig.provisioned)),
        ("usable GPU-hours", missing if why else hours(fig.usable)),
        ("usable ratio", ratio(fig.usable_ratio)),
        ("unusable GPU-hours by layer (provisioned − usable)",
         missing if why else _by_layer(fig.unusable_by_layer)),
    ]


def goodput_label(records: str) -> str:
    """The goodput line's label, naming what the job GPU-time was read from (`journals`,
    `training logs`: `figures.job_records`)."""
    return f"goodput ratio (job_goodput SLI: productive / job GPU-time in the {records})"


GOODPUT_LABEL = goodput_label(figures.JOURNALS)
BADPUT_LABEL = "job badput GPU-hours by layer (allocated usable time without progress)"


def _unallocated(doc: dict, fig: figures.Figures) -> str | None:
    """Why the capacity accounting's job figures cannot be known: the source's
    `cannot_fill["allocations"]` when it has jobs but allocated no GPU-time to any (exporters
    without an allocation source, newcomer 7 F5), else None."""
    why = ((doc.get("data_quality") or {}).get("cannot_fill") or {}).get("allocations")
    capacity = fig.productive_basis == figures.CAPACITY
    return why if why and capacity and not fig.allocated and doc.get("jobs") else None


def _job_headline(fig: figures.Figures, covers: str | None = None,
                  unallocated: str | None = None) -> list[tuple[str, str]]:
    """Productive, goodput and badput; one 'no job data' line when the source has no jobs;
    `covers` (`goodput_covers`) follows the goodput ratio when some logs' goodput is unknown;
    `unallocated` (`_unallocated`): productive and badput are not available, never 0.0."""
    if fig.not_allocated_label == figures.NOT_ALLOCATED:
        return [("jobs", "no job data (so no productive GPU-hours, goodput or badput)")]
    if unallocated:
        return [(f"productive GPU-hours ({fig.productive_basis})",
                 f"— (not available: {unallocated})"),
                (goodput_label(figures.job_records(fig)), ratio(fig.goodput_ratio)),
                (BADPUT_LABEL, "— (not available)")]
    if covers and not fig.allocated:  # every log's goodput unknown: no figure, never 0.0
        return [(f"productive GPU-hours ({fig.productive_basis})", f"— ({covers})"),
                (goodput_label(figures.job_records(fig)), f"— ({covers}; see data quality)")]
    return [
        (f"productive GPU-hours ({fig.productive_basis})", hours(fig.productive)),
        (goodput_label(figures.job_records(fig)),
         ratio(fig.goodput_ratio) + (f" ({covers}; see data quality)" if covers else "")),
        (BADPUT_LABEL, _by_layer(fig.job_badput_by_layer)),
        *(((f"{names.UNCOMMITTED_LABEL} GPU-hours (allocated, neither productive nor badput)",
            hours(fig.uncommitted)),) if fig.uncommitted is not None else ()),
    ]


def render_markdown(report: Report) -> str:
    """The whole report as Markdown (str, ends with a newline)."""
    doc = report.document
    out = [f"<!-- {GENERATED_BY} -->", "", f"# {_safe(title(doc))}", ""]
    source = (doc.get("data_quality") or {}).get("source")
    if source:
        out += [f"Source: {_cell(source)}", ""]
    out += [f"- {label}: {_safe(value)}" for label, value in headline(doc)] + [""]
    for section in report.sections:
        out += [f"## {_safe(section.title)}", ""]
        if section.missing:
            out += [f"Not available: {_cell(section.missing)}.", ""]
            continue
        for line in section.lines:
            out += [_safe(line), ""]
        for table in section.tables:
            out += [*_table(table), ""]
    return "\n".join(out).rstrip("\n") + "\n"
