"""The `xid` check's share of the device-and-severity fallback (`policy.unrecognised`).

- An NVRM line the driver-message catalogue does not know but that reads as an error
  (`unrecognised_driver_message`, unknown in `inspect`) is a `warn` here, naming the line and
  counted: driver chatter a catalogue lacks must not make a GPU unusable until the next reboot.
  So is a kernel stack trace through an NVIDIA module whose header is not read (`kernel_trace`,
  unknown in `inspect`: a stack the driver dumped itself, or a splat split between two reads).
  A fatal-class word in it is already `fatal` (`unrecognised_fatal_message`) in the catalogue,
  so that still fails.
- A kernel-log line no reader claims that names a device with an error word is a `warn` for
  that device (fail with a fatal-class word), merged with the check's other results for the same
  scope (the worst wins). From /dev/kmsg a fatal one stays an active problem until the next boot
  (the line is read once), like a fatal Xid.
"""

from __future__ import annotations

from dataclasses import replace

from gpuslo import names
from gpuslo.exporter.evidence.log_lines import claimed
from gpuslo.exporter.policy.classify import Classified
from gpuslo.exporter.policy.log_results import results_from_findings
from gpuslo.exporter.policy.unrecognised import (
    Unrecognised,
    error_lines,
    judge_lines,
    unrecognised_findings,
)
from gpuslo.verdict import CheckResult

NAME = "xid"
UNRECOGNISED = "unrecognised_driver_message"
_RANK = {names.STATUS_OK: 0, names.STATUS_WARN: 1, names.STATUS_UNKNOWN: 2, names.STATUS_FAIL: 3}


def live_classes(classified: list[Classified]) -> list[Classified]:
    """Unrecognised driver messages and header-less NVIDIA stack traces as warn (see the module
    docstring); others unchanged."""
    return [
        replace(item, class_=names.CLASS_WARN, reason=None)
        if item.class_ == names.CLASS_UNKNOWN
        and (item.reason == UNRECOGNISED or item.signal == "kernel_trace")
        else item
        for item in classified
    ]


def unclaimed_in_text(text: str) -> list[Unrecognised]:
    """The unclaimed device error lines of kernel-log text."""
    return judge_lines(error_lines(text, claimed))


def unclaimed(lines: list[tuple[int, str]]) -> list[Unrecognised]:
    """The unclaimed device error lines among (number, line) pairs a scan kept
    (`KernelLogScan.extra_lines` with `ERROR_WORDS`: the file is read once)."""
    return judge_lines((number, line) for number, line in lines if not claimed(line))


def unrecognised_lines(classified: list[Classified], items: list[Unrecognised]) -> int:
    """Lines counted in `gpuslo_unrecognised_messages_total` for this read."""
    unknown = sum(item.event.lines for item in classified if item.entry == UNRECOGNISED)
    return unknown + len(items)


def merged(
    results: list[CheckResult], items: list[Unrecognised], source: str, now: float
) -> list[CheckResult]:
    """`results` with the fallback's results folded in: one result per scope, the worst."""
    extra = results_from_findings(NAME, unrecognised_findings("kernel-log", items), source, now)
    by_scope = {r.scope: r for r in results}
    for result in extra:
        have = by_scope.get(result.scope)
        if have is None or _RANK[result.status] > _RANK[have.status]:
            by_scope[result.scope] = result
    return sorted(by_scope.values(), key=lambda r: (r.scope == "node", r.scope))


def fatal_problems(problems: dict[str, dict], items: list[Unrecognised]) -> dict[str, dict]:
    """`problems` with each fatal fallback line's device made an active problem (first wins)."""
    out = dict(problems)
    for item in items:
        if item.fatal and item.device.scope() not in out:
            out[item.device.scope()] = {
                "reason": "unrecognised_fatal_message",
                "action": names.ACTION_DRAIN_AND_RESET,
                "message": item.text[:160],
                "status": names.STATUS_FAIL,
            }
    return out
