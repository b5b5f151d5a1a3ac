"""Invariants of the collector over arbitrary snapshots (hypothesis): statesets one-hot, the SLI
agrees with the verdict, and nothing unknown or stale is ever exposed as usable."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st
from prometheus_client.parser import text_string_to_metric_families

from gpuslo import names
from gpuslo.exporter.collector import build_families
from gpuslo.exporter.snapshot import GpuInfo, Heartbeat, NodeSnapshot
from gpuslo.verdict import CheckResult

NOW = 1_764_460_800.0
CHECKS = ("gpu_inventory", "xid", "thermal")
GPUS = tuple(
    GpuInfo(str(i), f"GPU-{i}", f"00000000:0{i}:00.0", "NVIDIA H200", "hopper") for i in range(3)
)


@st.composite
def snapshots(draw: st.DrawFn) -> NodeSnapshot:
    results = []
    for check in CHECKS:
        for scope in draw(
            st.lists(st.sampled_from(["node", *(g.uuid for g in GPUS)]), unique=True, max_size=4)
        ):
            status = draw(st.sampled_from(names.STATUSES))
            reason = {"fail": "xid_fatal", "unknown": "check_timeout"}.get(status, "")
            age = draw(st.sampled_from([0.0, 50.0, 200.0]))
            results.append(
                CheckResult(
                    check=check, scope=scope, status=status, reason=reason, observed_at=NOW - age
                )
            )
    beats = tuple(
        Heartbeat(c, 30.0, NOW - draw(st.sampled_from([0.0, 200.0])), NOW) for c in CHECKS
    )
    gpus = GPUS[: draw(st.integers(0, 3))]
    return NodeSnapshot(node="n", gpus=gpus, results=tuple(results), heartbeats=beats)


def values(snapshot: NodeSnapshot) -> dict[tuple[str, tuple], float]:
    from prometheus_client import CollectorRegistry, generate_latest

    class One:
        def collect(self):  # noqa: ANN202
            return build_families(snapshot, [], NOW, version="t")

    registry = CollectorRegistry(auto_describe=False)
    registry.register(One())
    text = generate_latest(registry).decode()
    return {
        (s.name, tuple(sorted(s.labels.items()))): s.value
        for f in text_string_to_metric_families(text)
        for s in f.samples
    }


@settings(max_examples=80, deadline=None)
@given(snapshots())
def test_collector_invariants(snapshot: NodeSnapshot) -> None:
    v = values(snapshot)
    assert sum(val for (n, _), val in v.items() if n == "gpuslo_node_verdict") == 1
    for gpu in snapshot.gpus:
        ids = (("gpu", gpu.index), ("uuid", gpu.uuid))
        states = {s: v[("gpuslo_gpu_verdict", (*ids, ("verdict", s)))] for s in names.VERDICTS}
        assert sum(states.values()) == 1
        assert v[("gpuslo_gpu_usable", ids)] == states["healthy"]
        if states["healthy"]:  # healthy: no problem series, every own result fresh and answered
            assert not [
                k for k in v if k[0] == "gpuslo_gpu_problem" and dict(k[1])["uuid"] == gpu.uuid
            ]
            own = [r for r in snapshot.results if r.scope in (gpu.uuid, "node")]
            assert own and all(
                r.status in ("ok", "warn") and NOW - r.observed_at <= 90 for r in own
            )
    for check in CHECKS:
        assert (
            sum(
                v[("gpuslo_check_status", (("check", check), ("status", s)))]
                for s in names.STATUSES
            )
            == 1
        )
    if v[("gpuslo_node_usable", ())]:
        assert snapshot.gpus and all(r.status in ("ok", "warn") for r in snapshot.results)
        assert all(NOW - b.last_run <= 90 for b in snapshot.heartbeats)
