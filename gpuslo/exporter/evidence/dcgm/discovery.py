"""`dcgmi discovery -l`, parsed (evidence, no judging): the GPUs and NVSwitches DCGM sees.

Shape (DCGM `dcgmi/Query.cpp`; real outputs NVIDIA/dcgm-exporter#328, NVIDIA/DCGM#229,
KempnerInstitute/kempnerpulse#15):

    2 GPUs found.                          (DCGM 4: `8 GPUs found (Active).`)
    +--------+----------------------------------------------------------------------+
    | GPU ID | Device Information                                                   |
    +--------+----------------------------------------------------------------------+
    | 0      | Name: NVIDIA A100 80GB PCIe                                          |
    |        | PCI Bus ID: 00000000:21:00.0                                         |
    |        | Device UUID: GPU-e665046a-bc33-f1cf-45d8-3bb2ebe43516                |
    +--------+----------------------------------------------------------------------+
    0 NvSwitches found.
    +-----------+
    | Switch ID |
    +-----------+

then CPUs (and other entity kinds) in the same form. DCGM prints `<<<NULL>>>` for a name it
could not read (DCGM#229): the GPU is listed, its model is not known.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from gpuslo.exporter.evidence.pci import normalise_pci

_FOUND = re.compile(r"^\s*(\d{1,5}) (GPUs?|NvSwitch(?:es)?|\w[\w ]{0,20}?) found\b", re.I)
_ROW = re.compile(r"^\|\s*(\d{1,5})?\s*\|\s*(?:([A-Za-z][\w ]{0,30}):\s*(.*?))?\s*\|\s*$")
_SWITCH_ROW = re.compile(r"^\|\s*(\d{1,5})\s*\|\s*$")
_HEADER = re.compile(r"\|\s*GPU ID\s*\|\s*Device Information\s*\|")


@dataclass
class DiscoveredGpu:
    """One GPU row: DCGM's GPU id, and the name, PCI bus id (NVML form) and UUID it printed
    (None when absent or `<<<NULL>>>`), with the row's 1-based line."""

    gpu: str
    line: int
    name: str | None = None
    pci: str | None = None
    uuid: str | None = None


@dataclass
class Discovery:
    """The listing: the GPU count DCGM announced (None when the line is absent), the GPU rows,
    the NVSwitch count announced and the switch ids listed."""

    gpus_found: int | None = None
    gpus: list[DiscoveredGpu] = field(default_factory=list)
    switches_found: int | None = None
    switches: list[str] = field(default_factory=list)


def looks_like_discovery(text: str) -> bool:
    """True for `dcgmi discovery -l` output."""
    head = text[:65536]
    return _HEADER.search(head) is not None and re.search(r"GPUs? found", head) is not None


def _value(text: str) -> str | None:
    text = text.strip()
    return None if not text or text.strip("<>").upper() == "NULL" else text


def _gpu_property(gpu: DiscoveredGpu, key: str, value: str | None) -> None:
    key = key.strip().lower()
    if key == "name":
        gpu.name = value
    elif key == "pci bus id" and value:
        gpu.pci = normalise_pci(value) or value
    elif key == "device uuid":
        gpu.uuid = value


def parse_discovery(text: str) -> Discovery:
    """The listing's GPUs and NVSwitches (module docstring). Never raises."""
    found = Discovery()
    section = ""
    for number, line in enumerate(text.splitlines(), 1):
        line = line.strip()[:400]
        if (match := _FOUND.match(line)) is not None:
            section = match.group(2).lower()[:3]
            if section == "gpu":
                found.gpus_found = int(match.group(1))
            elif section == "nvs":
                found.switches_found = int(match.group(1))
            continue
        if section == "nvs" and (row := _SWITCH_ROW.match(line)) is not None:
            found.switches.append(row.group(1))
        if (row := _ROW.match(line)) is None:
            continue
        entity, key, value = row.groups()
        if section == "gpu" and entity is not None:
            found.gpus.append(DiscoveredGpu(entity, number))
        if section == "gpu" and key and found.gpus:
            _gpu_property(found.gpus[-1], key, _value(value))
    return found
