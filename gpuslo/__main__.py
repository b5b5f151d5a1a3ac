"""`python -m gpuslo` runs the CLI."""

from gpuslo.cli import entry_point

entry_point()
