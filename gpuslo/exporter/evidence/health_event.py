"""Health events as GPU health monitors publish them (evidence, no judging): NVIDIA NVSentinel's
node conditions and events, which carry DCGM's error code, the GPU and the recommended action.

Shapes (NVIDIA/NVSentinel#911, #465, #1471; NVIDIA/aicr#2641, shared corpus dev case 134):

    GpuMemWatch  True  ...  GpuMemWatchIsNotHealthy
    ErrorCode:DCGM_FR_XID_ERROR GPU:4 PCI:0000:c4:00.0 GPU_UUID:GPU-d1816eb1-... Detected XID 31
    for GPU 4 Please consult the documentation for details of this XID. Recommended Action=NONE;
    GpuNvlinkWatch = True   reason=GpuNvlinkWatchIsNotHealthy
      ErrorCode:DCGM_FR_IMEX_UNHEALTHY GPU:0 PCI:0000:9d:00.0
      GPU_UUID:GPU-bb3e1419-... IMEX daemon status is -3 (not READY)
    SysLogsXIDError ... ErrorCode:79 PCI:0000:... (a syslog Xid: the code is the Xid)

One event runs from `ErrorCode:` to the next `ErrorCode:` or its `Recommended Action=X;`, across
wrapped lines; the condition it belongs to is the nearest `<Name>Watch` / `SysLogs<Name>` before
it.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from gpuslo.exporter.evidence.pci import normalise_pci

_EVENT = re.compile(r"ErrorCode:\s?(DCGM_FR_[A-Z0-9_]{1,60}|\d{1,6})\b")
_CONDITION = re.compile(r"\b(Gpu\w{1,40}Watch|SysLogs\w{1,40}|\w{1,40}Watch)\b")
_GPU = re.compile(r"\bGPU:\s?(\d{1,3})\b")
_PCI = re.compile(r"\bPCI:\s?([0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}(?:\.[0-7])?)")
_UUID = re.compile(r"\bGPU_UUID:\s?(GPU-[0-9A-Za-z.-]{1,60})")
_ACTION = re.compile(r"Recommended Action=\s?([A-Z_]{1,40});?")
_XID = re.compile(r"\bXID (\d{1,4})\b", re.IGNORECASE)


@dataclass(frozen=True)
class HealthEvent:
    """One health event: DCGM error `code` (`DCGM_FR_XID_ERROR`) or a numeric one (an Xid, for
    syslog conditions), the `condition` it sits under ("" when none shows), the GPU index, PCI
    address (NVML form), UUID (None when absent), the recommended action as printed ("" when
    absent), the Xid its message names (None), the message and its 1-based `line`."""

    code: str
    condition: str
    gpu: str | None
    pci: str | None
    uuid: str | None
    action: str
    xid: int | None
    message: str
    line: int


def parse_health_events(text: str) -> list[HealthEvent]:
    """Every event of `text`, in order (see the module docstring). Never raises."""
    matches = list(_EVENT.finditer(text))
    out = []
    for position, match in enumerate(matches):
        end = matches[position + 1].start() if position + 1 < len(matches) else len(text)
        body = text[match.end() : min(end, match.end() + 4096)]
        action = _ACTION.search(body)
        if action is not None:
            body = body[: action.end()]
        before = text[max(0, match.start() - 400) : match.start()]
        conditions = _CONDITION.findall(before)
        gpu, pci, uuid = _GPU.search(body), _PCI.search(body), _UUID.search(body)
        xid = _XID.search(body)
        out.append(
            HealthEvent(
                code=match.group(1),
                condition=conditions[-1] if conditions else "",
                gpu=str(int(gpu.group(1))) if gpu else None,
                pci=normalise_pci(pci.group(1)) if pci else None,
                uuid=uuid.group(1) if uuid and "..." not in uuid.group(1) else None,
                action=action.group(1) if action else "",
                xid=int(xid.group(1)) if xid else None,
                message=" ".join(body.split())[:300],
                line=text.count("\n", 0, match.start()) + 1,
            )
        )
    return out


def looks_like_health_event(text: str) -> bool:
    """True when the text carries a health event's `ErrorCode:DCGM_FR_...` (or a numeric code
    under a `SysLogs...` condition)."""
    head = text[:200_000]
    if re.search(r"ErrorCode:\s?DCGM_FR_[A-Z0-9_]", head):
        return True
    return bool(re.search(r"SysLogs\w+", head) and re.search(r"ErrorCode:\s?\d", head))
