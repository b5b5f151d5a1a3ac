"""`gpuslo dashboards [--slo FILE] --out DIR`: write the Grafana dashboards for an SLO spec
(`gpuslo.dashboards.generate`); prints one line per file."""

from __future__ import annotations

import argparse

from gpuslo.cli.terminal import directory
from gpuslo.dashboards.generate import generate_dashboards
from gpuslo.slo_spec import load_spec


def configure(parser: argparse.ArgumentParser) -> None:
    """Arguments of `gpuslo dashboards`."""
    parser.add_argument("--slo", metavar="FILE", help="SLO spec YAML (default: built-in defaults)")
    parser.add_argument("--out", metavar="DIR", required=True, help="directory to write into")


def run(args: argparse.Namespace) -> int:
    """Write the files; prints one line per file. Raises ConfigError/InputError."""
    for path in generate_dashboards(load_spec(args.slo), directory(args.out, "--out")):
        print(path)
    return 0
