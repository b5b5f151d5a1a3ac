"""The report charts' room for their text (`plot_margins`, `chart`, issue 30: charts drawn as
plain SVG, their margins worked out from the text): the font widths are matplotlib's own
measurement of DejaVu Sans, and every text of every chart, boxed by those widths, lies inside
the figure and clear of its axes. (In a browser: tests/slo/test_report_browser.py.)"""

from __future__ import annotations

import math
import re
import xml.etree.ElementTree as ET

import pytest

from gpuslo import names
from gpuslo.slo.report import chart, plot_margins, plots
from gpuslo.slo.report.svg import ASCENT, DESCENT, nice_ticks

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
NS = "{http://www.w3.org/2000/svg}"


@pytest.mark.parametrize("text", ["2026-11-23", "1,500,000", "observability",
                                  "objective 0.9800", "uncommitted progress", "Ünïcode"])
def test_text_width_is_the_fonts_own(text):
    matplotlib = pytest.importorskip("matplotlib")
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

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


def _text_boxes(svg: str) -> list[tuple[str, tuple[float, float, float, float]]]:
    """(text, (x0, y0, x1, y1) points) of every <text>: its lines' widths from the font's
    advances, turned as its transform says."""
    boxes = []
    for element in ET.fromstring(svg).iter(f"{NS}text"):
        size = float(element.get("font-size"))
        spans = list(element)
        lines = [span.text or "" for span in spans]
        x, y = float(spans[0].get("x")), float(spans[0].get("y"))
        width = max(plot_margins.width_pt(line, size) for line in lines)
        x0 = {"start": x, "middle": x - width / 2, "end": x - width}[element.get("text-anchor")]
        top = y - ASCENT * size
        bottom = float(spans[-1].get("y")) + DESCENT * size
        corners = [(x0, top), (x0 + width, top), (x0, bottom), (x0 + width, bottom)]
        turn = re.fullmatch(r"rotate\((\S+) (\S+) (\S+)\)", element.get("transform") or "")
        if turn:
            angle, cx, cy = (float(v) for v in turn.groups())
            cos, sin = math.cos(math.radians(angle)), math.sin(math.radians(angle))
            corners = [(cx + (px - cx) * cos - (py - cy) * sin,
                        cy + (px - cx) * sin + (py - cy) * cos) for px, py in corners]
        xs, ys = [c[0] for c in corners], [c[1] for c in corners]
        boxes.append(("\n".join(lines), (min(xs), min(ys), max(xs), max(ys))))
    return boxes


def _axes_frames(svg: str) -> list[tuple[float, float, float, float]]:
    """(x0, y0, x1, y1) of each axes' frame (the stroked, unfilled rect)."""
    out = []
    for rect in ET.fromstring(svg).iter(f"{NS}rect"):
        if rect.get("fill") == "none":
            x, y = float(rect.get("x")), float(rect.get("y"))
            out.append((x, y, x + float(rect.get("width")), y + float(rect.get("height"))))
    return out


def _outside(svg: str) -> list[str]:
    """The texts that reach past the figure or into an axes' frame (values written on bars
    are inside on purpose: 7 pt)."""
    root = ET.fromstring(svg)
    width, height = (float(v) for v in root.get("viewBox").split()[2:])
    bad = []
    frames = _axes_frames(svg)
    for text, (x0, y0, x1, y1) in _text_boxes(svg):
        if x0 < -0.5 or y0 < -0.5 or x1 > width + 0.5 or y1 > height + 0.5:
            bad.append(f"{text!r} past the figure")
        for fx0, fy0, fx1, fy1 in frames:
            inside = x0 < fx1 - 1 and x1 > fx0 + 1 and y0 < fy1 - 1 and y1 > fy0 + 1
            if inside and not re.fullmatch(r"[\d,]+", text):
                bad.append(f"{text!r} into the axes")
    return bad


@pytest.mark.parametrize("name", PLOTS)
def test_every_text_inside_the_figure_and_clear_of_the_axes(name):
    assert _outside(PLOTS[name]()) == []


def test_the_check_sees_a_clipped_label(monkeypatch):
    """The negative: the same chart with no room kept at the edges has text past the figure."""
    monkeypatch.setattr(chart, "left_room", lambda decor: 0.0)
    monkeypatch.setattr(plot_margins, "pad", lambda font: 0.0)
    assert any("past the figure" in why for why in _outside(PLOTS["waterfall"]()))


@pytest.mark.parametrize(("low", "high", "most", "ticks"), [
    (0.0, 36_000.0, 8, [0, 5000, 10000, 15000, 20000, 25000, 30000, 35000]),
    (0.0, 1.0, 5, [0, 0.2, 0.4, 0.6, 0.8, 1.0]),
    (0.976, 1.0, 9, [0.98, 0.985, 0.99, 0.995, 1.0]),
    (0.0, 176_664.0, 7, [0, 50_000, 100_000, 150_000]),  # the step at least a seventh
    (0.0, 0.55, 3, [0.0, 0.2, 0.4]),
])
def test_nice_ticks_are_round_and_within_the_range(low, high, most, ticks):
    assert nice_ticks(low, high, most) == pytest.approx(ticks)


def test_nice_ticks_refuse_an_empty_range():
    with pytest.raises(ValueError):
        nice_ticks(1.0, 1.0, 5)


def test_labels_from_data_are_escaped_and_read_back():
    svg = plots.badput_waterfall(100.0, {'a<b&"c': 5.0}, 90.0)
    texts = ["".join(t.itertext()) for t in ET.fromstring(svg).iter(f"{NS}text")]
    assert 'a<b&"c' in texts
    assert "a<b" not in svg


def test_the_ids_the_browser_tests_measure():
    """The waterfall's axes, steps, total and uncommitted step, and the ratio plot's axes, line
    and objective carry the ids tests/slo/test_report_browser.py looks up; without uncommitted
    progress there is no such step, nor its hatch pattern."""
    svg = plots.badput_waterfall(1444186.1, BADPUT, 1267800.5, 39.0)
    ids = {e.get("id") for e in ET.fromstring(svg).iter() if e.get("id")}
    assert {"badput-axes", "badput-total", "uncommitted-step", "uncommitted-hatch"} <= ids
    assert {f"badput-step-{name}" for name in BADPUT} <= ids
    assert 'data-plot="badput-waterfall" data-y-range="0 ' in svg
    plain = plots.badput_waterfall(1444186.1, BADPUT, 1267800.5)
    assert "uncommitted" not in plain
    ratio = plots.usable_ratio_per_day(DAILY, 0.98)
    ids = {e.get("id") for e in ET.fromstring(ratio).iter() if e.get("id")}
    assert ids == {"usable-ratio-axes", "usable-ratio-line", "usable-ratio-objective"}
