"""The expectations `inspect` was given (`--expect-gpus`, `--expect-network-devices`,
`--expect-efa-devices`) that no evidence could check (pure).

Each reader compares an expected count with what its output shows (`gpu_missing`,
`network_devices_missing`). An output that shows no count at all (a kernel log, `ibstat` for
GPUs, `nvidia-smi -L` for network devices) cannot confirm the expectation, and silence is not a
pass: fail closed. `unchecked` gives one `expectation_unchecked` finding (class unknown,
reason no_data) per expectation that none of the files' findings checked, so the verdict is
unknown, never healthy.
README "Triage captured evidence": an expectation the output cannot show is unknown.
"""

from __future__ import annotations

from collections.abc import Sequence

from gpuslo import names
from gpuslo.exporter.inspect.options import InspectOptions
from gpuslo.verdict import Finding

# Findings that show a node's GPU count: the inventory and the comparison itself; the DCGM
# readers compare in their own findings (`dcgm.missing_gpus`). A dcgmi output counts only when
# it shows a count (diag's GPU Device IDs, nvlink -s, dmon, discovery): a health report or a diag
# without its Metadata shows none, and its being dcgmi's is no check (newcomer5 finding 15).
GPU_COUNT_SIGNALS = frozenset({"gpus_seen", "gpu_missing"})
GPU_COUNT_KINDS = frozenset({"dcgm-metrics"})
# The kinds whose readers list network devices and compare them with the expectation.
NETWORK_KINDS = frozenset({"ibstat", "ibstatus", "ibdev2netdev", "ibv-devinfo", "fi-info"})
NETWORK_SIGNALS = frozenset({"network_devices_missing", "ports_active"})
# EFA devices: only `fi_info -p efa` and `ibv_devinfo` list them (`fabric.efa_findings`).
EFA_KINDS = frozenset({"fi-info", "ibv-devinfo"})


def _shows_gpus(finding: Finding) -> bool:
    return finding.signal in GPU_COUNT_SIGNALS or finding.kind in GPU_COUNT_KINDS


def _shows_network(finding: Finding) -> bool:
    return finding.signal in NETWORK_SIGNALS or finding.kind in NETWORK_KINDS


def _shows_efa(finding: Finding) -> bool:
    return finding.signal == "efa_devices" or finding.kind in EFA_KINDS


def _finding(flag: str, value: object, what: str) -> Finding:
    return Finding(
        kind="expectation",
        class_=names.CLASS_UNKNOWN,
        signal="expectation_unchecked",
        reason="no_data",
        message=f"{flag} {value}: no evidence given shows the {what}, so it was not checked",
    )


def unchecked(findings: Sequence[Finding], options: InspectOptions) -> list[Finding]:
    """One `expectation_unchecked` finding (class unknown, reason no_data) per given
    expectation that no finding in `findings` (every file's) checked. Its own signal, not
    `gpu_missing`: nothing shows a GPU missing, only that the count was not seen."""
    out = []
    if options.expect_gpus is not None and not any(map(_shows_gpus, findings)):
        out.append(_finding("--expect-gpus", options.expect_gpus, "GPU count"))
    for flag, value, shows in (
        ("--expect-network-devices", options.expect_network_devices, _shows_network),
        ("--expect-efa-devices", options.expect_efa_devices, _shows_efa),
    ):
        if value is not None and not any(map(shows, findings)):
            shown = ",".join(value) if isinstance(value, tuple) else value
            out.append(_finding(flag, shown, "network devices"))
    return out
