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
- The PCI core's bandwidth notice (`available PCIe bandwidth, limited by ... (capable of ...)`,
  `evidence.kernel_log.pcie_notice`) is judged as `inspect` judges it (`policy.pcie_notice`): a
  path with fewer lanes than the device's capability is a `warn` for that device (`pci:<bus
  id>`), never a fail; lanes held at a lower speed is normal (a GPU lowers its link at idle) and
  adds no result. Merged like the fallback's lines; from /dev/kmsg it is seen by the read that
  reads it (the kernel prints it once, at enumeration or probe).
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import replace

from gpuslo import names
from gpuslo.exporter.evidence.kernel_log.pcie_notice import BandwidthNotice, bandwidth_notices
from gpuslo.exporter.evidence.log_lines import claimed
from gpuslo.exporter.policy.classify import Classified
from gpuslo.exporter.policy.log_results import results_from_findings
from gpuslo.exporter.policy.pcie_notice import notice_findings
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


def notices(lines: Iterable[tuple[int, str]]) -> list[BandwidthNotice]:
    """The PCIe bandwidth notices among (number, line) pairs (a scan's `extra_lines`)."""
    return bandwidth_notices(lines)


def notices_in_text(text: str) -> list[BandwidthNotice]:
    """The PCIe bandwidth notices of kernel-log text."""
    return bandwidth_notices(enumerate(text.splitlines(), 1))


def unrecognised_lines(classified: list[Classified], items: list[Unrecognised]) -> int:
    """Lines counted in `gpuslo_unrecognised_messages_total` for this read."""
    unknown = sum(item.event.lines for item in classified if item.entry == UNRECOGNISED)
    return unknown + len(items)


def merged(
    results: list[CheckResult], items: list[Unrecognised], source: str, now: float,
    notices: Sequence[BandwidthNotice] = (),
) -> list[CheckResult]:
    """`results` with the fallback's results and the narrowed PCIe paths of `notices` folded in
    (see the module docstring): one result per scope, the worst."""
    findings = unrecognised_findings("kernel-log", items)
    findings += [f for f in notice_findings("kernel-log", notices) if f.class_ != names.CLASS_OK]
    extra = results_from_findings(NAME, findings, source, now)
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
