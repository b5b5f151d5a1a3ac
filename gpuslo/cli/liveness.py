"""The exporter's liveness probe: exit 0 while its check loop still beats, 1 otherwise.

    python -m gpuslo.cli.liveness --heartbeat /var/lib/gpuslo/exporter.heartbeat --max-age 120

Exit 0 when the heartbeat is younger than `--max-age` seconds, 1 otherwise (missing file included:
fail closed), with one line saying why. See `gpuslo.exporter.liveness`.
"""

from __future__ import annotations

import argparse
import sys
import time
from collections.abc import Sequence

from gpuslo.exporter.liveness import heartbeat_age


def main(argv: Sequence[str] | None = None, clock=time.time) -> int:
    """Probe entry point; returns the exit code."""
    parser = argparse.ArgumentParser(
        prog="python -m gpuslo.cli.liveness", description=__doc__.split("\n\n")[0]
    )
    parser.add_argument("--heartbeat", required=True, help="the exporter's heartbeat file")
    parser.add_argument("--max-age", type=float, default=120.0, help="seconds (default 120)")
    args = parser.parse_args(argv)
    age = heartbeat_age(args.heartbeat, clock())
    if age is None:
        print(f"{args.heartbeat}: no heartbeat yet", file=sys.stderr)
        return 1
    if age > args.max_age:
        print(
            f"{args.heartbeat}: last beat {age:.0f} s ago (> {args.max_age:g} s)", file=sys.stderr
        )
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
