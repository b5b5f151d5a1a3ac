"""`gpuslo simulate`: a synthetic, deterministic GPU fleet.

Modules: fleet (the simulation), faults, jobs, openmetrics, files (writing and reading back).
"""
