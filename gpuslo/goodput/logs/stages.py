"""Numbered stage headers are no training progress (pure).

A pipeline script logs its stages as `Step N: <title>`: an XGBoost + Optuna pipeline's
`train - INFO - Step 1: Loading Data`, `Step 2: Preprocessing Data`, … `Step 8: Saving Model`,
`Step 9: Generating Training Report` (fresh12 O19), each once a run. The counter rises by one
like a step counter, but each value has its own words after it: a title, not a measurement.
Training progress prints one shape for many values (`Step 50 | Loss: …`).

`stage_headers(readings) -> bool`: a progress family (a list of `roles.Reading`) is a run of
stage headers when it has at least `MIN_STAGES` templates, each template holds one counter value
only (printed again only by a rerun of the pipeline) and no other number, and no two templates
hold the same value. A family in which one template holds several values (`Step 1: loss 0.5`,
`Step 2: loss 0.4`) is progress.
"""

from __future__ import annotations

from typing import Any

MIN_STAGES = 3


def stage_headers(readings: list[Any]) -> bool:
    """Whether the progress family `readings` is numbered stage headers (module docstring)."""
    if len(readings) < MIN_STAGES:
        return False
    seen: set[float] = set()
    for reading in readings:
        fields = reading.template.fields
        if reading.step is None or reading.bar or len(fields) != 1:
            return False
        values = set(fields[reading.step].known())
        if len(values) != 1 or values & seen:
            return False
        seen |= values
    return True
