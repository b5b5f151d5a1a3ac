"""The weekly report's plots as inline SVG text (matplotlib, Agg backend, no display needed).

Deterministic bytes: `svg.hashsalt` fixed, `metadata={"Date": None}`, text kept as text
(`svg.fonttype = "none"`, so no font outlines), and only data from the report document. Labels
are escaped by matplotlib's SVG writer; the XML prolog and DOCTYPE are dropped so the `<svg>`
element can sit inside the HTML page.

- `lost_by_layer_per_day(daily)` — stacked bars of unusable GPU-hours (provisioned, not usable)
  per UTC day by layer (the daily rows hold capacity only, so job badput is not in it);
- `lost_by_layer(unusable, badput)` — every lost GPU-hour by layer: unusable capacity and job
  badput stacked, so the bars sum to the lost total of the causes table;
- `usable_ratio_per_day(daily, objective)` — the usable ratio per day against the objective;
- `badput_waterfall(allocated, badput, productive)` — allocated GPU-hours stepping down through
  each badput category to productive.
Every value axis starts at 0 (a bar's height is its value), and every legend sits outside the
axes, right of the data, so it never hides a bar. Each returns an SVG string, or None when the
document has nothing to plot.
"""

from __future__ import annotations

import io

import matplotlib

matplotlib.use("Agg")
import matplotlib.pyplot as plt  # noqa: E402

from gpuslo import names  # noqa: E402

_RC = {"svg.hashsalt": "gpuslo", "svg.fonttype": "none", "font.size": 9, "figure.dpi": 100}
MAX_BARS = 62
COLORS = {names.LAYER_NODE: "#d62728", names.LAYER_PLATFORM: "#ff7f0e",
          names.LAYER_TRAINING: "#9467bd", names.LAYER_OBSERVABILITY: "#7f7f7f"}


def _svg(fig) -> str:
    buffer = io.StringIO()
    fig.savefig(buffer, format="svg", metadata={"Date": None}, bbox_inches=None)
    plt.close(fig)
    text = buffer.getvalue()
    return text[text.index("<svg"):].strip() + "\n"


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
    with plt.rc_context(_RC):
        fig, ax = plt.subplots(figsize=(8, 3.2))
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
        fig.tight_layout()
        return _svg(fig)


def _value(ax, x: float, top: float, value: float) -> None:
    """The bar's GPU-hours written just above it."""
    ax.annotate(f"{value:,.0f}", (x, top), xytext=(0, 2), textcoords="offset points",
                ha="center", va="bottom", fontsize=7)


def _legend_outside(ax) -> None:
    """The legend right of the axes, outside the data (tight_layout makes room for it)."""
    ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), borderaxespad=0, fontsize=8)


def lost_by_layer(unusable: dict[str, float], badput: dict[str, float]) -> str | None:
    """Horizontal stacked bars per layer: unusable capacity GPU-hours, then job badput GPU-hours;
    each bar is the layer's lost GPU-hours."""
    total = sum(unusable.values()) + sum(badput.values())
    if not total:
        return None
    layers = list(names.LAYERS)
    with plt.rc_context(_RC):
        fig, ax = plt.subplots(figsize=(8, 2.6))
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
        fig.tight_layout()
        return _svg(fig)


def _day_ticks(ax, daily: list[dict]) -> None:
    labels = _days(daily)
    every = max(1, -(-len(labels) // 8))  # at most 8 labels: rotated dates must not overlap
    ticks = list(range(0, len(labels), every))
    ax.set_xticks(ticks, [labels[i] for i in ticks], rotation=30, ha="right")


def usable_ratio_per_day(daily: list[dict], objective: float | None) -> str | None:
    """Line: usable ratio per day, with the objective as a dashed line."""
    points = [
        (i, d["usable_ratio"]) for i, d in enumerate(daily) if d.get("usable_ratio") is not None
    ]
    if not points:
        return None
    with plt.rc_context(_RC):
        fig, ax = plt.subplots(figsize=(8, 3.2))
        ax.plot([p[0] for p in points], [p[1] for p in points], marker="o", markersize=3,
                color="#1f77b4", label="usable ratio")
        if objective is not None:
            ax.axhline(
                objective, color="#d62728", linestyle="--", label=f"objective {objective:.4f}"
            )
        _day_ticks(ax, daily)
        ax.set_ylim(0.0, 1.02)
        ax.set_ylabel("usable / provisioned")
        ax.set_title("Usable GPU ratio per day against the objective")
        _legend_outside(ax)
        fig.tight_layout()
        return _svg(fig)


def badput_waterfall(allocated: float, badput: dict[str, float], productive: float) -> str | None:
    """Waterfall: allocated → minus each badput category → productive (GPU-hours)."""
    if not allocated:
        return None
    with plt.rc_context(_RC):
        fig, ax = plt.subplots(figsize=(8, 3.4))
        labels, level = ["allocated"], allocated
        ax.bar(0, allocated, color="#1f77b4")
        _value(ax, 0, allocated, allocated)
        for i, (name, value) in enumerate(badput.items(), start=1):
            ax.bar(i, value, bottom=level - value, color="#9467bd")
            _value(ax, i, level, value)  # a thin bar on a zero-based axis still reads
            labels.append(name)
            level -= value
        ax.bar(len(labels), productive, color="#2ca02c")
        _value(ax, len(labels), productive, productive)
        labels.append("productive")
        ax.set_xticks(range(len(labels)), labels, rotation=30, ha="right")
        ax.set_ylim(0, allocated * 1.05)
        ax.set_ylabel("GPU-hours")
        ax.set_title(
            f"Badput waterfall: {allocated:,.1f} allocated to {productive:,.1f} productive "
            "GPU-hours"
        )
        fig.tight_layout()
        return _svg(fig)
