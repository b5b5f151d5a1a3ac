"""Judging PCIe evidence from `lspci -vv` (pure): link training against capability, and AER.

Rules (sources: the PCI Express Base Specification's Link Status and AER registers as lspci
prints them; NVIDIA's DCGM diagnostics, whose `pcie` test fails a link narrower than the GPU
supports, DCGM_FR_PCIE_WIDTH; nvidia-smi(1), which notes that a GPU lowers its link generation at
idle to save power):
- a link narrower than its capability (`Width x1 (downgraded)`, or LnkSta width < LnkCap width)
  is `pcie_degraded`, check the cabling/slot: fatal below half its lanes; at half or more warn
  when the port above the GPU shows the slot wired that narrow, fatal when that port is wider,
  unknown when the capture does not show it (lspci's capability is the GPU's own, not the slot's:
  `policy.pcie_width.lspci_narrow`, the rule `policy.gpu` applies to NVML and nvidia-smi
  otherwise); an excerpt
  without its device header (`lspci -vvv -s BDF | egrep LnkSta`) gives the finding with no PCI
  id; a speed below capability with the width held is a degradation only when the GPU
  is busy, which lspci cannot show: lspci's own `(downgraded)` mark on the speed makes it
  `pcie_degraded` warn with that caveat, an unmarked LnkSta below LnkCap is a noted observation
  (`pcie_link`, ok): an idle GPU runs its link at a lower generation by design;
- uncorrectable AER status bits set (`UESta ...+`) on a GPU or on the bridge port above it are
  `pcie_aer_uncorrectable`, fatal (reset the GPU); corrected bits (`CESta ...+`) are
  `pcie_aer_corrected`, warn;
- a GPU memory region (BAR) that lspci prints `Memory at <unassigned>` has no address: the
  firmware or kernel could not fit it (above-4G decoding off, a bridge window too small), and the
  NVIDIA driver cannot map the GPU (NVIDIA Linux driver README, Common Problems: "the PCI I/O
  region assigned to your NVIDIA device is invalid", BIOS resource assignment, the same condition
  as `driver_messages.yaml` `pci_resources_invalid`): `pcie_bar_unassigned`, fatal, reason
  `gpu_init_failed`, reboot after fixing the firmware settings (fresh3 case 410). An unassigned
  I/O port region or expansion ROM is not judged (GPUs need neither);
- an NVIDIA device whose config space reads as all ones (`rev ff`) has fallen off the bus (fatal);
- an `lspci [-nn]` listing (no detail under any header) is inventory: GPUs and NVSwitches seen,
  no link judged (it shows none);
- only NVIDIA devices, the bridges above NVIDIA GPUs (AER) and an excerpt without its header are
  judged as GPUs. Of another device only one thing is noted: an endpoint (the Express capability
  says `Endpoint` or `Legacy Endpoint`; a port's link follows what is plugged into it) whose link
  trained narrower than its capability is `pcie_degraded` warn, named as that device and never a
  GPU's fault: a NIC or storage controller on fewer lanes slows what the job feeds through it,
  but the GPUs stay usable (fresh15 case 1706, a RAID controller at x1 of x2 `(downgraded)`).
  Its speed, AER bits and BARs are not judged (a storage or chipset device lowers its link
  speed to save power like a GPU does, and its errors are the device's own);
- fail closed: an NVIDIA GPU whose entry shows no link status (lspci run without root prints
  `Capabilities: <access denied>`; a cut capture) is `pcie_link` unknown, and lines before the
  first device header of a multi-device output (a capture cut at its start) are unknown.
"""

from __future__ import annotations

import re

from gpuslo import names
from gpuslo.exporter.evidence.families import family_of
from gpuslo.exporter.evidence.lspci import Device, is_listing
from gpuslo.exporter.policy.pcie_width import lspci_narrow, narrow_class
from gpuslo.verdict import Finding


def _bus(pci: str | None) -> str | None:
    """`domain:bus` of an address (PCI domains other than 0000 are distinct buses)."""
    return pci.rsplit(":", 1)[0].lower() if pci else None


def _model(device: Device) -> str:
    text = device.description.split(": ", 1)[-1]
    text = text.split(" (rev")[0].replace("NVIDIA Corporation ", "")
    return re.sub(r"\s*\[[0-9a-fA-F]{4}:[0-9a-fA-F]{4}\]\s*$", "", text).strip()  # -nn ids


def link_findings(
    kind: str, device: Device, source: str = "", port: Device | None = None
) -> list[Finding]:
    """`pcie_degraded` (warn, or as `policy.pcie_width.lspci_narrow` grades a narrow link against
    the upstream `port` when the capture shows it) or `pcie_link` (ok) for a device's link (see
    the module rules)."""
    link = device.link
    if link is None or (link.width is None and link.speed is None):
        if not device.is_gpu:
            return []
        denied = any("<access denied>" in line for line in device.lines)
        why = "lspci was not run as root (<access denied>)" if denied else "not in the capture"
        return [
            Finding(
                kind=kind,
                class_=names.CLASS_UNKNOWN,
                signal="pcie_link",
                reason="no_data",
                pci=device.pci,
                line=device.line,
                message=f"{source}:{device.line}: GPU {device.pci}: link status not shown: {why}",
            )
        ]
    slot = port.link.width_cap if port is not None and port.link is not None else None
    graded = lspci_narrow(link.width, link.width_cap, link.width_downgraded, slot)
    slow = link.speed_downgraded or (
        link.speed is not None and link.speed_cap is not None and link.speed < link.speed_cap
    )
    now = f"x{link.width or '?'} at {link.speed or '?'} GT/s"
    cap = f"x{link.width_cap or '?'} at {link.speed_cap or '?'} GT/s"
    base = {"kind": kind, "pci": device.pci, "line": device.line}
    if graded:
        return [
            Finding(
                class_=graded[0],
                signal="pcie_degraded",
                reason="pcie_degraded",
                action=names.ACTION_CHECK_CABLING,
                message=f"PCIe link trained {now}, narrower than its capability ({cap})"
                + (" and slower" if slow else "") + f": {graded[1]}",
                **base,
            )
        ]
    if slow and link.speed_downgraded:
        return [
            Finding(
                class_=names.CLASS_WARN,
                signal="pcie_degraded",
                reason="pcie_degraded",
                action=names.ACTION_NONE,
                message=f"PCIe link trained {now}, slower than its capability ({cap}), marked "
                "downgraded by lspci: a degradation if the GPU was busy (normal at idle)",
                **base,
            )
        ]
    note = " (speed below capability: normal at idle)" if slow else ""
    return [
        Finding(
            class_=names.CLASS_OK,
            signal="pcie_link",
            layer=names.LAYER_NODE,
            message=f"PCIe link {now}, capability {cap}{note}",
            **base,
        )
    ]


_ENDPOINT = re.compile(r"\bExpress \(v\d+\) (?:Legacy )?Endpoint\b")


def other_link_findings(kind: str, device: Device) -> list[Finding]:
    """`pcie_degraded` (warn, node layer) for a device that is not NVIDIA's when it is a PCIe
    endpoint whose link trained narrower than its capability (the module rules); [] otherwise,
    and for a bridge or port, whose width follows the device below it."""
    link = device.link
    endpoint = device.secondary_bus is None and any(_ENDPOINT.search(x) for x in device.lines)
    if link is None or device.pci is None or not endpoint:
        return []
    narrow = narrow_class(link.width, link.width_cap) or link.width_downgraded
    if not narrow:
        return []
    return [
        Finding(
            kind=kind,
            class_=names.CLASS_WARN,
            signal="pcie_degraded",
            reason="pcie_degraded",
            action=names.ACTION_CHECK_CABLING,
            pci=device.pci,
            line=device.line,
            message=f"{_model(device)[:100]} (not a GPU): PCIe link trained x{link.width or '?'}, "
            f"narrower than its capability x{link.width_cap or '?'}: that device's bandwidth "
            "is reduced (reseat it or check its slot); no GPU is judged by it",
        )
    ]


def bar_findings(kind: str, device: Device) -> list[Finding]:
    """`pcie_bar_unassigned` (fatal) for a GPU with memory regions left unassigned."""
    if not (device.is_gpu and device.unassigned_memory):
        return []
    regions = ", ".join(device.unassigned_memory)
    return [
        Finding(
            kind=kind,
            class_=names.CLASS_FATAL,
            signal="pcie_bar_unassigned",
            reason="gpu_init_failed",
            action=names.ACTION_REBOOT_NODE,
            pci=device.pci,
            line=device.line,
            message=f"memory region(s) {regions} unassigned: the driver cannot map the GPU "
            "(BIOS resource assignment: above-4G decoding, bridge windows)",
        )
    ]


def aer_findings(kind: str, device: Device, gpu: Device | None = None) -> list[Finding]:
    """AER findings of `device` (the GPU itself, or `gpu`'s upstream bridge port)."""
    where = f"upstream port {device.pci} of GPU {gpu.pci}" if gpu else "device"
    pci = gpu.pci if gpu else device.pci
    out = []
    if device.uncorrectable:
        out.append(
            Finding(
                kind=kind,
                class_=names.CLASS_FATAL,
                signal="pcie_aer_uncorrectable",
                reason="pcie_aer_uncorrectable",
                action=names.ACTION_RESET_GPU,
                pci=pci,
                line=device.line,
                message=f"uncorrectable PCIe errors on the {where}: "
                f"{', '.join(device.uncorrectable)}",
            )
        )
    if device.corrected:
        out.append(
            Finding(
                kind=kind,
                class_=names.CLASS_WARN,
                signal="pcie_aer_corrected",
                layer=names.LAYER_NODE,
                pci=pci,
                line=device.line,
                message=f"corrected PCIe errors on the {where}: {', '.join(device.corrected)}",
            )
        )
    return out


def lspci_findings(kind: str, devices: list[Device], source: str = "") -> list[Finding]:
    """Every finding for one `lspci -vv` output (see the module rules), with one `gpus_seen`
    inventory finding per NVIDIA GPU; unknown findings name `source` and the line."""
    bridges = {f"{(d.pci or '00000000').split(':')[0]}:{d.secondary_bus}".lower(): d
               for d in devices if d.secondary_bus}
    listing = is_listing(devices)
    out: list[Finding] = []
    if len(devices) > 1 and devices[0].pci is None:
        out.append(
            Finding(
                kind=kind,
                class_=names.CLASS_UNKNOWN,
                signal="nothing_recognised",
                reason="parse_error",
                line=devices[0].line,
                message=f"{source}: lines {devices[0].line}-{devices[1].line - 1} come before the "
                "first device header: the capture is cut or corrupted",
            )
        )
        devices = devices[1:]
    for device in devices:
        judged = device.is_nvidia or device.pci is None
        if not judged:
            out += [] if listing else other_link_findings(kind, device)
            continue
        if device.not_responding:
            out.append(
                Finding(
                    kind=kind,
                    class_=names.CLASS_FATAL,
                    signal="fallen_off_bus",
                    reason="fallen_off_bus",
                    action=names.ACTION_REBOOT_NODE,
                    pci=device.pci,
                    line=device.line,
                    message=f"{device.description[:120]}: config space reads all ones",
                )
            )
            continue
        upstream = bridges.get(_bus(device.pci)) if device.is_gpu else None
        if not listing:  # a listing shows no link or AER status by design
            port = upstream if upstream is not device else None
            out += link_findings(kind, device, source, port) + aer_findings(kind, device)
            out += bar_findings(kind, device)
        if upstream is not None and upstream is not device:
            out += aer_findings(kind, upstream, gpu=device)
        if device.is_gpu:
            model = _model(device)
            out.append(
                Finding(
                    kind=kind,
                    class_=names.CLASS_OK,
                    signal="gpus_seen",
                    count=1,
                    pci=device.pci,
                    line=device.line,
                    message=model,
                    extra={"model": model, "family": family_of(model)},
                )
            )
    return out
