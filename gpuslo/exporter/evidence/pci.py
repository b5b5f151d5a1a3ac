"""One form for a PCI address, whatever the source printed: NVML's `00000000:3B:00.0`.

The kernel log prints `0000:3b:00` (or `3b:00.0`, or an 8-hex-digit Grace domain), nvidia-smi and
NVML `00000000:3B:00.0`, dcgm-exporter and sysfs other widths and cases. Every source passes its
address through `normalise_pci`, so `gpuslo_xid_events_total{pci_bus_id}` joins
`gpuslo_gpu_info{pci_bus_id}` in PromQL for any bus, hex letters included.

`read_pci_gpus` lists the NVIDIA GPUs sysfs shows on the bus (under `--path.sysfs`), so a GPU the
driver could not initialise still counts in the inventory.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

# [domain:]bus:device[.function]; the domain may have up to 8 hex digits (Grace: 00000019).
_PCI = re.compile(
    r"^(?:([0-9a-f]{1,8}):)?([0-9a-f]{1,2}):([0-9a-f]{1,2})(?:\.([0-7]))?$", re.IGNORECASE
)


def normalise_pci(text: str | None) -> str | None:
    """NVML's form of a PCI address: 8-digit domain, upper-case hex, function (default 0):
    `0000:b3:00` -> `00000000:B3:00.0`. None for None, a redacted (`...`) or malformed address."""
    match = _PCI.match((text or "").strip())
    if not match:
        return None
    domain, bus, device, function = match.groups()
    return f"{int(domain or '0', 16):08X}:{int(bus, 16):02X}:{int(device, 16):02X}.{function or 0}"


# --- NVIDIA GPUs on the PCI bus (sysfs) -----------------------------------------------------------

NVIDIA_VENDOR = "0x10de"
# PCI base class 03 (display controller): VGA 0x0300, 3D 0x0302, other 0x0380 (PCI Code and ID
# Assignment Specification).
GPU_CLASS_PREFIXES = ("0x0300", "0x0302", "0x0380")


@dataclass(frozen=True)
class PciGpu:
    """An NVIDIA display/3D controller the PCI bus shows: its address in NVML's form, device id
    (`0x2335`) and class (`0x030200`) as sysfs prints them."""

    pci_bus_id: str
    device_id: str
    class_code: str


def _read(path: Path) -> str:
    try:
        return path.read_text(encoding="ascii", errors="replace").strip().lower()
    except OSError:
        return ""


def read_pci_gpus(sysfs: Path) -> list[PciGpu]:
    """NVIDIA GPUs under `<sysfs>/bus/pci/devices/*` (vendor 0x10de, display/3D class), sorted by
    address: what is on the bus whether or not the driver initialised it (a GPU whose
    RmInitAdapter failed has no NVML handle, yet it is there). Empty when the tree has no PCI
    devices directory (a fixture sysfs, a container without /sys/bus)."""
    root = Path(sysfs) / "bus" / "pci" / "devices"
    try:
        entries = sorted(root.iterdir())
    except OSError:
        return []
    out = []
    for entry in entries:
        if _read(entry / "vendor") != NVIDIA_VENDOR:
            continue
        class_code = _read(entry / "class")
        pci = normalise_pci(entry.name)
        if pci and class_code.startswith(GPU_CLASS_PREFIXES):
            out.append(PciGpu(pci, _read(entry / "device"), class_code))
    return out
