"""Per-day accounting over any window: each day's provisioned GPU-hours are the GPUs present that
day × the hours of that day inside the window (× 24 for a whole day), and the days sum to the
total — with `--week`, with `--start/--end` off midnight, and with no window, for every source
(the simulator, a fleet whose GPUs come and go mid-day, the StepFun and Titan traces, journals;
Prometheus in test_report_prometheus.py; Titan's whole six years, 18,687 GPUs, take minutes, so
it gets a week and a start/end window). `--week` once put 83,818 provisioned GPU-hours on the
first day of a 1,000-GPU week: its window came in microseconds and the midnights were cut as if
they were nanoseconds."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from conftest import DATASETS
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from gpuslo.cli import main
from gpuslo.slo.engine import compute_week
from gpuslo.slo.frames import Frames, empty, make_frame
from gpuslo.slo.report.inputs import Sources, load_frames, parse_week, window
from gpuslo.slo_spec import SloSpec

DAY = pd.Timedelta(days=1)


def expected_days(inventory: pd.DataFrame, start: pd.Timestamp, end: pd.Timestamp) -> pd.Series:
    """UTC day -> provisioned GPU-hours of [start, end), from each GPU's provisioned interval."""
    if not len(inventory):
        return pd.Series(dtype="float64")
    s = inventory["provisioned_start"].clip(lower=start)
    e = inventory["provisioned_end"].fillna(end).clip(upper=end)
    out = {}
    day = start.floor("D")
    while day < end:
        lo, hi = max(day, start), min(day + DAY, end)
        overlap = (np.minimum(e, hi) - np.maximum(s, lo)).dt.total_seconds().clip(lower=0)
        if overlap.sum() > 0:
            out[day] = overlap.sum() / 3600
        day += DAY
    return pd.Series(out, dtype="float64")


def check_days(frames: Frames, start, end) -> None:
    result = compute_week(frames, start, end, SloSpec())
    daily = result.daily.set_index("day")["provisioned_gpu_hours"]
    want = expected_days(frames.inventory, result.start, result.end)
    assert list(daily.index) == list(want.index)
    np.testing.assert_allclose(daily.to_numpy(), want.to_numpy(), atol=1e-6)
    assert daily.sum() == pytest.approx(result.provisioned_gpu_hours, abs=1e-6)
    whole = [d for d in want.index if d >= result.start and d + DAY <= result.end]
    for day in whole:  # a whole day: the GPUs present all day x 24 (+ part-day GPUs)
        present = frames.inventory[
            (frames.inventory["provisioned_start"] <= day)
            & (
                frames.inventory["provisioned_end"].isna()
                | (frames.inventory["provisioned_end"] >= day + DAY)
            )
        ]
        assert daily[day] >= len(present) * 24 - 1e-6


@pytest.fixture(scope="module")
def simulated(tmp_path_factory) -> Frames:
    out = tmp_path_factory.mktemp("sim") / "sim"
    assert (
        main(
            [
                "simulate",
                "--nodes",
                "3",
                "--gpus-per-node",
                "4",
                "--days",
                "12",
                "--seed",
                "2",
                "--start",
                "2026-11-20T07:30:00Z",
                "--out",
                str(out),
            ]
        )
        == 0
    )
    return load_frames(Sources(data=str(out)), None, None)


def _coming_and_going() -> Frames:
    """4 GPUs: two all along, one from day 2 10:30, one until day 4 18:00; healthy throughout."""
    t0 = pd.Timestamp("2026-03-02T00:00:00Z")
    rows = [
        ("a", "GPU-a0", t0, None),
        ("a", "GPU-a1", t0, None),
        ("b", "GPU-b0", t0 + pd.Timedelta(days=1, hours=10.5), None),
        ("b", "GPU-b1", t0, t0 + pd.Timedelta(days=3, hours=18)),
    ]
    inventory = make_frame(
        "inventory",
        [
            {
                "node": n,
                "uuid": u,
                "gpu": u[-1],
                "model": "H100",
                "family": "hopper",
                "provisioned_start": s,
                "provisioned_end": e,
            }
            for n, u, s, e in rows
        ],
        "test",
    )
    verdicts = make_frame(
        "verdicts",
        [
            {
                "node": n,
                "uuid": u,
                "start": t0,
                "end": t0 + pd.Timedelta(days=7),
                "verdict": "healthy",
                "reason": "",
                "layer": "",
                "action": "",
            }
            for n, u, _, _ in rows
        ],
        "test",
    )
    return Frames(
        inventory=inventory,
        verdicts=verdicts,
        schedulability=empty("schedulability"),
        allocations=empty("allocations"),
        job_events=empty("job_events"),
        source="coming and going",
    )


def windows(frames: Frames):
    """A strategy of report windows over `frames`' span: none, an ISO week, or start/end at
    whole minutes (mostly off midnight), as `gpuslo report` parses them."""
    lo, hi = frames.span()
    weeks = sorted(
        {f"{d.isocalendar()[0]}-W{d.isocalendar()[1]:02d}" for d in pd.date_range(lo, hi, freq="D")}
    )
    minutes = int((hi - lo).total_seconds() // 60)
    start_end = st.tuples(st.integers(0, minutes - 2), st.integers(1, 3 * 24 * 60)).map(
        lambda p: (
            (lo + pd.Timedelta(minutes=p[0])).isoformat(),
            (lo + pd.Timedelta(minutes=min(p[0] + p[1], minutes))).isoformat(),
        )
    )
    return st.one_of(
        st.just((None, None)),
        st.sampled_from(weeks).map(parse_week),
        start_end.map(lambda w: window(None, w[0], w[1], None)),
    )


@settings(
    max_examples=25, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(data=st.data())
def test_simulated_fleet_days_over_any_window(simulated, data):
    start, end = data.draw(windows(simulated))
    check_days(simulated, start, end)


@settings(max_examples=25, deadline=None)
@given(data=st.data())
def test_gpus_coming_and_going_mid_day(data):
    frames = _coming_and_going()
    start, end = data.draw(windows(frames))
    check_days(frames, start, end)


def test_a_day_holds_the_gpus_present_that_day_times_24():
    frames = _coming_and_going()
    daily = compute_week(frames, *parse_week("2026-W10"), SloSpec()).daily
    got = dict(zip(daily["day"].dt.strftime("%m-%d"), daily["provisioned_gpu_hours"], strict=True))
    assert got == {
        "03-02": 3 * 24,
        "03-03": 3 * 24 + 13.5,
        "03-04": 4 * 24,
        "03-05": 3 * 24 + 18,
        "03-06": 3 * 24,
        "03-07": 3 * 24,
        "03-08": 3 * 24,
    }


@pytest.mark.parametrize(
    ("kind", "path", "windows_"),
    [
        (
            "stepfun",
            DATASETS / "stepfun_infinitehbd" / "fault_trace.json",
            [(None, None), ("2024-W20", None), ("2024-07-01T13:17:00Z", "2024-07-04T02:00:00Z")],
        ),
        (
            "titan",
            DATASETS / "titan" / "gc_full.csv",
            [("2015-W10", None), ("2015-03-01T06:45:00Z", "2015-03-03T22:10:00Z")],
        ),
    ],
)
def test_trace_days_over_each_kind_of_window(kind, path, windows_):
    frames = load_frames(Sources(trace=str(path), trace_format=kind), None, None)
    lo, hi = frames.span()
    for first, second in windows_:
        if first and second:
            start, end = window(None, first, second, None)
        elif first:
            start, end = parse_week(first)
        else:
            start, end = None, None
        if start is not None:
            assert lo < end and start < hi, (kind, first, "outside the trace", lo, hi)
        check_days(frames, start, end)


def test_journals_days_over_each_kind_of_window(tmp_path):
    sim = tmp_path / "sim"
    assert main(["simulate", "--nodes", "2", "--days", "3", "--seed", "4", "--out", str(sim)]) == 0
    frames = load_frames(Sources(journals=str(sim / "journals")), None, None)
    for start, end in [
        (None, None),
        parse_week("2026-W48"),
        window(None, "2026-11-23T09:00:00Z", "2026-11-24T15:00:00Z", None),
    ]:
        check_days(frames, start, end)
