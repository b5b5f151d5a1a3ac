"""Slurm on the node: the health-check config file, the drain/resume rule, the state samples."""
