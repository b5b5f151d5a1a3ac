"""Plain SVG drawing for the report's four charts, with no plotting library (issue 30: importing
matplotlib and drawing the four plots through it was ~0.55 s CPU of a new `gpuslo report`
process on a 10,000-GPU week, a third of what it spent beyond the engine; bench/report_files.py).

Units: points (1/72 inch), which are the SVG's user units (`width="576pt"`, `viewBox="0 0 576
..."`), y growing downwards; font sizes are points too. Text is SVG text in DejaVu Sans (or the
browser's sans-serif of about its width); its room is worked out from the font's advance widths
(`plot_margins.text_width`), never measured. The output is deterministic (no clock, no random ids:
an id is what the caller gives) and well-formed XML; every text goes through `html.escape`.

- `Canvas(width_in, height_in)`: `rect`, `polyline`, `circle`, `text` (one line or several,
  rotated about its anchor), `defs`; `svg(plot, y_range)` gives the `<svg>` element, with
  `data-plot` and `data-y-range` when given (tests/slo/test_report_browser.py reads them).
- `Axes(left, top, width, height, xlim, ylim)`: data to points (`x`, `y`; a range given high to
  low inverts the axis).
- `nice_ticks(low, high, most)`: tick values at 1, 2, 2.5 or 5 times a power of ten, as
  matplotlib's default locator (`MaxNLocator(steps=[1, 2, 2.5, 5, 10])`) picks them.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from html import escape

FONT = "DejaVu Sans, Bitstream Vera Sans, Arial, Helvetica, sans-serif"
ASCENT, DESCENT = 0.76, 0.24  # DejaVu Sans's ascender and descender, in font sizes (rounded)
LINE = 1.2  # a text line's height, in font sizes
_STEPS = (1.0, 2.0, 2.5, 5.0, 10.0)


def _n(value: float) -> str:
    """A coordinate as short, stable text (two decimals, no `-0`)."""
    text = f"{value:.2f}".rstrip("0").rstrip(".")
    return "0" if text in ("-0", "") else text


def nice_ticks(low: float, high: float, most: int) -> list[float]:
    """Tick values within [low, high] (floats, ascending): the multiples of the smallest step
    of 1, 2, 2.5 or 5 times a power of ten that is at least (high - low) / `most`, as
    matplotlib's `MaxNLocator` steps them. `low < high`, `most >= 1`; raises ValueError
    otherwise."""
    if not low < high or most < 1:
        raise ValueError(f"ticks need low < high and most >= 1: {low}, {high}, {most}")
    raw = (high - low) / most
    scale = 10.0 ** math.floor(math.log10(raw))
    step = next(f * scale for f in _STEPS if f * scale >= raw * (1 - 1e-9))
    first, last = math.ceil(low / step - 1e-9), math.floor(high / step + 1e-9)
    return [round(k * step, 12) for k in range(first, last + 1)]


@dataclass(frozen=True)
class Axes:
    """A plotting box at (`left`, `top`), `width` x `height` points, showing `xlim` and `ylim`
    (data units; (high, low) inverts)."""

    left: float
    top: float
    width: float
    height: float
    xlim: tuple[float, float]
    ylim: tuple[float, float]

    def x(self, value: float) -> float:
        low, high = self.xlim
        return self.left + (value - low) / (high - low) * self.width

    def y(self, value: float) -> float:
        low, high = self.ylim
        return self.top + self.height - (value - low) / (high - low) * self.height

    @property
    def right(self) -> float:
        return self.left + self.width

    @property
    def bottom(self) -> float:
        return self.top + self.height


class Canvas:
    """One SVG figure, `width_in` x `height_in` inches, drawn in the order of the calls."""

    def __init__(self, width_in: float, height_in: float) -> None:
        self.width, self.height = width_in * 72, height_in * 72
        self._defs: list[str] = []
        self._parts: list[str] = []

    def defs(self, element: str) -> None:
        """A `<defs>` child (a hatch pattern), written as given."""
        self._defs.append(element)

    def rect(self, x0: float, y0: float, x1: float, y1: float, fill: str, *, gid: str = "",
             opacity: float | None = None, stroke: str = "", stroke_width: float = 0.8) -> None:
        """A rectangle between two corners (points, any order)."""
        left, top = min(x0, x1), min(y0, y1)
        attrs = [f'x="{_n(left)}" y="{_n(top)}" width="{_n(abs(x1 - x0))}" '
                 f'height="{_n(abs(y1 - y0))}" fill="{fill}"']
        if gid:
            attrs.append(f'id="{escape(gid)}"')
        if opacity is not None:
            attrs.append(f'fill-opacity="{opacity:g}"')
        if stroke:
            attrs.append(f'stroke="{stroke}" stroke-width="{stroke_width:g}"')
        self._parts.append(f"<rect {' '.join(attrs)}/>")

    def polyline(self, points: list[tuple[float, float]], stroke: str, width: float = 1.5, *,
                 dash: str = "", gid: str = "") -> None:
        """A line through `points` (points)."""
        path = " ".join(f"{_n(x)},{_n(y)}" for x, y in points)
        extra = (f' stroke-dasharray="{dash}"' if dash else "") + (
            f' id="{escape(gid)}"' if gid else "")
        self._parts.append(f'<polyline points="{path}" fill="none" stroke="{stroke}" '
                           f'stroke-width="{width:g}" stroke-linecap="square"{extra}/>')

    def circle(self, x: float, y: float, radius: float, fill: str) -> None:
        self._parts.append(f'<circle cx="{_n(x)}" cy="{_n(y)}" r="{radius:g}" fill="{fill}"/>')

    def group(self, gid: str, draw) -> None:
        """What `draw()` adds, in one `<g id=gid>` (a line and its markers: one box to measure)."""
        start = len(self._parts)
        draw()
        self._parts[start:] = [f'<g id="{escape(gid)}">', *self._parts[start:], "</g>"]

    def text(self, x: float, y: float, text: str, size: float, *, anchor: str = "start",
             valign: str = "baseline", rotate: float = 0.0, weight: str = "") -> None:
        """`text` (lines split at `\\n`) at (x, y): `anchor` start, middle or end; `valign` where
        y is: the first line's `baseline`, the block's `top`, `middle` or `bottom`; `rotate`
        degrees anticlockwise about (x, y)."""
        lines = text.split("\n")
        block = len(lines) * LINE * size
        shift = {"baseline": 0.0, "top": ASCENT * size, "middle": ASCENT * size - block / 2,
                 "bottom": ASCENT * size - block}[valign]
        turn = f' transform="rotate({_n(-rotate)} {_n(x)} {_n(y)})"' if rotate else ""
        bold = f' font-weight="{weight}"' if weight else ""
        spans = "".join(
            f'<tspan x="{_n(x)}" y="{_n(y + shift + i * LINE * size)}">{escape(line)}</tspan>'
            for i, line in enumerate(lines)
        )
        self._parts.append(f'<text font-size="{size:g}" text-anchor="{anchor}" '
                           f'fill="#000000"{bold}{turn}>{spans}</text>')

    def svg(self, plot: str = "", y_range: tuple[float, float] | None = None) -> str:
        """The `<svg>` element (text ending in a newline)."""
        data = f' data-plot="{escape(plot)}"' if plot else ""
        if plot and y_range is not None:
            data += f' data-y-range="{y_range[0]:.6g} {y_range[1]:.6g}"'
        defs = f"<defs>{''.join(self._defs)}</defs>\n" if self._defs else ""
        return (
            f'<svg xmlns="http://www.w3.org/2000/svg"{data} width="{_n(self.width)}pt" '
            f'height="{_n(self.height)}pt" viewBox="0 0 {_n(self.width)} {_n(self.height)}" '
            f'version="1.1" font-family="{FONT}">\n{defs}'
            + "\n".join(self._parts) + "\n</svg>\n"
        )
