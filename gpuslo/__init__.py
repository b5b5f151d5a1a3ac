"""gpuslo: fail-closed GPU node checks, a Prometheus exporter and an SLO engine that turns verdicts
and job progress into usable GPU-hours and goodput, with lost hours attributed to a layer."""

from importlib.metadata import PackageNotFoundError, version

try:
    __version__ = version("gpuslo")
except PackageNotFoundError:  # running from a source tree that was never installed
    __version__ = "0.0.0+unknown"
