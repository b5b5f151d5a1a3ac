"""What the GPU schedulers say about a node's GPUs, for `gpuslo inspect` (registered in
`inspect.registry.KINDS`): the log of NVIDIA's Kubernetes device plugin (`device-plugin-log`,
parsed by `evidence.device_plugin`) and Slurm's node record (`slurm-node`: `scontrol show node`,
or any Slurm listing carrying its GRES shortfall reason; parsed by `evidence.slurm`).

- Device plugin: each `XidCriticalError` line is the Xid it names, classed by the Xid policy
  (`policy.classify.xid_finding`, the rule every Xid source uses); each GPU the plugin withdrew
  (the Xid line says it "will go unhealthy", or a "device marked unhealthy" line) is
  `device_plugin_unhealthy`: unknown, layer node — Kubernetes allocates it to no pod until the
  plugin restarts, whatever gpuslo makes of the Xid, so it cannot be called healthy.
- Slurm: "gres/gpu count reported lower than configured (R < C)" means the node's slurmd found
  R of the C GPUs slurm.conf gives it, and slurmctld drained the node: `gpu_missing`, by the rule
  `--expect-gpus` uses (`policy.gpu.gpus_missing`) with the configured count as the expected one.
  A node record without it says nothing about GPU health: no finding (unknown).
"""

from __future__ import annotations

from dataclasses import replace

from gpuslo import names
from gpuslo.exporter.evidence.device_plugin import (
    looks_like_device_plugin_log,
    parse_device_plugin_log,
)
from gpuslo.exporter.evidence.slurm import (
    gres_shortfall,
    looks_like_scontrol_node,
    parse_nodes_text,
)
from gpuslo.exporter.inspect.detectors import looks_like_slurm_node
from gpuslo.exporter.inspect.options import InspectOptions
from gpuslo.exporter.policy.classify import xid_finding
from gpuslo.exporter.policy.gpu import gpus_missing
from gpuslo.verdict import Finding

__all__ = [
    "inspect_device_plugin_log",
    "inspect_slurm_node",
    "looks_like_device_plugin_log",
    "looks_like_slurm_node",
]

PLUGIN_KIND = "device-plugin-log"
SLURM_KIND = "slurm-node"


def _where(device: str) -> dict:
    """A device-plugin device id as Finding keys: a GPU UUID is `uuid`, another id `device`."""
    return {"uuid": device} if device.upper().startswith("GPU-") else {"device": device}


def inspect_device_plugin_log(text: str, options: InspectOptions, source: str) -> list[Finding]:
    """Findings for a device-plugin log (module docstring): one Xid finding per (Xid, device)
    with `events` = lines, one `device_plugin_unhealthy` per device withdrawn; empty when the
    log withdrew nothing."""
    events = parse_device_plugin_log(text)
    findings: list[Finding] = []
    xids: dict[tuple[int, str], list[int]] = {}
    for event in events:
        if event.xid is not None:
            xids.setdefault((event.xid, event.device), []).append(event.line)
    for (xid, device), lines in xids.items():
        found = xid_finding(PLUGIN_KIND, xid, options.policy, family=options.gpu_family)
        findings.append(replace(
            found, events=len(lines), line=lines[0], **_where(device),
            message=f"the device plugin saw Xid {xid} (NVML critical-Xid event) on {device}",
        ))
    withdrawn: dict[str, list[int]] = {}
    for event in events:
        withdrawn.setdefault(event.device, []).append(event.line)
    for device, lines in withdrawn.items():
        seen = sorted({xid for xid, where in xids if where == device})
        why = f" after Xid {', '.join(map(str, seen))}" if seen else ""
        findings.append(Finding(
            kind=PLUGIN_KIND, class_=names.CLASS_UNKNOWN, signal="device_plugin_unhealthy",
            layer=names.LAYER_NODE, line=lines[0], events=len(lines), **_where(device),
            message=f"the Kubernetes device plugin marked {device} unhealthy{why}: no pod gets "
            "it until the plugin restarts",
        ))
    return findings


def _shortfall(reason: str, line: int | None, node: str | None) -> list[Finding]:
    found = gres_shortfall(reason)
    if found is None or found[0] != "gpu":
        return []
    _, reported, configured = found
    problem = gpus_missing(reported, configured)
    if problem is None:
        return []
    where = f"node {node}: " if node else ""
    return [replace(
        problem.finding(SLURM_KIND, line=line),
        message=f"{where}slurmd found {reported} of the {configured} GPUs slurm.conf configures, "
        f"and Slurm drained the node ({reason[:160]})",
        extra={"node": node} if node else {},
    )]


def inspect_slurm_node(text: str, options: InspectOptions, source: str) -> list[Finding]:
    """Findings for Slurm's node records (module docstring): `gpu_missing` per node whose reason
    is the GPU shortfall; empty when none is."""
    if looks_like_scontrol_node(text):
        nodes = parse_nodes_text(text)
        return [found for node in nodes for found in _shortfall(node.reason, None, node.name)]
    findings = []
    for number, line in enumerate(text.splitlines(), 1):
        findings += _shortfall(line, number, None)
    return findings
