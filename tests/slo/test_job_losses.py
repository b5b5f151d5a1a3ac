"""Per-job attribution: the GPU-hours each job lost, by layer and reason, reconciled with the
fleet totals (issue 14, requirement 5)."""

from __future__ import annotations

import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from slo.test_accounting import fleets

from gpuslo import names
from gpuslo.slo import frames
from gpuslo.slo.accounting import account
from gpuslo.slo.engine import compute_week
from gpuslo.slo.simulate import faults as sf
from gpuslo.slo.simulate.fleet import simulate
from gpuslo.slo_spec import SloSpec

T0 = pd.Timestamp("2026-11-23", tz="UTC")
H = 3600


def at(hours: float) -> pd.Timestamp:
    return T0 + pd.Timedelta(hours=hours)


def one_job_fleet(late_fault: bool = False) -> frames.Frames:
    """One node of 8 GPUs, window 0–12 h, healthy except: GPU-3 fallen off the bus (Xid 79)
    2–4 h; node cordoned 5–6 h; with `late_fault`, GPU-0 unhealthy (xid_fatal) 11–12 h, after
    the job. Job j1 holds the 8 GPUs 0–10 h; its journal: 60 s steps from 0, checkpoint at step
    110 (6600 s), fails at step 120 (7200 s = 2 h, the fault's start), restarts from step 110 at
    4 h (14400 s) and runs to 10 h (step 110 + 21600 / 60 = 470), completed."""
    inv = frames.make_frame("inventory", [
        {"node": "n0", "uuid": f"GPU-{g}", "gpu": str(g), "provisioned_start": at(0)}
        for g in range(8)])
    rows = [{"node": "n0", "uuid": "", "start": at(0), "end": at(12), "verdict": "healthy"},
            {"node": "n0", "uuid": "GPU-3", "start": at(2), "end": at(4), "verdict": "unhealthy",
             "reason": "fallen_off_bus"}]
    if late_fault:
        rows.append({"node": "n0", "uuid": "GPU-0", "start": at(11), "end": at(12),
                     "verdict": "unhealthy", "reason": "xid_fatal"})
    sched = frames.make_frame(
        "schedulability", [{"node": "n0", "start": at(5), "end": at(6), "state": "cordoned"}])
    alloc = frames.make_frame("allocations", [
        {"job": "j1", "node": "n0", "uuid": f"GPU-{g}", "start": at(0), "end": at(10)}
        for g in range(8)])
    events = [
        {"event": "job_start", "time": at(0), "gpus": 8},
        {"event": "steps", "time": T0 + pd.Timedelta(seconds=6600), "step": 110},
        {"event": "checkpoint", "time": T0 + pd.Timedelta(seconds=6600), "step": 110},
        {"event": "steps", "time": at(2), "step": 120},
        {"event": "job_end", "time": at(2), "status": "failed"},
        {"event": "restart", "time": at(4), "step": 110},
        {"event": "steps", "time": at(10), "step": 470},
        {"event": "job_end", "time": at(10), "status": "completed"},
    ]
    job_events = frames.make_frame("job_events", [{"job": "j1", "node": "n0", **e} for e in events])
    return frames.Frames(inventory=inv, verdicts=frames.make_frame("verdicts", rows),
                         schedulability=sched, allocations=alloc, job_events=job_events)


def test_accounting_keeps_the_holder_of_unusable_time():
    fleet = one_job_fleet()
    acc = account(fleet.inventory, fleet.verdicts, fleet.schedulability, fleet.allocations,
                  at(0), at(12))
    seg = acc.segments
    held = seg[seg["held_by"] == "j1"]
    assert held["seconds"].sum() == 8 * 10 * H  # 8 GPUs × 10 h, whatever the state
    unhealthy = held[held["state"] == names.ACCOUNTING_UNHEALTHY]
    assert unhealthy["seconds"].sum() == 2 * H and set(unhealthy["job"]) == {""}
    assert held[held["state"] == names.ACCOUNTING_UNSCHEDULABLE]["seconds"].sum() == 8 * H
    assert set(seg[seg["end"] > at(10)]["held_by"]) == {""}  # idle 10–12 h held by no one


def test_one_job_hand_computed_losses_by_layer_and_reason():
    result = compute_week(one_job_fleet(), at(0), at(12), SloSpec())
    # The journal: productive 8 × (6600 + 21600) s = 62.667 GPU-h, wasted progress 8 × 600 s
    # = 1.333 GPU-h (steps 111–120), recovery 8 × 2 h = 16 GPU-h. The accounting: held 80 GPU-h,
    # 2 unusable (GPU-3 off the bus 2 h) + 8 cordoned (8 GPUs × 1 h) = 10 unusable, 70 allocated
    # usable; categories fill in order, so recovery keeps 70 − 62.667 − 1.333 = 6 GPU-h.
    # The interruption at 2 h is attributed to the fallen_off_bus fault starting then.
    rows = result.job_losses
    lost = {(r.layer, r.reason, r.kind): r.gpu_hours for r in rows.itertuples()}
    assert lost == pytest.approx({
        ("node", "fallen_off_bus", "unusable"): 2.0,
        ("platform", "cordoned", "unusable"): 8.0,
        ("node", "fallen_off_bus", "badput"): 8 * 600 / H + 6.0,
    })
    assert set(rows["node"]) == {"n0"}
    hit = result.jobs_hit.set_index("job").loc["j1"]
    assert hit["held_gpu_hours"] == pytest.approx(80.0)
    assert hit["unusable_gpu_hours"] == pytest.approx(10.0)
    assert hit["badput_gpu_hours"] == pytest.approx(8 * 600 / H + 6.0)
    assert hit["lost_gpu_hours"] == pytest.approx(10.0 + 8 * 600 / H + 6.0)
    assert (hit["layer"], hit["reason"], hit["nodes"]) == ("node", "fallen_off_bus", "n0")
    # what the job lost plus what it turned into progress is what it held
    assert hit["lost_gpu_hours"] + result.productive_gpu_hours == pytest.approx(80.0)


def _reconciles(result) -> None:
    """Sum over jobs of held-unusable time = the unusable time inside allocations ≤ the fleet's
    unusable time (per layer and reason, in exact ticks); sum over jobs of badput = the fleet's
    job badput per layer."""
    acc = result.accounting
    seg = acc.segments
    ticks = (seg["end"] - seg["start"]).to_numpy("int64") // acc.tick_ns
    seg = seg.assign(ticks=ticks)
    lost = seg[seg["layer"] != ""]
    inside = lost[lost["held_by"] != ""].groupby(["layer", "reason"])["ticks"].sum()
    fleet = lost.groupby(["layer", "reason"])["ticks"].sum()
    rows = result.job_losses
    unusable = rows[rows["kind"] == "unusable"].groupby(["layer", "reason"])["ticks"].sum()
    assert unusable.to_dict() == inside.to_dict()
    assert (unusable.reindex(fleet.index, fill_value=0) <= fleet).all()
    badput = rows[rows["kind"] == "badput"].groupby("layer")["gpu_hours"].sum()
    for layer in names.LAYERS:
        fleet_badput = result.lost_gpu_hours_by_layer[layer] - result.unusable_gpu_hours_by_layer[
            layer]
        assert float(badput.get(layer, 0.0)) == pytest.approx(fleet_badput, abs=1e-6)
    per_job = rows.groupby("job")["gpu_hours"].sum()
    hit = result.jobs_hit.set_index("job")["lost_gpu_hours"]
    assert per_job.to_dict() == pytest.approx(hit.to_dict())


def test_job_losses_reconcile_with_the_fleet_and_time_outside_jobs_stays_out():
    result = compute_week(one_job_fleet(late_fault=True), at(0), at(12), SloSpec())
    assert result.unusable_gpu_hours_by_layer["node"] == pytest.approx(3.0)  # 2 + the late 1
    assert result.jobs_hit.set_index("job").loc["j1", "unusable_gpu_hours"] == pytest.approx(10.0)
    _reconciles(result)


def test_job_losses_reconcile_on_a_simulated_fleet():
    size = sf.Fleet(nodes=12, gpus_per_node=8, days=3, interruptions_per_1000_gpu_days=40.0)
    sim = simulate(size, 11, T0)
    fleet = frames.Frames(**{k: sim.frames[k] for k in (
        "inventory", "verdicts", "schedulability", "allocations", "job_events", "degradations")})
    result = compute_week(fleet, T0, T0 + pd.Timedelta(days=3), SloSpec())
    assert len(result.jobs_hit) and (result.jobs_hit["lost_gpu_hours"] > 0).any()
    assert (result.jobs_hit["lost_gpu_hours"].diff().dropna() <= 0).all()  # most hit first
    _reconciles(result)


def test_json_twin_lists_the_jobs_hit():
    doc = compute_week(one_job_fleet(), at(0), at(12), SloSpec()).to_json_dict()
    (hit,) = doc["jobs_hit"]
    assert hit["job"] == "j1" and hit["layer"] == "node" and hit["reason"] == "fallen_off_bus"
    assert hit["held_gpu_hours"] == 80.0 and hit["unusable_gpu_hours"] == 10.0
    assert {r["kind"] for r in doc["job_losses"]} == {"unusable", "badput"}


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fleets(), st.integers(0, 20), st.integers(21, 60))
def test_job_losses_reconcile_on_random_fleets(fleet, start_h, end_h):
    result = compute_week(fleet, at(start_h), at(end_h), SloSpec())
    _reconciles(result)
    held = result.jobs_hit.set_index("job")
    assert (held["lost_gpu_hours"] <= held["held_gpu_hours"] + 1e-9).all()
