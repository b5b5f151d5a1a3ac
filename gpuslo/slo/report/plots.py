"""The weekly report's plots as inline SVG text, drawn by `svg` and `chart` (no plotting
library: importing matplotlib and drawing through it cost ~0.55 s CPU of a new `gpuslo report`
process at 10,000 GPUs, issue 30, bench/report_files.py; the look is the matplotlib defaults
these plots had).

Deterministic bytes (no clock, no random ids), only data from the report document, every label
escaped; the `<svg>` element sits inside the HTML page.

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

from gpuslo import names
from gpuslo.slo.report import chart
from gpuslo.slo.report import plot_margins as room
from gpuslo.slo.report.chart import Decor
from gpuslo.slo.report.svg import Axes, Canvas, nice_ticks

MAX_BARS = 62
COLORS = {names.LAYER_NODE: "#d62728", names.LAYER_PLATFORM: "#ff7f0e",
          names.LAYER_TRAINING: "#9467bd", names.LAYER_OBSERVABILITY: "#7f7f7f"}
BAR = 0.8  # a bar's width, in category units


def _days(daily: list[dict]) -> list[str]:
    return [str(d["day"])[:10] for d in daily]


def _day_ticks(daily: list[dict]) -> list[tuple[float, str]]:
    """At most 8 date labels (rotated dates must not overlap), at the days' positions."""
    labels = _days(daily)
    every = max(1, -(-len(labels) // 8))
    return [(float(i), labels[i]) for i in range(0, len(labels), every)]


def _decimals_of(step: float) -> int:
    """The fewest decimals (0-6) that write `step` exactly."""
    return next((d for d in range(7) if abs(round(step, d) - step) < step * 1e-6), 6)


def _amount_ticks(low: float, high: float, most: int) -> list[tuple[float, str]]:
    """Value ticks for GPU-hours: thousands separated, decimals only for steps under 1."""
    ticks = nice_ticks(low, high, most)
    step = ticks[1] - ticks[0] if len(ticks) > 1 else 1.0
    places = _decimals_of(step) if step < 1 else 0
    return [(v, f"{v:,.{places}f}") for v in ticks]


def _box(canvas: Canvas, decor: Decor) -> tuple[float, float]:
    """(left, width) of one axes with `decor`, its legend right of it, in `canvas`."""
    pad = room.pad(chart.FONT_PT)
    left = pad + chart.left_room(decor)
    width = canvas.width - left - pad
    return left, width - chart.legend_room(decor, width)


def _axes(canvas: Canvas, decor: Decor, ylim: tuple[float, float],
          xlim: tuple[float, float], amounts: bool = True) -> Axes:
    """One axes filling `canvas` around `decor` (its y ticks made here from `ylim` when
    `amounts`), ready to draw on."""
    top = chart.top_room(decor)
    bottom = chart.bottom_room(decor)
    height = canvas.height - top - bottom
    if amounts:
        decor.y_ticks = _amount_ticks(*ylim, chart.y_tick_count(height))
    left, width = _box(canvas, decor)
    return Axes(left, top, width, height, xlim, ylim)


def lost_by_layer_per_day(daily: list[dict]) -> str | None:
    """Stacked bars: unusable GPU-hours per day by layer (columns lost_<layer> of the daily rows,
    which hold capacity loss only);
    spans over MAX_BARS days are summed per 7 days (the title says so)."""
    if not daily:
        return None
    period = 1 if len(daily) <= MAX_BARS else 7
    bins = [daily[i:i + period] for i in range(0, len(daily), period)]
    stacks = {layer: [sum(d.get(f"lost_{layer}") or 0.0 for d in b) for b in bins]
              for layer in names.LAYERS}
    highest = max(sum(values) for values in zip(*stacks.values(), strict=True))
    unit = "day" if period == 1 else "7 days"
    decor = Decor(x_ticks=_day_ticks([b[0] for b in bins]), x_rotation=30,
                  y_label="unusable GPU-hours",
                  title=f"Unusable GPU-hours (provisioned, not usable) by layer per {unit} (UTC)",
                  legend=[("patch", COLORS[layer], layer) for layer in names.LAYERS])
    canvas = Canvas(8, 3.2)
    axes = _axes(canvas, decor, (0.0, (highest or 1.0) * 1.05), (-0.6, len(bins) - 0.4))
    chart.background(canvas, axes)
    bottom = [0.0] * len(bins)
    for layer, values in stacks.items():
        for i, value in enumerate(values):
            if value:
                canvas.rect(axes.x(i - BAR / 2), axes.y(bottom[i]), axes.x(i + BAR / 2),
                            axes.y(bottom[i] + value), COLORS[layer])
        bottom = [b + v for b, v in zip(bottom, values, strict=True)]
    chart.dress(canvas, axes, decor)
    return canvas.svg()


def _value(canvas: Canvas, x: float, y: float, value: float) -> None:
    """The bar's GPU-hours written just above its top at (x, y) points."""
    canvas.text(x, y - 2, f"{value:,.0f}", 7, anchor="middle", valign="bottom")


def lost_by_layer(unusable: dict[str, float], badput: dict[str, float]) -> str | None:
    """Horizontal stacked bars per layer: unusable capacity GPU-hours, then job badput GPU-hours;
    each bar is the layer's lost GPU-hours."""
    total = sum(unusable.values()) + sum(badput.values())
    if not total:
        return None
    layers = list(names.LAYERS)
    first = [unusable.get(layer, 0.0) for layer in layers]
    second = [badput.get(layer, 0.0) for layer in layers]
    decor = Decor(x_ticks=[(0.0, "0")], y_ticks=[(float(i), layer) for i, layer in
                                                  enumerate(layers)],
                  x_label="lost GPU-hours", title=f"Lost GPU-hours by layer: {total:,.1f} in total",
                  legend=[("patch", "#7f7f7f", "unusable capacity"),
                          ("patch", "#9467bd", "job badput")])
    canvas = Canvas(8, 2.6)
    xlim = (0.0, max(a + b for a, b in zip(first, second, strict=True)) * 1.05)
    axes = _axes(canvas, decor, (len(layers) - 0.4, -0.6), xlim, amounts=False)
    decor.x_ticks = _amount_ticks(*xlim, chart.x_tick_count(axes.width))
    chart.background(canvas, axes)
    for i, (a, b) in enumerate(zip(first, second, strict=True)):
        for start, value, colour in ((0.0, a, "#7f7f7f"), (a, b, "#9467bd")):
            if value:
                canvas.rect(axes.x(start), axes.y(i - BAR / 2), axes.x(start + value),
                            axes.y(i + BAR / 2), colour)
    chart.dress(canvas, axes, decor)
    return canvas.svg()


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
    legend = [("line", "#1f77b4", "usable ratio")]
    if objective is not None:
        legend += [("faint", "#d62728", "below objective"),
                   ("dashed", "#d62728", f"objective {objective:.4f}")]
    title = f"Usable GPU ratio per day against the objective (axis {low:.4f}–{high:.4f})"
    decor = Decor(x_ticks=_day_ticks(daily), x_rotation=30, y_label="usable / provisioned",
                  title=title, legend=legend)
    span = max(len(daily) - 1, 1)
    canvas = Canvas(8, 3.2)
    axes = _axes(canvas, decor, (low, high), (-0.05 * span, len(daily) - 1 + 0.05 * span),
                 amounts=False)
    ticks = nice_ticks(low, high, chart.y_tick_count(axes.height))
    decor.y_ticks = [(v, _decimals(low, high) % v) for v in ticks]
    chart.background(canvas, axes, "usable-ratio-axes")
    if objective is not None:
        canvas.rect(axes.left, axes.y(low), axes.right, axes.y(objective), "#d62728",
                    opacity=0.08)
        canvas.polyline([(axes.left, axes.y(objective)), (axes.right, axes.y(objective))],
                        "#d62728", dash="5.55,2.4", gid="usable-ratio-objective")
    xy = [(axes.x(i), axes.y(r)) for i, r in points]

    def line() -> None:
        canvas.polyline(xy, "#1f77b4")
        for x, y in xy:
            canvas.circle(x, y, 2.0, "#1f77b4")  # matplotlib's 3 pt marker and its 1 pt edge

    canvas.group("usable-ratio-line", line)
    chart.dress(canvas, axes, decor)
    return canvas.svg("usable-ratio", (low, high))


def _decimals(low: float, high: float) -> str:
    """A tick format with enough decimals to tell the ticks of `low`–`high` apart."""
    span = high - low
    return "%.2f" if span >= 0.2 else "%.3f" if span >= 0.02 else "%.4f"


_HATCH = ('<pattern id="uncommitted-hatch" patternUnits="userSpaceOnUse" width="6" height="6">'
          '<rect width="6" height="6" fill="#ff7f0e"/>'
          '<path d="M-1,1 L1,-1 M0,6 L6,0 M5,7 L7,5" stroke="#000000" stroke-width="1"/>'
          "</pattern>")


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
    labels = [*badput, "badput"]
    if uncommitted is not None:
        labels.append(names.UNCOMMITTED_LABEL.replace(" (", "\n("))
    share = f"\n({lost / allocated:.1%} of allocated)"
    left_decor = Decor(x_ticks=[(0.0, "allocated"), (1.0, "productive")], x_rotation=30,
                       y_label="GPU-hours")
    right_decor = Decor(x_ticks=[(float(i), label) for i, label in enumerate(labels)],
                        x_rotation=30,
                        y_label="badput GPU-hours" if uncommitted is None else "GPU-hours",
                        title=f"by category, own scale: {lost:,.1f} GPU-hours of badput{share}")
    suptitle = (f"Badput waterfall: {allocated:,.1f} allocated to {productive:,.1f} productive "
                "GPU-hours" + ("" if uncommitted is None else
                               f"\nand {uncommitted:,.1f} GPU-hours of {names.UNCOMMITTED_LABEL}"))
    canvas = Canvas(8, 3.6)
    left_axes, right_axes = _panels(canvas, left_decor, right_decor, suptitle,
                                    ((0.0, allocated * 1.12), (0.0, (top or 1.0) * 1.12)),
                                    (len(labels)))
    chart.background(canvas, left_axes)
    for i, (value, colour) in enumerate(((allocated, "#1f77b4"), (productive, "#2ca02c"))):
        _bar(canvas, left_axes, i, 0.0, value, colour)
        _value(canvas, left_axes.x(i), left_axes.y(value), value)
    chart.dress(canvas, left_axes, left_decor)
    chart.background(canvas, right_axes, "badput-axes")
    level = 0.0
    for i, (name, value) in enumerate(badput.items()):
        _bar(canvas, right_axes, i, level, value, "#9467bd", f"badput-step-{name}")
        _value(canvas, right_axes.x(i), right_axes.y(level + value), value)
        level += value
    _bar(canvas, right_axes, len(badput), 0.0, lost, "#5e3c99", "badput-total")
    _value(canvas, right_axes.x(len(badput)), right_axes.y(lost), lost)
    if uncommitted is not None:
        canvas.defs(_HATCH)
        _bar(canvas, right_axes, len(badput) + 1, lost, uncommitted, "url(#uncommitted-hatch)",
             "uncommitted-step")
        _value(canvas, right_axes.x(len(badput) + 1), right_axes.y(top), uncommitted)
    chart.dress(canvas, right_axes, right_decor)
    canvas.text(canvas.width / 2, room.pad(chart.FONT_PT), suptitle, chart.TITLE_PT,
                anchor="middle", valign="top")
    return canvas.svg("badput-waterfall", right_axes.ylim)


def _bar(canvas: Canvas, axes: Axes, i: int, start: float, value: float, colour: str,
         gid: str = "") -> None:
    """A vertical bar at category `i` from `start` up by `value` (data units)."""
    canvas.rect(axes.x(i - BAR / 2), axes.y(start), axes.x(i + BAR / 2), axes.y(start + value),
                colour, gid=gid)


def _panels(canvas: Canvas, left: Decor, right: Decor, suptitle: str,
            ylims: tuple[tuple[float, float], tuple[float, float]],
            count: int) -> tuple[Axes, Axes]:
    """The waterfall's two axes side by side (widths 1 : 3.2), sharing a top and a bottom, the
    right one's y ticks and label between them; their y ticks are set here."""
    top = max(chart.top_room(decor, suptitle) for decor in (left, right))
    bottom = max(chart.bottom_room(decor) for decor in (left, right))
    height = canvas.height - top - bottom
    most = chart.y_tick_count(height)
    left.y_ticks, right.y_ticks = (_amount_ticks(*ylim, most) for ylim in ylims)
    pad = room.pad(chart.FONT_PT)
    start = pad + chart.left_room(left)
    gap = chart.left_room(right) + pad
    room_left = canvas.width - start - pad - gap
    first = room_left / 4.2
    return (Axes(start, top, first, height, (-0.6, 1.6), ylims[0]),
            Axes(start + first + gap, top, room_left - first, height, (-0.6, count - 0.4),
                 ylims[1]))
