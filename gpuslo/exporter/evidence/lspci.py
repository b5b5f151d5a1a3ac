"""`lspci -vv` (and `-vvv`, `-nn`, `-D`) output, parsed per device (evidence, no judging): the
PCI Express link's capability and status and the Advanced Error Reporting status bits.

Format (pciutils `lspci(8)`, `ls-caps.c`; shared/corpus case 054):

    3b:00.0 3D controller [0302]: NVIDIA Corporation GA100 [A100 SXM4 40GB] [10de:20b0] (rev a1)
            LnkCap: Port #0, Speed 16GT/s, Width x16, ASPM not supported
            LnkSta: Speed 16GT/s (ok), Width x16 (ok)
            Bus: primary=00, secondary=3b, subordinate=3b, sec-latency=0     (bridges)
            UESta:  DLP- SDES- TLP- FCP- CmpltTO- CmpltAbrt- UnxCmplt- RxOF- MalfTLP- ECRC- ...
            CESta:  RxErr- BadTLP- BadDLLP- Rollover- Timeout- AdvNonFatalErr+

pciutils 3.6 and later mark a LnkSta value below LnkCap with `(downgraded)` (and `(ok)`);
older ones print the values only, so both are compared. A bit followed by `+` is set. A memory
region the firmware and kernel gave no address prints `Region 1: Memory at <unassigned>`
(pciutils `show_bases`); an unassigned I/O port region or expansion ROM is common and harmless and
is not collected. A device
whose config space reads as all ones (`(rev ff)`, `!!! Unknown header type 7f`) no longer
answers on the bus. An excerpt may start inside a device (no header line): its lines are one
device with no address.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from gpuslo.errors import ParseError
from gpuslo.exporter.evidence.pci import normalise_pci

_HEADER = re.compile(
    r"^((?:[0-9a-fA-F]{4,8}:)?[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])\s+"
    r"([^:]+?)(?: \[([0-9a-f]{4})\])?:\s+(.*)$"
)
_SPEED = re.compile(r"Speed\s+([\d.]+)GT/s(?:\s*\((ok|downgraded)\))?", re.IGNORECASE)
_WIDTH = re.compile(r"Width\s+x(\d+)(?:\s*\((ok|downgraded)\))?", re.IGNORECASE)
_BUS = re.compile(r"\bsecondary=([0-9a-fA-F]{2})\b")
_BITS = re.compile(r"([A-Za-z][\w]*)([+-])")
_UNASSIGNED_MEMORY = re.compile(r"^Region (\d+): Memory at <unassigned>")
NVIDIA = ("nvidia", "10de:")
# PCI class codes of a GPU: display controllers (VGA 0300, 3D 0302, other 0380).
GPU_CLASSES = ("vga compatible controller", "3d controller", "display controller")
GPU_CLASS_CODES = ("0300", "0302", "0380")


@dataclass
class Link:
    """A PCIe link: speed (GT/s) and width (lanes) as capable and as trained, and the
    `(downgraded)` markers of LnkSta (None: not printed)."""

    speed_cap: float | None = None
    width_cap: int | None = None
    speed: float | None = None
    width: int | None = None
    speed_downgraded: bool | None = None
    width_downgraded: bool | None = None


@dataclass
class Device:
    """One device of `lspci -vv`.

    Attributes:
        pci: NVML-form address, None for an excerpt without its header line.
        description: the header's class and name text ("3D controller: NVIDIA ...").
        class_code: the `[0302]` class code when printed (`-nn`), else None.
        link: the Express link, None when the excerpt shows none.
        secondary_bus: a bridge's secondary bus number (hex text), None for endpoints.
        uncorrectable, corrected: AER status bits set (`UESta`, `CESta` names with `+`),
            None when the AER capability is not shown.
        not_responding: config space read as all ones (`(rev ff)`, unknown header type 7f).
        unassigned_memory: the memory regions (BAR numbers) printed `Memory at <unassigned>`.
        line: 1-based line of the device's first line.
    """

    pci: str | None
    description: str = ""
    class_code: str | None = None
    link: Link | None = None
    secondary_bus: str | None = None
    uncorrectable: list[str] | None = None
    corrected: list[str] | None = None
    not_responding: bool = False
    unassigned_memory: list[str] = field(default_factory=list)
    line: int = 1
    lines: list[str] = field(default_factory=list)

    @property
    def is_nvidia(self) -> bool:
        """True when the header names NVIDIA (its name or vendor id 10de)."""
        text = self.description.lower()
        return any(mark in text for mark in NVIDIA)

    @property
    def is_nvswitch(self) -> bool:
        """True for an NVIDIA bridge (class 0680): how an NVSwitch shows on the PCI bus."""
        text = self.description.lower()
        return self.is_nvidia and (self.class_code == "0680" or text.startswith("bridge"))

    @property
    def is_gpu(self) -> bool:
        """True for an NVIDIA display/3D controller."""
        text = self.description.lower()
        by_class = self.class_code in GPU_CLASS_CODES or any(c in text for c in GPU_CLASSES)
        return self.is_nvidia and by_class


def _set_bits(value: str) -> list[str]:
    return [name for name, sign in _BITS.findall(value) if sign == "+"]


def _link_line(link: Link, key: str, value: str) -> None:
    speed, width = _SPEED.search(value), _WIDTH.search(value)
    if key == "LnkCap":
        link.speed_cap = float(speed.group(1)) if speed else None
        link.width_cap = int(width.group(1)) if width else None
        return
    if speed:
        link.speed = float(speed.group(1))
        link.speed_downgraded = speed.group(2).lower() == "downgraded" if speed.group(2) else None
    elif "speed unknown" in value.lower():
        link.speed_downgraded = "downgraded" in value.lower() or None
    if width:
        link.width = int(width.group(1))
        link.width_downgraded = width.group(2).lower() == "downgraded" if width.group(2) else None


def _device_line(device: Device, line: str, source: str, number: int) -> None:
    stripped = line.strip()
    key, _, value = stripped.partition(":")
    if key in ("LnkCap", "LnkSta"):
        if not (_SPEED.search(value) or _WIDTH.search(value) or "unknown" in value.lower()):
            detail = f"{key} without a speed or width: {value.strip()[:40]!r}"
            raise ParseError(source, detail, number, key)
        device.link = device.link or Link()
        _link_line(device.link, key, value)
    elif key in ("UESta", "CESta"):
        if not _BITS.search(value):
            detail = f"{key} without status bits: {value.strip()[:40]!r}"
            raise ParseError(source, detail, number, key)
        bits = _set_bits(value)
        if key == "UESta":
            device.uncorrectable = bits
        else:
            device.corrected = bits
    elif region := _UNASSIGNED_MEMORY.match(stripped):
        device.unassigned_memory.append(region.group(1))
    elif key == "Bus" and (bus := _BUS.search(value)):
        device.secondary_bus = bus.group(1).lower()
    elif "Unknown header type 7f" in stripped:
        device.not_responding = True


def parse_lspci(text: str, source: str = "<lspci>") -> list[Device]:
    """Every device of `lspci -v[v[v]]` text, in order; lines it does not know are kept in
    `Device.lines` and otherwise ignored. Raises ParseError naming the line of a link or AER
    status line it cannot read (a corrupted or cut-off capture)."""
    devices: list[Device] = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = raw.rstrip()
        if not line.strip() or len(line) > 4096:
            continue
        header = _HEADER.match(line) if not line[0].isspace() else None
        if header:
            description = f"{header.group(2)}: {header.group(4)}"
            devices.append(
                Device(
                    pci=normalise_pci(header.group(1)),
                    description=description,
                    class_code=header.group(3),
                    not_responding="(rev ff)" in line,
                    line=number,
                )
            )
            continue
        if not devices:
            devices.append(Device(pci=None, line=number))
        devices[-1].lines.append(line)
        _device_line(devices[-1], line, source, number)
    return devices


def is_listing(devices: list[Device]) -> bool:
    """True for `lspci` / `lspci -nn` / `-D` output (one header line per device and nothing
    under it): an inventory, which shows no link or AER status by design."""
    return bool(devices) and all(d.pci is not None and not d.lines for d in devices)


def looks_like_lspci(text: str) -> bool:
    """`lspci -v` output: a device header followed by indented capability lines, or an excerpt
    with `LnkSta:`/`LnkCap:` or AER status lines; or an `lspci [-nn]` listing: every line a
    device header, one of them NVIDIA's (any PCI domain: `0001:00:00.0`)."""
    head = text[:65536]
    if re.search(r"^[ \t]+(?:LnkSta|LnkCap|UESta|CESta):\s", head, re.M):
        return True
    if re.search(r"^[0-9a-fA-F:]{5,13}\.[0-7] [^:\n]+: .+\n[ \t]+\S", head, re.M):
        return True
    lines = [line for line in head.splitlines()[:400] if line.strip()]
    return bool(lines) and all(_HEADER.match(line) for line in lines) and any(
        mark in line.lower() for line in lines for mark in NVIDIA
    )
