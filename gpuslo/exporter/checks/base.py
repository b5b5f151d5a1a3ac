"""The contract between a node check and the runner.

A check is a small object with a `name`, an `interval_s`, the `dependencies` it needs (binaries,
Python modules, device files, URLs: named so a missing one is reported as `dependency_missing`),
and `run(context) -> list[CheckResult]`. The runner calls `run` in a child process with a
deadline, so a check may block, hang or crash: the runner turns that into `unknown`
(`check_timeout`, `tool_error`). Inside `run`, a check raises:
- `gpuslo.errors.DependencyMissing` when something it needs is absent (binary, library, device,
  URL refused);
- `gpuslo.errors.ToolError` when a tool answered with an error (non-zero exit, HTTP 500, NVML
  error);
- `gpuslo.errors.ParseError` when the output cannot be parsed;
and otherwise returns results with status ok/warn/fail (or unknown with a reason it chose). A check
that does not apply to this node returns one `ok` result with `applicable=False` and a message
saying why ("no NVSwitch on this node"): never silence.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol

from gpuslo import names
from gpuslo.exporter.snapshot import GpuInfo
from gpuslo.verdict import CheckResult

DEFAULT_INTERVAL_S = 30.0


@dataclass(frozen=True)
class CheckContext:
    """Everything a check may read, injected so each source can point at a fixture tree.

    Attributes:
        sysfs: root of /sys (node_exporter's --path.sysfs).
        procfs: root of /proc.
        kernel_log: a kernel-log file to read instead of /dev/kmsg, journalctl and dmesg.
        kmsg_path: the /dev/kmsg device (tests point it at a FIFO or file).
        dcgm_url: dcgm-exporter metrics URL, None when not configured.
        expect_gpus: GPUs the node should have, None to use the persisted first healthy count.
        expect_network_devices: {kind: count} expected (`infiniband`, `efa`), empty when unknown.
        instance_type: cloud instance type (for expected EFA counts), "" when unknown.
        state_dir: where checks persist cursors and baselines (atomic writes only).
        timeout_s: the deadline the runner gives one check (seconds).
        active: run the active GPU probe (`--active`).
        policy_path: operator Xid policy overlay, None for the packaged policy.
        gpu_family: GPU family override, None to detect.
        fabricmanager_log: an nvidia-fabricmanager log configured explicitly (None: the
            default path, `checks.fabricmanager.DEFAULT_LOG`, read when present).
        hostengine_log: a DCGM nv-hostengine log configured explicitly (None: the default).
        config: the rest of the node config file, as parsed.
        clock: returns the current Unix time (seconds); injected for tests.
    """

    sysfs: Path = Path("/sys")
    procfs: Path = Path("/proc")
    kernel_log: Path | None = None
    kmsg_path: Path = Path("/dev/kmsg")
    dcgm_url: str | None = None
    expect_gpus: int | None = None
    expect_network_devices: dict[str, int] = field(default_factory=dict)
    instance_type: str = ""
    state_dir: Path = Path("/var/lib/gpuslo")
    timeout_s: float = 10.0
    active: bool = False
    policy_path: str | None = None
    gpu_family: str | None = None
    config: dict[str, Any] = field(default_factory=dict)
    clock: Callable[[], float] | None = None
    fabricmanager_log: Path | None = None
    hostengine_log: Path | None = None


def degradation_status(context: CheckContext, reason: str) -> str:
    """`warn` for a degradation signal (`names.DEGRADATION_REASONS`: usable, recorded with its
    reason), or `fail` when the node config's `degradation_status` says so for `reason`."""
    wanted = (context.config.get("degradation_status") or {}).get(reason)
    return names.STATUS_FAIL if wanted == names.STATUS_FAIL else names.STATUS_WARN


class Check(Protocol):
    """What the runner needs of a check."""

    name: str
    interval_s: float
    dependencies: tuple[str, ...]

    def run(self, context: CheckContext) -> list[CheckResult]:
        """Evaluate the node; see the module docstring for what to raise."""
        ...


@dataclass(frozen=True)
class InventoryFacts:
    """What `gpu_inventory` tells the snapshot: `gpus` (the inventory, every GPU NVML or the bus
    shows), `driver_version` and `cuda_version` as the driver reports them (None: not read this
    run, e.g. only the PCI bus answered; the last known value stays)."""

    gpus: tuple[GpuInfo, ...]
    driver_version: str | None
    cuda_version: str | None


@dataclass(frozen=True)
class KernelLogFacts:
    """What `xid` tells the snapshot: cumulative Xid counts by (pci_bus_id, xid, class), SXid
    counts by (nvswitch, sxid, class), and /dev/kmsg records overwritten before being read."""

    xid_events: dict[tuple[str, str, str], int]
    sxid_events: dict[tuple[str, str, str], int]
    kernel_log_records_lost: int


@dataclass(frozen=True)
class NetworkFacts:
    """What `network_links` tells the snapshot: devices present and expected by kind
    (`infiniband`, `efa`; an expected count nobody knows is left out)."""

    network_devices: dict[str, int]
    network_devices_expected: dict[str, int]


@dataclass(frozen=True)
class ProbeFacts:
    """What `gpu_probe` tells the snapshot: the probe runs that did not judge a GPU's speed,
    cumulative (kept in the state dir), by (GPU UUID, why: `names.PROBE_NOT_JUDGED`)."""

    probe_speed_not_judged: dict[tuple[str, str], int]


@dataclass(frozen=True)
class UnrecognisedFacts:
    """What a check with a device-and-severity fallback tells the snapshot: lines of its source
    the fallback read (no reader claimed them), cumulative, by source (`xid`, `fabricmanager`,
    `hostengine`); the runner merges the sources of every check into one mapping."""

    unrecognised_messages: dict[str, int]


# A check's facts, read by `runner.Runner.snapshot` attribute by attribute: every field is the
# `NodeSnapshot` attribute of the same name and type (tests/exporter/test_check_facts.py).
Facts = InventoryFacts | KernelLogFacts | NetworkFacts | ProbeFacts | UnrecognisedFacts
FACT_TYPES = (InventoryFacts, KernelLogFacts, NetworkFacts, ProbeFacts, UnrecognisedFacts)


@dataclass(frozen=True)
class CheckOutput:
    """What a check may return instead of a bare list: its results plus its facts for the
    snapshot (one of `FACT_TYPES`, or a tuple of them, every field given: a dataclass without
    defaults, so a fact a check forgets fails where the check builds it, not silently in the
    snapshot). `resume`: state a caller in the same process may go on from without another run
    (the xid check's `xid_file.FileResume`; the runner keeps the latest, `Runner.resume`)."""

    results: list[CheckResult]
    facts: Facts | tuple[Facts, ...]
    resume: Any = None
