"""CLI start-up against the interpreter's own, in the same run: `gpuslo inspect --help` and
`python -c pass`, each a new process, interleaved, best of N (in the manner of hyperfine's
`--warmup` and min), then `gpuslo check --help` for reference. Prints the absolute figures, the
difference (what gpuslo adds) and the ratio. Goal (issue 30): `gpuslo inspect --help` <= 0.10 s
on a machine where `python -c pass` takes ~0.03 s, i.e. gpuslo adds <= 0.07 s; on a loaded
machine where the interpreter alone takes longer, the added time is the figure to judge.

Measured on the shared 2-core development machine, load average 13-14 (eight sessions at work),
same venv (editable install: its .pth finder is in `python -c pass` too):
  before (`--kind` choices imported every inspector and the Xid policy's YAML),
  `--repeat 5`: python 0.131 s, inspect --help 0.976 s (+0.845 s, 7.5x), check --help 1.180 s;
  after, `--repeat 10`: python 0.114 s, inspect --help 0.200 s (+0.086 s, 1.8x),
  check --help 0.766 s (+0.652 s; its arguments still import the check runner and Slurm).
`python -X importtime -m gpuslo inspect --help` now lists gpuslo.cli, gpuslo.names,
gpuslo.cli.terminal, gpuslo.cli.inspect_args and argparse: ~12 ms of our own imports.

2026-12-07 01:46 UTC, round 12 (branch startup-r12): `gpuslo check --help` reads its arguments
from `gpuslo.cli.check_args` (the static `checks.check_names`, `cli.source_args`,
`slurm.limits`), no longer from `gpuslo.cli.check` (the runner, every check's registry, the
return-to-service policy and its YAML, Slurm's client). Run from /tmp (`-m` puts the working
directory first on the path: from the checkout both runs measure the checkout), before =
46ca397 (`git archive` on PYTHONPATH), after = this branch, back to back, twice each, load
5.6-5.8, `cd /tmp && PYTHONPATH=TREE python .../bench/cli_startup.py --repeat 8 --warmup 1`:
  before: python 0.024-0.027 s; inspect --help 0.033 s; check --help 0.158-0.184 s
    (+0.134-0.158 s over python)
  after:  python 0.033-0.045 s; inspect --help 0.052-0.066 s; check --help 0.040-0.074 s
    (+0.007-0.030 s over python; the same help text, byte for byte)
tests/test_startup.py holds `check --help`'s import set (15 gpuslo modules, no yaml).

usage: python bench/cli_startup.py [--repeat N] [--warmup N]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time

GOAL_S = 0.10
QUIET_PYTHON_S = 0.03  # `python -c pass` on the quiet machine of issue 30
COMMANDS = {
    "python -c pass": [sys.executable, "-c", "pass"],
    "gpuslo inspect --help": [sys.executable, "-m", "gpuslo", "inspect", "--help"],
    "gpuslo check --help": [sys.executable, "-m", "gpuslo", "check", "--help"],
}


def once(argv: list[str]) -> float:
    """Wall seconds of one run of `argv` (output discarded); exits on a failed run."""
    start = time.perf_counter()
    done = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=False)
    seconds = time.perf_counter() - start
    if done.returncode != 0:
        sys.exit(f"{' '.join(argv)} exited {done.returncode}: {done.stderr.decode()[-300:]}")
    return seconds


def measure(repeat: int, warmup: int) -> dict[str, list[float]]:
    """Seconds of every run of every command, the commands interleaved (same load for each)."""
    for _ in range(warmup):
        for argv in COMMANDS.values():
            once(argv)
    runs: dict[str, list[float]] = {name: [] for name in COMMANDS}
    for _ in range(repeat):
        for name, argv in COMMANDS.items():
            runs[name].append(once(argv))
    return runs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=15, help="timed runs of each (best counts)")
    parser.add_argument("--warmup", type=int, default=2, help="untimed runs of each first")
    args = parser.parse_args()
    load = os.getloadavg()[0]
    runs = measure(args.repeat, args.warmup)
    base = min(runs["python -c pass"])
    print(f"best of {args.repeat} interleaved runs, load average {load:.1f}, {os.cpu_count()} CPUs")
    for name, seconds in runs.items():
        best, median = min(seconds), sorted(seconds)[len(seconds) // 2]
        extra = f"  +{best - base:.3f} s over python, ratio {best / base:.1f}x"
        extra = "" if best == base else extra
        print(f"{name:24} best {best:.3f} s  median {median:.3f} s{extra}")
    inspect = min(runs["gpuslo inspect --help"])
    verdict = "meets" if inspect <= GOAL_S else "misses"
    print(f"gpuslo inspect --help {inspect:.3f} s {verdict} the goal of {GOAL_S:.2f} s absolute")
    added, allowed = inspect - base, GOAL_S - QUIET_PYTHON_S
    verdict = "meets" if added <= allowed else "MISSES"
    print(f"gpuslo's own share +{added:.3f} s {verdict} the goal of +{allowed:.2f} s over python")
    return 0


if __name__ == "__main__":
    sys.exit(main())
