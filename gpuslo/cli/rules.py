"""`gpuslo rules [--slo FILE] --out DIR`: write the Prometheus recording and alerting rules and
their promtool tests for an SLO spec (`gpuslo.alerts.generate`); prints one line per file."""

from __future__ import annotations

import argparse

from gpuslo.alerts.generate import generate_rules
from gpuslo.cli.terminal import directory
from gpuslo.slo_spec import load_spec


def configure(parser: argparse.ArgumentParser) -> None:
    """Arguments of `gpuslo rules`."""
    parser.add_argument("--slo", metavar="FILE", help="SLO spec YAML (default: built-in defaults)")
    parser.add_argument("--out", metavar="DIR", required=True, help="directory to write into")


def run(args: argparse.Namespace) -> int:
    """Write the files; prints one line per file. Raises ConfigError/InputError."""
    for path in generate_rules(load_spec(args.slo), directory(args.out, "--out")):
        print(path)
    return 0
