"""gpuslo: fail-closed GPU node checks, a Prometheus exporter and an SLO engine that turns verdicts
and job progress into usable GPU-hours and goodput, with lost hours attributed to a layer."""

from __future__ import annotations


def __getattr__(name: str) -> str:
    """`gpuslo.__version__`, looked up when first asked for: importlib.metadata costs every
    command (`gpuslo inspect` on a log included) a tenth of a second at start-up."""
    if name != "__version__":
        raise AttributeError(f"module 'gpuslo' has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        value = version("gpuslo")
    except PackageNotFoundError:  # running from a source tree that was never installed
        value = "0.0.0+unknown"
    globals()["__version__"] = value
    return value
