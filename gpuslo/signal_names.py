"""The signals of `gpuslo inspect` findings, each with its meaning: a finding (`verdict.Finding`)
names either a code (`xid`, `sxid`) or one of these signals, and the README's signal reference is
generated from this table (`python -m tools.readme_reference`; tests/test_readme.py compares).

Kept apart from the rest of the vocabulary (`gpuslo.names`), as the metric names are
(`gpuslo.metric_names`): it is a table of documentation, read by the findings and the policies
that make them, and `gpuslo inspect --help` (which loads `names`) does not need it.
"""

from __future__ import annotations

from typing import Final

SIGNALS: Final = {
    "fallen_off_bus": "GPU fell off the PCIe bus (Xid 79 or the NVRM block without an Xid)",
    "gpu_missing": (
        "fewer GPUs than expected: fatal when absent, unknown when the output does not show them"
    ),
    "gpu_inaccessible": "a GPU the driver lists but cannot query (Unknown Error, no handle)",
    "gpus_seen": "inventory: GPUs present in the evidence",
    "gpus_not_shown": (
        "GPUs an nvidia-smi output counts as attached but shows no block for: not judged, so "
        "the verdict covers only the GPUs shown (--expect-gpus judges the node)"
    ),
    "driver_version": "inventory: the NVIDIA kernel driver version (/proc/driver/nvidia/version)",
    "health_fields_not_shown": (
        "an output that shows none of the fields that carry GPU faults (nvidia-smi ECC errors, "
        "row remapping, retired pages, recovery action, reset status; dcgm-exporter's Xid "
        "field): judged on what it shows, which says nothing of those faults"
    ),
    "health_field_unreadable": (
        "a fault-carrying dcgm-exporter field (Xid, ECC, row remapping, recovery action, ...) "
        "shown only with a value it cannot hold (a DCGM blank sentinel, NaN, Inf, a negative "
        "count), or an nvidia-smi one the GPU carries shown as N/A (the uncorrectable DRAM ECC "
        "count with ECC enabled or on an HBM data-centre GPU; remapped rows, retired pages "
        "where that GPU has them): the faults it carries are unknown for that GPU"
    ),
    "gpu_error": "a field reads ERR! in nvidia-smi's table",
    "temperature_outlier": (
        "a note (class ok, never unhealthy): a GPU 20 C or more above the median of 3 or more "
        "GPUs of its model in the same output that draw at least as much power, past none of "
        "NVIDIA's limits (a temperature at its slowdown threshold is thermal_slowdown, warn; "
        "HW thermal slowdown is fatal); the table shows neither, so there it stays a note"
    ),
    "driver_mismatch": "NVML and kernel driver versions differ; nothing can be read (NVML's "
    "Driver/library version mismatch, the kernel's NVRM API mismatch)",
    "nvml_error": "NVML answered with an error",
    "ecc_uncorrectable": "uncorrectable (DBE) ECC errors counted",
    "ecc_correctable": "correctable (SBE) ECC errors counted",
    "row_remap_pending": "a remapped row waits for a GPU reset",
    "row_remap_failure": "row remapping failed; the GPU needs service",
    "recovery_action": "NVIDIA's GPU recovery action asks for a reset, drain or reboot",
    "thermal_slowdown": "hardware thermal slowdown active",
    "pcie_degraded": "PCIe link generation or width below its maximum",
    "nvlink_inactive": "NVLink links down or inactive",
    "nvlink_errors": "NVLink error counters non-zero",
    "nvlink_active": "inventory: NVLink links up",
    "fabric_unhealthy": "NVLink fabric (NVSwitch/IMEX) registration or health not complete",
    "port_down": (
        "an InfiniBand port is not Active with its physical link up, named with the state's "
        "meaning in the InfiniBand spec: Initializing (link trained, no subnet manager has "
        "configured it), Armed (configured, not activated), Down with Polling (no cable or "
        "peer), Disabled (switched off), LinkErrorRecovery; `ibstat` pasted without its "
        "indentation is read the same"
    ),
    "port_state": "an InfiniBand port changed state (mlx5 kernel message)",
    "ports_active": "inventory: InfiniBand ports ACTIVE",
    "port_active": "one InfiniBand port ACTIVE with its physical link up",
    "network_device": (
        "inventory: an RDMA device and its netdev (ibdev2netdev; the netdev state only)"
    ),
    "port_degraded": "an InfiniBand port is ACTIVE below its expected rate",
    "device_unreadable": "a network device that could not be read",
    "network_devices_missing": "fewer network devices than expected",
    "network_devices": (
        "inventory: the RDMA devices a tool listed (ibv_devinfo's `No IB devices found`: 0)"
    ),
    "expectation_unchecked": (
        "an expectation given (--expect-gpus, --expect-network-devices) no evidence could check"
    ),
    "efa_devices": "inventory: EFA devices (fi_info rdm domains)",
    "source_stale": "the evidence source stopped updating (host engine gone, frozen counters)",
    "kernel_log_read": "inventory: kernel-log records read",
    "incomplete_last_line": (
        "a captured kernel log's last line has no newline and holds a GPU marker: cut off, so "
        "not read as an event (unknown, never healthy)"
    ),
    "health_report": "dcgmi health overall result",
    "nothing_recognised": "the evidence held nothing this parser recognises",
    "clocks_sw_thermal": "SW thermal slowdown: the driver lowers clocks to hold a temperature",
    "clocks_sw_power_cap": "SW power capping: the driver lowers clocks to stay within power",
    "driver_message": "an NVRM driver message the driver-message catalogue classifies (GPU "
    "initialisation, GSP or firmware boot failures, unsupported GPU)",
    "unrecognised_driver_message": "an NVRM line that reads as an error but matches no catalogue "
    "entry: unknown until a driver reload or reboot (an overlay entry can classify it)",
    "kernel_oops": "the kernel died (oops, BUG, general protection fault) in an NVIDIA kernel "
    "module: the driver's state is undefined until the node reboots",
    "kernel_warning": "a kernel WARNING (or a sleep-in-atomic BUG report) in an NVIDIA kernel "
    "module: the kernel carried on",
    "kernel_stall": "a soft or hard lockup, hung task or RCU stall whose call trace is in an "
    "NVIDIA kernel module (a hard lockup is fatal: the CPU stays locked up)",
    "kernel_trace": "a kernel stack trace through an NVIDIA kernel module whose header (oops, "
    "warning, lockup) the log does not show: unknown",
    "pcie_link": "inventory: a PCIe link's speed and width against its capability (lspci, the "
    "kernel's bandwidth notice)",
    "pcie_bar_unassigned": "a GPU memory region (BAR) lspci shows unassigned: the driver cannot "
    "map the GPU (BIOS resource assignment)",
    "pcie_aer_corrected": "corrected PCIe AER errors on a GPU or its upstream port (lspci CESta)",
    "pcie_aer_uncorrectable": "uncorrectable PCIe AER errors on a GPU or its upstream port "
    "(lspci UESta)",
    "diagnostic_result": "a dcgmi diag test result for one GPU (Pass, Warn, Fail, Skip)",
    "port_not_expected": "inventory: a port of a device outside the expected device set, "
    "reported, not judged",
    "fabric_manager_not_applicable": "nvidia-fabricmanager found no NVSwitch to manage "
    "(NV_WARN_NOTHING_TO_DO on a node without NVSwitch): not a fault",
    "fabric_manager_failed": "the nvidia-fabricmanager service failed to start or stopped on a "
    "node that may need it: NVLink fabric not configured",
    "fabric_manager_running": "inventory: nvidia-fabricmanager started and configured the fabric",
    "fabric_manager_error": "an nvidia-fabricmanager log message its catalogue classifies "
    "(NVLink training, multicast team, topology), or an ERROR line it does not know",
    "dcgm_health": "a DCGM health-watch result (warning or failure) for one GPU and health system "
    "(nv-hostengine log)",
    "hostengine_module_error": "a DCGM host-engine module error (repeated): the host engine's own "
    "trouble, not a GPU fault",
    "source_unavailable": "the monitoring source itself failed (the host engine did not start, "
    "its log shows it exiting, the tool reported its own fatal error)",
    "device_plugin_unhealthy": "the Kubernetes NVIDIA device plugin marked a GPU unhealthy (an Xid "
    "it treats as critical): no pod gets it until the plugin restarts",
    "clock_event": "an NVML clocks event reason that is active (reason: hw_slowdown, hw_thermal, "
    "hw_power_brake: not usable at speed; sw_power_cap, sw_thermal, idle, sync_boost, "
    "app_clocks: the workload's own)",
    "unrecognised_message": "a line naming a device (PCI address, GPU, NVSwitch, mlx5/efa/ib "
    "device) with an error word that no reader recognises: unknown for that device (fatal when "
    "it says fallen off, uncorrectable, fatal or reset required)",
    "log_read": "inventory: records of a daemon's log read (nvidia-fabricmanager, nv-hostengine, "
    "dcgm-exporter)",
    "unrecognised_output": "a whole file that looks like a known tool's output in a shape no "
    "parser knows",
}
