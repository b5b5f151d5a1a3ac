"""Locating from the recording rules' locate series (`gpuslo.slo.sources.located`) names the
cells the raw samples name, and falls back to the raw samples where the rules did not run.

`plan` alone (pure), then a real VictoriaMetrics holding two simulated days of 3 nodes × 4 GPUs
(faults, cordons, no-data gaps) with the locate group replayed by `vmalert` over all but the last
half day: per bucket, the recorded cells hold the raw ones (and only neighbours of them: a
non-healthy sample or a gap within one rule interval of the bucket's edge), the buckets past the
replay are located from the raw samples, and the frames are those of reading every GPU."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import pytest
import yaml
from conftest import (
    assert_same_frames,
    import_openmetrics,
    require_binary,
    running_victoria_metrics,
    vmalert_replay,
)

from gpuslo import names
from gpuslo.alerts import locate
from gpuslo.slo.simulate import faults
from gpuslo.slo.simulate.fleet import simulate
from gpuslo.slo.simulate.openmetrics import write_openmetrics
from gpuslo.slo.sources import located, prometheus
from gpuslo.slo.sources.query_api import QueryApi
from gpuslo.slo.sources.sparse_reader import BUCKET_S, Reader, _runs, buckets

STEP_S = 300
T0 = pd.Timestamp("2026-01-05", tz="UTC")
W = names.LOCATE_INTERVAL_S * 1000


def _evaluations(first: pd.Timestamp, last: pd.Timestamp, phase_ms: int = 0) -> np.ndarray:
    ms = int(first.value // 1_000_000) + phase_ms
    return np.arange(ms, int(last.value // 1_000_000) + 1, W, dtype=np.int64)


def test_every_bucket_the_evaluations_tile_is_planned_and_no_other():
    spans = buckets(T0, T0 + pd.Timedelta(days=1), STEP_S)
    assert len(spans) == 4
    whole = _evaluations(T0 - pd.Timedelta(hours=1), T0 + pd.Timedelta(days=1, hours=1), 1234)
    done, left = located.plan(spans, STEP_S, whole)
    assert [t.first for t in done] == [s[0] for s in spans] and left == []
    for tile in done:  # the query's window holds exactly the bucket's evaluations
        ms = int(tile.at.value // 1_000_000)
        inside = whole[(whole > ms - tile.window_ms) & (whole <= ms)]
        assert len(inside) == tile.count == BUCKET_S * 1000 // W + 1
        # tiles reach past the bucket's samples by less than one interval on each side
        first_ms, last_ms = (int(x.value // 1_000_000) for x in (tile.first, tile.last))
        ends = inside - names.LOCATE_OFFSET_S * 1000
        assert ends[0] - W < first_ms - STEP_S * 1000 + 2 and ends[-1] < last_ms + W
    # one evaluation missed in the second bucket, none after 18:05 (the fourth bucket's)
    ms = whole - int(T0.value // 1_000_000)
    holed = whole[(ms != 9 * 3_600_000 + 1234) & (ms < (18 * 60 + 5) * 60_000)]
    done, left = located.plan(spans, STEP_S, holed)
    assert [t.first for t in done] == [spans[0][0], spans[2][0]]
    assert left == [spans[1], spans[3]]
    # evaluations closer than the interval (two phases: a restart) are not a tiling
    done, left = located.plan(spans, STEP_S, np.union1d(whole, whole[::7] + 1000))
    assert left == spans


def test_buckets_back_to_back_share_one_query():
    spans = buckets(T0, T0 + pd.Timedelta(days=1, hours=1), STEP_S)  # the last one an hour
    assert [len(run) for run in _runs(spans)] == [4, 1]
    assert [len(run) for run in _runs(spans[:1] + spans[2:])] == [1, 2, 1]
    whole = _evaluations(T0 - pd.Timedelta(hours=1), T0 + pd.Timedelta(days=1, hours=2), 1234)
    done, left = located.plan(spans, STEP_S, whole)
    assert not left and located.runs(done, 1000) == [[0, 1, 2, 3], [4]]
    assert located.runs(done, 3) == [[0, 1, 2], [3], [4]]


def test_the_locate_rules_tile_time_and_count_per_instance():
    group = locate.recording_group()
    assert group["interval"] == "5m"
    exprs = {rule["record"]: rule["expr"] for rule in group["rules"]}
    assert exprs[names.LOCATE_EVALUATIONS] == "vector(1)"
    assert "[5m] offset 1m" in exprs[names.LOCATE_NOT_HEALTHY]
    assert "[299999ms] offset 1m" in exprs[names.LOCATE_USABLE_SAMPLES]
    assert all(expr.startswith(("max by (instance)", "sum by (instance)", "vector"))
               for expr in exprs.values())


def two_simulated_days(openmetrics: Path):
    """The simulation of 3 nodes x 4 GPUs over two days ending two days ago (seed 5, 600
    interruptions per 1,000 GPU-days), written to `openmetrics` every `STEP_S`; also the data of
    tests/slo/test_job_tiles.py."""
    start = pd.Timestamp.now(tz="UTC").floor("D") - pd.Timedelta(days=4)
    fleet = faults.Fleet(nodes=3, gpus_per_node=4, days=2, interruptions_per_1000_gpu_days=600)
    sim = simulate(fleet, seed=5, start=start)
    with open(openmetrics, "w") as handle:
        write_openmetrics(sim, STEP_S, handle.write)
    return sim


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """(url, sim, replay end) of a VictoriaMetrics with two simulated days and the locate group
    replayed up to half a day before their end."""
    binary, vmalert = require_binary("victoria-metrics"), require_binary("vmalert")
    root = tmp_path_factory.mktemp("located")
    sim = two_simulated_days(root / "days.om")
    rules = root / "locate.rules.yml"
    rules.write_text(yaml.safe_dump({"groups": [locate.recording_group()]}, sort_keys=False))
    replayed = sim.end - pd.Timedelta(hours=12)
    with running_victoria_metrics(binary, root / "data") as url:
        import_openmetrics(url, root / "days.om")
        vmalert_replay(vmalert, rules, url, sim.start, replayed)
        yield url, sim, replayed


def _reader(url: str, sim) -> Reader:
    api = QueryApi(url, progress=False, max_samples=200_000)
    seen, node_of = prometheus.read_gpus(api, sim.start, sim.end)
    return Reader(api, seen, node_of | dict(zip(seen["instance"], seen["node"], strict=True)),
                  sim.start, sim.end, STEP_S)


def _by_bucket(cells) -> dict:
    return {cell.start: set(cell.instances) for cell in cells}


def test_recorded_cells_are_the_raw_ones_and_unreplayed_buckets_fall_back(server):
    url, sim, replayed = server
    reader = _reader(url, sim)
    recorded = located.recorded_cells(reader)
    assert set(recorded) == {"coverage", "non_healthy"}
    spans = buckets(sim.start, sim.end, STEP_S)
    for read, (_, left) in recorded.items():
        # the buckets past the replay are left (vmalert evaluated at its end, 12:00, whose tile
        # reaches the last step of the bucket that ends there); for coverage also the first
        # bucket: its first tile reaches before the data's first sample, so the recorded counts
        # name every instance there and the raw locate (exact, one answer per instance) does it
        wide = [spans[0]] if read == "coverage" else []
        assert left == wide + [s for s in spans if s[0] >= replayed]
        assert 0 < len(left) < len(spans)
        probe = _probe_of(read, reader)
        reader.recorded = {}
        bare = _by_bucket(reader.locate(**probe))
        reader.recorded = recorded
        reader.api.timings.clear()
        both = _by_bucket(reader.locate(**probe, recorded=read))
        # the raw probe ran over the buckets left only: one query per run of buckets back to
        # back (for coverage the first bucket apart)
        raw = [t for t in reader.api.timings if "max_over_time(gpuslo_gpu_verdict" in t[0]
               or "count_over_time(gpuslo_gpu_usable" in t[0]]
        assert len(raw) == len(_runs(left)) == 1 + (read == "coverage"), read
        assert any(bare.values()), read  # the days hold something to locate
        for first, last in spans:
            got, want = both.get(first, set()), bare.get(first, set())
            if (first, last) in left:
                assert got == want, (read, first)
                continue
            assert got >= want, (read, first)
            # more only where the raw locate names it in a neighbouring bucket (a sample within
            # one rule interval of the edge)
            near = bare.get(first - pd.Timedelta(seconds=BUCKET_S), set()) | bare.get(last, set())
            assert got - want <= near, (read, first)
        assert sum(len(v) for v in both.values()) < len(spans) * len(reader.instances)


def _probe_of(read: str, reader: Reader) -> dict:
    """`Reader.locate`'s arguments for the raw locate of `read`, as `gpuslo.slo.sources.sparse`
    asks it."""
    if read == "coverage":
        return {"probe": lambda m, window, steps: (
            f"count by (instance) (count_over_time(gpuslo_gpu_usable{{{m}}}[{window}])"
            f" == {steps})"), "desc": "coverage gaps", "expect": reader.gpus_of}
    selector = 'gpuslo_gpu_verdict{verdict!="healthy",%s}'
    return {"probe": lambda m, window, _: (
        f"max by (instance) (max_over_time({selector % m}[{window}])) == 1"),
        "desc": "locate non-healthy verdicts", "per_instance": reader.per_instance * 2}


def test_the_frames_are_those_of_reading_every_gpu(server):
    url, sim, _ = server
    frames = prometheus.load_prometheus(url, sim.start, sim.end, progress=False,
                                        max_samples=200_000)
    assert_same_frames(frames, prometheus.load_prometheus(
        url, sim.start, sim.end, progress=False, max_samples=200_000, locate=False))
