"""The device a free-text log line names, whatever the tool that wrote it (pure).

The device-and-severity fallback (`gpuslo.exporter.policy.unrecognised`) needs to know which
device a line no reader claims is about. A line may name, most specific first:
- a PCI address (`0000:3b:00.0`, `00000000:86:00.0`, `PCI:0000:01:00`, `3b:00.0`): NVML's form
  (`evidence.pci.normalise_pci`);
- a GPU UUID (`GPU-…`) or a MIG device UUID (`MIG-…`);
- an NVSwitch (`nvidia-nvswitch3`, `NVSwitch 3`);
- a network device: `mlx5_N`, `efa_N` / `efaN`, `ibN` / `ibpNsN`, `rdmapNsN`;
- a GPU by index (`GPU 2`, `GPU2`, `gpuId 1`, `gpu 0`).

Time stamps must not read as PCI addresses: a bare `bus:device.function` needs its function digit
and may not sit inside a longer colon-separated run (`22:23:53.671`); a domain form needs a 4-8
hex-digit domain. Every pattern is bounded and linear (no nested quantifiers).
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gpuslo.exporter.evidence.pci import normalise_pci

KINDS = ("pci", "uuid", "nvswitch", "nic", "gpu")

_PCI = re.compile(
    r"(?<![\w:.])(?:PCI:)?"
    r"((?:[0-9a-fA-F]{4,8}:)[0-9a-fA-F]{2}:[0-9a-fA-F]{2}(?:\.[0-7])?"
    r"|[0-9a-fA-F]{2}:[0-9a-fA-F]{2}\.[0-7])(?!\w|:\w|\.\d)"
)
_UUID = re.compile(r"\b((?:GPU|MIG)-[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-"
                   r"[0-9a-fA-F]{12})\b")
_NVSWITCH = re.compile(r"\b(?:nvidia-nvswitch(\d{1,3})|N[Vv][Ss]witch ?#?(\d{1,3}))\b")
_NIC = re.compile(
    r"\b(mlx5_\d{1,3}|efa_?\d{1,3}|ibp?\d{1,3}(?:s\d{1,3})?(?:f\d)?|rdmap\d{1,3}s\d{1,3})\b"
)
_GPU = re.compile(r"\b(?:GPU|gpu|gpuId|GPU ID)[ #:]?(\d{1,3})\b(?![-:.]\d)")


@dataclass(frozen=True)
class DeviceRef:
    """A device a line names: `kind` one of `KINDS`; `name` in a stable form (NVML's PCI address,
    the UUID as printed, `nvidia-nvswitchN`, the network device name, the GPU index)."""

    kind: str
    name: str

    def finding_keys(self) -> dict[str, str]:
        """The `Finding` keys that place this device (`pci`, `uuid`, `gpu` or `device`)."""
        if self.kind == "pci":
            return {"pci": self.name}
        if self.kind == "uuid":
            return {"uuid": self.name}
        if self.kind == "gpu":
            return {"gpu": self.name}
        return {"device": self.name}

    def scope(self) -> str:
        """The check-result scope of this device: the GPU UUID, `pci:<address>`, `gpu:<index>`,
        or the NVSwitch / network device name."""
        if self.kind == "pci":
            return f"pci:{self.name}"
        if self.kind == "gpu":
            return f"gpu:{self.name}"
        return self.name


def devices_in(line: str) -> list[DeviceRef]:
    """Every device `line` names, most specific kind first (see the module docstring)."""
    out: list[DeviceRef] = []
    for match in _PCI.finditer(line):
        pci = normalise_pci(match.group(1))
        if pci:
            out.append(DeviceRef("pci", pci))
    out += [DeviceRef("uuid", m.group(1)) for m in _UUID.finditer(line)]
    for match in _NVSWITCH.finditer(line):
        out.append(DeviceRef("nvswitch", f"nvidia-nvswitch{match.group(1) or match.group(2)}"))
    out += [DeviceRef("nic", m.group(1)) for m in _NIC.finditer(line)]
    out += [DeviceRef("gpu", str(int(m.group(1)))) for m in _GPU.finditer(line)]
    return out


def device_of(line: str) -> DeviceRef | None:
    """The most specific device `line` names, None when it names none."""
    found = devices_in(line[:4096])
    return found[0] if found else None
