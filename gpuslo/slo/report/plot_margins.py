"""The report plots' margins worked out from their labels, in place of matplotlib's tight_layout.

tight_layout measures every tick label, title and legend text through the Agg renderer before
the figure is drawn, then savefig lays the same text out again: at 10,000 GPUs that was ~0.09 s
CPU of the four plots' ~0.34 s (issue 30, bench/report_files.py). Here the room each side of
the axes needs is summed from the text the axes will draw: the tick labels (the locator's ticks
through the formatter, or the fixed labels), the axis labels, titles, the figure's suptitle and
a legend placed right of the axes, each text's width from DejaVu Sans's advance widths (the
font matplotlib writes into the SVG, `svg.fonttype = none`; the browser draws with it when
installed, or a sans-serif of about its width). Sizes follow matplotlib's defaults: tick 3.5 pt
long with a 3.5 pt pad, axis label pad 4 pt, title pad 6 pt, a line 1.2 font sizes high, and
tight_layout's outer pad (1.08 font sizes).

`fit(fig, font_pt)`: one row of axes (one, or the waterfall's two side by side), set with
`subplots_adjust`; the widths are inches, floats.
"""

from __future__ import annotations

import math

import matplotlib
from matplotlib.font_manager import FontProperties

# DejaVu Sans (Book) advance widths of the printable ASCII characters " " .. "~", in font units
# of 2048 per em: read from the TrueType file matplotlib bundles (mpl-data/fonts/ttf/
# DejaVuSans.ttf, `FT2Font.load_char(c, NO_SCALE).horiAdvance`). Any other character is taken
# as an "M"-wide one (wide, so a label in another script gets room rather than clipped).
_ADVANCE = (
    651, 821, 942, 1716, 1303, 1946, 1597, 563, 799, 799, 1024, 1716, 651, 739, 651, 690, 1303,
    1303, 1303, 1303, 1303, 1303, 1303, 1303, 1303, 1303, 690, 690, 1716, 1716, 1716, 1087, 2048,
    1401, 1405, 1430, 1577, 1294, 1178, 1587, 1540, 604, 604, 1343, 1141, 1767, 1532, 1612, 1235,
    1612, 1423, 1300, 1251, 1499, 1401, 2025, 1403, 1251, 1403, 799, 690, 799, 1716, 1024, 1024,
    1255, 1300, 1126, 1300, 1260, 721, 1300, 1298, 569, 569, 1186, 569, 1995, 1298, 1253, 1300,
    1300, 842, 1067, 803, 1298, 1212, 1675, 1212, 1212, 1075, 1303, 690, 1303, 1716,
)
_WIDE = 1767  # "M"
# Agg fits each glyph to whole pixels at 100 dpi, which draws a label up to ~5 % wider than its
# advances sum to (measured against `Text.get_window_extent` at 7-10.8 pt): room for that.
SLACK = 1.06
_PT = 1 / 72  # inches per point
LINE = 1.2  # a text line's height, in font sizes
TICK = 3.5 + 3.5  # tick length and the label's pad, points
LABEL_PAD = 4.0  # axis label pad, points
TITLE_PAD = 6.0  # title pad, points
PAD = 1.08  # tight_layout's pad around the figure's edge, in font sizes
LEGEND = (0.4 + 2.0 + 0.8 + 0.4) + 0.5  # border pad, handle, handle-text pad, border pad, frame


def text_width(text: str, size_pt: float) -> float:
    """Width in inches of `text`'s widest line at `size_pt`."""
    widest = max(
        sum(_ADVANCE[ord(c) - 32] if 32 <= ord(c) < 127 else _WIDE for c in line)
        for line in text.split("\n")
    )
    return widest / 2048 * size_pt * _PT * SLACK


def text_height(text: str, size_pt: float) -> float:
    """Height in inches of `text`'s lines at `size_pt` (none: 0)."""
    return (text.count("\n") + 1) * LINE * size_pt * _PT if text else 0.0


def _ticks(axis) -> tuple[list[str], float, float]:
    """(tick label texts, rotation in degrees, font size) an axis will draw."""
    labels = axis.get_ticklabels()  # the ticks in view, formatted (matplotlib updates them)
    texts = [t.get_text() for t in labels]
    first = labels[0] if labels else None
    rotation = first.get_rotation() if first is not None else 0.0
    size = first.get_fontsize() if first is not None else axis.label.get_fontsize()
    return [t for t in texts if t], rotation, size


def _tick_extent(axis) -> tuple[float, float]:
    """(across, along) inches: how far the tick labels reach out from the axis, and how far a
    rotated first label reaches back past the axis's start (right-aligned, as set)."""
    texts, rotation, size = _ticks(axis)
    if not texts:
        return 0.0, 0.0
    turn = math.radians(rotation % 180)
    widths = [text_width(t, size) for t in texts]
    heights = [text_height(t, size) for t in texts]
    if axis.axis_name == "y":
        return TICK * _PT + max(widths), 0.0
    across = max(w * math.sin(turn) + h * math.cos(turn) for w, h in zip(widths, heights,
                                                                         strict=True))
    back = widths[0] * math.cos(turn) if rotation else widths[0] / 2
    return TICK * _PT + across, back


def _label(axis) -> float:
    """Inches the axis label takes beside the tick labels (with its pad), 0 without one."""
    text = axis.label.get_text()
    return (LABEL_PAD * _PT + text_height(text, axis.label.get_fontsize())) if text else 0.0


def _legend_width(ax) -> float:
    """Inches a legend right of the axes takes (`bbox_to_anchor` x > 1), 0 without one."""
    legend = ax.get_legend()
    if legend is None:
        return 0.0
    texts = legend.get_texts()
    size = texts[0].get_fontsize() if texts else 8.0
    widest = max((text_width(t.get_text(), size) for t in texts), default=0.0)
    return 0.01 * ax.get_position().width * ax.figure.get_figwidth() + widest + LEGEND * size * _PT


def _title(ax) -> float:
    """Inches above the axes for its title (with the pad), 0 without one."""
    title = ax.title.get_text()
    return (TITLE_PAD * _PT + text_height(title, ax.title.get_fontsize())) if title else 0.0


def fit(fig, font_pt: float) -> None:
    """Set `fig`'s subplot margins (and the space between its axes, one row) to what its text
    needs; `font_pt` is the figure's base font size (tight_layout's pad is 1.08 of it)."""
    axes = fig.get_axes()
    width, height = fig.get_size_inches()
    pad = PAD * font_pt * _PT
    sides = [_tick_extent(ax.yaxis)[0] + _label(ax.yaxis) for ax in axes]
    bottoms = [_tick_extent(ax.xaxis) for ax in axes]
    left = max(sides[0], bottoms[0][1]) + pad
    right = _legend_width(axes[-1]) + pad
    bottom = max(extent + _label(ax.xaxis) for ax, (extent, _) in zip(axes, bottoms,
                                                                       strict=True)) + pad
    top = max(_title(ax) for ax in axes) + pad
    suptitle = fig.get_suptitle()
    if suptitle:
        size = FontProperties(size=matplotlib.rcParams["figure.titlesize"]).get_size_in_points()
        top += text_height(suptitle, size) + pad / 2
    gaps = [max(side, back) + _legend_width(ax) + pad
            for ax, side, (_, back) in zip(axes[:-1], sides[1:], bottoms[1:], strict=True)]
    gap = max(gaps, default=0.0)
    # A title wider than its axes overhangs both sides equally: the outer axes' titles keep
    # inside the figure (the axes narrow to make room, so the overhang is worked out twice).
    for _ in range(2):
        widths = _axes_widths(fig, width - left - right - gap * len(gaps))
        left = max(left, _overhang(axes[0], widths[0]) + pad)
        right = max(right, _overhang(axes[-1], widths[-1]) + pad)
    room = width - left - right
    wspace = len(axes) * gap / (room - len(gaps) * gap)  # the gap over the mean axes width
    fig.subplots_adjust(left=left / width, right=1 - right / width, bottom=bottom / height,
                        top=1 - top / height, wspace=wspace)


def _axes_widths(fig, room: float) -> list[float]:
    """Inches of each axes of one row sharing `room` by the grid's width ratios."""
    ratios = fig.get_axes()[0].get_gridspec().get_width_ratios() or [1] * len(fig.get_axes())
    return [room * r / sum(ratios) for r in ratios]


def _overhang(ax, width: float) -> float:
    """Inches a centred title wider than `width` (its axes') reaches past each side."""
    title = ax.title.get_text()
    return max(0.0, (text_width(title, ax.title.get_fontsize()) - width) / 2) if title else 0.0
