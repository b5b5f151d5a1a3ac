"""The GPU of an adapter-initialisation line that names none (pure, evidence; no judging).

When the NVIDIA driver fails to bring a GPU up it prints a burst of NVRM lines from one GPU's
initialisation path (`RmInitAdapter` and the functions it calls), some with the GPU's PCI address
and some without, at one moment:

    [   21.091872] NVRM: GPU 0000:01:00.0: RmInitAdapter failed! (0x22:0x56:894)
    [   21.092238] NVRM: GPU 0000:01:00.0: rm_init_adapter failed, device minor number 0
    [   21.238204] NVRM: osInitNvMapping: *** Cannot attach gpu
    [   21.238209] NVRM: RmInitAdapter: osInitNvMapping failed, bailing out of RmInitAdapter
    (Cyridd/cmpunlocker#4; the same in NVIDIA/open-gpu-kernel-modules#1151 and #789:
    `NVRM: RmInitAdapter: Cannot initialize GSP firmware RM` over `NVRM: GPU 0000:98:00.0:
    RmInitAdapter failed!`)

    [Tue Nov 11 23:25:43 2025] NVRM: GPU 0000:82:00.0: Failed to enable MSI-X.
    [Tue Nov 11 23:25:43 2025] NVRM: osInitNvMapping: *** Cannot attach gpu
    [Tue Nov 11 23:25:43 2025] NVRM: RmInitAdapter failed! (0x22:0x56:742)   (fresh14 case 1612)

Rule: a run of driver messages on adjacent lines whose time stamps are within `SAME_MOMENT_S` of
each other (or none carries one) is one burst; when its lines name exactly one GPU, each line of
the burst from the adapter-initialisation path (`INIT_PATH`) that names none is that GPU's. A burst
that names two GPUs, a line not of the initialisation path (`API mismatch`, an assertion) and a
line apart from the burst keep no GPU: the node-level reading stays.
"""

from __future__ import annotations

import re
from dataclasses import replace

from gpuslo.exporter.evidence.kernel_log.parse import KernelEvent

SAME_MOMENT_S = 1.0
# Functions of the driver's per-GPU initialisation (open-gpu-kernel-modules, osinit.c:
# RmInitAdapter -> osInitNvMapping, RmInitNvDevice, initPrivateState, the GSP /
# FSP boot kgsp*/kfsp*, gpuWaitForGfwBootComplete) and their messages.
INIT_PATH = re.compile(
    r"\b(?:RmInitAdapter|rm_init_adapter|osInitNvMapping|RmInitNvDevice|RmInitPrivateState"
    r"|initPrivateState|nv_start_device|gpuWaitForGfwBootComplete\w*|kgsp\w+|kfsp\w+)\b"
    r"|Cannot attach gpu"
)


def _moment(a: KernelEvent, b: KernelEvent) -> bool:
    if a.timestamp is None or b.timestamp is None:
        return a.timestamp is None and b.timestamp is None
    return a.clock_kind == b.clock_kind and abs(a.timestamp - b.timestamp) <= SAME_MOMENT_S


def _bursts(events: list[KernelEvent]) -> list[list[int]]:
    """Indexes of the driver-message events, grouped into bursts (module docstring)."""
    out: list[list[int]] = []
    last: KernelEvent | None = None
    for index, event in enumerate(events):
        if event.kind != "driver_message":
            last = None
            continue
        if last is not None and event.line == last.line + last.lines and _moment(last, event):
            out[-1].append(index)
        else:
            out.append([index])
        last = event
    return out


def with_init_gpus(events: list[KernelEvent]) -> list[KernelEvent]:
    """`events` (in line order) with the GPU of each burst given to its initialisation-path lines
    that name none (module docstring); the same list when no line changes."""
    changed = list(events)
    for burst in _bursts(events):
        named = {events[i].pci for i in burst if events[i].pci is not None}
        if len(burst) < 2 or len(named) != 1:
            continue
        (pci,) = named
        for i in burst:
            if events[i].pci is None and INIT_PATH.search(events[i].message[:4096]):
                changed[i] = replace(events[i], pci=pci)
    return changed
