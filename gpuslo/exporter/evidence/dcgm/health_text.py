"""The GPU and health system a line of a `dcgmi health -c` report names (evidence, no judging).

DCGM writes each incident's message with its GPU in the text (DcgmHealthWatch.cpp, dcgm_errors.h
messages: `GPU 0's NvLink link 4 is currently down`, `Detected 12 PCIe replays per minute for GPU
1`, `GPU 2 had uncorrectable memory errors`), while the boxed report's tree (`GPU` > `<id>` >
`Errors` > `<system>`) is lost when a report is pasted in part or wrapped. `health_mentions`
finds (GPU index, system, line) in every line that names both, so an incident reaches its GPU
whatever survives of the tree.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_GPU = re.compile(r"\bGPU(?: ?ID)?[ :#]{0,2}(\d{1,3})(?:'s)?\b(?![-:.]\d)")
_BOX = re.compile(r"[|+]+|\s{2,}")
_LINK_DOWN = re.compile(r"GPU ?(\d{1,3})'s NvLink link (\d{1,2}) is currently down", re.IGNORECASE)
# DCGM health systems (dcgm_structs.h dcgmHealthSystems_t) as the messages spell them.
_SYSTEMS = (
    ("nvlink", re.compile(r"\bnv ?link\b", re.IGNORECASE)),
    ("pcie", re.compile(r"\bpci(?:e)?\b|\breplays?\b", re.IGNORECASE)),
    ("memory", re.compile(r"\bmemory\b|\becc\b|\bDBE\b|\bSBE\b|row remap", re.IGNORECASE)),
    ("inforom", re.compile(r"\binforom\b", re.IGNORECASE)),
    ("thermal", re.compile(r"\bthermal\b|\btemperature\b", re.IGNORECASE)),
    ("power", re.compile(r"\bpower\b", re.IGNORECASE)),
    ("nvswitch", re.compile(r"\bnvswitch\b", re.IGNORECASE)),
    ("driver", re.compile(r"\bdriver\b", re.IGNORECASE)),
)


@dataclass(frozen=True)
class HealthMention:
    """One report line that names a GPU (DCGM gpuId) and a health system."""

    gpu: str
    system: str
    line: int
    text: str


def health_mentions(text: str) -> list[HealthMention]:
    """Every (GPU, system) a line of `text` names, in line order (box borders stripped)."""
    out = []
    for number, raw in enumerate(text.splitlines(), 1):
        line = _BOX.sub(" ", raw[:4096]).strip()
        gpu = _GPU.search(line)
        if gpu is None:
            continue
        system = next((name for name, pattern in _SYSTEMS if pattern.search(line)), None)
        if system is not None:
            out.append(HealthMention(str(int(gpu.group(1))), system, number, line))
    return out


def links_down(text: str) -> dict[str, set[int]]:
    """{GPU index: NVLink links} a report says are down (`GPU 0's NvLink link 4 is currently
    down`, DCGM's DCGM_FR_NVLINK_DOWN message), from the report's lines with box borders and
    wrapping blanks removed."""
    out: dict[str, set[int]] = {}
    for raw in text.splitlines():
        for gpu, link in _LINK_DOWN.findall(_BOX.sub(" ", raw[:4096])):
            out.setdefault(str(int(gpu)), set()).add(int(link))
    return out
