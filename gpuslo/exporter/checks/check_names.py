"""The checks gpuslo knows, by name, with one line each: the static table `gpuslo check`'s
arguments (`gpuslo.cli.check_args`) and the registry (`checks.registry`, which imports each check
when it runs) share. Imports nothing, so `gpuslo check --help` loads no check (issue 30)."""

from __future__ import annotations

# name -> one line naming its evidence source, in the order `gpuslo check` runs and prints them.
CHECKS: dict[str, str] = {
    "gpu_inventory": "GPUs present against the expected count (NVML)",
    "xid": "Xid/SXid events from /dev/kmsg, journalctl -k or dmesg (Xid policy)",
    "dcgm": "dcgm-exporter metrics over HTTP",
    "gpu_memory": "uncorrectable ECC, row remapping, GPU recovery action (NVML)",
    "thermal": "hardware thermal slowdown, temperature at the slowdown threshold (NVML)",
    "nvlink": "NVLink link state and error counters, NVLink fabric state (NVML)",
    "pcie": "PCIe link width and generation against their maximum (NVML)",
    "fabricmanager": (
        "nvidia-fabricmanager log: NVSwitch SXids, the service's state (n/a without NVSwitch)"
    ),
    "hostengine": "DCGM nv-hostengine log: health-watch warnings and failures per GPU",
    "network_links": "InfiniBand ports and EFA devices against the expected count (sysfs)",
    "port_errors": "InfiniBand/RoCE and EFA port error counters, link flaps (sysfs)",
    "gpu_probe": (
        "opt-in active probe: matmul, memory pattern, device-to-device copy (PyTorch/CuPy)"
    ),
}
ACTIVE_ONLY = ("gpu_probe",)
