"""`gpuslo check`'s arguments, apart from the work (`gpuslo.cli.check`): `gpuslo check --help` and
a usage error import this module, the source flags (`cli.source_args`), the static check names
(`checks.check_names`) and the Slurm options' limits (`slurm.limits`) only: no check, runner,
policy, YAML reader or Slurm client (issue 30; tests/test_startup.py holds the import set)."""

from __future__ import annotations

import argparse

from gpuslo import names
from gpuslo.cli.source_args import add_source_arguments
from gpuslo.exporter.checks.check_names import CHECKS
from gpuslo.exporter.slurm.limits import DEFAULT_DEADLINE_S, ENV_VAR

GATE = names.GATE_CHECK  # the return-to-service gate's check (`policy.return_to_service.CHECK`)


def configure(parser: argparse.ArgumentParser) -> None:
    """Arguments of `gpuslo check`."""
    parser.add_argument(
        "--format",
        choices=("text", "json", "npd", "slurm"),
        default="text",
        help="slurm: one Slurm reason line; see --drain",
    )
    parser.add_argument(
        "--check",
        action="append",
        choices=[*CHECKS, GATE],
        metavar="NAME",
        help=f"run only this check (repeatable): {', '.join(CHECKS)}; `{GATE}` runs every "
        "check and answers for the return-to-service gate alone (its node-problem-detector rule)",
    )
    add_source_arguments(parser)
    add_slurm_arguments(parser)


def add_slurm_arguments(parser: argparse.ArgumentParser) -> None:
    """The flags of the slurm format (added to `gpuslo check`)."""
    add = parser.add_argument
    add("--drain", action="store_true", default=None,
        help="slurm format: drain the node with the reason line; resume gpuslo's own drains")
    add("--scontrol", metavar="PATH", help="slurm format: scontrol binary (default: on PATH)")
    add("--deadline", type=float, metavar="SECONDS",
        help=f"slurm format: deadline of the whole run (default {DEFAULT_DEADLINE_S:g})")
    add("--slurm-config", metavar="FILE",
        help=f"slurm format: options file (default ${ENV_VAR}; gpuslo/exporter/slurm/config.py)")
