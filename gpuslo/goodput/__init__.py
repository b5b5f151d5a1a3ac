"""Job goodput (DESIGN.md §5), in three modules:

- `gpuslo.goodput.journal` — the journal schema (v1): event shapes, validation, reading, the
  line format and `journal_path`;
- `gpuslo.goodput.calculator` — the pure calculator (`GoodputState`, `JobGoodput`,
  `compute_goodput`) the exporter and the SLO engine share;
- `gpuslo.goodput.slowdown` — the sustained-slowdown rule (`sustained_slowdowns`,
  `SlowdownTracker`) the calculator and the training-log reader share;
- `gpuslo.goodput.recorder` — the `Recorder` a training loop uses; the only module that imports
  OpenTelemetry.

The names below are importable from `gpuslo.goodput` too (`from gpuslo.goodput import
Recorder`); they are loaded on first use (PEP 562), so importing the journal or the calculator
never loads the Recorder or OpenTelemetry.
"""

from __future__ import annotations

import importlib
from typing import Any

# name -> submodule that defines it
_EXPORTS = {
    "Recorder": "recorder",
    "GoodputState": "calculator",
    "JobGoodput": "calculator",
    "compute_goodput": "calculator",
    "SlowdownEpisode": "calculator",
    "SlowdownRule": "slowdown",
    "sustained_slowdowns": "slowdown",
    "END_STATUSES": "journal",
    "PHASES": "journal",
    "SCHEMA_VERSION": "journal",
    "JournalReader": "journal",
    "check_event": "journal",
    "journal_path": "journal",
    "parse_journal": "journal",
    "validate_job_id": "journal",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    """Load `name` from its submodule on first use (PEP 562); AttributeError for any other."""
    module = _EXPORTS.get(name)
    if module is None:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
    value = getattr(importlib.import_module(f"{__name__}.{module}"), name)
    globals()[name] = value
    return value


def __dir__() -> list[str]:
    return sorted({*globals(), *_EXPORTS})
