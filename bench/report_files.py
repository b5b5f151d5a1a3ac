"""The weekly report from files at fleet scale, end to end, beside the engine alone on the same
data, in one run.

    python bench/report_files.py [--gpus 10000] [--data DIR] [--repeat 3] [--skip-cli]

1. `gpuslo simulate`'s fleet (8 GPUs per node, 7 days, seed 1) written once with
   `write_simulation` (the CSV.gz files and their `.columns.npz` copies,
   `gpuslo.slo.simulate.columns`), or `--data`, a directory it wrote before, reused (one written
   before the columnar copies existed is read from its CSV.gz text: the slower path).
2. Anchor: `compute_week` on that directory's frames, already in memory (read once, untimed):
   the engine alone on the same data.
3. gpuslo, in process: `build_report` (the pipeline `gpuslo report --data DIR` runs: read the
   frames, the engine, the JSON document, Markdown and HTML with its plots), with the time
   of each stage.
4. gpuslo, as a user runs it: `python -m gpuslo report --data DIR --out TMP` in a new process
   (imports and writing included), its wall time, CPU time and peak RSS (its VmHWM).
Runs alternate (anchor, pipeline, CLI) `--repeat` times; the best of each is kept and the ratios
to the anchor printed with the load average before and after. Goal (issue 30): end to end
<= 1.5x the engine alone, <= 1 GB. Wall times on the shared 2-core machine swing 2x with the
other sessions' load, so CPU time (user + system, this process or the child) is printed beside
them and is the figure to compare.

Measured 2026-12-05 07:51-07:57 UTC (round 7), 10,000-GPU week (1,034,541 job events), load
average 6.5-8.3: engine 1.65 s CPU; build_report 3.57 s CPU (ratio 2.16; loading 1.10 s,
computing 1.69 s, rendering 0.74 s); the new process 4.97 s CPU (ratio 3.01), peak RSS 539 MB
(that figure was the parent's: a vfork()ed child's ru_maxrss starts at its parent's peak).

Measured 2026-12-06 04:33-04:37 UTC (round 8), `python bench/report_files.py --data DIR
--repeat 2`, DIR the same 10,000-GPU week written by this tree's `write_simulation` (with the
columnar copies), load average 9.6-14.3 (other sessions' tests), best of 2, back to back (the
CLI child runs outside the checkout, so PYTHONPATH picks the tree):
  before (74129fa, PYTHONPATH at an export of its gpuslo/: it reads the CSV.gz): engine
  1.77 s CPU; build_report 3.58 s CPU (ratio 2.02; loading 1.08 s, computing 1.80 s,
  rendering 0.61 s); `gpuslo report --data` in a new process 5.14 s CPU (ratio 2.90; wall
  16.3 s against the engine's 5.8 s), peak RSS 405 MB.
  after (this tree: the `.columns.npz` read instead of the CSV text, the CSV fast path's text
  parsed as categoricals, gc.freeze() after the CLI's imports, no importlib.metadata at
  start-up, plots on a bare Figure): engine 1.68 s CPU; build_report 2.62 s CPU (ratio 1.56;
  loading 0.23 s, computing 1.76 s, rendering 0.57 s); the new process 3.88 s CPU (ratio 2.31;
  wall 10.2 s against 4.1 s), peak RSS 367 MB. The same tree on a directory without the
  columnar copies (CSV.gz text): build_report 3.63 s CPU (ratio 2.04; loading 1.22 s), the new
  process 4.69 s CPU (ratio 2.63).
  Left: the goal is met in process only at the edge (1.5-1.6 with the load's noise) and not in
  a new process. What is not the engine now: matplotlib's four SVG plots (~0.4 s: the SVG
  draw ~0.2 s, tight_layout ~0.12 s, building the axes ~0.08 s; the HTML golden pins their
  bytes, so the text layout stays), the JSON document and pages (~0.1 s), making the text
  columns pandas `string` (~0.1 s of the 0.23 s load: a Python object per cell), and in a new
  process ~1.2 s of imports (pandas ~0.4 s, matplotlib ~0.4 s, gpuslo's own modules with
  requests, YAML and the training-log reader ~0.4 s, which `gpuslo report --data` does not use
  but `gpuslo.slo.report.inputs` imports with every source).

Measured 2026-12-06 19:13-19:16 UTC (round 10), `python bench/report_files.py --data DIR
--repeat 3`, DIR a 10,000-GPU week written by `write_fleet` (with the columnar copies), load
average 7.7-10.4 (other sessions' tests), best of 3, the two trees back to back:
  before (bbe1de1, PYTHONPATH at an export of its gpuslo/): engine 1.63 s CPU; build_report
  2.52 s CPU (ratio 1.55; loading 0.22 s, computing 1.68 s, rendering 0.55 s); the new process
  3.70 s CPU (ratio 2.27; wall 11.6 s against 5.7 s), peak RSS 367 MB. (18:42 UTC, load 4.5:
  engine 1.56 s, build_report ratio 1.47, the new process 3.59 s, ratio 2.31, 369 MB.)
  after (this tree: each source's reader imported when read and the HTML renderer, with
  matplotlib, when HTML is asked for (`inputs.LAZY_LOADERS`, `RENDERERS`), so `report --data`
  loads no requests/urllib3/tqdm, simulator or training-log reader; no tqdm off a terminal; the
  collector off during the CLI's imports; each plot drawn once, not twice, by savefig): engine
  1.64 s CPU; build_report 2.41 s CPU (ratio 1.47; loading 0.22 s, computing 1.75 s,
  rendering 0.42 s); the new process 3.30 s CPU (ratio 2.01; wall 11.3 s against 6.1 s), peak
  RSS 328 MB. The report files of that week are byte-identical before and after (cmp).
  Left, measured in a new process (~0.9 s CPU beyond build_report in a warm one): imports
  ~0.6 s (matplotlib.figure with the Agg backend 0.28 s, 0.04 s of it the polar, geo and 3D
  projections matplotlib registers at import; pandas 0.17 s; numpy 0.08 s), and ~0.2 s of
  system time zeroing the fresh process's pages (the first load and engine run fault ~110,000
  pages; the warm anchor reuses its heap). glibc's malloc kept from returning memory
  (MALLOC_MMAP_THRESHOLD_=1073741824 MALLOC_TRIM_THRESHOLD_=4294967296) cuts the engine's
  system time in a new process from 0.22 s to 0.04 s, and a warm run's from ~0.15 s to 0
  (the anchor's too): a platform-specific knob, not set here.

Measured 2026-12-07 01:24-01:42 UTC (round 12), DIR a 10,000-GPU week written by `write_fleet`
(with the columnar copies), load average 11.7-15.5 (other sessions' tests), the two trees back
to back, `python bench/report_files.py --data DIR --repeat 2` then `--repeat 3` (before:
44827aa, PYTHONPATH at an export of its gpuslo/ and bench/; after: this tree):
  before, repeat 2: engine 1.91 s CPU; build_report 2.86 s (ratio 1.49); the new process
  3.82 s (ratio 1.99), peak RSS 322 MB. Repeat 3: engine 1.95 s; build_report 2.79 s (1.43);
  the new process 3.58 s (1.83), 322 MB.
  after (the console script keeps freed memory for `gpuslo report`, `gpuslo.cli.allocator`:
  glibc's mmap threshold fixed at 32 MiB and trim threshold 2 GiB, set before the imports;
  matplotlib's per-class `Artist.set` signatures and docstrings not built at import, a
  patch of a private matplotlib hook since reverted: it changed matplotlib for every user of
  the process for ~0.09 s; PyYAML imported at the first YAML parse, so no `--slo` loads
  none), repeat 2: engine 1.69 s; build_report 2.61 s (1.54); the new process 3.41 s (2.01),
  peak RSS 350 MB. Repeat 3: engine 1.65 s; build_report 2.65 s (1.61); the new process
  3.52 s (2.13), 350 MB. The report files are byte-identical before and after (cmp).
  At this load the engine's best swings 1.65-1.95 s between runs of the same tree, so the
  ratio (1.83-2.13 for both trees) cannot resolve a 0.25 s change; the new process alone,
  the two trees alternating 4 times on the same data (`gpuslo report --data DIR` under
  runpy, its own getrusage): before 3.50/3.53/3.59/3.54 s CPU (median 3.53; 119,000-122,000
  minor page faults), after 3.33/3.10/3.24/3.31 s (median 3.28, -7 %; 55,900-57,800 faults;
  user time -0.1 s, system time -0.2 s). Part of that is the engine's own faults, which the
  warm anchor pays too (~0.15 s system): the same knob in the bench process would speed the
  anchor as well.
  Left, CPU seconds in a new process (stage marks, round 12): imports before the data
  ~0.35 (pandas 0.19, numpy 0.09 within it, gpuslo's modules ~0.08), matplotlib for the
  HTML ~0.3 (its text path pulls fontTools.agl via dviread,
  ~0.03, and the polar, geo and 3D projections), reading the columnar copies 0.2-0.3
  (SHA-256 of the CSV.gz, zlib, the text columns made `string`), the four plots 0.3-0.35
  (tight_layout 0.13, the SVG draw 0.13, building the axes 0.08: matplotlib's own Python,
  text metrics only 0.05 of it; the golden pins the bytes), and ~0.2-0.4 s of system time.
  Goal not met in a new process (~2.0x); in process at the edge (1.43-1.61).
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


def engine_alone(frames: Frames) -> tuple[float, float]:
    """(wall, CPU) seconds of the engine on frames in memory."""
    t0, c0 = time.perf_counter(), time.process_time()
    compute_week(frames, None, None, SloSpec())
    return time.perf_counter() - t0, time.process_time() - c0


def pipeline_run(data: Path) -> tuple[float, float, dict[str, float]]:
    """(wall, CPU) seconds of `build_report`, and each stage's CPU seconds."""
    marks: list[tuple[str, float]] = []
    request = pipeline.ReportRequest(Sources(data=str(data)), SloSpec())
    t0, c0 = time.perf_counter(), time.process_time()
    pipeline.build_report(request, progress=lambda stage: marks.append((stage,
                                                                        time.process_time())))
    total, cpu = time.perf_counter() - t0, time.process_time() - c0
    ends = [t for _, t in marks[1:]] + [c0 + cpu]
    return total, cpu, {stage: end - t for (stage, t), end in zip(marks, ends, strict=True)}


def cli_run(data: Path) -> tuple[float, float, float]:
    """(wall seconds, CPU seconds, peak RSS MB) of `gpuslo report --data` in a new process. The
    peak is the child's VmHWM (Linux): its `ru_maxrss` starts from this process's peak, as a
    vfork()ed child inherits it at exec."""
    with tempfile.TemporaryDirectory() as out:
        code = ("import re, runpy, sys; sys.argv = sys.argv[1:]\n"
                "try:\n    runpy.run_module('gpuslo', run_name='__main__')\n"
                "finally:\n    status = open('/proc/self/status').read()\n"
                "    print('RSS', re.search(r'VmHWM:\\s+(\\d+)', status).group(1),"
                " file=sys.stderr)")
        t0, before = time.perf_counter(), resource.getrusage(resource.RUSAGE_CHILDREN)
        done = subprocess.run([sys.executable, "-c", code, "gpuslo", "report", "--data",
                               str(data), "--out", out], capture_output=True, text=True,
                              check=False, cwd=out)  # `-c` puts the working directory first
        wall, after = time.perf_counter() - t0, resource.getrusage(resource.RUSAGE_CHILDREN)
    cpu = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
    if done.returncode:
        raise SystemExit(f"gpuslo report failed: {done.stderr[-2000:]}")
    rss = [line for line in done.stderr.splitlines() if line.startswith("RSS ")]
    return wall, cpu, int(rss[-1].split()[1]) / 1024


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
        runs: dict[str, list[tuple[float, float]]] = {"engine": [], "pipeline": [], "cli": []}
        stages, rss = {}, []
        for _ in range(args.repeat):
            runs["engine"].append(engine_alone(frames))
            wall, cpu, marks = pipeline_run(data)
            runs["pipeline"].append((wall, cpu))
            for stage, seconds in marks.items():
                stages[stage] = min(stages.get(stage, seconds), seconds)
            if not args.skip_cli:
                wall, cpu, peak = cli_run(data)
                runs["cli"].append((wall, cpu))
                rss.append(peak)
        wall0, cpu0 = (min(x[i] for x in runs["engine"]) for i in (0, 1))
        print(f"engine alone (compute_week): wall {wall0:.2f} s, CPU {cpu0:.2f} s "
              f"(runs {_list(runs['engine'])})")
        for key, label in (("pipeline", "build_report"), ("cli", "gpuslo report --data")):
            if runs[key]:
                wall, cpu = (min(x[i] for x in runs[key]) for i in (0, 1))
                print(f"{label}: wall {wall:.2f} s, CPU {cpu:.2f} s (runs {_list(runs[key])}); "
                      f"ratio to the engine: wall {wall / wall0:.2f}, CPU {cpu / cpu0:.2f}")
        print("build_report stages, CPU (best): "
              + ", ".join(f"{k} {v:.2f} s" for k, v in stages.items()))
        if rss:
            print(f"gpuslo report --data peak RSS {max(rss):.0f} MB")
        print(f"goal: <= {GOAL_RATIO}x, <= {GOAL_MB} MB; this process's peak RSS "
              f"{resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024:.0f} MB; "
              f"load average after: {os.getloadavg()}")
    return 0


def _list(values: list[tuple[float, float]]) -> str:
    return " ".join(f"{w:.2f}/{c:.2f}" for w, c in values)


if __name__ == "__main__":
    sys.exit(main())
