"""The weekly report's model: a `Report` of `Section`s holding `Table`s of formatted cells, and
the two cell formats (`hours`, `ratio`) every section uses. Built by `gpuslo.slo.report.build`,
rendered by `gpuslo.slo.report.markdown` and `gpuslo.slo.report.html`.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime

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


def share(part: float | None, whole: float | None) -> str:
    """`part / whole` as a ratio cell; '—' when either is unknown or `whole` is 0."""
    return ratio(part / whole) if part is not None and whole else "—"


def cannot(doc: dict, key: str, fallback: str) -> str:
    """Why a section cannot be filled: the source's own `data_quality.cannot_fill[key]` when it
    gave one, else `fallback`."""
    return ((doc.get("data_quality") or {}).get("cannot_fill") or {}).get(key) or fallback


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


def rules_check(doc: dict) -> dict | None:
    """The usable ratio of the recording rules against this report's, from the engine's
    `data_quality.recorded_check` (`gpuslo.slo.recorded_check`); None without recorded SLIs."""
    return ((doc.get("data_quality") or {}).get("recorded_check") or {}).get("usable_ratio")


def rules_check_text(check: dict) -> str:
    """'0.7000 over the same window, this report 0.7000: they agree (within 0.001)', or the
    difference and why."""
    both = f"{ratio(check['recorded'])}, this report {ratio(check['report'])}"
    if check["agree"]:
        return f"{both} over the same window: they agree (within 0.001)"
    return f"{both} (difference {check['difference']:+.4f}): {check['why']}"


WEEKLY_DAYS = (6.5, 7.5)  # a window this long (days) is a week; DAILY_DAYS a day
DAILY_DAYS = (0.95, 1.05)


def window_hours(doc: dict) -> float | None:
    """The window's length in hours: the engine's `window.hours`, else end − start."""
    hours = (doc.get("window") or {}).get("hours")
    if hours is None and doc.get("start") and doc.get("end"):
        span = _stamp(doc["end"]) - _stamp(doc["start"])
        hours = span.total_seconds() / 3600
    return hours


def _stamp(text: str) -> datetime:
    return datetime.fromisoformat(text.replace("Z", "+00:00"))


def window_name(doc: dict) -> str:
    """'weekly report' for a window of about a week, 'daily report' for about a day, else
    'report over N days' (or hours, below a day and a half)."""
    hours = window_hours(doc)
    if hours is None:
        return "report"
    days = hours / 24
    if WEEKLY_DAYS[0] <= days <= WEEKLY_DAYS[1]:
        return "weekly report"
    if DAILY_DAYS[0] <= days <= DAILY_DAYS[1]:
        return "daily report"
    return f"report over {days:,.0f} days" if days >= 1.5 else f"report over {hours:,.1f} hours"


def window_text(doc: dict) -> str:
    """'<start> to <end>' (ISO 8601 UTC), or, for a source without dates, 'undated (relative
    to the log's start)'."""
    if (doc.get("window") or {}).get("dated") is False:
        return "undated (relative to the log's start)"
    return f"{doc.get('start')} to {doc.get('end')}"


def badput_unknown(doc: dict) -> str | None:
    """Why the job badput (and so the lost GPU-hours and the slowdown badput) is unknown: every
    training log read has an unknown goodput, so none of its wasted progress can be told from
    its progress (README: "never 0.0"; newcomer8 F4), else None. Logs with a known goodput give
    their badput (a partial figure, which `goodput_covers` names)."""
    logs = (doc.get("data_quality") or {}).get("goodput_logs") or {}
    if logs.get("logs", 0) and not logs.get("known", 0):
        return goodput_covers(doc)
    return None


def goodput_covers(doc: dict) -> str | None:
    """'goodput covers k of n training logs' when some logs read have an unknown goodput
    (`data_quality.goodput_logs`; their spans and interruptions still count), else None."""
    logs = (doc.get("data_quality") or {}).get("goodput_logs") or {}
    if logs.get("known", 0) >= logs.get("logs", 0):
        return None
    if not logs["known"]:
        return f"goodput unknown for every training log read ({logs['logs']})"
    return f"goodput covers {logs['known']} of {logs['logs']} training logs"
