"""The week's job GPU-seconds from the job tiles rules (`gpuslo.slo.sources.job_tiles`) are the
counters' own increases, per (job, category), and the spans the rules did not cover are read
from the counters.

`plan` alone (pure); the rule's expression is the reader's; then a real VictoriaMetrics holding
two simulated days of 3 nodes × 4 GPUs with jobs, the job tiles group replayed by `vmalert` at its
hourly interval from half an hour after the start (its phase off the window's) to half a day
before the end: the
tiled read equals the read of every node's counters, asks for per-job rows only, and the week
computed from either has the same goodput and jobs."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
import yaml
from conftest import import_openmetrics, require_binary, running_victoria_metrics, vmalert_replay

from gpuslo import names
from gpuslo.alerts import job_tiles as rules
from gpuslo.slo.engine import compute_week
from gpuslo.slo.sources import job_tiles, prometheus, sparse
from gpuslo.slo.sources.query_api import QueryApi, tidy
from gpuslo.slo.sources.sparse_reader import Reader, label_column, window_ms
from gpuslo.slo_spec import SloSpec
from tests.slo.test_located import STEP_S, two_simulated_days

H = 3_600_000


def test_the_rule_and_the_reader_share_one_expression():
    group = rules.recording_group()
    assert group["interval"] == "1h" and names.JOB_TILE_INTERVAL_S == 3600
    exprs = {rule["record"]: rule["expr"] for rule in group["rules"]}
    assert exprs[names.JOB_TILE_EVALUATIONS] == "vector(1)"
    assert exprs[names.JOB_TILE_SECONDS] == rules.increase_expr("1h")
    assert exprs[names.JOB_TILE_WHOLE] == rules.whole_expr("1h")
    assert "[1d] offset 1h" in exprs[names.JOB_TILE_SECONDS]
    assert pd.Timedelta(names.JOB_TILE_HOLD.upper()).total_seconds() == names.JOB_TILE_HOLD_S


def test_plan_takes_back_to_back_tiles_inside_the_window_and_reads_the_rest_raw():
    first, last = 0, 10 * H - 1  # the window's samples (0, 10h - 1 ms]
    phase = 1234
    whole = np.arange(-2 * H + phase, 12 * H, H, dtype=np.int64)
    runs, spans = job_tiles.plan(first, last, whole)
    # the first tile inside ends at 1h + phase; the last at 9h + phase
    assert runs == [(H + phase, 9 * H + phase)]
    assert spans == [(0, phase), (9 * H + phase, last)]
    # an evaluation missed at 5h: two runs, the hole read raw
    holed = whole[whole != 5 * H + phase]
    runs, spans = job_tiles.plan(first, last, holed)
    assert runs == [(H + phase, 4 * H + phase), (6 * H + phase, 9 * H + phase)]
    assert spans == [(0, phase), (4 * H + phase, 5 * H + phase), (9 * H + phase, last)]
    # a restart that moved the phase: the overlapping evaluation is skipped and ends the run,
    # and the next run's window does not reach back to it
    moved = np.sort(np.append(whole, 3 * H + phase + 600_000))
    runs, spans = job_tiles.plan(first, last, moved)
    assert runs == [(H + phase, 3 * H + phase), (4 * H + phase, 9 * H + phase)]
    assert spans == [(0, phase), (9 * H + phase, last)]
    for a, b in runs:  # each run's window (a - 1 ms, b] holds its own evaluations only
        inside = moved[(moved > a - 1) & (moved <= b)]
        assert len(inside) == (b - a) // H + 1
    covered = sorted([(a - H, b) for a, b in runs] + spans)
    assert covered[0][0] == first and covered[-1][1] == last
    assert all(x[1] == y[0] for x, y in zip(covered, covered[1:], strict=False))
    # no evaluation at all in the window: the whole window raw
    assert job_tiles.plan(first, last, whole[whole > last]) == ([], [(first, last)])


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """(url, sim) of a VictoriaMetrics with two simulated days and the job tiles group replayed
    from 00:30 of the first day to 12:00 of the second."""
    binary, vmalert = require_binary("victoria-metrics"), require_binary("vmalert")
    root = tmp_path_factory.mktemp("job_tiles")
    sim = two_simulated_days(root / "days.om")
    path = root / "tiles.rules.yml"
    path.write_text(yaml.safe_dump({"groups": [rules.recording_group()]}, sort_keys=False))
    with running_victoria_metrics(binary, root / "data") as url:
        import_openmetrics(url, root / "days.om")
        vmalert_replay(vmalert, path, url, sim.start + pd.Timedelta(minutes=30),
                       sim.end - pd.Timedelta(hours=12), "-datasource.queryStep=0")
        yield url, sim


def _reader(url: str, sim, locate: bool = True) -> Reader:
    api = QueryApi(url, progress=False, max_samples=200_000)
    seen, node_of = prometheus.read_gpus(api, sim.start, sim.end)
    return Reader(api, seen, node_of | dict(zip(seen["instance"], seen["node"], strict=True)),
                  sim.start, sim.end, STEP_S, locate)


def _sums(jobs: pd.DataFrame) -> pd.Series:
    return jobs.groupby(["job", "category"])["gpu_seconds"].sum().sort_index()


def test_the_tiled_read_is_the_counters_own_increase(server):
    url, sim = server
    reader = _reader(url, sim)
    tiled = sparse.read_job_seconds(reader)
    raw = sparse.read_job_seconds(_reader(url, sim, locate=False))
    assert (tiled["node"] == "").all() and (raw["node"] != "").all()
    assert len(raw["job"].unique()) > 3 and raw["gpu_seconds"].sum() > 0
    pd.testing.assert_series_equal(_sums(tiled), _sums(raw), rtol=1e-9)
    asked = [t[0] for t in reader.api.timings]
    assert any(names.JOB_TILE_SECONDS in q for q in asked)  # the tiles were read
    assert any("sum by (job, category)" in q for q in asked)  # and the edges, per job
    # the tiles (hourly, back to back) in one query
    assert sum(names.JOB_TILE_SECONDS in q for q in asked) == 1
    whole = window_ms((sim.end - sim.start).total_seconds())
    # no read of every counter over the window (the day before it is read of the jobs with a
    # counter counted whole only, to find one counted whole after a value there)
    assert not any(f"[{whole}]" in q and job_tiles.COUNTER in q for q in asked)
    assert all('job=~"' in q for q in asked if f"offset {whole}" in q)
    assert any(" unless " in q for q in asked)  # the counters new in a span asked apart


def test_a_raw_span_read_in_three_steps_is_the_expression_over_it(server):
    """`_span` (the counters with a value in the hour before the span summed per job, the
    others and their values in the rest of the hold asked apart) equals the rule's expression
    over the span in one query, on spans where jobs start, stop and come back."""
    url, sim = server
    reader = _reader(url, sim)
    instances = reader.api.label_values("instance", job_tiles.COUNTER, sim.start, sim.end)
    ms = int(sim.start.value // 1_000_000)
    came_back = 0
    for a_h, b_h in ((0, 48), (6, 30), (20, 48), (13, 14)):
        a, b = ms + a_h * H, ms + b_h * H - 1
        reader.api.timings.clear()
        got, _ = job_tiles._span(reader, instances, 100, a, b)
        came_back += sum(',job=~"' in t[0] for t in reader.api.timings)
        want = tidy(reader.api.instant(rules.increase_expr(f"{b - a}ms"),
                                       pd.Timestamp(b, unit="ms", tz="UTC")), "value")
        key = ["job", "category"]
        got, want = (pd.DataFrame({k: label_column(f, k) for k in key}).assign(v=f["value"])
                     .groupby(key)["v"].sum().sort_index() for f in (got, want))
        pd.testing.assert_series_equal(got, want, rtol=1e-9, obj=f"({a_h}h, {b_h}h]")
    assert came_back  # some span held counters new to it, whose values before were asked


def test_the_week_from_the_tiles_is_the_week_from_the_counters(server):
    url, sim = server
    frames = prometheus.load_prometheus(url, sim.start, sim.end, progress=False,
                                        max_samples=200_000)
    bare = prometheus.load_prometheus(url, sim.start, sim.end, progress=False,
                                      max_samples=200_000, locate=False)
    a, b = (compute_week(f, sim.start, sim.end, SloSpec()) for f in (frames, bare))
    assert a.goodput_ratio == pytest.approx(b.goodput_ratio, rel=1e-12)
    assert a.usable_gpu_hours == b.usable_gpu_hours
    columns = sorted(b.jobs.columns)
    pd.testing.assert_frame_equal(a.jobs[columns].sort_index(), b.jobs[columns].sort_index(),
                                  rtol=1e-9)
    # the jobs with a slowdown keep their nodes for the crawl
    slowed = set(frames.slowdowns["job"])
    assert slowed
    named = frames.job_gpu_seconds[frames.job_gpu_seconds["node"] != ""]
    assert slowed <= set(named["job"])


def test_job_nodes_are_added_only_for_jobs_with_a_slowdown(server):
    url, sim = server
    reader = _reader(url, sim)
    jobs = pd.DataFrame({"job": ["j1"], "node": [""], "category": ["productive"],
                         "gpu_seconds": [5.0]})
    assert job_tiles.with_job_nodes(reader, jobs, pd.DataFrame(columns=["job"])) is jobs
    named = jobs.assign(node="n1")  # a job read from its counters keeps its own nodes
    assert job_tiles.with_job_nodes(reader, named, pd.DataFrame({"job": ["j1"]})) is named


# --- a counter silent for longer than the hold inside the window (issue 30) --------------------

SILENT = {  # job → (instance, seen from, silent from, back at, how it comes back), hours from D
    "steady": ("n1:9400", -6, None, None, ""),
    "continued": ("n1:9400", -6, 10, 40, "continued"),  # a partition: it kept running
    "reset": ("n2:9400", -6, 10, 40, "reset"),  # an exporter restart: it starts again at 0
    "across": ("n2:9400", -10, -4, 26, "continued"),  # silent across the window's start
    "late": ("n3:9400", 1, 30, 68, "continued"),  # back in the raw span after the last tile
    "fresh": ("n3:9400", 20, None, None, ""),  # new in the window: counted whole, rightly
}


def _silent_lines(day: pd.Timestamp) -> list[str]:
    """Every 5 minutes from D − 10 h to D + 72 h, one GPU (300 GPU-seconds a sample) per job
    counter of `SILENT`; a continued counter comes back with the value it would have had."""
    lines = []
    for job, (instance, seen, silent, back, how) in SILENT.items():
        labels = f'instance="{instance}",job="{job}",category="{names.CATEGORY_PRODUCTIVE}"'
        for k in range(-10 * 12, 72 * 12):
            hours = k / 12
            if hours < seen or (silent is not None and silent <= hours < back):
                continue
            value = (k - seen * 12 + 1) * 300.0
            if how == "reset" and hours >= back:
                value = (k - back * 12 + 1) * 300.0
            at = int((day + pd.Timedelta(hours=hours)).timestamp())
            lines.append(f"{job_tiles.COUNTER}{{{labels}}} {value} {at}\n")
    return lines


@pytest.fixture(scope="module")
def silent_server(tmp_path_factory):
    """(url, D) of a VictoriaMetrics with the `SILENT` counters, the job tiles group replayed
    hourly from D + 30 min to D + 66 h: the window [D, D + 72 h) ends in a raw span."""
    binary, vmalert = require_binary("victoria-metrics"), require_binary("vmalert")
    root = tmp_path_factory.mktemp("job_tiles_silent")
    day = pd.Timestamp.now(tz="UTC").floor("D") - pd.Timedelta(days=5)
    (root / "silent.om").write_text("".join(_silent_lines(day)))
    path = root / "tiles.rules.yml"
    path.write_text(yaml.safe_dump({"groups": [rules.recording_group()]}, sort_keys=False))
    with running_victoria_metrics(binary, root / "data") as url:
        import_openmetrics(url, root / "silent.om")
        vmalert_replay(vmalert, path, url, day + pd.Timedelta(minutes=30),
                       day + pd.Timedelta(hours=66), "-datasource.queryStep=0")
        yield url, day


def _silent_reader(url: str, day: pd.Timestamp, locate: bool = True) -> Reader:
    api = QueryApi(url, progress=False, max_samples=200_000)
    return Reader(api, pd.DataFrame(columns=["instance"]), {}, day,
                  day + pd.Timedelta(hours=72), STEP_S, locate)


def test_a_counter_silent_for_over_a_day_is_not_counted_twice(silent_server):
    """A counter silent for 30 h that comes back continued (a partition), or across the
    window's start, or in the raw span after the last tile: the tiles count it whole again
    (they over-count by its value before the silence); those jobs are read from the counters,
    so every job's GPU-seconds are the raw read's. The reset counter too is the raw read's (its
    last value minus its value in the day before the window: the raw read's rule)."""
    url, day = silent_server
    reader = _silent_reader(url, day)
    instances = reader.api.label_values("instance", job_tiles.COUNTER, day, reader.end)
    rows, twice = job_tiles.read_tiled(reader, instances)
    assert twice == ["across", "continued", "late", "reset"]
    assert sorted(rows["job"]) == ["fresh", "steady"]
    tiled = sparse.read_job_seconds(_silent_reader(url, day))
    raw = sparse.read_job_seconds(_silent_reader(url, day, locate=False))
    pd.testing.assert_series_equal(_sums(tiled), _sums(raw), rtol=1e-12)
    assert set(tiled.loc[tiled["node"] == "", "job"]) == {"fresh", "steady"}
    # the raw read's own numbers: last − the value before the window (whole when none)
    got = raw.set_index("job")["gpu_seconds"]
    per_hour = 12 * 300.0
    assert got["continued"] == got["steady"] == 72 * per_hour - 300  # its last: D + 71 h 55
    assert got["fresh"] == (72 - 20) * per_hour  # whole: 300 at D + 20 h, its first sample
    # the bug the jobs are read raw for: the tiles alone count the continued counter's value
    # before its silence twice (D + 30 min to D + 65 h 30 min: its tiles)
    alone = tidy(reader.api.instant(
        f'sum_over_time({names.JOB_TILE_SECONDS}{{job="continued"}}[65h])',
        day + pd.Timedelta(hours=65, minutes=30)), "value")["value"].sum()
    before = (10 - (-6)) * per_hour  # its value when it fell silent (its last, at D + 9 h 55)
    gained = 65 * per_hour  # what it gained over the tiles' 65 h (it kept running)
    assert alone == gained + before
