"""Fleet accounting: hand-computed fleets, and the categories-sum invariant on random fleets."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuslo import names
from gpuslo.errors import InputError, ParseError
from gpuslo.slo import frames, sweep
from gpuslo.slo.accounting import STATES, account
from gpuslo.slo.engine import compute_week
from gpuslo.slo_spec import SloSpec

T0 = pd.Timestamp("2026-11-23", tz="UTC")  # Monday of 2026-W48


def at(hours: float) -> pd.Timestamp:
    return T0 + pd.Timedelta(hours=hours)


def inventory(nodes: int = 1, gpus: int = 2) -> pd.DataFrame:
    rows = [{"node": f"n{n}", "uuid": f"GPU-{n}-{g}", "gpu": str(g), "provisioned_start": at(0)}
            for n in range(nodes) for g in range(gpus)]
    return frames.make_frame("inventory", rows)


def test_hand_computed_fleet_follows_design_order():
    # One node, GPUs GPU-0-0 and GPU-0-1, window 0–24 h:
    #   node healthy 0–10 h; GPU-0-0 unhealthy (xid_fatal) 2–4 h; node unknown (check_timeout)
    #   12–14 h; nothing else reported (no data) 10–12 h and 14–24 h;
    #   node drained 4–5 h; job j holds GPU-0-1 1–3 h.
    verdicts = frames.make_frame(
        "verdicts",
        [
            {"node": "n0", "uuid": "", "start": at(0), "end": at(10), "verdict": "healthy"},
            {
                "node": "n0",
                "uuid": "GPU-0-0",
                "start": at(2),
                "end": at(4),
                "verdict": "unhealthy",
                "reason": "xid_fatal",
            },
            {
                "node": "n0",
                "uuid": "",
                "start": at(12),
                "end": at(14),
                "verdict": "unknown",
                "reason": "check_timeout",
            },
        ],
    )
    sched = frames.make_frame(
        "schedulability", [{"node": "n0", "start": at(4), "end": at(5), "state": "drained"}]
    )
    alloc = frames.make_frame(
        "allocations", [{"job": "j", "node": "n0", "uuid": "GPU-0-1", "start": at(1), "end": at(3)}]
    )
    acc = account(inventory(), verdicts, sched, alloc, at(0), at(24))
    hours = acc.by_state / 3600
    assert hours[names.ACCOUNTING_NO_DATA] == 2 * (2 + 10)  # 10–12 h and 14–24 h on both GPUs
    assert hours[names.ACCOUNTING_UNKNOWN] == 2 * 2
    assert hours[names.ACCOUNTING_UNHEALTHY] == 2
    assert hours[names.ACCOUNTING_UNSCHEDULABLE] == 2 * 1
    assert hours["allocated"] == 2
    assert hours[names.ACCOUNTING_IDLE] == (2 + 5) + (1 + 1 + 5)
    assert acc.usable_seconds / 3600 == 2 + 14
    lost = {(r.layer, r.reason): r.seconds / 3600 for r in acc.by_layer_reason.itertuples()}
    assert lost == {("node", "xid_fatal"): 2, ("observability", "check_timeout"): 4,
                    ("observability", "no_data"): 24, ("platform", "drained"): 2}
    assert acc.job_seconds.to_dict() == {"j": 2 * 3600}


def test_unknown_wins_over_unhealthy_and_provisioning_clips():
    # GPU-0-0 provisioned from 6 h; unknown 5–8 h overlaps unhealthy 7–9 h; healthy after.
    inv = inventory(gpus=1).assign(provisioned_start=at(6))
    verdicts = frames.make_frame(
        "verdicts",
        [
            {
                "node": "n0",
                "uuid": "GPU-0-0",
                "start": at(5),
                "end": at(8),
                "verdict": "unknown",
                "reason": "stale_data",
            },
            {
                "node": "n0",
                "uuid": "GPU-0-0",
                "start": at(7),
                "end": at(9),
                "verdict": "unhealthy",
                "reason": "nvlink_down",
            },
            {"node": "n0", "uuid": "GPU-0-0", "start": at(9), "end": at(24), "verdict": "healthy"},
        ],
    )
    acc = account(
        inv, verdicts, frames.empty("schedulability"), frames.empty("allocations"), at(0), at(24)
    )
    hours = acc.by_state / 3600
    assert acc.provisioned_seconds / 3600 == 24 - 6
    assert hours[names.ACCOUNTING_UNKNOWN] == 8 - 6
    assert hours[names.ACCOUNTING_UNHEALTHY] == 9 - 8
    assert hours[names.ACCOUNTING_IDLE] == 24 - 9


def test_overlapping_allocations_name_the_row():
    alloc = frames.make_frame("allocations", [
        {"job": "a", "node": "n0", "uuid": "GPU-0-0", "start": at(0), "end": at(2)},
        {"job": "b", "node": "n0", "uuid": "GPU-0-0", "start": at(1), "end": at(3)},
    ])
    with pytest.raises(InputError, match="row 2: job 'b'"):
        account(
            inventory(),
            frames.empty("verdicts"),
            frames.empty("schedulability"),
            alloc,
            at(0),
            at(4),
        )


def test_bad_frame_rows_are_named():
    with pytest.raises(ParseError) as info:
        frames.make_frame("verdicts", [
            {"node": "n0", "start": at(0), "end": at(1), "verdict": "healthy"},
            {"node": "n0", "start": at(0), "end": at(1), "verdict": "fine"},
        ])
    assert info.value.line == 2 and info.value.field == "verdict"
    with pytest.raises(ParseError) as info:
        frames.make_frame(
            "allocations", [{"job": "j", "node": "n", "uuid": "u", "start": at(2), "end": at(1)}]
        )
    assert info.value.field == "end"
    with pytest.raises(ParseError, match="lacks column"):
        frames.make_frame("verdicts", [{"node": "n0"}])


_hour = st.integers(min_value=0, max_value=48)


@st.composite
def fleets(draw):
    nodes, gpus = draw(st.integers(1, 3)), draw(st.integers(1, 3))
    inv = inventory(nodes, gpus)
    inv["provisioned_start"] = [at(draw(_hour) // 4) for _ in range(len(inv))]

    def interval():
        a, b = sorted((draw(_hour), draw(_hour)))
        return at(a), at(b)

    verdicts = []
    for _ in range(draw(st.integers(0, 12))):
        (s, e), node = interval(), f"n{draw(st.integers(0, nodes - 1))}"
        uuid = draw(st.sampled_from(["", f"GPU-{node[1:]}-{draw(st.integers(0, gpus - 1))}"]))
        verdict = draw(st.sampled_from(names.VERDICTS))
        reason = {
            "healthy": "",
            "unknown": "stale_data",
            "unhealthy": draw(st.sampled_from(["xid_fatal", "nvlink_down", "drained"])),
            "validating": draw(st.sampled_from(["", "validation"])),
        }[verdict]
        verdicts.append(
            {"node": node, "uuid": uuid, "start": s, "end": e, "verdict": verdict, "reason": reason}
        )
    sched = [{"node": f"n{draw(st.integers(0, nodes - 1))}", "start": s, "end": e,
              "state": draw(st.sampled_from(frames.SCHEDULABILITY_STATES))}
             for s, e in (interval() for _ in range(draw(st.integers(0, 3))))]
    allocs, cursor = [], {}
    for j in range(draw(st.integers(0, 4))):
        node, g = draw(st.integers(0, nodes - 1)), draw(st.integers(0, gpus - 1))
        s = max(draw(_hour), cursor.get((node, g), 0))
        e = s + draw(st.integers(0, 10))
        cursor[(node, g)] = e
        allocs.append(
            {
                "job": f"j{j}",
                "node": f"n{node}",
                "uuid": f"GPU-{node}-{g}",
                "start": at(s),
                "end": at(e),
            }
        )
    return frames.Frames(inventory=inv, verdicts=frames.make_frame("verdicts", verdicts),
                         schedulability=frames.make_frame("schedulability", sched),
                         allocations=frames.make_frame("allocations", allocs))


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(fleets(), st.integers(0, 20), st.integers(21, 60))
def test_categories_sum_to_provisioned_exactly(fleet, start_h, end_h):
    acc = account(
        fleet.inventory,
        fleet.verdicts,
        fleet.schedulability,
        fleet.allocations,
        at(start_h),
        at(end_h),
    )
    assert sum(acc.state_ticks.values()) == acc.provisioned_ticks
    assert set(acc.state_ticks) == set(STATES)
    expected = sum(
        max(0, (at(end_h) - max(s, at(start_h))).total_seconds())
        for s in fleet.inventory["provisioned_start"]
    )
    assert acc.provisioned_seconds == pytest.approx(expected)
    result = compute_week(fleet, at(start_h), at(end_h), SloSpec())
    assert sum(result.category_ticks.values()) == result.provisioned_ticks
    assert sum(result.lost_gpu_hours_by_layer.values()) == pytest.approx(
        sum(result.lost_gpu_hours_by_reason.values())
    )


@settings(max_examples=200, deadline=None)
@given(st.lists(st.integers(-(2**62), 2**62), max_size=60))
def test_segment_keys_are_deduplicated_as_np_unique_would(values):
    keys = np.array(values, dtype=np.int64)
    assert np.array_equal(sweep._sorted_unique(keys), np.unique(keys))
