"""Liveness of the exporter's own loop: who watches the watcher.

The exporter touches `<state dir>/exporter.heartbeat` on every turn of its check loop (at least
every 5 s). An HTTP probe of /metrics would pass while that loop is stuck and every check result
is going stale; this probe fails then, so Kubernetes restarts the exporter:

    python -m gpuslo.exporter.liveness --heartbeat /var/lib/gpuslo/exporter.heartbeat --max-age 120

Exit 0 when the heartbeat is younger than `--max-age` seconds, 1 otherwise (missing file included:
fail closed), with one line saying why.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from collections.abc import Sequence


def heartbeat_age(path: str, now: float) -> float | None:
    """Seconds since `path` was last touched at `now`, None when it does not exist."""
    try:
        return now - os.stat(path).st_mtime
    except FileNotFoundError:
        return None


def main(argv: Sequence[str] | None = None, clock=time.time) -> int:
    """Probe entry point; returns the exit code."""
    parser = argparse.ArgumentParser(prog="python -m gpuslo.exporter.liveness", description=__doc__.split("\n\n")[0])
    parser.add_argument("--heartbeat", required=True, help="the exporter's heartbeat file")
    parser.add_argument("--max-age", type=float, default=120.0, help="seconds (default 120)")
    args = parser.parse_args(argv)
    age = heartbeat_age(args.heartbeat, clock())
    if age is None:
        print(f"{args.heartbeat}: no heartbeat yet", file=sys.stderr)
        return 1
    if age > args.max_age:
        print(f"{args.heartbeat}: last beat {age:.0f} s ago (> {args.max_age:g} s)", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
