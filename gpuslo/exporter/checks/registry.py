"""The checks gpuslo knows, by name, and how the runner finds them.

Each check lives in `gpuslo.exporter.checks.<name>` and is the class in that module whose `name`
attribute equals `<name>` (instantiated without arguments). A check listed here whose module
cannot be imported is not dropped: `load_checks` returns a stand-in that raises
`DependencyMissing` when run, so the check reports `unknown`/`dependency_missing` (fail closed,
"no silent no-ops", shared/MISSION.md).
"""

from __future__ import annotations

import importlib
import inspect
from dataclasses import dataclass

from gpuslo.errors import DependencyMissing
from gpuslo.exporter.checks.base import DEFAULT_INTERVAL_S, CheckContext
from gpuslo.exporter.checks.check_names import ACTIVE_ONLY, CHECKS
from gpuslo.verdict import CheckResult

PACKAGE = "gpuslo.exporter.checks"


@dataclass(frozen=True)
class UnavailableCheck:
    """Stands in for a listed check whose module could not be imported."""

    name: str
    error: str
    interval_s: float = DEFAULT_INTERVAL_S
    dependencies: tuple[str, ...] = ()

    def run(self, context: CheckContext) -> list[CheckResult]:
        """Raise `DependencyMissing` naming the import error."""
        raise DependencyMissing(f"check module {PACKAGE}.{self.name} unavailable: {self.error}")


def load_check(name: str) -> object:
    """The check called `name` (see the module docstring); KeyError for a name not in CHECKS."""
    if name not in CHECKS:
        raise KeyError(name)
    try:
        module = importlib.import_module(f"{PACKAGE}.{name}")
    except ImportError as error:
        return UnavailableCheck(name, str(error))
    for _, value in inspect.getmembers(module, inspect.isclass):
        if getattr(value, "name", None) == name and callable(getattr(value, "run", None)):
            return value()
    return UnavailableCheck(name, "no class with this name in the module")


def default_names(active: bool) -> list[str]:
    """Names of the checks one cycle runs: every check, the active probe only when asked for."""
    return [name for name in CHECKS if active or name not in ACTIVE_ONLY]


def load_checks(names: list[str] | None = None, active: bool = False) -> list[object]:
    """Instantiate the named checks (default: `default_names(active)`), in registry order."""
    chosen = default_names(active) if names is None else names
    return [load_check(name) for name in chosen]
