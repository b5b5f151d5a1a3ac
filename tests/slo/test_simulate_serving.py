"""`gpuslo simulate --serving-nodes`: serving replicas beside training jobs (issue 29), in the
frames `gpuslo.slo.serving` reads, and the accounting's invariants on random simulated fleets."""

from __future__ import annotations

import pandas as pd
import pytest
from hypothesis import example, given, settings
from hypothesis import strategies as st

from gpuslo import names
from gpuslo.cli import main
from gpuslo.slo.frames import derive_faults
from gpuslo.slo.serving import serving_account
from gpuslo.slo.simulate import faults as sf
from gpuslo.slo.simulate import fleet as sim_mod
from gpuslo.slo.simulate.files import read_simulation

START = pd.Timestamp("2026-11-23T00:00:00Z")


def _account(frames, start, end):
    return serving_account(frames["replicas"], frames["replica_states"], frames["replica_idle"],
                           derive_faults(frames["verdicts"]), start, end)


def _described_seconds(frames, start, end) -> float:
    """GPU-seconds of replica lifetime that some state interval covers (union per replica)."""
    total = 0.0
    gpus = frames["replicas"].set_index("replica")["gpus"]
    for replica, group in frames["replica_states"].groupby("replica"):
        t, covered = start, 0.0
        for s, e in sorted(zip(group["start"].clip(start, end), group["end"].clip(start, end),
                               strict=True)):
            s = max(s, t)
            if e > s:
                covered += (e - s).total_seconds()
                t = e
        total += covered * int(gpus[replica])
    return total


@example(nodes=1, serving=1, gpus=1, days=1.0, seed=4, rate=59.0)  # not ready at the end
@settings(max_examples=8, deadline=None)
@given(nodes=st.integers(1, 4), serving=st.integers(1, 2), gpus=st.sampled_from([1, 2, 4, 8]),
       days=st.floats(0.3, 4.0), seed=st.integers(0, 2**32 - 1), rate=st.floats(0.0, 400.0))
def test_serving_categories_sum_to_the_replicas_allocated_gpu_hours(nodes, serving, gpus, days,
                                                                     seed, rate):
    serving = min(serving, nodes)
    sim = sim_mod.simulate(sf.Fleet(nodes, gpus, days, rate, serving), seed, START)
    frames = sim.frames
    named = set(frames["replicas"]["replica"])  # every described replica held GPUs
    for name in ("replica_states", "replica_idle", "replica_latency"):
        assert set(frames[name]["replica"]) <= named, name
    acc = _account(frames, sim.start, sim.end)
    assert sum(acc.fleet_ticks.values()) == acc.allocated_ticks
    # the replicas' GPUs are in the allocations (job = replica), as gpuslo_gpu_allocation has them
    alloc = frames["allocations"]
    held = alloc[alloc["job"].isin(frames["replicas"]["replica"])]
    held_s = (held["end"].clip(upper=sim.end) - held["start"]).dt.total_seconds().sum()
    assert acc.allocated_ticks * acc.tick_ns / 1e9 == pytest.approx(held_s, abs=1.0)
    hours = acc.fleet_hours()
    assert sum(hours.values()) == pytest.approx(held_s / 3600, abs=1e-3)
    # `other` is exactly the allocated time no state interval describes
    other_s = held_s - _described_seconds(frames, sim.start, sim.end)
    assert hours["other"] * 3600 == pytest.approx(other_s, abs=1.0)
    assert set(acc.lost["layer"]) <= set(names.LAYERS)
    lost = acc.lost[acc.lost["category"] == "other"]
    assert set(lost["reason"]) <= {"no_data"}
    # training jobs never sit on a serving node
    serving_nodes = set(frames["replicas"]["node"])
    training = alloc[~alloc["job"].isin(frames["replicas"]["replica"])]
    assert not serving_nodes & set(training["node"])


def test_a_week_of_serving_has_every_kind_of_time_and_cause():
    sim = sim_mod.simulate(sf.Fleet(6, 8, 7, 200, serving_nodes=2), 3, START)
    frames = sim.frames
    acc = _account(frames, sim.start, sim.end)
    hours = acc.fleet_hours()
    for category in names.SERVING_CATEGORIES:
        assert hours[category] > 0, category
    reasons = set(acc.lost["reason"])
    assert {"model_loading", "replica_drained", "engine_crash", "no_data"} <= reasons
    assert reasons & {"xid_fatal", "ecc_uncorrectable", "network_port_down", "probe_failed",
                      "network_devices_missing", "pcie_degraded", "thermal_slowdown"}
    latency = frames["replica_latency"]
    assert set(latency["sli"]) == {"ttft", "itl"}
    engines = frames["replicas"].set_index("replica")["engine"]
    seen = latency.assign(engine=latency["replica"].map(engines))
    assert "tgi" not in set(seen["engine"])  # TGI publishes no latency histogram
    assert "itl" not in set(seen.loc[seen["engine"] == "triton", "sli"])
    assert (latency["good"] <= latency["total"]).all()


def test_without_serving_nodes_the_training_side_is_unchanged():
    plain = sim_mod.simulate(sf.Fleet(8, 8, 2, 40), 5, START)
    assert "replicas" not in plain.frames
    assert plain.fleet.serving_nodes == 0


def test_cli_writes_and_reads_back_the_serving_frames(tmp_path, capsys):
    out = tmp_path / "sim"
    assert main(["simulate", "--nodes", "3", "--days", "2", "--seed", "1", "--serving-nodes",
                 "1", "--out", str(out)]) == 0
    for name in ("replicas", "replica_states", "replica_idle", "replica_latency"):
        assert (out / f"{name}.csv.gz").is_file()
    frames, start, end = read_simulation(out)
    assert len(frames["replicas"]) and set(frames["replicas"]["node"]) == {"node-0002"}
    assert sum(_account(frames, start, end).fleet_ticks.values()) > 0
    assert main(["simulate", "--nodes", "3", "--serving-nodes", "4", "--out",
                 str(tmp_path / "x")]) == 2
    assert "--serving-nodes must be 0..--nodes (3), got 4" in capsys.readouterr().err
