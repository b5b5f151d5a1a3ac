"""The weekly report's plots as inline SVG text (matplotlib, Agg backend, no display needed).

Deterministic bytes: `svg.hashsalt` fixed, `metadata={"Date": None}`, text kept as text
(`svg.fonttype = "none"`, so no font outlines), and only data from the report document. Labels
are escaped by matplotlib's SVG writer; the XML prolog and DOCTYPE are dropped so the `<svg>`
element can sit inside the HTML page.

- `lost_by_layer_per_day(daily)` — stacked bars of unusable GPU-hours (provisioned, not usable)
  per UTC day by layer (the daily rows hold capacity only, so job badput is not in it);
- `lost_by_layer(unusable, badput)` — every lost GPU-hour by layer: unusable capacity and job
  badput stacked, so the bars sum to the lost total of the causes table;
- `usable_ratio_per_day(daily, objective)` — the usable ratio per day against the objective, on
  an axis around the days and the objective (a line, whose height is not its value; the title
  gives the range);
- `badput_waterfall(allocated, badput, productive)` — allocated against productive GPU-hours, and
  the badput between them stepping up by category on its own scale.
Every bar axis starts at 0 (a bar's height is its value), and every legend sits outside the
axes, right of the data, so it never hides a bar. Each returns an SVG string, or None when the
document has nothing to plot. The `<svg>` carries `data-plot` and `data-y-range` (its value axis)
and the plotted things have ids (`usable-ratio-line`, `badput-step-<category>`, …), which
tests/slo/test_report_browser.py measures in Chromium.
"""

from __future__ import annotations

import io

import matplotlib
import matplotlib.ticker
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from gpuslo import names
from gpuslo.slo.report import plot_margins

_RC = {"svg.hashsalt": "gpuslo", "svg.fonttype": "none", "font.size": 9, "figure.dpi": 100}
MAX_BARS = 62
_THOUSANDS = matplotlib.ticker.StrMethodFormatter("{x:,.0f}")
COLORS = {names.LAYER_NODE: "#d62728", names.LAYER_PLATFORM: "#ff7f0e",
          names.LAYER_TRAINING: "#9467bd", names.LAYER_OBSERVABILITY: "#7f7f7f"}


def _svg(fig, plot: str = "", y_range: tuple[float, float] | None = None) -> str:
    """The figure as an `<svg>` element; `plot` names it (`data-plot`) and `y_range` gives its
    value axis limits (`data-y-range="low high"`), so a browser test can read them."""
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", metadata={"Date": None}, bbox_inches=None)
    text = buffer.getvalue()
    text = text[text.index("<svg"):].strip() + "\n"
    if plot:
        span = f' data-y-range="{y_range[0]:.6g} {y_range[1]:.6g}"' if y_range else ""
        text = text.replace("<svg ", f'<svg data-plot="{plot}"{span} ', 1)
    return text


def _figure(size: tuple[float, float]) -> Figure:
    """A figure with an Agg canvas (as pyplot's Agg figures had,
    so the SVG bytes are the same) and saved as SVG; no pyplot: no global figure registry to
    open and close figures in, and no backend to select at import."""
    fig = Figure(figsize=size)
    FigureCanvasAgg(fig)
    return fig


def _fit_margins(fig: Figure) -> None:
    """The margins the figure's text needs (`plot_margins.fit`: its labels' widths from the
    font's metrics, not measured by drawing them as `fig.tight_layout()` does, ~0.09 s CPU of
    the four plots' ~0.34 s). No layout engine is left on the figure, so savefig draws it once."""
    plot_margins.fit(fig, _RC["font.size"])


def _days(daily: list[dict]) -> list[str]:
    return [str(d["day"])[:10] for d in daily]


def lost_by_layer_per_day(daily: list[dict]) -> str | None:
    """Stacked bars: unusable GPU-hours per day by layer (columns lost_<layer> of the daily rows,
    which hold capacity loss only);
    spans over MAX_BARS days are summed per 7 days (the title says so)."""
    if not daily:
        return None
    period = 1 if len(daily) <= MAX_BARS else 7
    bins = [daily[i:i + period] for i in range(0, len(daily), period)]
    with matplotlib.rc_context(_RC):
        fig = _figure((8, 3.2))
        ax = fig.subplots()
        x = list(range(len(bins)))
        bottom = [0.0] * len(bins)
        for layer in names.LAYERS:
            values = [sum(d.get(f"lost_{layer}") or 0.0 for d in b) for b in bins]
            ax.bar(x, values, bottom=bottom, label=layer, color=COLORS[layer], width=0.8)
            bottom = [b + v for b, v in zip(bottom, values, strict=True)]
        _day_ticks(ax, [b[0] for b in bins])
        ax.set_ylabel("unusable GPU-hours")
        ax.set_ylim(bottom=0)
        unit = "day" if period == 1 else "7 days"
        ax.set_title(f"Unusable GPU-hours (provisioned, not usable) by layer per {unit} (UTC)")
        _legend_outside(ax)
        _fit_margins(fig)
        return _svg(fig)


def _value(ax, x: float, top: float, value: float) -> None:
    """The bar's GPU-hours written just above it."""
    ax.annotate(f"{value:,.0f}", (x, top), xytext=(0, 2), textcoords="offset points",
                ha="center", va="bottom", fontsize=7)


def _legend_outside(ax) -> None:
    """The legend right of the axes, outside the data (`plot_margins.fit` makes room for it)."""
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0, fontsize=8)


def lost_by_layer(unusable: dict[str, float], badput: dict[str, float]) -> str | None:
    """Horizontal stacked bars per layer: unusable capacity GPU-hours, then job badput GPU-hours;
    each bar is the layer's lost GPU-hours."""
    total = sum(unusable.values()) + sum(badput.values())
    if not total:
        return None
    layers = list(names.LAYERS)
    with matplotlib.rc_context(_RC):
        fig = _figure((8, 2.6))
        ax = fig.subplots()
        y = list(range(len(layers)))
        first = [unusable.get(layer, 0.0) for layer in layers]
        second = [badput.get(layer, 0.0) for layer in layers]
        ax.barh(y, first, color="#7f7f7f", label="unusable capacity")
        ax.barh(y, second, left=first, color="#9467bd", label="job badput")
        ax.set_yticks(y, layers)
        ax.invert_yaxis()
        ax.set_xlim(left=0)
        ax.set_xlabel("lost GPU-hours")
        ax.set_title(f"Lost GPU-hours by layer: {total:,.1f} in total")
        _legend_outside(ax)
        _fit_margins(fig)
        return _svg(fig)


def _day_ticks(ax, daily: list[dict]) -> None:
    labels = _days(daily)
    every = max(1, -(-len(labels) // 8))  # at most 8 labels: rotated dates must not overlap
    ticks = list(range(0, len(labels), every))
    ax.set_xticks(ticks, [labels[i] for i in ticks], rotation=30, ha="right")


def ratio_axis(values: list[float], objective: float | None) -> tuple[float, float]:
    """Value-axis limits for daily ratios: the days and the objective with a quarter of their
    spread (at least 0.001) free on each side, within 0–1, so a 0.994–0.997 week stands apart
    from a 0.98 objective instead of sharing one line at the top of a 0–1 axis."""
    marks = [*values, *([objective] if objective is not None else [])]
    low, high = min(marks), max(marks)
    pad = max(high - low, 0.001) / 4
    return max(0.0, low - pad), min(1.0, high + pad)


def usable_ratio_per_day(daily: list[dict], objective: float | None) -> str | None:
    """Line: usable ratio per day against the objective (dashed, the band below it shaded), on
    an axis around the days and the objective (`ratio_axis`; a line's height is not its value,
    and the title gives the axis range so nobody reads it from 0)."""
    points = [
        (i, d["usable_ratio"]) for i, d in enumerate(daily) if d.get("usable_ratio") is not None
    ]
    if not points:
        return None
    low, high = ratio_axis([p[1] for p in points], objective)
    with matplotlib.rc_context(_RC):
        fig = _figure((8, 3.2))
        ax = fig.subplots()
        ax.patch.set_gid("usable-ratio-axes")
        ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", markersize=3,
                color="#1f77b4", label="usable ratio", gid="usable-ratio-line", clip_on=False)
        if objective is not None:
            ax.axhspan(low, objective, color="#d62728", alpha=0.08, label="below objective")
            ax.axhline(
                objective, color="#d62728", linestyle="--", label=f"objective {objective:.4f}",
                gid="usable-ratio-objective",
            )
        _day_ticks(ax, daily)
        ax.set_ylim(low, high)
        ax.yaxis.set_major_formatter(matplotlib.ticker.FormatStrFormatter(_decimals(low, high)))
        ax.set_ylabel("usable / provisioned")
        ax.set_title(
            f"Usable GPU ratio per day against the objective (axis {low:.4f}–{high:.4f})"
        )
        _legend_outside(ax)
        _fit_margins(fig)
        return _svg(fig, "usable-ratio", (low, high))


def _decimals(low: float, high: float) -> str:
    """A tick format with enough decimals to tell the ticks of `low`–`high` apart."""
    span = high - low
    return "%.2f" if span >= 0.2 else "%.3f" if span >= 0.02 else "%.4f"


def badput_waterfall(allocated: float, badput: dict[str, float], productive: float,
                     uncommitted: float | None = None) -> str | None:
    """Two panels, each on its own scale (GPU-hours, from 0): allocated against productive, and
    the badput between them as a waterfall, each category a step up from the one before to the
    whole badput, so a 5 % badput is not a sliver on top of a 0-to-allocated axis. `uncommitted`
    (None: the basis carries none) is one more step after the badput total, in its own colour
    and named `names.UNCOMMITTED_LABEL`: at risk, not lost."""
    if not allocated:
        return None
    lost = sum(badput.values())
    top = lost + (uncommitted or 0.0)
    with matplotlib.rc_context(_RC):
        fig = _figure((8, 3.6))
        left, right = fig.subplots(1, 2, gridspec_kw={"width_ratios": (1, 3.2)})
        _allocated_bars(left, allocated, productive)
        right.patch.set_gid("badput-axes")
        labels, level = [], 0.0
        for i, (name, value) in enumerate(badput.items()):
            right.bar(i, value, bottom=level, color="#9467bd", gid=f"badput-step-{name}")
            _value(right, i, level + value, value)
            labels.append(name)
            level += value
        right.bar(len(labels), lost, color="#5e3c99", gid="badput-total")
        _value(right, len(labels), lost, lost)
        labels.append("badput")
        if uncommitted is not None:
            right.bar(len(labels), uncommitted, bottom=lost, color="#ff7f0e", hatch="//",
                      gid="uncommitted-step")
            _value(right, len(labels), top, uncommitted)
            labels.append(names.UNCOMMITTED_LABEL.replace(" (", "\n("))
        right.set_xticks(range(len(labels)), labels, rotation=30, ha="right")
        right.set_ylim(0, (top or 1.0) * 1.12)
        right.set_ylabel("badput GPU-hours" if uncommitted is None else "GPU-hours")
        right.yaxis.set_major_formatter(_THOUSANDS)
        share = f"\n({lost / allocated:.1%} of allocated)" if allocated else ""  # fits the axes
        right.set_title(f"by category, own scale: {lost:,.1f} GPU-hours of badput{share}")
        fig.suptitle(
            f"Badput waterfall: {allocated:,.1f} allocated to {productive:,.1f} productive "
            "GPU-hours" + ("" if uncommitted is None else
                           f"\nand {uncommitted:,.1f} GPU-hours of {names.UNCOMMITTED_LABEL}")
        )
        _fit_margins(fig)
        return _svg(fig, "badput-waterfall", right.get_ylim())


def _allocated_bars(ax, allocated: float, productive: float) -> None:
    """Allocated and productive GPU-hours side by side, from 0."""
    ax.bar(0, allocated, color="#1f77b4")
    _value(ax, 0, allocated, allocated)
    ax.bar(1, productive, color="#2ca02c")
    _value(ax, 1, productive, productive)
    ax.set_xticks((0, 1), ("allocated", "productive"), rotation=30, ha="right")
    ax.set_ylim(0, allocated * 1.12)
    ax.set_ylabel("GPU-hours")
    ax.yaxis.set_major_formatter(_THOUSANDS)
