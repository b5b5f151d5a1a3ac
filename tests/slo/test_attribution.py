"""Job goodput from journal events, interruptions and their attribution to faults."""

from __future__ import annotations

import pandas as pd
import pytest
from conftest import SHARED

from gpuslo import names
from gpuslo.goodput.logs import analyse_log
from gpuslo.slo import attribution, frames
from gpuslo.slo.engine import compute_week
from gpuslo.slo.sources.training_logs import load_training_logs
from gpuslo.slo_spec import SloSpec

T0 = pd.Timestamp("2026-11-23", tz="UTC")


def at(seconds: float) -> pd.Timestamp:
    return T0 + pd.Timedelta(seconds=seconds)


def worked_example_events(gpus: int = 8) -> pd.DataFrame:
    """Issue 5: 60 s steps from t=0, checkpoint at step 80 (4800 s), fails after step 100
    (6000 s), restarts 600 s later from step 80, completes at step 170 (12000 s)."""
    rows = [
        {"event": "job_start", "time": at(0), "gpus": gpus},
        {"event": "steps", "time": at(4800), "step": 80},
        {"event": "checkpoint", "time": at(4800), "step": 80},
        {"event": "steps", "time": at(6000), "step": 100},
        {"event": "job_end", "time": at(6000), "status": "failed"},
        {"event": "restart", "time": at(6600), "step": 80},
        {"event": "steps", "time": at(12000), "step": 170},
        {"event": "job_end", "time": at(12000), "status": "completed"},
    ]
    return frames.make_frame("job_events", [{"job": "j1", "node": "n0", **row} for row in rows])


def test_worked_example_wasted_progress_and_recovery():
    per_node = attribution.job_goodput(worked_example_events(gpus=1), at(0), at(86400))
    row = per_node.iloc[0]
    assert row["wasted_progress"] == 1200  # steps 81–100 × 60 s
    assert row["recovery"] == 600  # 6000 s → 6600 s
    assert row["productive"] == 4800 + (12000 - 6600)
    jobs = attribution.job_summary(per_node, worked_example_events(gpus=1), at(0), at(86400))
    assert jobs.loc["j1", "wall_seconds"] == 12000
    assert jobs.loc["j1", "ettr"] == pytest.approx((4800 + 5400) / 12000)


def test_window_takes_only_the_increase():
    # Window 5000–86400 s: productive 5400 s after the restart; the failure and restart inside.
    per_node = attribution.job_goodput(worked_example_events(gpus=1), at(5000), at(86400))
    assert per_node.iloc[0]["productive"] == 5400
    assert per_node.iloc[0]["wasted_progress"] == 1200


def test_interruptions_found_once_per_job_across_nodes():
    events = worked_example_events()
    other = events.assign(node="n1", time=events["time"] + pd.Timedelta(seconds=30))
    found = attribution.find_interruptions(
        pd.concat([events, other], ignore_index=True), at(0), at(86400)
    )
    assert list(found["time"]) == [at(6000)]


def test_journal_that_just_stops_is_interrupted_at_its_last_event():
    rows = [
        {"event": "job_start", "time": at(0), "gpus": 8},
        {"event": "steps", "time": at(100), "step": 1},
        {"event": "restart", "time": at(900), "step": 0},
    ]
    events = frames.make_frame("job_events", [{"job": "j", "node": "n0", **r} for r in rows])
    assert list(attribution.find_interruptions(events, at(0), at(1000))["time"]) == [at(100)]


def fault_at(offset_s: float, node: str = "n0") -> pd.DataFrame:
    return frames.make_frame(
        "faults",
        [
            {
                "node": node,
                "uuid": "GPU-0",
                "start": at(6000 + offset_s),
                "end": at(6000 + offset_s + 3600),
                "reason": "xid_fatal",
                "layer": "node",
            }
        ],
    )


@pytest.mark.parametrize(
    ("offset_min", "layer"),
    [
        (-9, "node"),
        (-10, "node"),
        (-11, "training"),
        (4, "node"),
        (5, "node"),
        (6, "training"),
        (0, "node"),
    ],
)
def test_attribution_window_edges(offset_min, layer):
    found = attribution.find_interruptions(worked_example_events(), at(0), at(86400))
    nodes = attribution.job_nodes(worked_example_events(), frames.empty("allocations"))
    out = attribution.attribute(found, fault_at(offset_min * 60), nodes)
    assert out.loc[0, "layer"] == layer
    assert out.loc[0, "reason"] == ("xid_fatal" if layer == "node" else "job_failure")


def test_fault_on_another_node_is_not_attributed():
    found = attribution.find_interruptions(worked_example_events(), at(0), at(86400))
    nodes = attribution.job_nodes(worked_example_events(), frames.empty("allocations"))
    out = attribution.attribute(found, fault_at(0, node="n9"), nodes)
    assert out.loc[0, "layer"] == "training" and out.loc[0, "fault_node"] == ""


def test_engine_splits_allocated_time_and_attributes_lost_hours():
    # 1 node × 8 GPUs, healthy all day except GPU-3 unhealthy (ecc_uncorrectable) 5700–9600 s;
    # job j1 holds all 8 GPUs 0–12000 s and follows the worked example.
    inv = frames.make_frame(
        "inventory",
        [
            {"node": "n0", "uuid": f"GPU-{g}", "gpu": str(g), "provisioned_start": at(0)}
            for g in range(8)
        ],
    )
    verdicts = frames.make_frame(
        "verdicts",
        [
            {"node": "n0", "uuid": "", "start": at(0), "end": at(86400), "verdict": "healthy"},
            {
                "node": "n0",
                "uuid": "GPU-3",
                "start": at(5700),
                "end": at(9600),
                "verdict": "unhealthy",
                "reason": "ecc_uncorrectable",
            },
        ],
    )
    alloc = frames.make_frame(
        "allocations",
        [
            {"job": "j1", "node": "n0", "uuid": f"GPU-{g}", "start": at(0), "end": at(12000)}
            for g in range(8)
        ],
    )
    fleet = frames.Frames(
        inventory=inv, verdicts=verdicts, allocations=alloc, job_events=worked_example_events()
    )
    result = compute_week(fleet, at(0), at(86400), SloSpec())
    h = 1 / 3600
    assert result.allocated_gpu_hours == pytest.approx((8 * 12000 - 3900) * h)
    assert result.productive_gpu_hours == pytest.approx(8 * 10200 * h)
    assert result.badput_gpu_hours_by_category["wasted_progress"] == pytest.approx(8 * 1200 * h)
    # The journal explains 8 × 12000 GPU-s but only 8 × 12000 − 3900 were usable: categories
    # fill in order (productive, …, wasted_progress, recovery), so recovery keeps what is left.
    assert result.badput_gpu_hours_by_category["recovery"] == pytest.approx(
        (8 * 12000 - 3900 - 8 * 10200 - 8 * 1200) * h
    )
    assert result.badput_gpu_hours_by_category["other"] == 0
    assert result.interruptions.loc[0, "reason"] == "ecc_uncorrectable"
    node_loss = (
        3900 * h + (8 * 12000 - 3900 - 8 * 10200) * h
    )  # unhealthy GPU-3 + the job's lost work
    assert result.lost_gpu_hours_by_layer["node"] == pytest.approx(node_loss)
    assert result.blast_radius.loc[0, "blast_radius"] == pytest.approx(8 * 1800 / 3900)
    assert result.interruptions_per_1000_gpu_days == pytest.approx(
        1 / ((8 * 12000 - 3900) / 86400) * 1000
    )


# -- one rule for the layer of an interruption no fault explains --------------------------------
TRAINING_LOGS = SHARED / "training_logs"


@pytest.mark.skipif(not TRAINING_LOGS.is_dir(), reason="../shared/training_logs is not here")
@pytest.mark.parametrize(("log", "layer", "reason"), [
    # T03: Megatron's `[exiting program after 1190.0 minutes]`: the job put it on the platform
    # (time limit); was attributed `training`/`job_failure` while the calculator said platform
    ("cases/T03_megatron-deepspeed-13b-checkpoint-save-time-exit-duration-requeue.log",
     "platform", "job_reported_platform"),
    # h200: run A exits with no line, run B restores: the journal just stopped, cause unseen
    ("h200/lightning-tqdm-crash-resume-h200.log", "observability", "job_cause_unseen"),
])
def test_without_a_fault_the_report_takes_the_calculators_layer(log, layer, reason):
    loaded = load_training_logs([str(TRAINING_LOGS / log)], 8)
    events = loaded.job_events
    window = (events["time"].min(), events["time"].max() + pd.Timedelta(seconds=1))
    found = attribution.find_interruptions(events, *window)
    nodes = attribution.job_nodes(events, loaded.allocations)
    out = attribution.attribute(found, frames.empty("faults"), nodes)
    assert list(out["layer"]) == [layer] and list(out["reason"]) == [reason]
    assert names.REASON_LAYER[reason] == layer
    counted = analyse_log(TRAINING_LOGS / log, gpus=8).document["goodput"]["interruptions"]
    assert counted == {layer: 1}  # the calculator's own count of the same log


def test_a_fault_still_wins_over_the_jobs_own_account():
    # negative: the worked example's failure declared `platform`, a node fault at the same time
    events = worked_example_events()
    events.loc[events["status"] == "failed", "layer"] = "platform"
    found = attribution.find_interruptions(events, at(0), at(86400))
    nodes = attribution.job_nodes(events, frames.empty("allocations"))
    assert list(attribution.attribute(found, fault_at(0), nodes)["reason"]) == ["xid_fatal"]
    alone = attribution.attribute(found, frames.empty("faults"), nodes)
    assert list(alone["layer"]) == ["platform"]


def test_interruption_at_the_window_end_counts_as_the_goodput_counters_do():
    # a training log's report window ends at its last line, Slurm's `CANCELLED ... DUE TO TIME
    # LIMIT` (newcomer #2): the counters' window (start, end] counts it, as job_goodput sums
    # the GPU-seconds up to it; one at the window's start belongs to the window before
    rows = [
        {"event": "job_start", "time": at(0), "gpus": 8},
        {"event": "steps", "time": at(400), "step": 200},
        {"event": "job_end", "time": at(4000), "status": "cancelled", "layer": "platform"},
    ]
    events = frames.make_frame("job_events", [{"job": "j", "node": "n0", **r} for r in rows])
    assert list(attribution.find_interruptions(events, at(0), at(4000))["time"]) == [at(4000)]
    assert attribution.find_interruptions(events, at(4000), at(8000)).empty
