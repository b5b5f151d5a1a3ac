"""The shared GPU health rules (`evaluate_gpu`), judging one `GpuStatus` (evidence.gpu_status).

Every source — nvidia-smi text, XML and CSV, NVML, dcgm-exporter — fills a `GpuStatus`; every
field is optional and None means "not reported". `evaluate_gpu` is pure and turns one status into
the problems it shows. It judges only what was reported: a field that is None raises nothing here;
callers that need a field (fail closed) report its absence as `unknown` themselves.

Sources for the rules:
- ECC: NVIDIA "GPU Memory Error Management" (https://docs.nvidia.com/deploy/a100-gpu-mem-error-mgmt/)
  — a volatile uncorrectable (DBE) error means the data in flight was lost; the GPU must be reset
  (or rows remapped) before it is trusted again.
- Row remapping: same document, "Row Remapping": a remap is pending until the next GPU reset; a
  remapping failure means the GPU needs service (RMA, fatal). The document tells apart a remap
  pending after correctable errors (the GPU stays usable and is reset at its next drain: warn)
  from one pending after an uncorrectable error (the GPU must be reset before work: fatal).
  The remapped-row counts are lifetime totals, so with any uncorrectable remapped row (or an
  unreported count) which error the pending remap is for cannot be told: fatal (fail closed).
  The same rule holds for every source that reports the counts (nvidia-smi text/XML/CSV, NVML
  `nvmlDeviceGetRemappedRows`, DCGM `DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS`). Blackwell-era
  drivers add "Channel Repair Pending" / "TPC Repair Pending" (a repair applied at the next
  reset, treated like a pending remap after an uncorrectable error) and "Unrepairable Memory"
  (treated like a remapping failure).
- Recovery action: NVML `nvmlDeviceGetGpuRecoveryAction` / nvidia-smi `gpu_recovery_action`
  (NVML API reference, "GPU Recovery Action"): None, Reset, Reboot, Drain_P2P, Drain_and_Reset.
  nvidia-smi -q "GPU Reset Status" says the same in two flags: "Reset Required: Yes" is the state
  NVML names NVML_ERROR_RESET_REQUIRED ("the GPU requires a reset before it can be used again":
  fatal, reset_gpu) and "Drain and Reset Recommended: Yes" the drain_and_reset action (fatal).
- HW thermal slowdown: nvidia-smi's "Clocks Event Reasons" (nvidia-smi(1)): "HW Thermal Slowdown"
  means the hardware halves clocks because the GPU is too hot. We class it `fatal`: the GPU runs at
  a fraction of its speed and a synchronous training job is held to its slowest GPU, so the GPU
  does not deliver what a job was promised. A
  temperature at or above the GPU's own slowdown threshold ("GPU Slowdown Temp") is warn.
- SW thermal slowdown and SW power capping (clocks event reasons 0x20 and 0x04) are warn with
  their own reasons (`clocks_sw_thermal`, `clocks_sw_power_cap`): usable, but they explain a crawl.
- PCIe: nvidia-smi(1) "PCI / Link": the current generation drops at idle to save power, so a
  generation below max alone is normal — a degradation only while the GPU is busy (utilisation
  at or above `LOAD_RATIO`, as the live `pcie` check judges it); a width below max is a degraded
  link: warn at half its lanes or more, fatal below half (`policy.pcie_width`).
- NVLink: `nvidia-smi nvlink -s` reports each link's state; an inactive link cuts bandwidth and
  breaks NVLink peer traffic (fatal, with the link numbers), except the link slots a bridged
  PCIe board (H100 PCIe/NVL, A100 PCIe, RTX A6000, A40) leaves unconnected by design
  (`policy.nvlink_links`).
- NVLink error counters (`nvidia-smi nvlink -e`: replay, recovery, CRC): non-zero counts are
  recorded as warn; a cumulative count since boot alone does not make a link unusable (rising
  counters are judged by the live check, which sees deltas).
- Fabric: nvidia-smi -q "Fabric" section (Hopper/Blackwell NVSwitch systems): State must be
  Completed and Status Success before CUDA work may run over the fabric. Its "Health / Summary"
  (NVML fabric health summary) Unhealthy is fatal; Limited Capacity (reduced bandwidth) is warn.
"""

from __future__ import annotations

from gpuslo import names
from gpuslo.exporter.evidence.gpu_status import GpuStatus
from gpuslo.exporter.policy.clocks import clock_problems
from gpuslo.exporter.policy.gpu_problem import GpuProblem
from gpuslo.exporter.policy.nvlink_links import nvlink_state_problems
from gpuslo.exporter.policy.pcie_width import narrow_class, narrow_note

__all__ = ["GpuProblem", "evaluate_gpu", "gpus_missing", "recovery_action_of"]

LOAD_RATIO = 0.5  # utilisation (0-1) above which a PCIe link should run at its top generation
FABRIC_STATE_OK = "completed"
FABRIC_STATUS_OK = "success"
# NVML's GPU recovery actions, lower-cased, mapped to our action vocabulary (NVML API reference,
# nvmlDeviceGetGpuRecoveryAction: NONE, GPU_RESET, NODE_REBOOT, DRAIN_P2P, DRAIN_AND_RESET).
RECOVERY_ACTIONS = {
    "none": names.ACTION_NONE,
    "reset": names.ACTION_RESET_GPU,
    "gpu_reset": names.ACTION_RESET_GPU,
    "gpu reset": names.ACTION_RESET_GPU,
    "reboot": names.ACTION_REBOOT_NODE,
    "node_reboot": names.ACTION_REBOOT_NODE,
    "node reboot": names.ACTION_REBOOT_NODE,
    "drain_p2p": names.ACTION_DRAIN_AND_RESET,
    "drain p2p": names.ACTION_DRAIN_AND_RESET,
    "drain": names.ACTION_DRAIN_AND_RESET,
    "drain_and_reset": names.ACTION_DRAIN_AND_RESET,
    "drain and reset": names.ACTION_DRAIN_AND_RESET,
}


def gpus_missing(seen: int, expected: int | None,
                 no_devices: bool = False) -> GpuProblem | None:
    """The fatal `gpu_missing` problem of a node (action reboot_node: a GPU off the bus does not
    come back otherwise) when fewer than `expected` GPUs are seen (count = GPUs missing), or when
    the tool said "No devices were found" and none is seen (count unknown); else None."""
    if expected is not None and seen < expected:
        count, message = expected - seen, f"{seen} of {expected} expected GPUs seen"
    elif no_devices and seen == 0:
        count, message = None, "No devices were found"
    else:
        return None
    return GpuProblem(signal="gpu_missing", class_=names.CLASS_FATAL, reason="gpu_missing",
                      action=names.ACTION_REBOOT_NODE, message=message, count=count)


def recovery_action_of(text: str | None) -> str | None:
    """Our action (`names.ACTIONS`) for NVIDIA's recovery action text, None when not reported.

    Unrecognised text maps to `drain_and_reset` (fail closed: NVIDIA asked for something)."""
    if text is None:
        return None
    key = text.strip().lower().replace("-", "_")
    if key.startswith("nvml_gpu_recovery_action_"):
        key = key.removeprefix("nvml_gpu_recovery_action_")
    return RECOVERY_ACTIONS.get(
        key, RECOVERY_ACTIONS.get(key.replace("_", " "), names.ACTION_DRAIN_AND_RESET)
    )


def _problem(signal: str, klass: str, reason: str, action: str, message: str, **kw) -> GpuProblem:
    return GpuProblem(
        signal=signal, class_=klass, reason=reason, action=action, message=message, **kw
    )


# (GpuStatus flag, signal/reason, action, message): memory states that wait for service.
_MEMORY_FLAGS = (
    (
        "remapped_rows_failure",
        "row_remap_failure",
        names.ACTION_CONTACT_SUPPORT,
        "row remapping failed; the GPU needs service",
    ),
    (
        "unrepairable_memory",
        "row_remap_failure",
        names.ACTION_CONTACT_SUPPORT,
        "the driver reports unrepairable memory; the GPU needs service",
    ),
    (
        "memory_repair_pending",
        "row_remap_pending",
        names.ACTION_DRAIN_AND_RESET,
        "a channel or TPC repair waits for a GPU reset to take effect",
    ),
    (
        "retired_pages_pending",
        "row_remap_pending",
        names.ACTION_DRAIN_AND_RESET,
        "a retired page waits for a GPU reset to take effect",
    ),
)


def _memory_problems(s: GpuStatus) -> list[GpuProblem]:
    out = []
    if s.ecc_dbe_volatile:
        out.append(
            _problem(
                "ecc_uncorrectable",
                names.CLASS_FATAL,
                "ecc_uncorrectable",
                names.ACTION_RESET_GPU,
                f"{s.ecc_dbe_volatile} volatile uncorrectable (DBE) ECC errors",
                count=s.ecc_dbe_volatile,
            )
        )
    for flag, signal, action, message in _MEMORY_FLAGS:
        if getattr(s, flag):
            out.append(_problem(signal, names.CLASS_FATAL, signal, action, message))
    pending = _remap_pending(s)
    return out + ([pending] if pending else [])


def _remap_pending(s: GpuStatus) -> GpuProblem | None:
    """A pending row remap: warn after correctable errors only, fatal when any uncorrectable
    remapped row is counted or the count is not reported (see the module docstring)."""
    if not s.remapped_rows_pending:
        return None
    uncorrectable = s.remapped_rows_uncorrectable
    if uncorrectable == 0:
        return _problem(
            "row_remap_pending",
            names.CLASS_WARN,
            "row_remap_pending",
            names.ACTION_DRAIN_AND_RESET,
            "a row remap after correctable errors waits for the next reset (at the next drain)",
        )
    counted = "uncorrectable count not reported" if uncorrectable is None else (
        f"{uncorrectable} rows remapped for uncorrectable errors"
    )
    return _problem(
        "row_remap_pending",
        names.CLASS_FATAL,
        "row_remap_pending",
        names.ACTION_DRAIN_AND_RESET,
        f"a remapped row waits for a GPU reset to take effect ({counted})",
        count=uncorrectable,
    )


def _thermal_problems(s: GpuStatus) -> list[GpuProblem]:
    if s.hw_thermal_slowdown:
        return [
            _problem(
                "thermal_slowdown",
                names.CLASS_FATAL,
                "thermal_slowdown",
                names.ACTION_CONTACT_SUPPORT,
                "hardware thermal slowdown active: clocks cut to cool the GPU",
            )
        ]
    temp, limit = s.temperature_c, s.slowdown_temperature_c
    if temp is not None and limit is not None and limit > 0 and temp >= limit:
        return [
            _problem(
                "thermal_slowdown",
                names.CLASS_WARN,
                "thermal_slowdown",
                names.ACTION_NONE,
                f"GPU at {temp:g} C, at or above its slowdown temperature {limit:g} C",
            )
        ]
    return [
        _problem(reason, names.CLASS_WARN, reason, names.ACTION_NONE, message)
        for flag, reason, message in _SW_CLOCKS
        if getattr(s, flag)
    ]


# Software clocks event reasons: the driver lowers clocks (to hold a temperature target, to stay
# within the power limit); the GPU is fine but slower, which is what makes a gang job crawl.
_SW_CLOCKS = (
    ("sw_thermal_slowdown", "clocks_sw_thermal", "SW thermal slowdown active: clocks lowered"),
    ("sw_power_cap", "clocks_sw_power_cap", "SW power capping active: clocks lowered"),
)


def _recovery_problems(s: GpuStatus) -> list[GpuProblem]:
    """One `recovery_action` problem (fatal) for the most severe action that the recovery action
    and the GPU Reset Status flags ask for together: they are one state read three ways, so a
    GPU that shows "Drain and Reset" and "Drain and Reset Recommended: Yes" is one finding."""
    asked = []
    action = recovery_action_of(s.recovery_action)
    if action not in (None, names.ACTION_NONE):
        asked.append((action, f"GPU recovery action is {s.recovery_action.strip()}"))
    if s.drain_and_reset_recommended:
        asked.append(
            (names.ACTION_DRAIN_AND_RESET, "GPU reset status: drain and reset recommended")
        )
    if s.reset_required:
        asked.append((names.ACTION_RESET_GPU,
                      "GPU reset status: reset required before the GPU can be used again"))
    if not asked:
        return []
    worst = max((a for a, _ in asked), key=lambda a: names.ACTION_SEVERITY[a])
    return [
        _problem(
            "recovery_action",
            names.CLASS_FATAL,
            "recovery_action",
            worst,
            "; ".join(message for _, message in asked),
        )
    ]


def _link_problems(s: GpuStatus) -> list[GpuProblem]:
    out = []
    widths = (s.pcie_width_current, s.pcie_width_max)
    narrow = narrow_class(*widths)
    if narrow is not None:
        out.append(
            _problem(
                "pcie_degraded",
                narrow,
                "pcie_degraded",
                names.ACTION_CHECK_CABLING,
                f"PCIe link width x{widths[0]} below its maximum x{widths[1]}, "
                f"{narrow_note(narrow)}",
            )
        )
    gens, busy = (s.pcie_gen_current, s.pcie_gen_max), s.utilization_gpu
    if None not in gens and 0 < gens[0] < gens[1] and busy is not None and busy >= LOAD_RATIO:
        out.append(
            _problem(
                "pcie_degraded",
                names.CLASS_WARN,
                "pcie_degraded",
                names.ACTION_CHECK_CABLING,
                f"PCIe generation {gens[0]} below its maximum {gens[1]} at {busy:.0%} utilisation",
            )
        )
    return out + nvlink_state_problems(s.model, s.nvlink_states)


def _nvlink_error_problems(s: GpuStatus) -> list[GpuProblem]:
    counts = s.nvlink_error_counts or {}
    links = sorted(link for link, counters in counts.items() if any(counters.values()))
    if not links:
        return []
    total = sum(sum(counts[link].values()) for link in links)
    return [
        _problem(
            "nvlink_errors",
            names.CLASS_WARN,
            "nvlink_errors",
            names.ACTION_NONE,
            f"{total} NVLink errors counted on links {', '.join(map(str, links))}",
            links=tuple(links),
            count=total,
        )
    ]


def _fabric_problems(s: GpuStatus) -> list[GpuProblem]:
    state = (s.fabric_state or "").strip().lower()
    status = (s.fabric_status or "").strip().lower()
    bad_state = s.fabric_state is not None and state not in (FABRIC_STATE_OK, "n/a", "[n/a]")
    bad_status = s.fabric_status is not None and status not in (FABRIC_STATUS_OK, "n/a", "[n/a]")
    out = []
    if bad_state or bad_status:
        out.append(
            _problem(
                "fabric_unhealthy",
                names.CLASS_FATAL,
                "fabric_unhealthy",
                names.ACTION_DRAIN_AND_RESET,
                # None is nvidia-smi's `N/A` (not reported), printed as the GPU showed it
                f"NVLink fabric state {s.fabric_state or 'N/A'}, status {s.fabric_status or 'N/A'}",
            )
        )
    health = (s.fabric_health or "").strip().lower()
    if health and health not in ("healthy", "n/a", "[n/a]", "not supported"):
        klass = names.CLASS_WARN if health == "limited capacity" else names.CLASS_FATAL
        out.append(
            _problem(
                "fabric_unhealthy",
                klass,
                "fabric_unhealthy",
                names.ACTION_DRAIN_AND_RESET,
                f"NVLink fabric health summary {s.fabric_health.strip()}",
            )
        )
    return out


def evaluate_gpu(status: GpuStatus) -> list[GpuProblem]:
    """The problems `status` shows, most severe rule first (pure; see the module docstring for the
    rules and their sources). An inaccessible GPU yields only `gpu_inaccessible`: nothing else it
    reports can be trusted. An empty list means nothing reported is wrong — not that the GPU is
    healthy if a required field is None."""
    if status.accessible is False:
        detail = f": {status.error}" if status.error else ""
        # nvidia-smi says "GPU is lost.  Reboot the system to recover this GPU" when a reset
        # cannot bring it back: NVML_ERROR_GPU_IS_LOST ("the GPU has fallen off the bus or has
        # otherwise become inaccessible"), in a message or in a field's place (`[GPU is lost]`).
        error = (status.error or "").lower()
        reboot = "reboot" in error or "gpu is lost" in error
        return [
            _problem(
                "gpu_inaccessible",
                names.CLASS_FATAL,
                "gpu_inaccessible",
                names.ACTION_REBOOT_NODE if reboot else names.ACTION_RESET_GPU,
                f"the driver lists this GPU but cannot query it{detail}",
            )
        ]
    return [
        *_memory_problems(status),
        *_recovery_problems(status),
        *_thermal_problems(status),
        *clock_problems(status),
        *_link_problems(status),
        *_nvlink_error_problems(status),
        *_fabric_problems(status),
    ]
