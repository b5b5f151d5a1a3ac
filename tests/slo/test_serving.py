"""Serving accounting (gpuslo.slo.serving): the issue-29 timeline by hand, and properties."""

from __future__ import annotations

import pandas as pd
import pytest

from gpuslo import names
from gpuslo.errors import ParseError
from gpuslo.slo.frames import derive_faults, make_frame
from gpuslo.slo.serving import serving_account

T0 = pd.Timestamp("2025-03-03T00:00:00Z")


def at(minutes: float) -> pd.Timestamp:
    return T0 + pd.Timedelta(minutes=minutes)


def timeline(extra_states=(), fault_minute=60.0, fault_layer_reason=("xid_fatal", "node")):
    """Replica vllm-0 on node n1 with 8 GPUs for 2 h: loads 10 min, serves, a fatal Xid on n1 at
    minute 60 puts it not ready for 5 min (crash loop), it reloads 3 min, serves (idle 10 min in
    the middle), then drains 2 min on a rollout at the end. A second replica (tgi-0, 2 GPUs, n2)
    is allocated for 30 min but only its first 20 min are described by any source."""
    replicas = make_frame("replicas", [
        {"replica": "vllm-0", "node": "n1", "gpus": 8, "start": at(0), "end": at(120)},
        {"replica": "tgi-0", "node": "n2", "gpus": 2, "start": at(0), "end": at(30)},
    ])
    states = make_frame("replica_states", [
        {"replica": "vllm-0", "start": at(0), "end": at(10), "state": "loading"},
        {"replica": "vllm-0", "start": at(10), "end": at(60), "state": "ready"},
        {"replica": "vllm-0", "start": at(60), "end": at(65), "state": "not_ready"},
        {"replica": "vllm-0", "start": at(65), "end": at(68), "state": "loading"},
        {"replica": "vllm-0", "start": at(68), "end": at(118), "state": "ready"},
        {"replica": "vllm-0", "start": at(118), "end": at(120), "state": "draining",
         "reason": "replica_drained"},
        {"replica": "tgi-0", "start": at(0), "end": at(20), "state": "ready"},
        *extra_states,
    ])
    idle = make_frame("replica_idle", [
        {"replica": "vllm-0", "start": at(80), "end": at(90)},
    ])
    reason, layer = fault_layer_reason
    verdicts = make_frame("verdicts", [
        {"node": "n1", "uuid": "GPU-a", "start": at(fault_minute), "end": at(200),
         "verdict": "unhealthy", "reason": reason, "layer": layer, "action": "reset_gpu"},
    ])
    return replicas, states, idle, derive_faults(verdicts)


def test_issue_timeline_exact_gpu_hours_per_category_and_layer():
    acc = serving_account(*timeline(), at(0), at(120))
    hours = acc.fleet_hours()
    # vllm-0, 8 GPUs: serving (50 + 50 - 10 idle) min; tgi-0, 2 GPUs: 20 min serving
    assert hours["serving"] == pytest.approx((90 * 8 + 20 * 2) / 60)
    assert hours["idle_capacity"] == pytest.approx(10 * 8 / 60)
    assert hours["model_loading"] == pytest.approx((10 + 3) * 8 / 60)
    assert hours["not_ready"] == pytest.approx(5 * 8 / 60)
    assert hours["draining"] == pytest.approx(2 * 8 / 60)
    assert hours["other"] == pytest.approx(10 * 2 / 60)  # tgi-0's last 10 min: nobody says
    assert acc.allocated_ticks * acc.tick_ns / 3.6e12 == pytest.approx((120 * 8 + 30 * 2) / 60)
    assert sum(acc.fleet_ticks.values()) == acc.allocated_ticks
    by_layer = acc.lost_by_layer()
    # node: the 5-min crash loop and the 3-min reload after the Xid; workload: first load
    assert by_layer["node"] == pytest.approx((5 + 3) * 8 / 60)
    assert by_layer[names.LAYER_WORKLOAD] == pytest.approx(10 * 8 / 60)
    assert by_layer["platform"] == pytest.approx(2 * 8 / 60)
    assert by_layer["observability"] == pytest.approx(10 * 2 / 60)
    lost = acc.lost.set_index(["layer", "reason", "category"])["gpu_seconds"] / 3600
    assert lost[("node", "xid_fatal", "not_ready")] == pytest.approx(40 / 60)
    assert lost[("node", "xid_fatal", "model_loading")] == pytest.approx(24 / 60)
    assert lost[("training", "model_loading", "model_loading")] == pytest.approx(80 / 60)
    assert lost[("platform", "replica_drained", "draining")] == pytest.approx(16 / 60)
    assert lost[("observability", "no_data", "other")] == pytest.approx(20 / 60)
    row = acc.by_replica.loc["vllm-0"]
    assert row["allocated_gpu_seconds"] == pytest.approx(120 * 8 * 60)
    assert row["idle_capacity"] == pytest.approx(10 * 8 * 60)


def test_crash_without_fault_is_the_engine_and_far_fault_is_not_blamed():
    # the Xid comes 30 min after the crash loop: outside [start - 10 min, start + 5 min]
    acc = serving_account(*timeline(fault_minute=95), at(0), at(120))
    lost = acc.lost.set_index(["layer", "reason", "category"])["gpu_seconds"] / 3600
    assert lost[("training", "engine_crash", "not_ready")] == pytest.approx(40 / 60)
    assert lost[("training", "engine_crash", "model_loading")] == pytest.approx(24 / 60)
    assert acc.lost_by_layer()["node"] == 0.0


def test_blind_node_counts_as_observability_and_explicit_reason_wins():
    acc = serving_account(*timeline(fault_layer_reason=("stale_data", "observability")),
                          at(0), at(120))
    assert acc.lost_by_layer()["observability"] == pytest.approx((8 * 8 + 10 * 2) / 60)
    # the source said OOM: the fault on the node does not override it
    replicas, states, idle, faults = timeline()
    states.loc[states["state"] == "not_ready", "reason"] = "engine_oom"
    acc = serving_account(replicas, states, idle, faults, at(0), at(120))
    lost = acc.lost.set_index(["layer", "reason", "category"])["gpu_seconds"] / 3600
    assert lost[("training", "engine_oom", "not_ready")] == pytest.approx(40 / 60)


def test_window_clips_and_worst_state_wins_overlaps():
    extra = [{"replica": "vllm-0", "start": at(30), "end": at(40), "state": "not_ready",
              "reason": "replica_evicted"}]
    acc = serving_account(*timeline(extra_states=extra), at(20), at(50))
    hours = acc.fleet_hours()
    assert hours["not_ready"] == pytest.approx(10 * 8 / 60)
    assert hours["serving"] == pytest.approx(20 * 8 / 60)
    assert hours["other"] == pytest.approx(10 * 2 / 60)  # tgi-0 from 20 to 30
    assert acc.lost_by_layer()["platform"] == pytest.approx(10 * 8 / 60)


def test_bad_state_is_a_parse_error_naming_row_and_field():
    with pytest.raises(ParseError) as error:
        make_frame("replica_states", [
            {"replica": "r", "start": at(0), "end": at(1), "state": "ready"},
            {"replica": "r", "start": at(1), "end": at(2), "state": "warming"},
        ], source="states.csv")
    assert error.value.field == "state" and error.value.line == 2


# --- property: on random replicas the categories are exactly a per-minute brute force ---------
from hypothesis import given, settings  # noqa: E402
from hypothesis import strategies as st  # noqa: E402

_ORDER = ("not_ready", "draining", "loading", "ready")
_CAT = {"loading": "model_loading", "ready": "serving", "not_ready": "not_ready",
        "draining": "draining"}


@st.composite
def fleets(draw):
    n = draw(st.integers(1, 4))
    replicas, states, idle = [], [], []
    for i in range(n):
        a = draw(st.integers(-20, 100))
        b = draw(st.integers(a, 140))
        replicas.append({"replica": f"r{i}", "node": f"n{i % 2}", "gpus": draw(st.integers(1, 8)),
                         "start": at(a), "end": at(b)})
        for _ in range(draw(st.integers(0, 5))):
            s = draw(st.integers(-20, 140))
            e = draw(st.integers(s, 150))
            states.append({"replica": f"r{i}", "start": at(s), "end": at(e),
                           "state": draw(st.sampled_from(_ORDER))})
        for _ in range(draw(st.integers(0, 2))):
            s = draw(st.integers(-20, 140))
            idle.append({"replica": f"r{i}", "start": at(s), "end": at(draw(st.integers(s, 150)))})
    return replicas, states, idle


def _brute(replicas, states, idle, lo, hi):
    out = dict.fromkeys(names.SERVING_CATEGORIES, 0)
    for rep in replicas:
        for minute in range(lo, hi):
            t = at(minute)
            if not rep["start"] <= t < rep["end"]:
                continue
            covering = [s["state"] for s in states
                        if s["replica"] == rep["replica"] and s["start"] <= t < s["end"]]
            if not covering:
                out["other"] += rep["gpus"]
                continue
            category = _CAT[min(covering, key=_ORDER.index)]
            if category == "serving" and any(
                    i["replica"] == rep["replica"] and i["start"] <= t < i["end"] for i in idle):
                category = "idle_capacity"
            out[category] += rep["gpus"]
    return out


@settings(max_examples=40, deadline=None)
@given(fleets())
def test_categories_sum_to_allocated_and_other_is_only_undescribed_time(fleet):
    replicas, states, idle = fleet
    acc = serving_account(make_frame("replicas", replicas), make_frame("replica_states", states),
                          make_frame("replica_idle", idle),
                          derive_faults(make_frame("verdicts", [])), at(0), at(120))
    assert sum(acc.fleet_ticks.values()) == acc.allocated_ticks
    minutes = {c: round(h * 60) for c, h in acc.fleet_hours().items()}
    assert minutes == _brute(replicas, states, idle, 0, 120)
    lost = acc.lost["gpu_seconds"].sum() / 60
    assert lost == pytest.approx(sum(minutes[c] for c in names.SERVING_LOST))
    assert set(acc.lost["layer"]) <= set(names.LAYERS)
