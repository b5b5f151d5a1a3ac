"""What a user passes along with the evidence to `gpuslo inspect` (`InspectOptions`)."""

from __future__ import annotations

from dataclasses import dataclass, field

from gpuslo.exporter.policy.xid import XidPolicy, packaged_policy


@dataclass(frozen=True)
class InspectOptions:
    """Facts a user passes along with the evidence.

    Attributes:
        gpu_family: GPU family for the Xid policy (`names.GPU_FAMILIES`), None to infer it.
        expect_gpus: GPUs the node should have, None when unknown.
        expect_network_devices: network devices expected: a count, or the device names.
        expect_efa_devices: EFA devices expected (fi_info rdm domains, sysfs devices).
        csv_columns: column names of headerless `nvidia-smi --query-gpu` CSV.
        policy: the Xid policy (the packaged one, or it with the operator's overlay merged on
            top: `load_policy(path)`, read once at the edge, never per finding).
    """

    gpu_family: str | None = None
    expect_gpus: int | None = None
    expect_network_devices: int | tuple[str, ...] | None = None
    expect_efa_devices: int | None = None
    csv_columns: tuple[str, ...] | None = None
    policy: XidPolicy = field(default_factory=packaged_policy)
