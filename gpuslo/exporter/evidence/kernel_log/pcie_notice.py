"""The kernel's PCIe bandwidth notice, read from kernel-log lines (evidence, no judging; pure).

The PCI core prints it for every device whose path to the CPU offers less bandwidth than the
device can use, once when it enumerates the bus (`pcie_report_downtraining`), and drivers that
call `pcie_print_link_status` (mlx5_core, ixgbe, ...) print it at probe time (Linux
drivers/pci/pci.c, `__pcie_print_link_status`):

    pci 0000:0b:00.0: 31.504 Gb/s available PCIe bandwidth, limited by 8 GT/s x4 link at
        0000:00:03.2 (capable of 126.016 Gb/s with 8 GT/s x16 link)        (one line; 4.17-5.2)
    pci 0000:2f:00.0: 8.000 Gb/s available PCIe bandwidth, limited by 2.5 GT/s PCIe x4 link at
        0000:05:04.0 (capable of 252.048 Gb/s with 16.0 GT/s PCIe x16 link)     (5.3 and later)

A driver's unlimited form, `63.008 Gb/s available PCIe bandwidth (8.0 GT/s PCIe x8 link)`, says
nothing is limited and is not read. `limited by ... at <BDF>` names the device at the upstream end
of the narrowest link on the path (`pcie_bandwidth_available` walks from the device up through
its bridges and keeps the last of equally narrow links: the root or switch port above the device
when the device's own link is the narrowest); `<unknown>` when the kernel could not name it.
`capable of` is the device's own Link Capabilities (`pcie_bandwidth_capable`), not the slot's.
The line carries no error word, so the device-and-severity fallback never takes it.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from gpuslo.exporter.evidence.kernel_log.anchors import PCIE_NOTICE_LITERAL as NOTICE_LITERAL
from gpuslo.exporter.evidence.pci import normalise_pci

_LINK = r"(?P<{0}>[\d.]{{1,5}}) GT/s(?: PCIe)? x(?P<{1}>\d{{1,2}}) link"
NOTICE = re.compile(
    r"(?P<pci>(?:[0-9a-fA-F]{4,8}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7]): "
    r"(?P<avail>\d{1,6}\.\d{3}) Gb/s available PCIe bandwidth, limited by "
    + _LINK.format("speed", "width")
    + r" at (?P<at>\S{1,32}) \(capable of (?P<cap>\d{1,6}\.\d{3}) Gb/s with "
    + _LINK.format("speed_cap", "width_cap")
    + r"\)"
)


@dataclass(frozen=True)
class BandwidthNotice:
    """One `available PCIe bandwidth, limited by` line.

    Attributes:
        line: 1-based line number; pci: the device's address in NVML's form (`normalise_pci`).
        available_gbps / capable_gbps: the path's bandwidth and the device's own, Gb/s.
        speed / speed_cap: link speed in GT/s of the limiting link and of the device's capability.
        width / width_cap: lanes of the limiting link and of the device's capability.
        at: the device the kernel names as limiting (`0000:00:03.2`, `<unknown>`).
        text: the line from the device address on.
    """

    line: int
    pci: str
    available_gbps: float
    capable_gbps: float
    speed: float
    speed_cap: float
    width: int
    width_cap: int
    at: str
    text: str

    @property
    def narrower(self) -> bool:
        """True when the limiting link has fewer lanes than the device can use."""
        return self.width < self.width_cap


def bandwidth_notices(lines: Iterable[tuple[int, str]]) -> list[BandwidthNotice]:
    """The notices among (1-based number, line) pairs, in order. Lines without the literal are
    skipped cheaply; a line whose numbers do not read is skipped. Never raises."""
    notices = []
    for number, line in lines:
        if NOTICE_LITERAL not in line:
            continue
        match = NOTICE.search(line[:1024])
        pci = normalise_pci(match.group("pci")) if match else None
        if match is None or pci is None:
            continue
        try:
            speeds = float(match.group("speed")), float(match.group("speed_cap"))
        except ValueError:
            continue
        notices.append(BandwidthNotice(
            line=number, pci=pci, available_gbps=float(match.group("avail")),
            capable_gbps=float(match.group("cap")), speed=speeds[0], speed_cap=speeds[1],
            width=int(match.group("width")), width_cap=int(match.group("width_cap")),
            at=match.group("at"), text=line[match.start():].strip()))
    return notices
