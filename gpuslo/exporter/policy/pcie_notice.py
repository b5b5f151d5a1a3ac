"""Judging the kernel's PCIe bandwidth notice (`evidence.kernel_log.pcie_notice`; pure).

Rules (Linux drivers/pci/pci.c `__pcie_print_link_status`; the width and speed rules of
`policy.pcie_width` and `policy.pcie`):
- a notice whose limiting link has fewer lanes than the device's capability is `pcie_degraded`,
  warn, check the slot/cabling: the device gets a fraction of the host bandwidth it was built
  for (corpus fresh24 2607: a GTX 980 "limited by 8 GT/s x4 link at 0000:00:03.2 (capable of
  126.016 Gb/s with 8 GT/s x16 link)"). Never fatal, whatever the fraction: the notice names the
  narrowest link on the device's path, which may be the device's own link or one above it (a
  switch uplink, a Thunderbolt enclosure's link: fresh13 1508), and the device's capability only,
  not what the slot is wired for; a x4-wired slot, a bifurcated riser and lost lanes print the
  same line (the kernel logs it at info level). `lspci -vv` of the device and of the port above
  it tells them apart (`policy.pcie_width.lspci_narrow`);
- a notice with the lanes held and only the speed lower is `pcie_link` (ok, a noted
  observation): a GPU lowers its link generation at idle and at enumeration (nvidia-smi(1)
  "PCI / Link"), so a slower link at boot is no degradation;
- the finding names the device by its address (the notice gives no vendor): a GPU's and a NIC's
  narrow path read the same, both worth a look, neither a GPU fault the lines can show.
"""

from __future__ import annotations

from collections.abc import Iterable

from gpuslo import names
from gpuslo.exporter.evidence.kernel_log.pcie_notice import BandwidthNotice
from gpuslo.verdict import Finding


def _speed(value: float) -> str:
    return f"{value:g} GT/s"


def notice_finding(kind: str, notice: BandwidthNotice) -> Finding:
    """`pcie_degraded` (warn) or `pcie_link` (ok) for one notice (see the module rules)."""
    now = f"{_speed(notice.speed)} x{notice.width} link"
    cap = f"{_speed(notice.speed_cap)} x{notice.width_cap}"
    said = (f"{notice.available_gbps:g} Gb/s of PCIe bandwidth available, limited by the {now} "
            f"at {notice.at}; capable of {notice.capable_gbps:g} Gb/s ({cap})")
    base = {"kind": kind, "pci": notice.pci, "line": notice.line, "layer": names.LAYER_NODE}
    if notice.narrower:
        return Finding(
            class_=names.CLASS_WARN,
            signal="pcie_degraded",
            reason="pcie_degraded",
            action=names.ACTION_CHECK_CABLING,
            message=f"{notice.pci}: {said}: the path has {notice.width} of the device's "
            f"{notice.width_cap} lanes; the kernel's notice does not say whether the slot is "
            "wired that narrow or lanes were lost (lspci -vv of the device and its port does)",
            **base,
        )
    return Finding(
        class_=names.CLASS_OK,
        signal="pcie_link",
        message=f"{notice.pci}: {said}: lanes held, speed below capability (normal at idle and "
        "at enumeration)",
        **base,
    )


def notice_findings(kind: str, notices: Iterable[BandwidthNotice]) -> list[Finding]:
    """One finding per device, from its last notice (a device re-enumerated after a hot re-plug
    prints it again: the last is its current path)."""
    last = {notice.pci: notice for notice in notices}
    return [notice_finding(kind, notice) for notice in last.values()]
