"""The evidence kinds `gpuslo inspect` reads (`--kind`), in detection order, as a static list.

The registry is `gpuslo.exporter.inspect.registry.KINDS` (detectors and inspectors, which import
every parser); this list lets `gpuslo inspect --help` offer the choices without importing them,
and tests/test_startup.py keeps the two equal.
"""

from __future__ import annotations

INSPECT_KINDS: tuple[str, ...] = (
    "nvml-error", "health-event", "dcgm-exporter-log", "dcgm-metrics", "dcgmi", "nvidia-smi-xml",
    "nvidia-smi-q", "nvidia-smi-table", "nvlink-status", "nvlink-errors", "smi-csv", "proc-driver",
    "ibstat", "ibstatus", "fi-info", "ibdev2netdev", "ibv-devinfo", "lspci", "fabricmanager-log",
    "hostengine-log", "device-plugin-log", "slurm-node", "kernel-log",
)
