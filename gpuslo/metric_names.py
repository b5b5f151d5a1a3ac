"""The metric contract's names (DESIGN.md §4): every series gpuslo exports, its type, labels and
help text, and the label set they use. `gpuslo.names` re-exports them with the rest of the
vocabulary; a test proves that rules and dashboards use only these names.
"""

from __future__ import annotations

from typing import Final

METRIC_PREFIX: Final = "gpuslo_"
METRICS: Final = {
    # name: (type, labels, help)
    "gpuslo_build_info": ("gauge", ("version",), "gpuslo build; always 1"),
    "gpuslo_node_info": (
        "gauge",
        ("node", "driver_version", "cuda_version"),
        "Node identity and driver; always 1",
    ),
    "gpuslo_gpu_info": (
        "gauge",
        ("gpu", "uuid", "pci_bus_id", "model", "family"),
        "One series per GPU in the inventory; always 1",
    ),
    "gpuslo_gpu_usable": ("gauge", ("gpu", "uuid"), "1 iff the GPU verdict is healthy (the SLI)"),
    "gpuslo_gpu_verdict": (
        "gauge",
        ("gpu", "uuid", "verdict"),
        "GPU verdict stateset: exactly one of healthy/unhealthy/unknown/validating is 1",
    ),
    "gpuslo_gpu_problem": (
        "gauge",
        ("gpu", "uuid", "check", "reason", "layer", "action"),
        "1 per active fail or unknown result on the GPU",
    ),
    "gpuslo_node_usable": ("gauge", (), "1 iff every GPU is usable and node checks are healthy"),
    "gpuslo_node_verdict": ("gauge", ("verdict",), "Node verdict stateset"),
    "gpuslo_check_status": ("gauge", ("check", "status"), "Check status stateset"),
    "gpuslo_check_last_run_timestamp_seconds": (
        "gauge",
        ("check",),
        "End of the last run of the check, whatever its outcome (Unix seconds)",
    ),
    "gpuslo_check_last_success_timestamp_seconds": (
        "gauge",
        ("check",),
        "End of the last run that produced an answer: ok, warn or fail (Unix seconds)",
    ),
    "gpuslo_check_interval_seconds": ("gauge", ("check",), "Configured check interval (seconds)"),
    "gpuslo_check_duration_seconds": ("gauge", ("check",), "Duration of the last run (seconds)"),
    "gpuslo_check_runs_total": ("counter", ("check",), "Check runs"),
    "gpuslo_check_errors_total": (
        "counter",
        ("check", "reason"),
        "Check runs that could not answer: timeouts, missing dependencies, tool and parse errors",
    ),
    "gpuslo_xid_events_total": (
        "counter",
        ("pci_bus_id", "xid", "class"),
        "Kernel-log Xid events; a multi-line event counts once",
    ),
    "gpuslo_sxid_events_total": ("counter", ("nvswitch", "sxid", "class"), "NVSwitch SXid events"),
    "gpuslo_kernel_log_records_lost_total": (
        "counter",
        (),
        "Kernel-log records overwritten before the exporter read them (/dev/kmsg overruns)",
    ),
    "gpuslo_unrecognised_messages_total": (
        "counter",
        ("source",),
        "Log lines naming a device with an error word that no reader or catalogue recognises "
        "(source: xid for the kernel log, fabricmanager, hostengine); each is a warn result "
        "naming the line (fail with a fatal-class word). A rising count means a catalogue "
        "entry is missing",
    ),
    "gpuslo_network_devices": ("gauge", ("kind",), "InfiniBand or EFA devices present"),
    "gpuslo_network_devices_expected": ("gauge", ("kind",), "InfiniBand or EFA devices expected"),
    "gpuslo_job_gpu_seconds_total": (
        "counter",
        ("job", "category"),
        "GPU-seconds on this node by goodput category (productive or a badput category)",
    ),
    "gpuslo_job_step": ("gauge", ("job",), "Last committed training step"),
    "gpuslo_job_last_step": (
        "gauge",
        ("job",),
        "Last training step seen, committed or not (progress; gpuslo_job_step is the committed "
        "one)",
    ),
    "gpuslo_job_goodput_unknown": (
        "gauge",
        ("job", "reason"),
        "1 while the job's goodput cannot be given from what its log shows (reason "
        "no_commit_evidence, no_clock, clock_unreliable, restart_step_unknown, other): its "
        "progress and interruptions are published, its GPU-seconds and committed step are not",
    ),
    "gpuslo_job_last_progress_timestamp_seconds": (
        "gauge",
        ("job",),
        "When the last step was seen (Unix seconds; for a --job-log file that dates nothing, "
        "when the exporter saw its step count change)",
    ),
    "gpuslo_job_interruptions_total": ("counter", ("job", "layer"), "Job interruptions by layer"),
    "gpuslo_journal_errors_total": (
        "counter",
        ("reason",),
        "Journal problems by reason: bad lines, files that are not journals, truncation, limits",
    ),
    "gpuslo_slurm_node_state": (
        "gauge",
        ("state", "reason_layer", "reason"),
        "This node's Slurm state (one series at 1): state up, drained, down, maintenance or "
        "unknown; reason a names.REASONS word (gpuslo's own drain reason, else slurm_drain, "
        "slurm_down, slurm_maintenance) and its layer",
    ),
    "gpuslo_gpu_allocation": (
        "gauge",
        ("gpu", "uuid", "namespace", "pod", "container", "hpc_job"),
        "1 per GPU in use by a workload (HPC job-mapping dir: hpc_job; kubelet: pod labels); "
        "join on it, never copy its labels onto other series",
    ),
    "gpuslo_gpu_expected": (
        "gauge",
        (),
        "GPUs this node should have (node config, --expect-gpus, learned baseline); exported"
        " even when no GPU is readable",
    ),
    "gpuslo_gpu_allocation_source": (
        "gauge",
        ("source", "status", "reason"),
        "How the last read of each allocation source went (one series per source at 1): status "
        "ok, unknown (reason check_timeout, dependency_missing, tool_error, parse_error) or "
        "not_configured; gpuslo_gpu_allocation is empty, never stale, while a source is unknown",
    ),
    "gpuslo_job_step_compute_seconds": (
        "gauge",
        ("job",),
        "This node's compute time per step for the job (seconds, mean over the last logged "
        "interval); rules turn it into per-node performance scores",
    ),
    "gpuslo_gpu_validation_state": (
        "gauge", ("gpu", "uuid", "state"),
        "Return-to-service gate stateset per GPU: held (a fault not cleared), validating (cleared,"
        " not validated: verdict validating) or failed (validation_failed); all 0 past the gate",
    ),
    "gpuslo_gpu_validation_tries": (
        "gauge", ("gpu", "uuid"), "Validation tries spent in the current gate (held GPUs)"),
    "gpuslo_gpu_validation_since_timestamp_seconds": (
        "gauge", ("gpu", "uuid"), "When the GPU entered its gate state (Unix s; held GPUs)"),
    "gpuslo_gpu_validation_gates_total": (
        "counter", ("gpu", "uuid", "outcome"),
        "Gates ended per GPU: passed, held_down (no validator: clean cycles) or failed",
    ),
    "gpuslo_gpu_validation_validator": (
        "gauge", ("validator", "state"),
        "Gate validators stateset: probe, dcgm_diag; available, unavailable, not_configured",
    ),
    "gpuslo_gpu_validation_gate_unavailable": (
        "gauge", (), "1 when no validator is available: cleared GPUs are held down instead"),
    "gpuslo_gpu_validation_hold_down_cycles": (
        "gauge", (), "Clean check cycles of a hold-down (no validator available)"),
    "gpuslo_gpu_probe_speed_not_judged_total": (
        "counter", ("gpu", "uuid", "why"),
        "Active-probe runs that did not judge the GPU's speed (busy: speed not judged), by why: "
        "busy, no_context (exclusive-process GPU in use), activity_unknown",
    ),
    "gpuslo_node_degradation": (
        "gauge",
        ("gpu", "uuid", "device", "check", "reason"),
        "1 per active warn-level degradation on the node (a DEGRADATION_REASONS reason: SW power "
        "or thermal capping, port error rates, link flaps), on a GPU (gpu, uuid), a network "
        "device (device) or the whole node (all empty); usable, so not in gpuslo_gpu_problem. "
        "The report attributes a job's slowdown to the node layer while one is active",
    ),
}
LABELS: Final = tuple(sorted({label for _, labels, _ in METRICS.values() for label in labels}))
