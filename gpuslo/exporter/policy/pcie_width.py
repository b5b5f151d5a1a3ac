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
