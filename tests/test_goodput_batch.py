"""The calculator's two forms agree: `goodput_table` (numpy over many journals at once, folding
only those that may hold a slowdown) gives after every event what the `GoodputState` fold gives,
on hand-made and on random journals — with logged step times that are steady, that spike and
that slow down for good."""

from __future__ import annotations

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuslo import names
from gpuslo.goodput.calculator import PHASES, compute_goodput, goodput_table
from tests.test_goodput import worked_example


def _table(journals: list[list[dict]]):
    rows = [(g, e) for g, events in enumerate(journals) for e in events]
    get = lambda key, fill: np.array([e.get(key, fill) for _, e in rows], dtype=object)  # noqa: E731
    number = lambda *keys: np.array(  # noqa: E731
        [float(next((e[k] for k in keys if k in e), np.nan)) for _, e in rows])
    return goodput_table(
        np.array([g for g, _ in rows], dtype=np.int64),
        np.array([float(e["t"]) for _, e in rows]),
        get("event", ""), get("category", ""), number("gpus"), get("status", ""),
        number("step", "from_step"), get("layer", ""), number("count"), number("step_time_s"),
        number("compute_s"),
    ), rows


def test_a_sustained_slowdown_is_folded_and_agrees():
    """Steady 1 s steps, then 2 s steps for three intervals: the fold's slowdown, row by row."""
    events = [{"v": 1, "t": 0.0, "event": "job_start", "job": "j", "node": "n", "gpus": 4}]
    t = 0.0
    for i, step_s in enumerate([1.0, 1.0, 1.0, 1.0, 2.0, 2.0, 2.0, 1.0]):
        t += 10 * step_s
        events.append({"v": 1, "t": t, "event": "steps", "step": 10 * (i + 1), "count": 10,
                       "step_time_s": step_s})
    table, _ = _table([events, worked_example()])
    assert table.gpu_seconds["slowdown"][len(events) - 1] == 4 * 3 * 10 * 1.0
    _assert_same([events, worked_example()])


def _assert_same(journals: list[list[dict]]) -> None:
    table, rows = _table(journals)
    i = 0
    for events in journals:
        for k in range(len(events)):
            fold = compute_goodput(events[: k + 1])
            for category in names.JOB_CATEGORIES:
                assert table.gpu_seconds[category][i] == pytest.approx(
                    fold.gpu_seconds[category], abs=1e-6), (category, k, events[: k + 1])
            assert table.gpus[i] == fold.gpus and table.status[i] == fold.status, events[: k + 1]
            assert table.committed_step[i] == fold.committed_step, events[: k + 1]
            assert table.last_progress_t[i] == fold.last_progress_t, events[: k + 1]
            assert {k: int(v[i]) for k, v in table.interruptions.items()} == fold.interruptions
            i += 1


def test_worked_example_row_by_row():
    # productive 4800 at the checkpoint, then wasted 1200 and recovery 600 at the restart
    table, _ = _table([worked_example(gpus=8)])
    assert table.gpu_seconds["productive"][-1] == 8 * 4800
    assert table.gpu_seconds["wasted_progress"][-1] == 8 * 1200
    assert table.gpu_seconds["recovery"][-1] == 8 * 600
    _assert_same([worked_example(gpus=8), worked_example(gpus=2)])


EVENT = st.one_of(
    st.tuples(st.just("job_start"), st.integers(1, 8)),
    st.tuples(st.just("restart"), st.one_of(st.none(), st.integers(1, 8))),
    st.tuples(st.sampled_from(["phase_start", "phase_end"]), st.sampled_from(PHASES)),
    st.tuples(st.sampled_from(["steps", "checkpoint"]), st.integers(0, 100)),
    st.tuples(st.just("timed_steps"), st.sampled_from([1.0, 1.01, 1.02, 1.5, 2.0])),
    st.tuples(st.just("job_end"), st.sampled_from(["completed", "failed", "cancelled"])),
)
JOURNAL = st.lists(st.tuples(st.integers(0, 500), EVENT), max_size=25)


def _events(plan) -> list[dict]:
    t, out = 0.0, []
    for gap, (kind, value) in plan:
        t += gap
        e = {"v": 1, "t": t, "event": kind}
        if kind == "job_start":
            e |= {"job": "j", "node": "n", "gpus": value}
        elif kind == "restart":
            e |= {"from_step": gap % 7} | ({"gpus": value} if value else {})
            e |= {"layer": "node"} if gap % 3 == 0 else {}
        elif kind.startswith("phase_"):
            e["category"] = value
        elif kind in ("steps", "checkpoint"):
            e["step"] = value
        elif kind == "timed_steps":  # a coalesced interval with its measured step time
            last = next((x["step"] for x in reversed(out) if "step" in x), 0)
            e |= {"event": "steps", "step": last + 10, "count": 10, "step_time_s": value}
        else:
            e["status"] = value
            e |= {"layer": "platform"} if gap % 2 == 0 else {}
        out.append(e)
    return out


@settings(max_examples=300, deadline=None)
@given(st.lists(JOURNAL, min_size=1, max_size=4))
def test_batch_equals_fold_on_random_journals(plans):
    _assert_same([_events(plan) for plan in plans])
