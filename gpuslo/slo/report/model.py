"""The weekly report's model: a `Report` of `Section`s holding `Table`s of formatted cells, and
the two cell formats (`hours`, `ratio`) every section uses. Built by `gpuslo.slo.report.build`,
rendered by `gpuslo.slo.report.markdown` and `gpuslo.slo.report.html`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

GENERATED_BY = "gpuslo report (generated file; do not edit)"
TOP = 10


@dataclass(frozen=True)
class Table:
    """Column titles and rows of already-formatted cells (str)."""

    columns: tuple[str, ...]
    rows: tuple[tuple[str, ...], ...]


@dataclass(frozen=True)
class Section:
    """One report section: `key` (stable id), `title`, `lines` (sentences), `tables`, and
    `missing` (why the data cannot fill it; None when filled)."""

    key: str
    title: str
    lines: tuple[str, ...] = ()
    tables: tuple[Table, ...] = ()
    missing: str | None = None


@dataclass(frozen=True)
class Report:
    """`document`: the JSON twin (dict, JSON-ready); `sections`: in reading order."""

    document: dict
    sections: list[Section] = field(default_factory=list)


def hours(value: float | None) -> str:
    """GPU-hours or hours with one decimal and thousands separators; '—' for None."""
    return "—" if value is None else f"{value:,.1f}"


def ratio(value: float | None) -> str:
    """A ratio 0–1 with four decimals; '—' for None."""
    return "—" if value is None else f"{value:.4f}"


def mttr_text(fig) -> str:
    """The MTTR of `fig` (report.figures.Figures) with its per-layer figures beside it:
    '0.4 h overall; node 4.4 h (60 faults), observability 0.2 h (117 faults)'."""
    if fig.mttr_hours is None:
        return "no fault ended in the window"
    parts = [
        f"{layer} {hours(v['mttr_hours'])} h ({v['faults']:,} faults)"
        for layer, v in fig.mttr_by_layer.items()
    ]
    return f"{hours(fig.mttr_hours)} h overall; " + ", ".join(parts)
