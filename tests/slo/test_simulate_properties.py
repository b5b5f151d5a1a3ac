"""Invariants of `gpuslo simulate` on random fleets (hypothesis)."""

from __future__ import annotations

import pandas as pd
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuslo import names
from gpuslo.goodput.calculator import compute_goodput
from gpuslo.goodput.journal import check_event
from gpuslo.slo.simulate import faults as sf
from gpuslo.slo.simulate import fleet as sim_mod
from gpuslo.slo.simulate.openmetrics import per_gpu

START = pd.Timestamp("2026-11-23T00:00:00Z")


@settings(max_examples=20, deadline=None)
@given(nodes=st.integers(1, 5), gpus=st.integers(1, 8), days=st.floats(0.1, 3.0),
       seed=st.integers(0, 2**32 - 1), rate=st.floats(0.0, 400.0))
def test_verdicts_never_overlap_and_journals_are_valid(nodes, gpus, days, seed, rate):
    sim = sim_mod.simulate(sf.Fleet(nodes, gpus, days, rate), seed, START)
    verdicts = per_gpu(sim.frames["verdicts"], sim.frames["inventory"]).sort_values(
        ["uuid", "start"]
    )
    assert (verdicts["start"] >= sim.start).all() and (verdicts["end"] <= sim.end).all()
    assert (verdicts["end"] > verdicts["start"]).all()
    assert not (verdicts.groupby("uuid")["start"].shift(-1) < verdicts["end"]).any()
    covered = (verdicts["end"] - verdicts["start"]).dt.total_seconds().sum()
    assert covered <= nodes * gpus * (sim.end - sim.start).total_seconds()
    events = sim.frames["job_events"]
    for _, group in events.groupby(["job", "node"]):
        frame = group.assign(t=(group["time"] - START).dt.total_seconds().astype(int))
        records = sim_mod.journal_events(frame)
        for record in records:
            check_event(record)
        result = compute_goodput(records)
        assert all(value >= 0 for value in result.gpu_seconds.values())
        wall = (group["time"].max() - group["time"].min()).total_seconds() * gpus
        assert sum(result.gpu_seconds.values()) <= wall + 1e-6
        assert set(result.interruptions) == set(names.LAYERS)
