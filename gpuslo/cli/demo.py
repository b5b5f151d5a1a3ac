"""`gpuslo demo`: the quick start, everything on bundled data (`gpuslo.demo.run`).

SIGTERM and SIGINT end the demo cleanly: the signal unwinds the demo's `finally` blocks, which
stop the exporters and Prometheus it started (and `subprocess.run` kills a running child), so
nothing is left running; the exit status is 128 + the signal number.
"""

from __future__ import annotations

import argparse
import signal
import sys

from gpuslo.cli.terminal import directory
from gpuslo.demo.run import run_demo


def configure(parser: argparse.ArgumentParser) -> None:
    """Add `gpuslo demo`'s arguments."""
    parser.add_argument(
        "--out",
        default="gpuslo-demo",
        metavar="DIR",
        help="output directory (default ./gpuslo-demo)",
    )
    parser.add_argument(
        "--no-prometheus", action="store_true", help="skip starting Prometheus even when installed"
    )
    parser.add_argument(
        "--scrape-seconds",
        type=_positive_seconds,
        default=12.0,
        metavar="S",
        help="how long Prometheus scrapes the two nodes (default 12)",
    )


def _positive_seconds(text: str) -> float:
    try:
        value = float(text)
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a number: {text!r}") from None
    if not 1 <= value <= 600:
        raise argparse.ArgumentTypeError("give 1 to 600 seconds")
    return value


class _Stopped(BaseException):
    """Raised by the SIGTERM/SIGINT handler so every `finally` of the demo runs."""

    def __init__(self, signum: int) -> None:
        super().__init__(signum)
        self.signum = signum


def _stop(signum: int, _frame: object) -> None:
    for other in (signal.SIGTERM, signal.SIGINT):  # a second signal must not cut the clean-up
        signal.signal(other, signal.SIG_IGN)
    raise _Stopped(signum)


def run(args: argparse.Namespace) -> int:
    """Run the demo; exit 0 when every step finished, 128 + N when signal N stopped it."""
    out = directory(args.out, "--out")
    previous = {s: signal.signal(s, _stop) for s in (signal.SIGTERM, signal.SIGINT)}
    try:
        return run_demo(out, args.scrape_seconds, prometheus=not args.no_prometheus)
    except _Stopped as stopped:
        name = signal.Signals(stopped.signum).name
        print(f"gpuslo demo: stopped by {name}; its exporters and Prometheus are stopped",
              file=sys.stderr)
        return 128 + stopped.signum
    finally:
        for signum, handler in previous.items():
            signal.signal(signum, handler)
