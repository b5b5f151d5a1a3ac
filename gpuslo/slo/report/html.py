"""HTML rendering of the weekly report: one self-contained page with inline SVG plots.

Every text that comes from data (labels, node and job names, reasons, the source) goes through
`html.escape`; the page is well-formed XML as well as HTML (closed tags, no named entities
beyond XML's), so both `html.parser` and an XML parser accept it. Deterministic: no clock, no
random ids; the plots come from `gpuslo.slo.report.plots`.
"""

from __future__ import annotations

from html import escape

from gpuslo import names
from gpuslo.slo.report import figures as report_figures
from gpuslo.slo.report import plots
from gpuslo.slo.report.markdown import headline, title
from gpuslo.slo.report.model import GENERATED_BY, Report, Section, Table

_STYLE = ("body{font-family:sans-serif;max-width:60em;margin:1em auto;padding:0 1em;color:#222}"
          "table{border-collapse:collapse;margin:0.5em 0}td,th{border:1px solid #ccc;"
          "padding:2px 8px;text-align:left}.missing{color:#a00}figure{margin:1em 0}"
          "figure svg{max-width:100%;height:auto}")


def _table(table: Table) -> str:
    head = "".join(f"<th>{escape(c)}</th>" for c in table.columns)
    body = "".join(
        "<tr>" + "".join(f"<td>{escape(c)}</td>" for c in row) + "</tr>" for row in table.rows
    )
    return f"<table><thead><tr>{head}</tr></thead><tbody>{body}</tbody></table>\n"


def _section(section: Section, figures: dict[str, list[str]]) -> str:
    parts = [f'<section id="{escape(section.key)}"><h2>{escape(section.title)}</h2>\n']
    if section.missing:
        parts.append(f'<p class="missing">Not available: {escape(section.missing)}.</p>\n')
    else:
        parts += [f"<p>{escape(line)}</p>\n" for line in section.lines]
        parts += [f"<figure>{svg}</figure>\n" for svg in figures.get(section.key, [])]
        parts += [_table(t) for t in section.tables]
    parts.append("</section>\n")
    return "".join(parts)


def figures(doc: dict) -> dict[str, list[str]]:
    """Section key → SVG plots for that section, from the report's one model of its numbers
    (`report.figures`) and the daily rows."""
    fig = report_figures.of(doc)
    daily = doc.get("daily") or []
    objective = ((doc.get("slos") or {}).get(names.SLO_USABLE_GPU) or {}).get("objective")
    out = {
        "availability": [
            plots.usable_ratio_per_day(daily, objective),
            plots.lost_by_layer_per_day(daily),
        ],
        "causes": [plots.lost_by_layer(fig.unusable_by_layer or {}, fig.job_badput_by_layer)],
    }
    if doc.get("jobs"):
        out["goodput"] = [
            plots.badput_waterfall(fig.allocated, fig.badput_by_category, fig.productive,
                                   fig.uncommitted)
        ]
    return {key: [svg for svg in svgs if svg] for key, svgs in out.items()}


def render_html(report: Report) -> str:
    """The whole report as one HTML page (str)."""
    doc = report.document
    heading = escape(title(doc))
    source = (doc.get("data_quality") or {}).get("source")
    items = "".join(f"<li>{escape(label)}: {escape(value)}</li>" for label, value in headline(doc))
    svgs = figures(doc)
    return "".join([
        "<!DOCTYPE html>\n",
        f"<!-- {escape(GENERATED_BY)} -->\n",
        '<html xmlns="http://www.w3.org/1999/xhtml" lang="en"><head><meta charset="utf-8" />',
        f"<title>{heading}</title><style>{_STYLE}</style></head>\n<body>\n",
        f"<h1>{heading}</h1>\n",
        f"<p>Source: {escape(source)}</p>\n" if source else "",
        f"<ul>{items}</ul>\n",
        *(_section(section, svgs) for section in report.sections),
        "</body></html>\n",
    ])
