"""Fixtures of the Slurm tests: a real single-node Slurm on loopback (tests/slurm_cluster.py)."""

from slurm_cluster import cluster, slurm  # noqa: F401 - pytest fixtures
