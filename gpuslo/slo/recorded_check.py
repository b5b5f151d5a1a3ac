"""This report against the recording rules on the same window (DESIGN.md §6: the engine and the
rules must agree on the same data).

`compare(recorded, usable_ratio, covered)` -> {"usable_ratio": {"recorded", "report",
"difference", "agree", "why"}}, or {} when the rules recorded nothing for the window (no rules
loaded, or not a Prometheus source). `recorded` is the Prometheus source's
`Frames.recorded` (`gpuslo.slo.sources.sparse.read_recorded`: the rules' usable ratio over the
window, the first and last time they recorded it and how many times); `covered` the engine's
`data_quality.covered` (when this report's data starts and ends). They agree when the two
ratios differ by at most TOLERANCE; otherwise `why` says what differs: the span the rules
recorded against the span of the data (more than two of their evaluation intervals apart: the
rules were not evaluated all the window, while this report counts blind time as lost), or,
when those match, that the cause is not identified and where to look. Pure.
"""

from __future__ import annotations

import pandas as pd

from gpuslo.slo.frames import iso_utc

TOLERANCE = 1e-3  # the largest difference of two ratios called agreement


def _iso(stamp: pd.Timestamp) -> str:
    return iso_utc(stamp)


def _why(recorded: dict, covered: dict) -> str:
    lo, hi = covered.get("start"), covered.get("end")
    first, last = recorded.get("usable_ratio_from"), recorded.get("usable_ratio_to")
    if first is not None and last is not None and lo is not None and hi is not None:
        # the rules' own evaluation interval: their span may start or end within two of them
        count = recorded.get("usable_ratio_evaluations") or 0
        slack = max(2 * (last - first) / (count - 1), pd.Timedelta(seconds=1)) if count > 1 else (
            pd.Timedelta(seconds=1))
        if first - lo > slack or hi - last > slack:
            return (f"the recording rules recorded from {_iso(first)} to {_iso(last)} only, "
                    f"this report's data covers {_iso(lo)} to {_iso(hi)}: their ratio leaves "
                    "out the rest (were the rules loaded and evaluated all the window?)")
    return ("cause not identified: the rules and this report cover the same span, so compare "
            "gpuslo:gpu_provisioned:count and gpuslo:gpu_usable:count over the window with this "
            "report's inventory and verdicts")


def compare(recorded: dict, usable_ratio: float | None, covered: dict) -> dict:
    """See the module docstring."""
    theirs = recorded.get("usable_ratio")
    if theirs is None or usable_ratio is None:
        return {}
    difference = usable_ratio - theirs
    agree = abs(difference) <= TOLERANCE
    return {"usable_ratio": {
        "recorded": theirs, "report": usable_ratio, "difference": difference, "agree": agree,
        "why": None if agree else _why(recorded, covered),
    }}
