"""The Prometheus source: query planning under a sample budget, retries, and a real Prometheus
over backfilled simulated data — with a sample limit far below the data, and with the
`gpuslo_gpu_problem` family missing (reasons then come from the check heartbeats)."""

from __future__ import annotations

import http.server
import json
import threading

import pandas as pd
import pytest
from conftest import (
    assert_same_frames,
    backfill,
    free_port,
    require_binary,
    running_prometheus,
)

from gpuslo.errors import InputError
from gpuslo.slo.engine import compute_week
from gpuslo.slo.frames import Frames
from gpuslo.slo.simulate import faults
from gpuslo.slo.simulate.fleet import simulate
from gpuslo.slo.simulate.openmetrics import write_openmetrics
from gpuslo.slo.sources.prometheus import load_prometheus, samples_to_intervals
from gpuslo.slo.sources.query_api import (
    MAX_MATCHER_BYTES,
    MAX_POINTS,
    QueryApi,
    alternation,
    groups,
    plan,
)
from gpuslo.slo.sources.sparse_reader import MAX_BUCKETS, Reader, buckets, coalesce
from gpuslo.slo_spec import SloSpec

START = pd.Timestamp("2026-11-23", tz="UTC")
STEP_S = 60


def test_samples_merge_into_intervals():
    t = [START + pd.Timedelta(seconds=s) for s in (0, 60, 120, 240, 300)]
    samples = pd.DataFrame({"uuid": ["a", "a", "a", "a", "b"], "time": t})
    out = samples_to_intervals(samples, ["uuid"], STEP_S)
    # a: 0–180 s and 240–300 s; b: 300–360 s (each sample stands for one step)
    assert [
        (r.uuid, (r.start - START).seconds, (r.end - START).seconds) for r in out.itertuples()
    ] == [("a", 0, 180), ("a", 240, 300), ("b", 300, 360)]


@pytest.mark.parametrize("instances, per_instance, budget", [
    (1250, 8, 10_000_000),  # 10k GPUs, a week at 300 s: shards by instance, no time split
    (12_500, 8, 10_000_000),  # 100k GPUs
    (3, 512, 1_000_000),  # huge nodes: one instance alone is too big, split by time
])
def test_plan_keeps_every_piece_under_the_budget_and_covers_every_step(
        instances, per_instance, budget):
    names_ = [f"node-{i:05d}" for i in range(instances)]
    end = START + pd.Timedelta(days=7)
    pieces = plan(names_, per_instance, 2, START, end, 300, budget)
    steps = {}
    for p in pieces:
        n = int((p.end - p.start).total_seconds() // 300) + 1
        assert len(p.instances) * per_instance * 2 * n <= budget and n <= MAX_POINTS
        # VictoriaMetrics refuses queries over 16,384 bytes; a query repeats the matcher ≤ 4×
        assert len(alternation(list(p.instances))) <= MAX_MATCHER_BYTES
        for i in p.instances:
            steps[i] = steps.get(i, 0) + n
    assert steps == dict.fromkeys(names_, 2016)
    if instances == 1250:
        # the sample budget allows 310 instances a shard; the matcher's bytes allow 230
        assert max(len(p.instances) for p in pieces) == 230 and len(pieces) == 6


def test_a_5xx_is_retried_and_a_refused_query_is_not(monkeypatch):
    """503 twice then success: one answer after three requests; a 422 (the server refused the
    query) is an InputError naming it at once."""
    seen = []

    class Handler(http.server.BaseHTTPRequestHandler):
        def do_POST(self):  # noqa: N802
            seen.append(self.path)
            self.rfile.read(int(self.headers["Content-Length"]))
            refused = "refused" in self.path or len(seen) > 3
            code = 422 if refused else (503 if len(seen) < 3 else 200)
            body = {"status": "error", "errorType": "execution", "error": "too many samples"} \
                if code != 200 else {"status": "success", "data": {"resultType": "vector",
                                                                   "result": []}}
            self.send_response(code)
            self.send_header("Content-Type", "application/json")
            self.end_headers()
            self.wfile.write(json.dumps(body).encode())

        def log_message(self, *args):
            pass

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    try:
        api = QueryApi(f"http://127.0.0.1:{server.server_port}", retries=3)
        assert api.instant("up", START) == [] and len(seen) == 3
        with pytest.raises(InputError, match="too many samples"):
            api.instant("up", START)
        assert len(seen) == 4
    finally:
        server.shutdown()


def test_unreachable_api_is_an_input_error():
    port = free_port()
    with pytest.raises(InputError, match="failed"):
        load_prometheus(f"http://127.0.0.1:{port}", START, START + pd.Timedelta(hours=1),
                        retries=0)


@pytest.fixture(scope="module")
def backfilled(tmp_path_factory):
    """Two simulated days (4 nodes × 4 GPUs, faults at 400 per 1000 GPU-days; seed 22 has
    unhealthy, unknown (three reasons) and no-data time and drains) at 60 s, backfilled twice
    into Prometheus: as simulated, and without the gpuslo_gpu_problem family. Both servers
    refuse any query that loads more than 20,000 samples — the data holds millions."""
    promtool, prometheus = require_binary("promtool"), require_binary("prometheus")
    root = tmp_path_factory.mktemp("prom")
    fleet = faults.Fleet(nodes=4, gpus_per_node=4, days=2, interruptions_per_1000_gpu_days=400)
    sim = simulate(fleet, seed=22, start=START)
    with open(root / "fleet.om", "w") as handle:
        write_openmetrics(sim, STEP_S, handle.write)
    text = (root / "fleet.om").read_text()
    kept = [line for line in text.splitlines(keepends=True) if "gpuslo_gpu_problem" not in line]
    (root / "bare.om").write_text("".join(kept))
    (root / "prometheus.yml").write_text("global: {}\n")
    flags = ("--storage.tsdb.retention.time=100y", "--query.max-samples=20000")
    urls = {}
    with __import__("contextlib").ExitStack() as stack:
        for name in ("fleet", "bare"):
            backfill(promtool, root / f"{name}.om", root / name, "--max-block-duration=24h")
            urls[name] = stack.enter_context(
                running_prometheus(prometheus, root / "prometheus.yml", root / name, *flags))
        yield sim, urls


def test_engine_on_prometheus_agrees_with_the_engine_on_the_simulation(backfilled):
    sim, urls = backfilled
    frames = load_prometheus(urls["fleet"], sim.start, sim.end, progress=False,
                             max_samples=15_000)
    assert frames.source.endswith("(step 60 s)")  # measured from the data
    got = compute_week(frames, sim.start, sim.end, SloSpec())
    want = compute_week(Frames(**sim.frames), sim.start, sim.end, SloSpec())
    assert got.gpus == want.gpus == 16
    assert want.lost_gpu_hours_by_layer["node"] > 1 and want.data_quality["no_data_gpu_hours"] > 0
    assert want.categories["unschedulable"] > 1
    assert got.usable_gpu_hours == pytest.approx(want.usable_gpu_hours, rel=2e-3)
    assert got.categories["unschedulable"] == pytest.approx(want.categories["unschedulable"],
                                                            rel=0.02)
    # each interval edge moves to the 60 s grid: at most 60 s per edge per GPU
    got_blind, want_blind = (w.data_quality["blind_gpu_hours_by_reason"] for w in (got, want))
    assert set(got_blind) == set(want_blind)
    for reason, hours in want_blind.items():
        assert got_blind[reason] == pytest.approx(hours, rel=0.05, abs=0.1), reason
    assert "problem_reasons" not in got.data_quality["cannot_fill"]
    assert got.goodput_ratio == pytest.approx(want.goodput_ratio, abs=1e-3)


def test_without_problem_series_unknown_time_keeps_its_reasons(backfilled):
    """No gpuslo_gpu_problem at all (an exporter that does not expose it): check timeouts and
    missing dependencies still read as such from the check error counters, a stopped check as
    stale_data; unhealthy time falls back to probe_failed; the data quality says so."""
    sim, urls = backfilled
    frames = load_prometheus(urls["bare"], sim.start, sim.end, progress=False,
                             max_samples=15_000)
    got = compute_week(frames, sim.start, sim.end, SloSpec())
    want = compute_week(Frames(**sim.frames), sim.start, sim.end, SloSpec())
    got_blind, want_blind = (w.data_quality["blind_gpu_hours_by_reason"] for w in (got, want))
    unknown = {"check_timeout", "dependency_missing", "stale_data"} & set(want_blind)
    assert len(unknown) >= 2
    for reason in unknown:
        assert got_blind.get(reason, 0.0) == pytest.approx(want_blind[reason], rel=0.05,
                                                           abs=0.1), reason
    assert "no gpuslo_gpu_problem" in got.data_quality["cannot_fill"]["problem_reasons"]


@pytest.mark.parametrize("hours,step_s,bucket_s", [(168, 300, 21600), (48, 60, 21600),
                                                    (1, 60, 21600), (24 * 90, 30, 3600),
                                                    (7, 3600, 21600)])
def test_buckets_cover_the_window_in_whole_steps(hours, step_s, bucket_s):
    end = START + pd.Timedelta(hours=hours)
    spans = buckets(START, end, step_s, bucket_s)
    assert spans[0][0] == START and spans[-1][1] == end and len(spans) <= MAX_BUCKETS
    for (a, b), (c, _) in zip(spans, spans[1:], strict=False):
        assert b == c and (b - a).total_seconds() % step_s == 0


def test_coalesced_cells_cover_their_parts_and_merge_only_where_requests_cost_more():
    """Cells close in time merge (one request instead of several, a few more samples); a
    bucket of many instances stays apart from its neighbours (merging it would read them over
    more steps than the requests it saves), and no merged span exceeds the budget."""
    hour = pd.Timedelta(hours=6)
    few = [((f"n{i}",), START + i * hour, START + (i + 1) * hour) for i in range(8)]
    many = (tuple(f"m{i:04d}" for i in range(1000)), START + 8 * hour, START + 9 * hour)
    spans = [*few[4:], many, *few[:4]]  # out of order
    unit = 16  # GPUs × terms
    out = coalesce(spans, unit, 300, 10_000_000, per_request=100_000)
    assert out[0] == (tuple(f"n{i}" for i in range(8)), START, START + 8 * hour)
    assert out[1:] == [many]
    for instances, start, end in spans:  # every part's instance and step is read
        assert any(set(instances) <= set(i) and a <= start and end <= b for i, a, b in out)
    # nothing to save per request: only spans that cost nothing more merge (none here)
    assert coalesce(spans, unit, 300, 10_000_000, per_request=0) == sorted(
        spans, key=lambda span: span[1])
    # a budget below two buckets' samples keeps them apart
    assert len(coalesce(few, unit, 300, 72 * unit, per_request=100_000)) == 8


@pytest.mark.parametrize("name", ["fleet", "bare"])
def test_locating_first_reads_the_same_frames_as_reading_every_gpu(backfilled, name):
    """The located reads (a few instances and buckets) give exactly the frames of reading
    every GPU at every step — gaps, verdicts, reasons (from the problems or, bare, from the
    check error counters), cordons."""
    sim, urls = backfilled
    assert_same_frames(*(load_prometheus(urls[name], sim.start, sim.end, progress=False,
                                         max_samples=15_000, locate=flag)
                         for flag in (True, False)))


def test_locating_holds_for_a_window_off_the_millisecond(backfilled):
    """A window whose edges are not whole milliseconds (a start computed from a float) still
    finds its non-healthy cells: the answers carry whole-millisecond times."""
    sim, urls = backfilled
    start = sim.start + pd.Timedelta(hours=6, nanoseconds=980_000_019)
    end = start + pd.Timedelta(hours=12)
    located, everything = (load_prometheus(urls["fleet"], start, end, progress=False,
                                           max_samples=15_000, locate=flag)
                           for flag in (True, False))
    assert (everything.verdicts["verdict"] != "healthy").any()
    assert_same_frames(located, everything)


def test_locating_skips_the_cells_with_nothing_to_read(backfilled):
    """On two simulated days of 4 nodes, the non-healthy verdicts sit in a minority of the
    (instance, 6 h bucket) cells: only those are read per step."""
    sim, urls = backfilled
    api = QueryApi(urls["fleet"], progress=False, max_samples=15_000)
    seen = api.label_values("instance", "gpuslo_gpu_usable", sim.start, sim.end)
    gpus = pd.DataFrame({"instance": seen})
    reader = Reader(api, gpus, {i: i for i in seen}, sim.start, sim.end, STEP_S)
    selector = 'gpuslo_gpu_verdict{verdict!="healthy",%s}'
    cells = reader.locate(
        lambda m, window, _: f"max by (instance) (max_over_time({selector % m}[{window}])) == 1",
        "locate")
    read = sum(len(c.instances) for c in cells)
    assert 0 < read < len(seen) * len(buckets(sim.start, sim.end, STEP_S)) / 2


def test_groups_keep_order_count_and_matcher_bytes():
    values = [f"gpu-node-{i:05d}.example" for i in range(3000)] + ["x" * 5000]
    got = groups(values, 400)
    assert [v for g in got for v in g] == values
    assert all(len(g) <= 400 for g in got)
    assert all(len(alternation(g)) <= MAX_MATCHER_BYTES for g in got if len(g) > 1)
    assert got[-1] == ["x" * 5000]  # longer than the limit alone: a group of its own
