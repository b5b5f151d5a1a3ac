"""The SLO engine's weekly computation at fleet scale, beside Prometheus as the anchor.

    python bench/slo_engine.py [--gpus 10000] [--large 100000] [--anchor-gpus 1000] [--skip-large]
                               [--skip-anchor] [--previous main]

1. Engine: `gpuslo simulate`'s fleet (8 GPUs per node, 7 days, seed 1) → `compute_week` in a
   child process each for `--gpus` and `--large` GPUs; prints wall and CPU time (user + system)
   of the computation and its memory: the RSS before it (the input frames, live, once the rest
   of the simulation is freed: 2.0 GB at 100k GPUs), the peak RSS while it runs (input
   included: the simulation's own peak is reset first, /proc/self/clear_refs, and printed
   apart) and their difference, the engine's own memory. The same children run the previous
   implementation beside it (`--previous`, a git ref: its `gpuslo/` is extracted with
   `git archive` and put first on PYTHONPATH), and the ratios are printed, with a check that
   both give the same 50 figures (capacity ticks, badput, job and lost GPU-hours by
   category/layer, the crawl's slowdown, counts of jobs, interruptions, slowdowns and scored
   nodes, the sums of the node scores and compute times, usable GPU-hours, goodput: counts
   equal, the rest within 1e-9 relative). Targets: 10,000 GPUs < 10 s, < 2 GB (issue 5);
   100,000 GPUs < 20 s, < 3 GB (issue 13).
2. Anchor, same run: `--anchor-gpus` GPUs for the same week: `gpuslo_gpu_usable` every 30 s
   written as OpenMetrics (from the same simulated verdicts), backfilled with
   `promtool tsdb create-blocks-from openmetrics`, served by a Prometheus on loopback; the
   weekly usable GPU-hours by PromQL (`sum(sum_over_time(gpuslo_gpu_usable[7d])) * 30 / 3600`)
   is timed against the engine's `compute_week` for the same GPUs, and the two answers compared.
   Prints the ratio of the two times (engine / Prometheus query; backfill time shown apart).

Latest, 2026-12-02 02:13 UTC (4b66c70, `--skip-anchor --previous 646f26e`, 2-core, 23 GB
machine): 100,000 GPUs (10.2 M job events) compute_week 8.25 s, peak RSS 2,795 MB (input
2,025 MB); 10,000 GPUs 0.82 s, 385 MB; the anchor (2026-11-30, 1,000 GPUs): PromQL 1.10 s
against the engine's 0.107 s (ratio 0.10), the same weekly usable GPU-hours within 1.5e-6.
Every earlier figure and what changed: bench/HISTORY.md, "slo_engine.py".
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import resource
import shutil
import socket
import subprocess
import sys
import tempfile
import time
from pathlib import Path

START = "2026-11-23T00:00:00Z"
STEP_S = 30


def _child(gpus: int, out: str) -> None:
    """Simulate and compute one week in this (child) process; write timings as JSON to `out`."""
    import pandas as pd

    from gpuslo.slo.engine import compute_week
    from gpuslo.slo.frames import Frames
    from gpuslo.slo.simulate import faults
    from gpuslo.slo.simulate.fleet import simulate
    from gpuslo.slo_spec import SloSpec

    t0 = time.perf_counter()
    sim = simulate(
        faults.Fleet(nodes=gpus // 8, gpus_per_node=8, days=7), seed=1, start=pd.Timestamp(START)
    )
    t1 = time.perf_counter()
    frames, start, end = Frames(**sim.frames), sim.start, sim.end
    del sim  # what is left of the simulation is its input frames
    gc.collect()
    memory = _Memory()
    before = resource.getrusage(resource.RUSAGE_SELF)
    t2 = time.perf_counter()
    result = compute_week(frames, start, end, SloSpec())
    t3 = time.perf_counter()
    after = resource.getrusage(resource.RUSAGE_SELF)
    Path(out).write_text(
        json.dumps(
            {
                "gpus": gpus,
                "simulate_s": t1 - t0,
                "engine_s": t3 - t2,
                "engine_cpu_s": after.ru_utime + after.ru_stime - before.ru_utime
                - before.ru_stime,
                "rss_before_mb": memory.before_mb,
                "goodput_ratio": result.goodput_ratio,
                "peak_rss_mb": memory.peak_mb(),
                "simulate_peak_rss_mb": memory.simulate_peak_mb,
                "usable_gpu_hours": result.usable_gpu_hours,
                "job_events": len(frames.job_events),
                "usable_ratio": result.usable_ratio,
                "answers": _answers(result),
            }
        )
    )


class _Memory:
    """RSS around compute_week: before_mb (the input frames, live, after a collection) and
    peak_mb() (the highest RSS since, input included), from /proc/self/status — the peak is
    reset first (`clear_refs` 5, Linux >= 4.0), so the simulation's own peak does not count.
    Where that is refused, getrusage's peak since the process started is all there is."""

    def __init__(self) -> None:
        self.simulate_peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
        self.before_mb = self._status("VmRSS") or self.simulate_peak_mb
        try:
            Path("/proc/self/clear_refs").write_text("5")
            self.reset = True
        except OSError:
            self.reset = False

    def peak_mb(self) -> float:
        high = self._status("VmHWM") if self.reset else None
        return high or resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024

    @staticmethod
    def _status(field: str) -> float | None:
        try:
            for line in Path("/proc/self/status").read_text().splitlines():
                if line.startswith(field + ":"):
                    return int(line.split()[1]) / 1024  # kB
        except OSError:
            return None
        return None


def _answers(result) -> dict:  # noqa: ANN001
    """The figures compared with the previous implementation: every capacity category (ticks),
    badput and job GPU-hours by category, lost GPU-hours by layer, the crawl's slowdown
    GPU-hours, the number of jobs, interruptions, slowdowns and scored (job, node) pairs, the
    sums of their scores and median compute times, usable GPU-hours and goodput."""
    crawl = result.crawl_dict()
    return {
        **{f"ticks.{k}": v for k, v in result.category_ticks.items()},
        **{f"badput.{k}": v for k, v in result.badput_gpu_hours_by_category.items()},
        **{f"job.{k}": v for k, v in result.job_gpu_hours_by_category.items()},
        **{f"lost.{k}": v for k, v in result.lost_gpu_hours_by_layer.items()},
        "crawl.slowdown_gpu_hours": crawl["slowdown_gpu_hours"],
        "crawl.rows": len(result.crawl),
        "node_scores.rows": len(result.node_scores),
        "node_scores.score_sum": float(result.node_scores["score"].sum()),
        "node_scores.compute_s_sum": float(result.node_scores["compute_s"].sum()),
        "jobs": len(result.jobs),
        "interruptions": len(result.interruptions),
        "usable_gpu_hours": result.usable_gpu_hours,
        "goodput_ratio": result.goodput_ratio,
    }


def compare(this: dict, previous: dict) -> tuple[bool, float, str]:
    """(same answers, largest relative difference, its figure): counts (jobs, interruptions,
    slowdown rows, node score rows) equal, every other figure within 1e-9 relative — the batch
    forms add in another order than the fold, and a capacity category in ticks is the floor of
    such a sum."""
    worst, where = 0.0, ""
    if this.keys() != previous.keys():
        return False, float("inf"), "the figures' names"
    for key, a in this.items():
        b = previous[key]
        if key in ("jobs", "interruptions", "crawl.rows", "node_scores.rows"):
            if a != b:
                return False, float("inf"), key
        elif a != b:
            diff = abs(a - b) / max(abs(a), abs(b))
            worst, where = max((worst, where), (diff, key))
    return worst <= 1e-9, worst, where


def engine_run(gpus: int, pythonpath: str | None = None) -> dict:
    """Run `_child` in a fresh interpreter (clean peak RSS), with `pythonpath` first on the path
    when given (the previous implementation); returns its figures."""
    env = dict(os.environ, PYTHONPATH=pythonpath) if pythonpath else None
    with tempfile.NamedTemporaryFile(suffix=".json") as handle:
        subprocess.run(
            [sys.executable, __file__, "--child", str(gpus), handle.name], check=True, env=env
        )
        return json.loads(Path(handle.name).read_text())


def previous_tree(ref: str) -> str:
    """A temporary directory holding `gpuslo/` as of git `ref` (the anchor implementation)."""
    root = tempfile.mkdtemp(prefix="gpuslo-previous-")
    repo = Path(__file__).resolve().parent.parent
    archive = subprocess.run(
        ["git", "-C", str(repo), "archive", ref, "gpuslo"], check=True, capture_output=True
    ).stdout
    subprocess.run(["tar", "-x", "-C", root], input=archive, check=True)
    return root


def _usable_openmetrics(path: Path, gpus: int) -> tuple[float, object]:
    """Write gpuslo_gpu_usable every 30 s for the simulated fleet; returns (engine seconds,
    result)."""
    import numpy as np
    import pandas as pd

    from gpuslo.slo.engine import compute_week
    from gpuslo.slo.frames import Frames
    from gpuslo.slo.simulate import faults, openmetrics
    from gpuslo.slo.simulate.fleet import simulate
    from gpuslo.slo_spec import SloSpec

    sim = simulate(
        faults.Fleet(nodes=gpus // 8, gpus_per_node=8, days=7), seed=1, start=pd.Timestamp(START)
    )
    inv, verdicts = sim.frames["inventory"], sim.frames["verdicts"]
    t0 = time.perf_counter()
    result = compute_week(Frames(inventory=inv, verdicts=verdicts), sim.start, sim.end, SloSpec())
    engine_s = time.perf_counter() - t0
    times_s = np.arange(0, int((sim.end - sim.start).total_seconds()), STEP_S, dtype=np.int64)
    uuids = pd.Index(inv["uuid"])
    states = openmetrics.state_matrix(openmetrics.per_gpu(verdicts, inv), uuids, sim.start, times_s)
    stamps = (int(sim.start.timestamp()) + times_s).astype(str)
    with open(path, "w") as out:
        out.write("# TYPE gpuslo_gpu_usable gauge\n")
        for row, (node, uuid, gpu) in enumerate(
            zip(inv["node"], inv["uuid"], inv["gpu"], strict=True)
        ):
            present = states[row] > 0
            value = np.where(states[row][present] == 1, "1", "0")
            prefix = f'gpuslo_gpu_usable{{instance="{node}",gpu="{gpu}",uuid="{uuid}"}} '
            out.write(
                "".join(
                    prefix + v + " " + s + "\n" for v, s in zip(value, stamps[present], strict=True)
                )
            )
        out.write("# EOF\n")
    return engine_s, result


def _free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def anchor_run(gpus: int) -> dict:
    """Backfill `gpus` GPUs' week into Prometheus and time PromQL against the engine."""
    import requests

    root = Path(tempfile.mkdtemp(prefix="gpuslo-bench-"))
    try:
        engine_s, result = _usable_openmetrics(root / "usable.om", gpus)
        t0 = time.perf_counter()
        subprocess.run(
            [
                "promtool",
                "tsdb",
                "create-blocks-from",
                "openmetrics",
                "-q",
                str(root / "usable.om"),
                str(root / "data"),
            ],
            check=True,
            capture_output=True,
        )
        backfill_s = time.perf_counter() - t0
        (root / "prometheus.yml").write_text("global: {}\n")
        port = _free_port()
        proc = subprocess.Popen(
            [
                "prometheus",
                f"--config.file={root / 'prometheus.yml'}",
                f"--storage.tsdb.path={root / 'data'}",
                f"--web.listen-address=127.0.0.1:{port}",
                "--storage.tsdb.retention.time=100y",
            ],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        try:
            url = f"http://127.0.0.1:{port}"
            _wait_ready(requests, url)
            end = result.end.value / 1e9 - 1
            query = f"sum(sum_over_time(gpuslo_gpu_usable[7d])) * {STEP_S} / 3600"
            times, value = [], None
            for _ in range(3):
                t0 = time.perf_counter()
                body = requests.get(
                    f"{url}/api/v1/query", params={"query": query, "time": end}, timeout=600
                ).json()
                times.append(time.perf_counter() - t0)
                value = float(body["data"]["result"][0]["value"][1])
        finally:
            proc.terminate()
            proc.wait(timeout=60)
        return {
            "gpus": gpus,
            "backfill_s": backfill_s,
            "promql_s": min(times),
            "promql_first_s": times[0],
            "promql_usable_gpu_hours": value,
            "engine_s": engine_s,
            "engine_usable_gpu_hours": result.usable_gpu_hours,
        }
    finally:
        shutil.rmtree(root, ignore_errors=True)


def _wait_ready(requests, url: str) -> None:  # noqa: ANN001
    for _ in range(600):
        try:
            if requests.get(f"{url}/-/ready", timeout=1).status_code == 200:
                return
        except requests.ConnectionError:
            pass
        time.sleep(0.1)
    raise SystemExit("prometheus did not become ready")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpus", type=int, default=10_000)
    parser.add_argument("--large", type=int, default=100_000)
    parser.add_argument("--anchor-gpus", type=int, default=1_000)
    parser.add_argument("--skip-large", action="store_true")
    parser.add_argument("--skip-anchor", action="store_true")
    parser.add_argument(
        "--previous",
        default="main",
        help="git ref of the implementation to measure beside (default main)",
    )
    parser.add_argument("--child", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.child:
        _child(int(args.child[0]), args.child[1])
        return 0
    sizes = [args.gpus] + ([] if args.skip_large else [args.large])
    previous = previous_tree(args.previous)
    try:
        for gpus in sizes:
            r, p = engine_run(gpus), engine_run(gpus, previous)
            print(f"load average before: {os.getloadavg()[0]:.1f}")
            for label, x in (("this", r), (args.previous, p)):
                own = x["peak_rss_mb"] - x["rss_before_mb"]
                print(
                    f"engine {x['gpus']:>7} GPUs, 7 days ({label}): compute_week "
                    f"{x['engine_s']:.2f} s (CPU {x['engine_cpu_s']:.2f} s), peak RSS "
                    f"{x['peak_rss_mb']:.0f} MB, before compute_week {x['rss_before_mb']:.0f} "
                    f"MB, compute_week's own (peak - before) {own:.0f} MB; simulate "
                    f"{x['simulate_s']:.2f} s (its peak RSS "
                    f"{x.get('simulate_peak_rss_mb', float('nan')):.0f} MB), "
                    f"{x['job_events']} job events, usable ratio "
                    f"{x['usable_ratio']:.6f}, goodput {x['goodput_ratio']:.6f}"
                )
            same, worst, where = compare(r["answers"], p["answers"])
            own = (r["peak_rss_mb"] - r["rss_before_mb"]) / (p["peak_rss_mb"] - p["rss_before_mb"])
            print(
                f"  ratio this / {args.previous}: time {r['engine_s'] / p['engine_s']:.2f} "
                f"(CPU {r['engine_cpu_s'] / p['engine_cpu_s']:.2f}), peak RSS "
                f"{r['peak_rss_mb'] / p['peak_rss_mb']:.2f}, own memory {own:.2f}; same answers "
                f"({len(r['answers'])} figures): {same} (largest relative difference "
                f"{worst:.1e}, {where or 'none'}); load average after: {os.getloadavg()[0]:.1f}"
            )
    finally:
        shutil.rmtree(previous, ignore_errors=True)
    if not args.skip_anchor:
        a = anchor_run(args.anchor_gpus)
        print(
            f"anchor {a['gpus']:>7} GPUs, 7 days at {STEP_S} s: promtool backfill "
            f"{a['backfill_s']:.1f} s; PromQL weekly usable GPU-hours {a['promql_s']:.3f} s "
            f"(first {a['promql_first_s']:.3f} s) = {a['promql_usable_gpu_hours']:.2f}; engine "
            f"{a['engine_s']:.3f} s = {a['engine_usable_gpu_hours']:.2f}"
        )
        print(
            f"ratio engine / PromQL time: {a['engine_s'] / a['promql_s']:.2f}; answers differ by "
            f"{abs(a['engine_usable_gpu_hours'] / a['promql_usable_gpu_hours'] - 1):.2e} (relative)"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
