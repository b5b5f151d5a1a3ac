"""`index_events`: the job_events frame in (job, node, time) order as integer arrays, whether the
rows arrive in that order (journals read file by file: nothing is sorted) or shuffled; and
`batches`, which cuts its rows between journals."""

from __future__ import annotations

import numpy as np
import pandas as pd

from gpuslo import names
from gpuslo.goodput.calculator import EVENTS, PHASES, STATUSES
from gpuslo.slo import frames
from gpuslo.slo.events import batches, index_events

T0 = pd.Timestamp("2026-11-23", tz="UTC")


def _events() -> pd.DataFrame:
    rows = []
    for job, node in (("b", "n2"), ("a", "n1"), ("a", "n0"), ("a10", "n1")):
        rows += [
            {"event": "job_start", "time": T0, "gpus": 8},
            {"event": "phase_start", "time": T0 + pd.Timedelta(seconds=1),
             "category": "initialization"},
            {"event": "phase_end", "time": T0 + pd.Timedelta(seconds=5),
             "category": "initialization"},
            {"event": "steps", "time": T0 + pd.Timedelta(seconds=65), "step": 10,
             "step_time_s": 6.0},
            {"event": "job_end", "time": T0 + pd.Timedelta(seconds=70), "status": "failed",
             "layer": "node"},
            {"event": "restart", "time": T0 + pd.Timedelta(seconds=90), "step": 0,
             "layer": "platform"},
        ]
        rows = [{"job": job, "node": node, **row} if "job" not in row else row for row in rows]
    return frames.make_frame("job_events", rows)


def _rows(idx) -> list[tuple]:
    return list(zip(idx.jobs[idx.job], idx.nodes[idx.node], idx.t_ns, idx.event, idx.status,
                    idx.category, idx.layer, np.nan_to_num(idx.step, nan=-1),
                    np.nan_to_num(idx.gpus, nan=-1), strict=True))


def test_rows_in_order_are_not_moved_and_shuffled_rows_are_sorted_the_same():
    ordered = _events().sort_values(["job", "node", "time"], kind="stable", ignore_index=True)
    idx = index_events(ordered)
    assert (idx.order == np.arange(len(ordered))).all()
    assert list(idx.jobs) == ["a", "a10", "b"] and list(idx.nodes) == ["n0", "n1", "n2"]
    assert list(idx.group) == [g for g in range(4) for _ in range(6)]
    assert list(idx.first) == [0, 6, 12, 18]
    shuffled = ordered.sample(frac=1.0, random_state=7).reset_index(drop=True)
    other = index_events(shuffled)
    assert _rows(other) == _rows(idx)
    # `order` points back at each ordered row's place in the input
    assert (shuffled["time"].to_numpy("int64")[other.order] == idx.t_ns).all()
    assert (shuffled["job"].to_numpy(dtype=object)[other.order] == idx.jobs[idx.job]).all()


def test_status_layer_and_category_are_coded_on_the_rows_that_carry_them():
    idx = index_events(_events())
    event = np.array(EVENTS, dtype=object)[idx.event]
    ends, restarts = event == "job_end", event == "restart"
    phases = np.isin(event, ["phase_start", "phase_end"])
    assert (idx.status[ends] == STATUSES.index("failed")).all()
    assert (idx.status[~ends] == -1).all()
    assert (idx.category[phases] == PHASES.index("initialization")).all()
    assert (idx.category[~phases] == -1).all()
    assert (idx.layer[ends] == names.LAYERS.index("node")).all()
    assert (idx.layer[restarts] == names.LAYERS.index("platform")).all()
    assert (idx.layer[~(ends | restarts)] == -1).all()


def test_counts_are_exact_whatever_their_size():
    idx = index_events(_events())
    assert idx.step.dtype == np.float32 and idx.gpus.dtype == np.float32
    assert np.isnan(idx.step[np.array(EVENTS, dtype=object)[idx.event] == "job_start"]).all()
    big = _events()
    big.loc[big["event"] == "steps", "step"] = 2**40 + 1  # not a float32
    idx = index_events(big)
    assert idx.step.dtype == np.float64
    assert set(idx.step[~np.isnan(idx.step)]) == {0.0, float(2**40 + 1)}


def test_an_empty_frame_gives_an_empty_index():
    idx = index_events(frames.empty("job_events"))
    assert len(idx) == 0 and len(idx.first) == 0


def test_batches_cover_every_journal_once_and_keep_a_large_one_whole():
    first = np.array([0, 3, 4, 20, 21, 22])  # group 2 has 16 rows; 25 rows in all
    for size in (1, 2, 5, 16, 100):
        cuts = batches(first, 25, size)
        assert [g for g0, g1 in cuts for g in range(g0, g1)] == list(range(6))
        rows = np.diff(np.r_[first, 25])
        assert all(rows[g0:g1].sum() <= size or g1 - g0 == 1 for g0, g1 in cuts)
    assert batches(first, 25, 100) == [(0, 6)]
    assert batches(np.zeros(0, dtype=np.int64), 0) == []
