"""One form for a PCI address, whatever the source printed: NVML's `00000000:3B:00.0`.

The kernel log prints `0000:3b:00` (or `3b:00.0`, or an 8-hex-digit Grace domain), nvidia-smi and
NVML `00000000:3B:00.0`, dcgm-exporter and sysfs other widths and cases. Every source passes its
address through `normalise_pci`, so `gpuslo_xid_events_total{pci_bus_id}` joins
`gpuslo_gpu_info{pci_bus_id}` in PromQL for any bus, hex letters included.
"""

from __future__ import annotations

import re

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
