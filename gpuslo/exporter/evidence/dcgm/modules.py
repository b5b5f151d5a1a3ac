"""`dcgmi modules -l`, parsed (evidence, no judging): the host engine's modules and their states.

Shape (DCGM `dcgmi/Module.cpp`; real output NVIDIA/DCGM#132, #210, dev corpus case 136):

    | List Modules                                                                      |
    | Status: Success                                                                   |
    | Module ID | Name               | State                                            |
    | 0         | Core               | Loaded                                           |
    | 4         | Health             | Not loaded                                       |

States are `Loaded`, `Not loaded` (DCGM loads a module the first time it is asked for: not a
fault), `Failed to load`, `Denylisted`, `Paused` or `Unknown`.
"""

from __future__ import annotations

import re

_ROW = re.compile(
    r"^\|\s*(\d{1,3})\s*\|\s*([A-Za-z][\w ]{0,40}?)\s*\|\s*([A-Za-z][\w ]{0,40}?)\s*\|\s*$"
)


def looks_like_modules(text: str) -> bool:
    """True for `dcgmi modules -l` output."""
    head = text[:65536]
    return "List Modules" in head and "Module ID" in head


def parse_modules(text: str) -> list[tuple[str, str, str, int]]:
    """(module id, name, state, 1-based line) of every module row. Never raises."""
    out = []
    for number, line in enumerate(text.splitlines(), 1):
        match = _ROW.match(line.strip()[:400])
        if match:
            out.append((match.group(1), match.group(2), match.group(3), number))
    return out
