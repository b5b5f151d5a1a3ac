"""The report plots' margins from their labels (`plot_margins`, issue 30: in place of
tight_layout): the font widths are matplotlib's own measurement, and every text of every plot
lands inside the figure, clear of its axes, as drawn by Agg."""

from __future__ import annotations

import matplotlib
import pytest
from matplotlib.backends.backend_agg import FigureCanvasAgg
from matplotlib.figure import Figure

from gpuslo import names
from gpuslo.slo.report import plot_margins, plots

DAILY = [{"day": f"2026-11-{23 + i}", "usable_ratio": 0.99 + i / 1000,
          **{f"lost_{layer}": 1234.5 * (i + 1) for layer in names.LAYERS}} for i in range(7)]
BADPUT = {"initialization": 2156.0, "checkpoint_save": 36433.5, "checkpoint_restore": 892.8,
          "wasted_progress": 11457.4, "recovery": 98080.7, "other": 13796.6}
PLOTS = {
    "usable ratio": lambda: plots.usable_ratio_per_day(DAILY, 0.98),
    "lost per day": lambda: plots.lost_by_layer_per_day(DAILY),
    "lost by layer": lambda: plots.lost_by_layer({"node": 123456.7}, {"training": 9876543.2}),
    "waterfall": lambda: plots.badput_waterfall(1444186.1, BADPUT, 1267800.5, 39.0),
}


@pytest.mark.parametrize("text", ["2026-11-23", "1,500,000", "observability",
                                  "objective 0.9800", "uncommitted progress", "Ünïcode"])
def test_text_width_is_the_fonts_own(text):
    with matplotlib.rc_context({"font.size": 9, "figure.dpi": 100}):
        fig = Figure()
        canvas = FigureCanvasAgg(fig)
        shown = fig.text(0, 0, text)
        measured = shown.get_window_extent(canvas.get_renderer()).width / 100  # inches
    estimate = plot_margins.text_width(text, 9)
    if text.isascii():  # never narrower than drawn, at most 10 % wider
        assert measured <= estimate <= measured * 1.10
    else:  # other characters are taken as wide: room, never clipped
        assert estimate >= measured


def _drawn(make) -> Figure:
    """The figure a plot function saves (captured at `_svg`), drawn by Agg."""
    kept = []
    real = plots._svg
    plots._svg = lambda fig, *rest: kept.append(fig) or ""
    try:
        make()
    finally:
        plots._svg = real
    fig = kept[0]
    fig.canvas.draw()
    return fig


def _outside(fig: Figure) -> list[str]:
    """The visible texts that reach past the figure, or into an axes they label."""
    renderer = fig.canvas.get_renderer()
    page = fig.bbox
    bad = []
    for text in fig.findobj(matplotlib.text.Text):
        if not text.get_visible() or not text.get_text():
            continue
        box = text.get_window_extent(renderer)
        if box.x0 < page.x0 - 1 or box.x1 > page.x1 + 1 or box.y0 < page.y0 - 1 or (
            box.y1 > page.y1 + 1
        ):
            bad.append(f"{text.get_text()!r} past the figure")
    for ax in fig.get_axes():
        frame = ax.get_window_extent(renderer)
        for label in (*ax.get_yticklabels(), ax.yaxis.label):
            if label.get_text() and label.get_window_extent(renderer).x1 > frame.x0 + 1:
                bad.append(f"{label.get_text()!r} into the axes")
        for label in (*ax.get_xticklabels(), ax.xaxis.label):
            if label.get_text() and label.get_window_extent(renderer).y1 > frame.y0 + 1:
                bad.append(f"{label.get_text()!r} into the axes")
    return bad


@pytest.mark.parametrize("name", PLOTS)
def test_every_text_inside_the_figure_and_clear_of_the_axes(name):
    assert _outside(_drawn(PLOTS[name])) == []


def test_the_check_sees_a_clipped_label():
    """The negative: the same plot with its margins taken away has text past the figure."""
    real = plot_margins.fit
    plot_margins.fit = lambda fig, font: fig.subplots_adjust(left=0.01, right=0.99, bottom=0.01,
                                                             top=0.99)
    try:
        fig = _drawn(PLOTS["waterfall"])
    finally:
        plot_margins.fit = real
    assert any("past the figure" in why for why in _outside(fig))
