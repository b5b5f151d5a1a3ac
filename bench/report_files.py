"""The weekly report from files at fleet scale, end to end, beside the engine alone on the same
data, in one run.

    python bench/report_files.py [--gpus 10000] [--data DIR] [--repeat 3] [--skip-cli]

1. `gpuslo simulate`'s fleet (8 GPUs per node, 7 days, seed 1) written once with
   `write_simulation` (or `--data`, a directory it wrote before, reused).
2. Anchor: `compute_week` on that directory's frames, already in memory (read once, untimed):
   the engine alone on the same data.
3. gpuslo, in process: `build_report` (the pipeline `gpuslo report --data DIR` runs: read the
   CSV.gz files, the engine, the JSON document, Markdown and HTML with its plots), with the time
   of each stage.
4. gpuslo, as a user runs it: `python -m gpuslo report --data DIR --out TMP` in a new process
   (imports and writing included), its wall time and peak RSS.
Runs alternate (anchor, pipeline, CLI) `--repeat` times; the best of each is kept and the ratios
to the anchor printed with the load average before and after. Goal (issue 30): end to end
<= 1.5x the engine alone, <= 1 GB.
"""

from __future__ import annotations

import argparse
import os
import resource
import subprocess
import sys
import tempfile
import time
from pathlib import Path

import pandas as pd

from gpuslo.slo.engine import compute_week
from gpuslo.slo.frames import Frames
from gpuslo.slo.report import pipeline
from gpuslo.slo.report.inputs import Sources
from gpuslo.slo.simulate import faults
from gpuslo.slo.simulate.files import read_simulation, write_simulation
from gpuslo.slo.simulate.fleet import simulate
from gpuslo.slo_spec import SloSpec

START = "2026-11-23T00:00:00Z"
GOAL_RATIO, GOAL_MB = 1.5, 1000


def write_fleet(gpus: int, out: Path) -> None:
    sim = simulate(faults.Fleet(nodes=gpus // 8, gpus_per_node=8, days=7), seed=1,
                   start=pd.Timestamp(START))
    out.mkdir(parents=True, exist_ok=True)
    write_simulation(sim, out, None)


def engine_alone(frames: Frames) -> float:
    t0 = time.perf_counter()
    compute_week(frames, None, None, SloSpec())
    return time.perf_counter() - t0


def pipeline_run(data: Path) -> tuple[float, dict[str, float]]:
    """Seconds of `build_report`, and each stage's."""
    marks: list[tuple[str, float]] = []
    request = pipeline.ReportRequest(Sources(data=str(data)), SloSpec())
    t0 = time.perf_counter()
    pipeline.build_report(request, progress=lambda stage: marks.append((stage,
                                                                        time.perf_counter())))
    total = time.perf_counter() - t0
    ends = [t for _, t in marks[1:]] + [t0 + total]
    return total, {stage: end - t for (stage, t), end in zip(marks, ends, strict=True)}


def cli_run(data: Path) -> tuple[float, float]:
    """(wall seconds, peak RSS MB) of `gpuslo report --data` in a new process."""
    with tempfile.TemporaryDirectory() as out:
        code = ("import resource, runpy, sys; sys.argv = sys.argv[1:]\n"
                "try:\n    runpy.run_module('gpuslo', run_name='__main__')\n"
                "finally:\n    print('RSS', resource.getrusage(resource.RUSAGE_SELF).ru_maxrss,"
                " file=sys.stderr)")
        t0 = time.perf_counter()
        done = subprocess.run([sys.executable, "-c", code, "gpuslo", "report", "--data",
                               str(data), "--out", out], capture_output=True, text=True,
                              check=False)
        wall = time.perf_counter() - t0
    if done.returncode:
        raise SystemExit(f"gpuslo report failed: {done.stderr[-2000:]}")
    rss = [line for line in done.stderr.splitlines() if line.startswith("RSS ")]
    return wall, int(rss[-1].split()[1]) / 1024


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gpus", type=int, default=10_000)
    parser.add_argument("--data", help="a gpuslo simulate directory to reuse (else written)")
    parser.add_argument("--repeat", type=int, default=3)
    parser.add_argument("--skip-cli", action="store_true")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="gpuslo-bench-files-") as tmp:
        data = Path(args.data) if args.data else Path(tmp) / "sim"
        if not (data / "simulation.json").exists():
            write_fleet(args.gpus, data)
        loaded, _, _ = read_simulation(data)
        frames = Frames(**loaded)
        print(f"load average before: {os.getloadavg()}; {data}: "
              f"{len(frames.inventory)} GPUs, {len(frames.job_events)} job events")
        anchor, whole, stages, cli, rss = [], [], {}, [], []
        for _ in range(args.repeat):
            anchor.append(engine_alone(frames))
            total, marks = pipeline_run(data)
            whole.append(total)
            for stage, seconds in marks.items():
                stages[stage] = min(stages.get(stage, seconds), seconds)
            if not args.skip_cli:
                wall, peak = cli_run(data)
                cli.append(wall)
                rss.append(peak)
        best = min(anchor)
        print(f"engine alone (compute_week): {best:.2f} s (runs {_list(anchor)})")
        print(f"build_report: {min(whole):.2f} s (runs {_list(whole)}), ratio "
              f"{min(whole) / best:.2f}; stages (best): "
              + ", ".join(f"{k} {v:.2f} s" for k, v in stages.items()))
        if cli:
            print(f"gpuslo report --data (new process): {min(cli):.2f} s (runs {_list(cli)}), "
                  f"ratio {min(cli) / best:.2f}, peak RSS {max(rss):.0f} MB")
        print(f"goal: <= {GOAL_RATIO}x, <= {GOAL_MB} MB; own peak RSS "
              f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB; "
              f"load average after: {os.getloadavg()}")
    return 0


def _list(values: list[float]) -> str:
    return " ".join(f"{v:.2f}" for v in values)


if __name__ == "__main__":
    sys.exit(main())
