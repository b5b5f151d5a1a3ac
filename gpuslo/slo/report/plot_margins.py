"""Room for the report charts' text, worked out from the text itself (issue 30): the widths
of DejaVu Sans's advances, the font the charts' SVG asks for (`svg.FONT`; a browser without it
draws a sans-serif of about its width), so the margins are known before anything is drawn.

Sizes follow the matplotlib defaults the charts were first drawn with: tick 3.5 pt long with a
3.5 pt pad, axis label pad 4 pt, title pad 6 pt, a text line 1.2 font sizes high, an outer pad of
1.08 font sizes, a legend's border pad 0.4, handle 2.0 and handle-text pad 0.8 font sizes.
`text_width` and `text_height` are inches (tests/slo/test_plot_margins.py checks the widths
against matplotlib's own measurement); the rest is points, floats.
"""

from __future__ import annotations

import math

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
TICK_LENGTH = 3.5  # points
LABEL_PAD = 4.0  # axis label pad, points
TITLE_PAD = 6.0  # title pad, points
PAD = 1.08  # the pad around the figure's edge, in font sizes
LEGEND_PAD, LEGEND_HANDLE, LEGEND_GAP = 0.4, 2.0, 0.8  # font sizes
LEGEND_SPACING = 0.5  # between legend rows, font sizes
LEGEND = (LEGEND_PAD + LEGEND_HANDLE + LEGEND_GAP + LEGEND_PAD) + 0.5  # ... and the frame


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


def width_pt(text: str, size_pt: float) -> float:
    """`text_width` in points."""
    return text_width(text, size_pt) * 72


def height_pt(text: str, size_pt: float) -> float:
    """`text_height` in points."""
    return text_height(text, size_pt) * 72


def y_ticks_room(labels: list[str], size_pt: float) -> float:
    """Points the tick marks and labels of a value axis on the left take (none: 0)."""
    return TICK + max(width_pt(t, size_pt) for t in labels) if labels else 0.0


def x_ticks_room(labels: list[str], size_pt: float, rotation: float) -> tuple[float, float]:
    """(below, back) points: how far an x axis's ticks and labels reach below it, and how far
    its first label, right-aligned and turned `rotation` degrees, reaches left of its tick."""
    if not labels:
        return 0.0, 0.0
    turn = math.radians(rotation % 180)
    widths = [width_pt(t, size_pt) for t in labels]
    heights = [height_pt(t, size_pt) for t in labels]
    below = max(w * math.sin(turn) + h * math.cos(turn)
                for w, h in zip(widths, heights, strict=True))
    back = widths[0] * math.cos(turn) if rotation else widths[0] / 2
    return TICK + below, back


def label_room(text: str, size_pt: float) -> float:
    """Points an axis label takes beside its tick labels, with its pad (none: 0)."""
    return LABEL_PAD + height_pt(text, size_pt) if text else 0.0


def title_room(text: str, size_pt: float) -> float:
    """Points above the axes for a title, with its pad (none: 0)."""
    return TITLE_PAD + height_pt(text, size_pt) if text else 0.0


def legend_size(labels: list[str], size_pt: float) -> tuple[float, float]:
    """(width, height) points of a legend of `labels`, frame included (none: 0, 0)."""
    if not labels:
        return 0.0, 0.0
    width = max(width_pt(t, size_pt) for t in labels) + LEGEND * size_pt
    rows = len(labels) * LINE * size_pt + (len(labels) - 1) * LEGEND_SPACING * size_pt
    return width, rows + 2 * LEGEND_PAD * size_pt


def pad(font_pt: float) -> float:
    """Points kept free at the figure's edge for a base font of `font_pt`."""
    return PAD * font_pt
