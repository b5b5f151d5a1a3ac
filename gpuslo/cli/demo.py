"""`gpuslo demo`: the quick start, everything on bundled data (`gpuslo.demo.run`)."""

from __future__ import annotations

import argparse
from pathlib import Path

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


def run(args: argparse.Namespace) -> int:
    """Run the demo; exit 0 when every step finished."""
    return run_demo(Path(args.out), args.scrape_seconds, prometheus=not args.no_prometheus)
