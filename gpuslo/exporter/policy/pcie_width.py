"""How a PCIe link that trained narrower than its capability is judged: the one rule for
`lspci` (`policy.pcie`), nvidia-smi and NVML (`policy.gpu`, the live `pcie` check).

A GPU never narrows its link to save power: it lowers the link *speed* (generation) at idle and
keeps its lanes (nvidia-smi(1) "PCI / Link"; issue 24 item 5), so a width below capability is a
degradation whatever the load, with two grades:
- at least half its lanes (x8 of x16): warn, `pcie_degraded`, check the slot/cabling. A x16
  connector wired x8 (PCI Express CEM "x16 (x8 electrical)", two GPUs sharing one CPU's sixteen
  lanes) is a common build, so half width may be the slot, not a fault; the job crawls instead of
  crashing (fresh7 917, fresh9 1109: x8 of x16, never fatal);
- fewer than half its lanes (x4, x2, x1 of x16): fatal, `pcie_degraded`, check the cabling. No
  GPU server slot is wired that narrow; such a link lost lanes (a riser, the seating, a failed
  lane) and carries a quarter or less of the host bandwidth the GPU was built for. DCGM's
  diagnostic fails a link below its minimum width (DCGM_FR_PCIE_WIDTH) (fresh3 410: x1; fresh12
  1418: x4 of x16).

`lspci` is graded against the slot as well, because its capability is the GPU's alone: LnkCap is
the device's own Link Capabilities register, and lspci marks LnkSta `(downgraded)` whenever the
trained value is below it, for any endpoint, whatever it is plugged into (pciutils ls-caps.c
`link_compare`; only root and downstream ports are spared the mark). A x16 GPU in a x8-wired or
bifurcated slot therefore prints `Width x8 (downgraded)` exactly as one that lost lanes. What
tells them apart is the port above the GPU (its root port or switch downstream port), whose
LnkCap is the width the slot is wired for (`lspci_narrow`):
- that port in the capture and no wider than the trained link: the slot is wired that narrow
  (bifurcation, x16 (x8 electrical)): warn as above, the link is all the slot gives;
- that port wider than the trained link: lanes were lost between them: fatal (DCGM's `pcie`
  test fails a link narrower than its minimum, DCGM_FR_PCIE_WIDTH);
- that port not in the capture (one function's `lspci -vv -s`, a grep of LnkSta): `unknown`,
  the two readings cannot be told apart from the GPU's lines (fresh20 2215: x8 of x16
  downgraded on a bifurcated riser, with corrected TLP errors; fresh13 1518). Below half its
  lanes stays fatal whatever the port shows.
NVML and nvidia-smi are not graded this way: their maximum is "possible with this device and
system" (NVML `nvmlDeviceGetMaxPcieLinkWidth`), the slot already taken into account.
"""

from __future__ import annotations

from gpuslo import names


def narrow_class(width: int | None, capability: int | None) -> str | None:
    """The class of a link `width` lanes wide against its `capability` (lanes): None when it
    is not narrower (or either is unknown or 0), else warn or fatal (the module rules)."""
    if not width or not capability or width >= capability:
        return None
    return names.CLASS_FATAL if 2 * width < capability else names.CLASS_WARN


def narrow_note(klass: str) -> str:
    """The words a finding adds for a narrow link of class `klass`."""
    if klass == names.CLASS_FATAL:
        return "fewer than half its lanes: lanes lost (reseat the GPU or its riser)"
    return "half its lanes or more: a x8-wired slot or lost lanes"


def lspci_narrow(
    width: int | None, capability: int | None, downgraded: bool, slot: int | None
) -> tuple[str, str] | None:
    """(class, words) for an `lspci` GPU link `width` lanes wide against its own `capability`
    (lanes), lspci's `(downgraded)` mark and the `slot` width its upstream port is capable of
    (None when that port is not in the capture); None when the link is not narrower (the module
    rules)."""
    narrow = narrow_class(width, capability)
    if narrow is None and not downgraded:
        return None
    if narrow == names.CLASS_FATAL:
        return narrow, narrow_note(narrow)
    if slot and width and slot <= width:
        return names.CLASS_WARN, f"its upstream port is wired x{slot}: the slot gives no more lanes"
    if slot and width:
        return names.CLASS_FATAL, (
            f"its upstream port is x{slot}: lanes lost (reseat the GPU or its riser)"
        )
    return names.CLASS_UNKNOWN, (
        "a slot wired that narrow (bifurcation, x8 electrical) or lost lanes: the capture does "
        "not show the port above the GPU that would tell them apart"
    )
