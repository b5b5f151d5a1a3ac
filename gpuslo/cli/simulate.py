"""`gpuslo simulate`: write a synthetic, deterministic GPU fleet for the demo, the report and the
benchmarks (`gpuslo.slo.simulate`).

    gpuslo simulate --nodes 125 --gpus-per-node 8 --days 7 --seed 1 --out sim/ [--start T]
                    [--serving-nodes N] [--openmetrics [--metrics-step 300]]

Writes the files of `gpuslo.slo.simulate.files` into a temporary directory beside `--out`, then
renames it into place (`--out` holds the old simulation or the new one, never a mix: an
interrupted run leaves only a `.gpuslo-simulate-*` directory behind). A non-empty `--out` that is
not a simulation (no `simulation.json` from `gpuslo simulate`) is refused unless `--force`. Flags
out of range are one-line usage errors (exit 2) naming the flag; so is an unwritable `--out`.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import shutil
import tempfile
from pathlib import Path

import pandas as pd

from gpuslo.cli.terminal import stages
from gpuslo.errors import InputError, UsageError
from gpuslo.slo.simulate import faults as sf
from gpuslo.slo.simulate.files import MANIFEST, write_simulation
from gpuslo.slo.simulate.fleet import DEFAULT_START, simulate


def configure(parser: argparse.ArgumentParser) -> None:
    """Arguments of `gpuslo simulate`."""
    parser.add_argument("--nodes", type=int, required=True, help="number of GPU nodes")
    parser.add_argument("--gpus-per-node", type=int, default=8, help="GPUs per node (default 8)")
    parser.add_argument("--days", type=float, default=7.0, help="days to simulate (default 7)")
    parser.add_argument("--seed", type=int, default=0, help="random seed (default 0)")
    parser.add_argument("--out", required=True, help="output directory (created if missing)")
    parser.add_argument("--start", default=DEFAULT_START,
                        help=f"simulation start, ISO 8601 UTC (default {DEFAULT_START})")
    parser.add_argument(
        "--fault-rate", type=float, default=sf.LLAMA3_INTERRUPTIONS_PER_1000_GPU_DAYS,
        help="unexpected interruptions per 1000 GPU-days (default: Llama 3 405B, 0.47)",
    )
    parser.add_argument(
        "--serving-nodes", type=int, default=0,
        help="run inference serving replicas on the last N nodes instead of training jobs "
             "(default 0)",
    )
    parser.add_argument(
        "--openmetrics", action="store_true",
        help="also write metrics.om for promtool tsdb create-blocks-from openmetrics",
    )
    parser.add_argument("--metrics-step", type=int, default=300,
                        help="seconds between OpenMetrics samples (30 or more; default 300)")
    parser.add_argument("--force", action="store_true",
                        help="replace a non-empty --out that is not a gpuslo simulation")


def parse_start(text: str) -> pd.Timestamp:
    """An ISO 8601 time as an aware UTC timestamp (naive means UTC). Raises UsageError."""
    try:
        stamp = pd.Timestamp(text)
    except ValueError:
        raise UsageError(f"--start: not an ISO 8601 time: {text!r}") from None
    return stamp.tz_localize("UTC") if stamp.tzinfo is None else stamp.tz_convert("UTC")


# Size limits of the command line (the library takes any Fleet): memory grows with GPU-days
# (bench/slo_engine.py: 70,000 GPU-days peak at about 0.7 GB); OpenMetrics is streamed in bounded
# memory, so its limit only keeps the file on a disk (about 17 series per GPU, ~60 bytes a
# sample: 100 M samples per family is ~100 GB of text).
MAX_NODES = 100_000
MAX_GPUS_PER_NODE = 64
MAX_DAYS = 366
MAX_GPU_DAYS = 100_000
MAX_FAULT_RATE = 1000.0  # per 1000 GPU-days: one interruption per GPU per day
MAX_METRIC_SAMPLES = 100_000_000


def check_limits(args: argparse.Namespace) -> None:
    """Raise UsageError naming the first flag out of range (one flag per message)."""
    if not 1 <= args.nodes <= MAX_NODES:
        raise UsageError(f"--nodes must be 1..{MAX_NODES:,}, got {args.nodes}")
    if not 1 <= args.gpus_per_node <= MAX_GPUS_PER_NODE:
        raise UsageError(
            f"--gpus-per-node must be 1..{MAX_GPUS_PER_NODE}, got {args.gpus_per_node}"
        )
    if not 0 < args.days <= MAX_DAYS:  # also rejects NaN
        raise UsageError(f"--days must be above 0 and at most {MAX_DAYS}, got {args.days:g}")
    if not 0 <= args.serving_nodes <= args.nodes:
        raise UsageError(f"--serving-nodes must be 0..--nodes ({args.nodes}), "
                         f"got {args.serving_nodes}")
    if args.seed < 0:
        raise UsageError(f"--seed must be 0 or more, got {args.seed}")
    if not 0 <= args.fault_rate <= MAX_FAULT_RATE:  # also rejects NaN
        raise UsageError(
            f"--fault-rate must be 0..{MAX_FAULT_RATE:g} interruptions per 1000 GPU-days "
            f"(at most one per GPU per day), got {args.fault_rate:g}"
        )
    gpu_days = args.nodes * args.gpus_per_node * args.days
    if gpu_days > MAX_GPU_DAYS:
        raise UsageError(
            f"--days: {args.nodes:,} nodes x {args.gpus_per_node} GPUs x {args.days:g} days is "
            f"{gpu_days:,.0f} GPU-days; at most {MAX_GPU_DAYS:,} (fewer --nodes or --days)"
        )
    if args.metrics_step < 30:
        raise UsageError(f"--metrics-step must be 30 seconds or more, got {args.metrics_step}")
    samples = args.nodes * args.gpus_per_node * args.days * 86400 / args.metrics_step
    if args.openmetrics and samples > MAX_METRIC_SAMPLES:
        raise UsageError(
            f"--metrics-step: {args.metrics_step} s gives {samples:,.0f} OpenMetrics samples per "
            f"series family; at most {MAX_METRIC_SAMPLES:,} (a longer --metrics-step)"
        )


def is_simulation(directory: Path) -> bool:
    """True when `directory` holds a `gpuslo simulate` manifest."""
    try:
        manifest = json.loads((directory / MANIFEST).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return False
    return isinstance(manifest, dict) and manifest.get("generator") == "gpuslo simulate"


def check_out(out: Path, force: bool) -> None:
    """UsageError unless `out` is absent, empty, a simulation, or `force` is given."""
    if out.exists() and not out.is_dir():
        raise UsageError(f"--out {out}: exists and is not a directory")
    if out.is_dir() and any(out.iterdir()) and not is_simulation(out) and not force:
        raise UsageError(f"--out {out}: not empty and not a gpuslo simulation; "
                         "use --force to replace it")


def replace_directory(new: Path, out: Path) -> None:
    """Put the finished directory `new` at `out` by renames (the old `out` is moved aside
    first, then removed): `out` is the old tree or the new one, never a mix."""
    old = None
    if out.exists():
        old = Path(tempfile.mkdtemp(prefix=".gpuslo-simulate-old-", dir=out.parent))
        os.rename(out, old / "out")
    os.rename(new, out)
    if old is not None:
        shutil.rmtree(old, ignore_errors=True)


def run(args: argparse.Namespace) -> int:
    """Run `gpuslo simulate`; prints one summary line. Raises UsageError for impossible sizes or
    an `--out` that must not be replaced, InputError when it cannot be written."""
    check_limits(args)
    out = Path(args.out)
    check_out(out, args.force)
    fleet = sf.Fleet(args.nodes, args.gpus_per_node, args.days, args.fault_rate,
                     args.serving_nodes)
    with stages(("simulating the fleet", "writing files"), "gpuslo simulate") as stage:
        stage("simulating the fleet")
        sim = simulate(fleet, args.seed, parse_start(args.start))
        stage("writing files")
        staging = None
        try:
            out.absolute().parent.mkdir(parents=True, exist_ok=True)
            staging = Path(
                tempfile.mkdtemp(prefix=f".gpuslo-simulate-{out.name}-", dir=out.absolute().parent)
            )
            written = write_simulation(
                sim, staging, args.metrics_step if args.openmetrics else None
            )
            replace_directory(staging, out)
        except OSError as error:
            if staging is not None:
                with contextlib.suppress(OSError):
                    shutil.rmtree(staging)
            raise InputError(args.out, f"cannot write: {error.strerror or error}") from None
    print(f"gpuslo simulate: {counted(fleet.gpus, 'GPU')} on {counted(fleet.nodes, 'node')}, "
          f"{counted(args.days, 'day')} from {sim.start.isoformat()}: wrote "
          f"{counted(len(written), 'file')} to {args.out}")
    return 0


def counted(number: float, noun: str) -> str:
    """`1 day`, `2 days`, `0.5 days` (a count of exactly one takes the singular; "1 days",
    newcomer4 finding 15)."""
    text = f"{number:g}" if isinstance(number, float) else str(number)
    return f"{text} {noun}" + ("" if number == 1 else "s")
