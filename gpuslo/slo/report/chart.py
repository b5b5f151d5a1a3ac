"""What surrounds a report chart's data: the axes' box, frame, ticks, tick labels, axis labels,
title and a legend right of the axes (`svg` draws, `plot_margins` sizes the text). Points.

`Decor` lists the text an axes carries; `box(...)` places an axes inside a canvas so that all of
it fits (the room from `plot_margins`); `background` draws the axes' white face (the element a
browser test measures by its id) and `dress` the frame, ticks, labels, title and legend over the
data. The look is matplotlib's defaults, which drew these charts before: black 0.8 pt frame and
ticks 3.5 pt long outside it, 9 pt labels, a 10.8 pt title, an 8 pt legend in a light frame.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gpuslo.slo.report import plot_margins as room
from gpuslo.slo.report.svg import Axes, Canvas

FONT_PT = 9.0  # tick and axis labels
TITLE_PT = FONT_PT * 1.2  # titles ("large")
LEGEND_PT = 8.0
AXES_LINE = 0.8  # frame and tick width, points
MOST_Y_TICKS = 9  # at most this many intervals on a value axis (matplotlib's "auto" cap)


@dataclass
class Decor:
    """The text and legend of one axes. Ticks are (data value, label); `x_rotation` turns the x
    tick labels (degrees, right-aligned under their tick); `legend` rows are (kind, colour,
    label), kind one of "patch", "faint" (a light patch), "line" (with a dot) or "dashed"."""

    x_ticks: list[tuple[float, str]] = field(default_factory=list)
    y_ticks: list[tuple[float, str]] = field(default_factory=list)
    x_rotation: float = 0.0
    x_label: str = ""
    y_label: str = ""
    title: str = ""
    legend: list[tuple[str, str, str]] = field(default_factory=list)


def top_room(decor: Decor, suptitle: str = "") -> float:
    """Points above the axes: the pad, its title and the figure's suptitle."""
    pad = room.pad(FONT_PT)
    extra = room.height_pt(suptitle, TITLE_PT) + pad / 2 if suptitle else 0.0
    return pad + room.title_room(decor.title, TITLE_PT) + extra


def bottom_room(decor: Decor) -> float:
    """Points below the axes: the x tick labels, the x axis label and the pad."""
    below, _ = room.x_ticks_room([t for _, t in decor.x_ticks], FONT_PT, decor.x_rotation)
    return below + room.label_room(decor.x_label, FONT_PT) + room.pad(FONT_PT)


def left_room(decor: Decor) -> float:
    """Points left of the axes: the y tick labels and axis label, or the first x label turned
    back past the axes' start, whichever is wider; without the pad."""
    side = room.y_ticks_room([t for _, t in decor.y_ticks], FONT_PT) + room.label_room(
        decor.y_label, FONT_PT)
    _, back = room.x_ticks_room([t for _, t in decor.x_ticks], FONT_PT, decor.x_rotation)
    return max(side, back)


def legend_room(decor: Decor, axes_width: float) -> float:
    """Points right of the axes its legend takes (none: 0)."""
    width, _ = room.legend_size([label for _, _, label in decor.legend], LEGEND_PT)
    return 0.01 * axes_width + width if width else 0.0


def y_tick_count(height: float) -> int:
    """How many intervals a value axis `height` points tall may have (one label per two font
    sizes of height, at most `MOST_Y_TICKS`)."""
    return max(1, min(MOST_Y_TICKS, int(height // (2 * FONT_PT))))


def x_tick_count(width: float) -> int:
    """How many intervals a value axis `width` points wide may have (one label per three font
    sizes of width, at most `MOST_Y_TICKS`)."""
    return max(1, min(MOST_Y_TICKS, int(width // (3 * FONT_PT))))


def background(canvas: Canvas, axes: Axes, gid: str = "") -> None:
    """The axes' white face (under the data)."""
    canvas.rect(axes.left, axes.top, axes.right, axes.bottom, "#ffffff", gid=gid)


def dress(canvas: Canvas, axes: Axes, decor: Decor) -> None:
    """Frame, ticks, tick labels, axis labels, title and legend of `axes` (over the data)."""
    canvas.rect(axes.left, axes.top, axes.right, axes.bottom, "none", stroke="#000000",
                stroke_width=AXES_LINE)
    for value, label in decor.x_ticks:
        x = axes.x(value)
        canvas.polyline([(x, axes.bottom), (x, axes.bottom + room.TICK_LENGTH)], "#000000",
                        AXES_LINE)
        anchor = "end" if decor.x_rotation else "middle"
        canvas.text(x, axes.bottom + room.TICK, label, FONT_PT, anchor=anchor, valign="top",
                    rotate=decor.x_rotation)
    for value, label in decor.y_ticks:
        y = axes.y(value)
        canvas.polyline([(axes.left - room.TICK_LENGTH, y), (axes.left, y)], "#000000",
                        AXES_LINE)
        canvas.text(axes.left - room.TICK, y, label, FONT_PT, anchor="end", valign="middle")
    if decor.x_label:
        below, _ = room.x_ticks_room([t for _, t in decor.x_ticks], FONT_PT, decor.x_rotation)
        canvas.text((axes.left + axes.right) / 2, axes.bottom + below + room.LABEL_PAD,
                    decor.x_label, FONT_PT, anchor="middle", valign="top")
    if decor.y_label:
        side = room.y_ticks_room([t for _, t in decor.y_ticks], FONT_PT)
        canvas.text(axes.left - side - room.LABEL_PAD, (axes.top + axes.bottom) / 2,
                    decor.y_label, FONT_PT, anchor="middle", valign="bottom", rotate=90)
    if decor.title:
        centre = centred(canvas, (axes.left + axes.right) / 2, decor.title, TITLE_PT)
        canvas.text(centre, axes.top - room.TITLE_PAD, decor.title, TITLE_PT, anchor="middle",
                    valign="bottom")
    if decor.legend:
        legend(canvas, axes.right + 0.01 * axes.width, axes.top, decor.legend)


def centred(canvas: Canvas, centre: float, text: str, size: float) -> float:
    """The x to centre `text` on: `centre`, moved in just enough to keep the text inside the
    canvas's pad (a title wider than its axes)."""
    half, pad = room.width_pt(text, size) / 2, room.pad(FONT_PT)
    return min(max(centre, pad + half), canvas.width - pad - half)


def legend(canvas: Canvas, left: float, top: float, rows: list[tuple[str, str, str]]) -> None:
    """A legend whose frame's top left corner is (left, top)."""
    size = LEGEND_PT
    width, height = room.legend_size([label for _, _, label in rows], size)
    canvas.rect(left, top, left + width, top + height, "#ffffff", opacity=0.8, stroke="#cccccc")
    handle = left + room.LEGEND_PAD * size
    for i, (kind, colour, label) in enumerate(rows):
        middle = top + (room.LEGEND_PAD + room.LINE / 2 + i * (room.LINE + room.LEGEND_SPACING)
                        ) * size
        end = handle + room.LEGEND_HANDLE * size
        if kind in ("patch", "faint"):
            canvas.rect(handle, middle - 0.35 * size, end, middle + 0.35 * size, colour,
                        opacity=0.2 if kind == "faint" else None)
        else:
            canvas.polyline([(handle, middle), (end, middle)], colour,
                            dash="5.55,2.4" if kind == "dashed" else "")
            if kind == "line":
                canvas.circle((handle + end) / 2, middle, 2.0, colour)
        canvas.text(end + room.LEGEND_GAP * size, middle, label, size, valign="middle")
