"""The anchor check of bench/check_cycle.py: answers at once. In a module of its own so the
runner's child processes import this file, not the benchmark script (whose imports would be
timed as part of the anchor)."""

from dataclasses import dataclass

from gpuslo.verdict import CheckResult


@dataclass
class NoOp:
    """A check that answers `ok` at once."""

    name: str
    interval_s: float = 30.0
    dependencies: tuple[str, ...] = ()

    def run(self, context) -> list[CheckResult]:
        return [CheckResult(check=self.name, scope="node", status="ok")]
