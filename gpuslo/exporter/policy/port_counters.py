"""Judging port error counters between two runs (pure): rates, link flaps and saturated counters.

Input: the counters of one port now and at the last run (`gpuslo.exporter.evidence.fabric
.counters`), and the seconds between. Rules, in order:
- a counter that could not be read → `unknown` `parse_error` (never healthy);
- no earlier reading of the port (the first run) → `ok`, the baseline is recorded;
- a counter below its earlier value was reset (reboot, driver reload, `perfquery -R`) → `ok` and
  a new baseline, the rates of this run cannot be told;
- `link_downed` rose → `network_link_flap` (the port went down and up again: collectives stall
  and retry meanwhile);
- other error counters rose by at least `threshold` in total (default 1: any) →
  `network_port_errors`, with each counter's increase and rate per second;
- a counter at its maximum (16-bit `symbol_error` at 65535, 8-bit `link_downed` at 255, ...) is
  *saturated*: older HCAs stop counting there instead of wrapping, so it cannot show a rate;
  reported as `network_port_errors` saying so until someone resets it.
Both degradations are `warn` (usable, recorded with the reason, so a job's crawl can be traced
to the port); the check turns them into `fail` where the node config's `degradation_status` says.
"""

from __future__ import annotations

from dataclasses import dataclass

from gpuslo import names
from gpuslo.exporter.evidence.fabric.counters import LINK_DOWNED, counter_max


@dataclass(frozen=True)
class PortJudgement:
    """status (`names.STATUSES`), reason ("" when ok), message (one line)."""

    status: str
    reason: str
    message: str


def _short(name: str) -> str:
    return name.partition("/")[2]


def judge_port(
    port: str,
    before: dict[str, int] | None,
    now: dict[str, int | None],
    elapsed_s: float,
    threshold: int = 1,
) -> PortJudgement:
    """Judge one port (see the module docstring)."""
    unreadable = sorted(_short(n) for n, v in now.items() if v is None)
    if unreadable:
        return PortJudgement(names.STATUS_UNKNOWN, "parse_error",
                             f"{port}: counter(s) unreadable: {', '.join(unreadable)}")
    saturated = sorted(f"{_short(n)} at {v}" for n, v in now.items()
                       if counter_max(n) is not None and v >= counter_max(n))
    if before is None:
        return _saturated(port, saturated, "baseline recorded (first run)")
    if any(v < before.get(n, v) for n, v in now.items()):
        return _saturated(port, saturated, "counters were reset; new baseline")
    rising = {n: v - before[n] for n, v in now.items() if n in before and v > before[n]}
    rate = f" in {elapsed_s:.0f} s" if elapsed_s > 0 else ""
    parts = [f"+{d} {_short(n)}" + (f" ({d / elapsed_s:.3g}/s)" if elapsed_s > 0 else "")
             for n, d in sorted(rising.items())]
    if saturated:
        parts.append(f"saturated (stops at its maximum, rate unknown; reset it): "
                     f"{', '.join(saturated)}")
    if rising.get(LINK_DOWNED):
        return PortJudgement(names.STATUS_WARN, "network_link_flap",
                             f"{port}: link flapped{rate}: {'; '.join(parts)}")
    errors = sum(d for n, d in rising.items() if n != LINK_DOWNED)
    if errors >= threshold or saturated:
        return PortJudgement(names.STATUS_WARN, "network_port_errors",
                             f"{port}: error counters rising{rate}: {'; '.join(parts)}")
    below = f" ({errors} below the threshold {threshold})" if errors else ""
    return PortJudgement(names.STATUS_OK, "", f"{port}: no error counter rising{below}")


def _saturated(port: str, saturated: list[str], note: str) -> PortJudgement:
    if saturated:
        return PortJudgement(names.STATUS_WARN, "network_port_errors",
                             f"{port}: {note}; saturated (stops at its maximum, rate unknown; "
                             f"reset it): {', '.join(saturated)}")
    return PortJudgement(names.STATUS_OK, "", f"{port}: {note}")
