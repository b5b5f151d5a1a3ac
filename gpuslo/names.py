"""The vocabulary of gpuslo: layers, statuses, verdicts, classes, actions, reasons, goodput
categories, metric and label names, and the SLO burn-rate windows.

Every name that reaches a metric, a rule, a dashboard, a report or an `inspect` finding is defined
here, so the set stays small and documented (label values must stay bounded), except two tables
kept in modules of their own: the metric contract (`gpuslo.metric_names`, re-exported here) and
the `inspect` finding signals with their meanings (`gpuslo.signal_names`, not re-exported: the
start-up of `gpuslo inspect --help` loads this module and does not need them). A test proves that
rules and dashboards use only these names.

Sources: layers and the fail-closed rule follow Netflix's GPU health account (shared/MISSION.md);
actions follow NVIDIA's Xid catalogue "Resolution" vocabulary
(https://docs.nvidia.com/deploy/xid-errors/); goodput categories follow Google's
ML Goodput Measurement badput taxonomy; burn-rate windows follow the Google SRE Workbook,
"Alerting on SLOs", table 5-8 (multiwindow, multi-burn-rate alerts).
"""

from __future__ import annotations

from typing import Final

# --- layers: where lost GPU time is attributed -------------------------------------------------
LAYER_NODE: Final = "node"
LAYER_PLATFORM: Final = "platform"
LAYER_TRAINING: Final = "training"
LAYER_OBSERVABILITY: Final = "observability"
LAYERS: Final = (LAYER_NODE, LAYER_PLATFORM, LAYER_TRAINING, LAYER_OBSERVABILITY)
# The workload's own layer: the training loop for a training job, the serving engine (crash, OOM,
# bad model, model loading) for a serving replica. Its label value stays `training` so every
# existing series, rule and report keeps its meaning; `LAYER_TITLES` gives the words a report
# shows for it.
LAYER_WORKLOAD: Final = LAYER_TRAINING
LAYER_TITLES: Final = {
    LAYER_NODE: "node & hardware",
    LAYER_PLATFORM: "scheduler & platform",
    LAYER_TRAINING: "workload (training loop or serving engine)",
    LAYER_OBSERVABILITY: "observability (blind)",
}

# --- status of one check result ----------------------------------------------------------------
STATUS_OK: Final = "ok"
STATUS_WARN: Final = "warn"
STATUS_FAIL: Final = "fail"
STATUS_UNKNOWN: Final = "unknown"
STATUSES: Final = (STATUS_OK, STATUS_WARN, STATUS_FAIL, STATUS_UNKNOWN)

# --- verdict of a GPU or a node ----------------------------------------------------------------
VERDICT_HEALTHY: Final = "healthy"
VERDICT_UNHEALTHY: Final = "unhealthy"
VERDICT_UNKNOWN: Final = "unknown"
# A GPU whose fault has cleared, not usable until the return-to-service gate validates it; its
# time is the platform's (reason `validation`).
VERDICT_VALIDATING: Final = "validating"
VERDICTS: Final = (VERDICT_HEALTHY, VERDICT_UNHEALTHY, VERDICT_UNKNOWN, VERDICT_VALIDATING)
# The reason of the gate's validating result (the verdict reads it as `validating`).
REASON_VALIDATION: Final = "validation"

# --- class of a kernel-log event or an inspect finding -----------------------------------------
CLASS_FATAL: Final = "fatal"  # GPU, link or port unusable until repaired
CLASS_WARN: Final = "warn"  # usable, worth recording
CLASS_APPLICATION: Final = "application"  # the job's own fault; hardware fine
CLASS_CONTAINED: Final = "contained"  # hardware error confined to one process
CLASS_SECONDARY: Final = "secondary"  # consequence of another event
CLASS_NOISE: Final = "noise"  # known benign
EVENT_CLASSES: Final = (
    CLASS_FATAL,
    CLASS_WARN,
    CLASS_APPLICATION,
    CLASS_CONTAINED,
    CLASS_SECONDARY,
    CLASS_NOISE,
)
# Findings also carry these two: inventory seen and fine, and evidence that could not tell.
CLASS_OK: Final = "ok"
CLASS_UNKNOWN: Final = "unknown"
FINDING_CLASSES: Final = (*EVENT_CLASSES, CLASS_OK, CLASS_UNKNOWN)

# --- recovery actions (NVIDIA Xid catalogue vocabulary) ----------------------------------------
ACTION_NONE: Final = "none"
ACTION_RESTART_APP: Final = "restart_app"
ACTION_RESET_GPU: Final = "reset_gpu"
ACTION_DRAIN_AND_RESET: Final = "drain_and_reset"
ACTION_REBOOT_NODE: Final = "reboot_node"
ACTION_CONTACT_SUPPORT: Final = "contact_support"
ACTION_CHECK_CABLING: Final = "check_cabling"
ACTION_UPDATE_SOFTWARE: Final = "update_software"
ACTIONS: Final = (
    ACTION_NONE,
    ACTION_RESTART_APP,
    ACTION_RESET_GPU,
    ACTION_DRAIN_AND_RESET,
    ACTION_REBOOT_NODE,
    ACTION_CONTACT_SUPPORT,
    ACTION_CHECK_CABLING,
    ACTION_UPDATE_SOFTWARE,
)
# Severity order, used when several findings on one GPU each ask for an action.
ACTION_SEVERITY: Final = {name: rank for rank, name in enumerate(ACTIONS)}

# --- reasons: bounded label values, each owned by one layer ------------------------------------
REASON_LAYER: Final = {
    # node & hardware
    "xid_fatal": LAYER_NODE,
    "sxid_fatal": LAYER_NODE,
    "fallen_off_bus": LAYER_NODE,
    "ecc_uncorrectable": LAYER_NODE,
    "row_remap_pending": LAYER_NODE,
    "row_remap_failure": LAYER_NODE,
    "recovery_action": LAYER_NODE,
    "gpu_missing": LAYER_NODE,
    "gpu_inaccessible": LAYER_NODE,
    "nvlink_down": LAYER_NODE,
    "nvlink_errors": LAYER_NODE,
    "fabric_unhealthy": LAYER_NODE,
    "pcie_degraded": LAYER_NODE,
    "thermal_slowdown": LAYER_NODE,
    "network_devices_missing": LAYER_NODE,
    "network_port_down": LAYER_NODE,
    "network_port_degraded": LAYER_NODE,
    # degradation signals that explain a crawl (warn unless the node config makes them fail)
    "clocks_sw_thermal": LAYER_NODE,
    "clocks_sw_power_cap": LAYER_NODE,
    "network_port_errors": LAYER_NODE,
    "network_link_flap": LAYER_NODE,
    "driver_mismatch": LAYER_NODE,
    "probe_failed": LAYER_NODE,
    "gpu_init_failed": LAYER_NODE,
    # the kernel died in an NVIDIA module (an oops or BUG whose frames are the driver's): the
    # driver's state is undefined until the node reboots (kernel tainted-kernels.rst, `D`)
    "driver_crash": LAYER_NODE,
    "pcie_aer_uncorrectable": LAYER_NODE,
    "diagnostic_failed": LAYER_NODE,
    "validation_failed": LAYER_NODE,  # the return-to-service gate did not pass: the GPU's fault
    # a job interruption no fault explains that the job itself put on the node layer (its
    # journal's `layer`: an Xid or ECC error in its own log)
    "job_reported_node": LAYER_NODE,
    # a line naming a device with a fatal-class word (fallen off, uncorrectable, fatal, reset
    # required) that no reader recognises: fails closed (issue 24's device-and-severity fallback)
    "unrecognised_fatal_message": LAYER_NODE,
    # NVML clocks event reasons (nvml.h nvmlClocksEventReason*), for `clock_event` findings: the
    # hardware ones hold the GPU below its clocks whatever the workload does (node) ...
    "hw_slowdown": LAYER_NODE,
    "hw_thermal": LAYER_NODE,
    "hw_power_brake": LAYER_NODE,
    # ... the others are the workload's own (or its settings), never a node fault by themselves
    "sw_power_cap": LAYER_TRAINING,
    "sw_thermal": LAYER_TRAINING,
    "idle": LAYER_TRAINING,
    "sync_boost": LAYER_TRAINING,
    "app_clocks": LAYER_TRAINING,
    "display_clocks": LAYER_TRAINING,
    # scheduler & platform
    "cordoned": LAYER_PLATFORM,
    "drained": LAYER_PLATFORM,
    "maintenance": LAYER_PLATFORM,
    "validation": LAYER_PLATFORM,  # validating: fault cleared, the gate not passed yet
    "slurm_drain": LAYER_PLATFORM,  # drained in Slurm by someone other than gpuslo
    "slurm_down": LAYER_PLATFORM,  # DOWN in Slurm without a gpuslo reason
    "slurm_maintenance": LAYER_PLATFORM,  # in a Slurm maintenance reservation
    # a job interruption no fault explains that the job put on the platform layer (a time
    # limit, a preemption its log printed)
    "job_reported_platform": LAYER_PLATFORM,
    # serving replicas: the platform moved them (DESIGN.md §5 "Serving replicas")
    "replica_evicted": LAYER_PLATFORM,  # evicted or preempted by the scheduler
    "replica_drained": LAYER_PLATFORM,  # drained for a rollout, scale-down or node drain
    "replica_pending": LAYER_PLATFORM,  # waiting to be scheduled while holding its GPUs
    # workload: the training loop or the serving engine itself
    "job_failure": LAYER_TRAINING,  # a job interruption no fault explains, the job named none
    "engine_crash": LAYER_TRAINING,  # the serving engine exited or failed its probes, no fault
    "engine_oom": LAYER_TRAINING,  # the serving engine ran out of (GPU or host) memory
    "engine_stall": LAYER_TRAINING,  # requests running, no token processed (serving logs)
    "model_load_failed": LAYER_TRAINING,  # bad model, weights or configuration
    # observability: the checks themselves could not tell
    # a job interruption no fault explains and whose cause nobody saw (the journal stopped, or
    # the job declared the observability layer: its log named no culprit)
    "job_cause_unseen": LAYER_OBSERVABILITY,
    "check_timeout": LAYER_OBSERVABILITY,
    "dependency_missing": LAYER_OBSERVABILITY,
    "tool_error": LAYER_OBSERVABILITY,
    "parse_error": LAYER_OBSERVABILITY,
    "stale_data": LAYER_OBSERVABILITY,
    "no_data": LAYER_OBSERVABILITY,
    "unrecognised_driver_message": LAYER_OBSERVABILITY,
    # a line naming a device with an error word that no reader recognises (inspect: unknown)
    "unrecognised_message": LAYER_OBSERVABILITY,
}
REASONS: Final = tuple(REASON_LAYER)
# The reason of a job interruption no fault explains, by the layer of the job's own account
# (`goodput.calculator.interruption_layer`): the layer it declared, else training for a failure
# it reported, else observability. A declared node or platform layer keeps its word.
OWN_ACCOUNT_REASON: Final = {
    LAYER_NODE: "job_reported_node",
    LAYER_PLATFORM: "job_reported_platform",
    LAYER_TRAINING: "job_failure",
    LAYER_OBSERVABILITY: "job_cause_unseen",
}
# Why an interruption a training log names goes to the observability layer (the log reader's
# profiles, gpuslo/data/log_profiles.yaml, put it there): what the log says points at no culprit.
# Shown beside the layer wherever a person reads it (`gpuslo goodput`).
OBSERVABILITY_WHY: Final = {
    "nccl_timeout": "an NCCL watchdog timeout says a collective hung, not which rank, GPU or "
    "link held it up, so the time is blind until a node fault explains it",
    "nccl_error": "an NCCL error says a peer failed or went away, not which GPU, link or "
    "process, so the time is blind until a node fault explains it",
}
OBSERVABILITY_WHY_DEFAULT: Final = (
    "the log names no culprit, so the time is blind until a node fault explains it"
)
# The reasons that make a check `unknown` rather than `fail`.
UNKNOWN_REASONS: Final = (
    "check_timeout",
    "dependency_missing",
    "tool_error",
    "parse_error",
    "stale_data",
    "no_data",
    "unrecognised_driver_message",
    "unrecognised_message",
)

# Why a job's goodput cannot be given from what its log shows (bounded), for
# gpuslo_job_goodput_unknown: no commit evidence (no save line, no restore of a step passed),
# no clock (no time for its steps), a clock that keeps going back with no step times, a restart
# that does not say its resumed step (goodput by steps), else other.
JOB_GOODPUT_UNKNOWN_REASONS: Final = (
    "no_commit_evidence", "no_clock", "clock_unreliable", "restart_step_unknown", "other",
)

# Why a job journal could not be read (all of them, bounded), for gpuslo_journal_errors_total.
JOURNAL_ERROR_REASONS: Final = (
    "parse_error",  # a line that is not a valid v1 event (JSON, shape, bounds, UTF-8)
    "line_too_long",  # a line over the journal's line limit, skipped unread
    "not_regular_file",  # a FIFO, socket or device named *.jsonl: refused without opening
    "bad_name",  # a file name that is not a valid job id
    "unreadable",  # stat, open or read failed (permissions, I/O error)
    "truncated",  # the journal shrank: counts kept, not re-read
    "too_many_journals",  # more journals than the limit: only the most recent are read
    "missing_dir",  # the journal directory disappeared
    "no_match",  # a --job-log glob that matches no file (counted once per glob)
)

# Reasons that mark a degradation: usable or not, the device runs slower than it should, so a job
# on the node crawls. The SLO engine attributes a job's slowdown badput to the node layer (and the
# node) when one of these was active on one of the job's nodes during the slowdown.
DEGRADATION_REASONS: Final = (
    "thermal_slowdown",
    "pcie_degraded",
    "nvlink_errors",
    "network_devices_missing",
    "network_port_degraded",
    "clocks_sw_thermal",
    "clocks_sw_power_cap",
    "network_port_errors",
    "network_link_flap",
)

# --- goodput categories (ML Goodput Measurement's badput taxonomy, plus our recovery) -----------
CATEGORY_PRODUCTIVE: Final = "productive"
CATEGORY_SLOWDOWN: Final = "slowdown"
BADPUT_CATEGORIES: Final = (
    "initialization",  # program start-up, device and framework initialisation
    "training_prep",  # model and optimizer set-up before the first step
    "data_loading",  # steps blocked on input
    "checkpoint_save",  # time blocked saving checkpoints
    "checkpoint_restore",  # time spent loading a checkpoint after a (re)start
    "wasted_progress",  # steps done after the last checkpoint and then lost by a restart
    "recovery",  # from an interruption until the job runs again
    "slowdown",  # steps slower than the job's own reference: sum of (step time - reference)
    "other",  # allocated time no other category explains (the remainder bucket)
)
JOB_CATEGORIES: Final = (CATEGORY_PRODUCTIVE, *BADPUT_CATEGORIES)
# Progress after a job's last commit (DESIGN.md §4): neither productive nor badput yet, but at
# risk: a checkpoint makes it productive, a restart from an earlier one wasted_progress. The report
# books it as its own category of a job's allocated time (allocated = productive + badput +
# uncommitted) where its source is finished (training logs). It is no counter category: the
# exporter books progress once a commit or a restart settles it, so counters never go down.
CATEGORY_UNCOMMITTED: Final = "uncommitted"
UNCOMMITTED_LABEL: Final = "uncommitted progress (not yet checkpointed)"
ALLOCATED_CATEGORIES: Final = (*JOB_CATEGORIES, CATEGORY_UNCOMMITTED)
# Serving replicas (DESIGN.md §5): a replica's allocated GPU-time falls into exactly one of these.
# `serving` = ready with requests; `idle_capacity` = ready, no request in the interval (neither
# loss nor serving, shown apart); `model_loading` = start until ready (weights, compile, warm-up);
# `not_ready` = crash loops, failed probes, restarts; `draining` = finishing requests before
# stopping; `other` = allocated time no source describes (observability).
SERVING_CATEGORIES: Final = (
    "serving", "idle_capacity", "model_loading", "not_ready", "draining", "other",
)
SERVING_LOST: Final = ("model_loading", "not_ready", "draining", "other")
# Replica states as the sources give them (kube-state-metrics readiness, engine log markers).
REPLICA_STATES: Final = ("loading", "ready", "not_ready", "draining")
# Fleet accounting categories, in the order DESIGN.md §6 assigns them.
ACCOUNTING_NO_DATA: Final = "no_data"
ACCOUNTING_UNKNOWN: Final = "unknown"
ACCOUNTING_UNHEALTHY: Final = "unhealthy"
ACCOUNTING_UNSCHEDULABLE: Final = "unschedulable"
ACCOUNTING_IDLE: Final = "idle"

# --- metric and label names (DESIGN.md §4) ------------------------------------------------------
from gpuslo.metric_names import LABELS, METRIC_PREFIX, METRICS  # noqa: E402, F401 - re-exported

# Why the active probe did not judge a GPU's speed (gpuslo_gpu_probe_speed_not_judged_total):
# another process on it, no CUDA context to be had beside it (exclusive-process GPU in use), or
# NVML reporting neither its processes nor its utilisation.
PROBE_NOT_JUDGED: Final = ("busy", "no_context", "activity_unknown")

# The return-to-service gate (gpuslo_gpu_validation_*): what a held GPU waits for, the validators
# a node may have and their states, and how a gate ends; `GATE_CHECK`: the check that
# states it (`gpuslo check --check validation`).
GATE_CHECK: Final = "validation"
VALIDATION_STATES: Final = ("held", "validating", "failed")
VALIDATORS: Final = ("probe", "dcgm_diag")
VALIDATOR_STATES: Final = ("available", "unavailable", "not_configured")
GATE_OUTCOMES: Final = ("passed", "held_down", "failed")

# Sources of gpuslo_gpu_allocation and their states (gpuslo_gpu_allocation_source).
ALLOCATION_SOURCES: Final = ("kubelet", "hpc_job_mapping")
ALLOCATION_SOURCE_STATUSES: Final = (STATUS_OK, STATUS_UNKNOWN, "not_configured")

# Slurm node states as gpuslo exports them (gpuslo_slurm_node_state's `state`).
SLURM_STATE_UP: Final = "up"
SLURM_STATES: Final = (SLURM_STATE_UP, "drained", "down", "maintenance", "unknown")

# The locate rule group (`gpuslo.alerts.locate` writes it, `gpuslo.slo.sources.located` reads it):
# evaluated every LOCATE_INTERVAL_S, each evaluation at t covering the raw samples of the tile
# (t - LOCATE_OFFSET_S - LOCATE_INTERVAL_S, t - LOCATE_OFFSET_S], so consecutive evaluations tile
# time; the offset leaves late samples (a scrape appended after its timestamp, VictoriaMetrics'
# -search.latencyOffset of 30 s) time to arrive. Per instance: whether any GPU had a non-healthy
# verdict in the tile, and how many gpuslo_gpu_usable samples it has there; one fleet series per
# evaluation says the group ran.
LOCATE_INTERVAL_S: Final = 300
LOCATE_OFFSET_S: Final = 60
LOCATE_EVALUATIONS: Final = "gpuslo:locate_evaluations:count"
LOCATE_NOT_HEALTHY: Final = "gpuslo:instance_gpu_not_healthy:max5m"
LOCATE_USABLE_SAMPLES: Final = "gpuslo:instance_gpu_usable_samples:count5m"

# The job tiles group (`gpuslo.alerts.job_tiles` writes it, `gpuslo.slo.sources.job_tiles` reads
# it): evaluated every JOB_TILE_INTERVAL_S, each evaluation at t records per (job, category) the
# increase of gpuslo_job_gpu_seconds_total over the tile (t - JOB_TILE_INTERVAL_S, t] (a counter
# not seen in the JOB_TILE_HOLD before the tile counts whole, as the report's raw read does at its
# window start), so the report sums a few series per job instead of reading every node's counters;
# one fleet series per evaluation says the group ran; the counters the tile counted whole, with
# their values (JOB_TILE_WHOLE), so the report finds a counter counted whole twice (silent for
# longer than the hold, then back) and reads that job from the counters.
JOB_TILE_INTERVAL_S: Final = 3600
JOB_TILE_HOLD: Final = "1d"
JOB_TILE_HOLD_S: Final = 86_400  # JOB_TILE_HOLD in seconds
JOB_TILE_EVALUATIONS: Final = "gpuslo:job_tile_evaluations:count"
JOB_TILE_SECONDS: Final = "gpuslo:job_gpu_seconds_by_job:increase1h"
JOB_TILE_WHOLE: Final = "gpuslo:job_gpu_seconds_counted_whole:last1h"

# --- SLOs and burn-rate alerting (SRE Workbook, "Alerting on SLOs") ----------------------------
SLO_USABLE_GPU: Final = "usable_gpu"
SLO_CHECK_LIVENESS: Final = "check_liveness"
SLO_JOB_GOODPUT: Final = "job_goodput"
SLOS: Final = (SLO_USABLE_GPU, SLO_CHECK_LIVENESS, SLO_JOB_GOODPUT)
# Recording-rule windows for every SLI.
SLI_WINDOWS: Final = ("5m", "30m", "1h", "2h", "6h", "1d", "3d")
# (severity, long window, short window, share of the period's error budget spent in the long
# window). The SRE Workbook's 30-day table spends 2 % in 1 h, 5 % in 6 h, 10 % in 1 d and 10 % in
# 3 d, which gives factors 14.4, 6, 3 and 1; other periods keep the shares and rescale.
BURN_RATE_WINDOWS: Final = (
    ("page", "1h", "5m", 0.02),
    ("page", "6h", "30m", 0.05),
    ("ticket", "1d", "2h", 0.10),
    ("ticket", "3d", "6h", 0.10),
)
SEVERITIES: Final = ("page", "ticket")

# --- GPU families (for the Xid policy) ---------------------------------------------------------
GPU_FAMILIES: Final = (
    "kepler",
    "maxwell",
    "pascal",
    "volta",
    "turing",
    "ampere",
    "ada",
    "hopper",
    "blackwell",
)


def layer_of(reason: str) -> str:
    """Return the layer that owns `reason`.

    Raises KeyError for a reason that is not in the vocabulary (a programming error: reasons are
    label values and must stay enumerated).
    """
    return REASON_LAYER[reason]
