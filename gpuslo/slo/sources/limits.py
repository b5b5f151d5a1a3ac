"""Limits of the Prometheus source that the report's flags show as defaults, in a module that
imports nothing, so `gpuslo report --help` and a report from files do not load the HTTP client
(requests, urllib3, tqdm) to name them. `gpuslo.slo.sources.query_api` uses the same values.
"""

DEFAULT_MAX_SAMPLES = 10_000_000  # a fifth of Prometheus' default --query.max-samples
DEFAULT_TIMEOUT_S = 120.0
