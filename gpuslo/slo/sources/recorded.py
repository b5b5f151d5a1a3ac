"""The SLIs the recording rules recorded for the report window, for the Prometheus source's
cross-check with the engine (`gpuslo.slo.recorded_check`): read from the rules' per-evaluation
counts, so they are what the rules themselves say, not recomputed here. Raises InputError."""

from __future__ import annotations

import pandas as pd

from gpuslo import names
from gpuslo.slo.sources.query_api import QueryApi, tidy
from gpuslo.slo.sources.sparse import INCREASE
from gpuslo.slo.sources.sparse_reader import label_column, window_ms

USABLE, PROVISIONED = "gpuslo:gpu_usable:count", "gpuslo:gpu_provisioned:count"


def read_recorded(api: QueryApi, start: pd.Timestamp, end: pd.Timestamp, step_s: int = 60,
                  counts: tuple[str, str] = (USABLE, PROVISIONED)) -> dict:
    """The SLIs the recording rules hold for the window (empty when the rules did not run):
    usable_ratio from the per-evaluation GPU `counts` (usable, provisioned: the per-cluster
    rules', or a global store's fleet counts `gpuslo_fleet:...`), with the first and last time
    the rules recorded them in the window (`usable_ratio_from`, `usable_ratio_to`, to the
    second, the step or a 10,000th of the window) and how many evaluations recorded them; job
    GPU-seconds by category from gpuslo:job_gpu_seconds:increase1m (summed over whatever the
    API holds) and their goodput ratio."""
    span, at = window_ms((end - start).total_seconds()), end - pd.Timedelta(milliseconds=1)
    out: dict = {}
    good, whole = counts
    usable = api.instant(f"sum_over_time({good}[{span}]) / sum_over_time({whole}[{span}])", at)
    if usable:
        out["usable_ratio"] = float(usable[0]["value"][1])
        count = api.instant(f"count_over_time({whole}[{span}])", at)
        out["usable_ratio_evaluations"] = int(float(count[0]["value"][1])) if count else 0
        resolution = max(step_s, -(-int((end - start).total_seconds()) // 10_000))
        for key, over in (("usable_ratio_from", "min"), ("usable_ratio_to", "max")):
            found = api.instant(f"{over}_over_time(timestamp({whole})"
                                f"[{span}:{resolution}s])", at)
            if found:
                stamp = pd.Timestamp(round(float(found[0]["value"][1])), unit="s", tz="UTC")
                out[key] = min(max(stamp, start), end)
    by = tidy(api.instant(f"sum by (category) (sum_over_time({INCREASE}[{span}]))", at), "value")
    if len(by):
        seconds = dict(zip(label_column(by, "category"), by["value"], strict=True))
        total = sum(seconds.values())
        out["job_gpu_hours_by_category"] = {k: v / 3600 for k, v in sorted(seconds.items())}
        productive = seconds.get(names.CATEGORY_PRODUCTIVE, 0.0)
        out["goodput_ratio"] = productive / total if total else None
    return out
