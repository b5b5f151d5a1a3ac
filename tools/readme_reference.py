"""Reference tables for the README, generated from `gpuslo.names` (the metrics) and
`gpuslo.signal_names` (the `inspect` signals) so the documentation cannot drift from the
vocabulary (tests/test_readme.py compares the README's marked blocks with these).

A development script, not part of the package: `python -m tools.readme_reference` (from the
checkout) rewrites the README's marked blocks in place.
"""

from __future__ import annotations

from pathlib import Path

from gpuslo import names, signal_names

METRICS_BEGIN = "<!-- metric-reference:begin (generated: python -m tools.readme_reference) -->"
METRICS_END = "<!-- metric-reference:end -->"
SIGNALS_BEGIN = "<!-- signal-reference:begin (generated: python -m tools.readme_reference) -->"
SIGNALS_END = "<!-- signal-reference:end -->"


def metric_reference_markdown() -> str:
    """The metric contract (DESIGN.md §4) as a Markdown table, in `names.METRICS` order."""
    rows = ["| metric | type | labels | meaning |", "|---|---|---|---|"]
    for metric, (kind, labels, help_text) in names.METRICS.items():
        label_text = ", ".join(f"`{label}`" for label in labels) or "—"
        rows.append(f"| `{metric}` | {kind} | {label_text} | {help_text} |")
    return "\n".join(rows)


def signal_reference_markdown() -> str:
    """The `inspect` finding signals (`signal_names.SIGNALS`), a Markdown table sorted by name."""
    rows = ["| signal | meaning |", "|---|---|"]
    signals = sorted(signal_names.SIGNALS.items())
    rows += [f"| `{signal}` | {meaning} |" for signal, meaning in signals]
    return "\n".join(rows)


def replace_block(text: str, begin: str, end: str, body: str) -> str:
    """Replace what lies between the `begin` and `end` marker lines of `text` with `body`.
    Raises ValueError when a marker is missing."""
    start = text.index(begin) + len(begin)
    stop = text.index(end, start)
    return text[:start] + "\n" + body + "\n" + text[stop:]


def render_readme(text: str) -> str:
    """`text` with both reference blocks regenerated."""
    text = replace_block(text, METRICS_BEGIN, METRICS_END, metric_reference_markdown())
    return replace_block(text, SIGNALS_BEGIN, SIGNALS_END, signal_reference_markdown())


if __name__ == "__main__":  # regenerate README.md in place
    readme = Path(__file__).resolve().parent.parent / "README.md"
    readme.write_text(render_readme(readme.read_text(encoding="utf-8")), encoding="utf-8")
