"""Whether this node has NVSwitches (evidence, I/O at the edge): the NVSwitch driver's own
inventory (`<procfs>/driver/nvidia-nvswitch/devices/*`) or an NVIDIA bridge-class device on the
PCI bus (`<sysfs>/bus/pci/devices/*`: vendor 0x10de, class 0x0680xx, the class NVSwitches report
in `lspci -n`). The fabric-manager check is not applicable on a node with neither."""

from __future__ import annotations

from pathlib import Path

NVIDIA_VENDOR = "0x10de"
BRIDGE_OTHER_CLASS = "0x0680"


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="ascii", errors="replace").strip().lower()
    except OSError:
        return ""


def count_nvswitches(sysfs: Path, procfs: Path) -> int:
    """NVSwitches the driver or the PCI bus shows (the larger of the two counts); 0 when
    neither shows one (or the trees are absent, as in a container without them)."""
    try:
        driver = sum(1 for _ in (Path(procfs) / "driver" / "nvidia-nvswitch" / "devices").iterdir())
    except OSError:
        driver = 0
    bus = 0
    try:
        entries = list((Path(sysfs) / "bus" / "pci" / "devices").iterdir())
    except OSError:
        entries = []
    for entry in entries:
        if _read(entry / "vendor") == NVIDIA_VENDOR and _read(entry / "class").startswith(
            BRIDGE_OTHER_CLASS
        ):
            bus += 1
    return max(driver, bus)
