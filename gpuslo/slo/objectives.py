"""SLIs, SLO compliance, error budget and burn rates for a reporting window.

Sources: the SRE Workbook, "Implementing SLOs" (error budget = 1 − objective over the SLO
period) and "Alerting on SLOs" (multiwindow, multi-burn-rate alerts; burn rate = bad ratio /
error budget; factors from `gpuslo.slo_spec.burn_rate_factor`, derived from the period — 14.4,
6, 3, 1 for 30 days).

- `slo_status(slo, good, total, spec, window_s)` → `SloStatus` for one SLI over the window.
  The error budget is the period's: remaining = 1 − burn rate × window / period (a week burning
  at 1.0 in a 28-day period leaves 3/4). A window longer than the period counts as one period
  (remaining = 1 − burn rate: the average period's budget left).
- `burn_rates(segments, end, spec)` → the burn rate of the usable-GPU SLO over each alert's long
  and short window ending at `end`, and whether the alert would fire (both above its factor).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

import numpy as np
import pandas as pd

from gpuslo import names
from gpuslo.slo_spec import SloSpec, duration_seconds

USABLE_STATES = ("allocated", names.ACCOUNTING_IDLE)


@dataclass(frozen=True)
class SloStatus:
    """One SLO over the window. Ratios 0–1; `sli`/`error_budget_remaining` None without data.

    error_budget_remaining may go below 0 (budget overspent); burn_rate = (1 − sli) / (1 −
    objective) over the window (1.0 spends the budget exactly over the period)."""

    name: str
    objective: float
    sli: float | None
    good: float
    total: float
    compliant: bool | None
    error_budget_remaining: float | None
    burn_rate: float | None

    def to_dict(self) -> dict:
        """Plain dict of every field."""
        return asdict(self)


def slo_status(slo: str, good: float, total: float, spec: SloSpec, window_s: float) -> SloStatus:
    """Status of `slo` (names.SLOS) given good and total amounts (same unit, e.g. GPU-seconds)
    measured over a window of `window_s` seconds."""
    objective = spec.objectives[slo]
    if total <= 0 or window_s <= 0:
        return SloStatus(slo, objective, None, good, total, None, None, None)
    sli = good / total
    burn = (1.0 - sli) / (1.0 - objective)
    remaining = 1.0 - burn * min(window_s, spec.period_days * 86400) / (spec.period_days * 86400)
    return SloStatus(slo, objective, sli, good, total, sli >= objective, remaining, burn)


def burn_rate_factors(period_days: int) -> dict[str, float]:
    """Burn-rate factor per long window ("1h", "6h", "1d", "3d") for an SLO period in days."""
    spec = SloSpec(period_days=period_days)
    return {alert.long_window: alert.factor for alert in spec.burn_rate_alerts()}


def usable_ratio_between(segments: pd.DataFrame, a: pd.Timestamp, b: pd.Timestamp) -> float | None:
    """Usable share of provisioned GPU-time in [a, b) from accounting segments (columns start,
    end, state); None when nothing is provisioned there."""
    s = segments["start"].to_numpy("int64")
    e = segments["end"].to_numpy("int64")
    overlap = np.clip(np.minimum(e, b.value) - np.maximum(s, a.value), 0, None).astype(np.float64)
    total = overlap.sum()
    if total <= 0:
        return None
    usable = overlap[segments["state"].isin(USABLE_STATES).to_numpy()].sum()
    return float(usable / total)


def burn_rates(segments: pd.DataFrame, end: pd.Timestamp, spec: SloSpec) -> list[dict]:
    """Per multiwindow alert of the usable-GPU SLO: severity, long_window, short_window, factor,
    long_burn_rate, short_burn_rate (None without data) and firing (bool), for windows ending at
    `end`."""
    budget = spec.error_budget(names.SLO_USABLE_GPU)
    rows = []
    for alert in spec.burn_rate_alerts():
        rates = []
        for window in (alert.long_window, alert.short_window):
            ratio = usable_ratio_between(
                segments, end - pd.Timedelta(seconds=duration_seconds(window)), end
            )
            rates.append(None if ratio is None else (1.0 - ratio) / budget)
        firing = all(rate is not None and rate > alert.factor for rate in rates)
        rows.append(
            {
                "severity": alert.severity,
                "long_window": alert.long_window,
                "short_window": alert.short_window,
                "factor": alert.factor,
                "long_burn_rate": rates[0],
                "short_burn_rate": rates[1],
                "firing": firing,
            }
        )
    return rows


DAY_NS = 86_400 * 10**9


def seconds_per_day(
    start_ns: np.ndarray, end_ns: np.ndarray, day0_ns: int, days: int
) -> np.ndarray:
    """Seconds of the half-open intervals [start, end) (int64 ns) falling on each of `days` UTC
    days from midnight `day0_ns`: a segment crossing midnights is split exactly, in
    O(segments + days) (partial first and last days, a difference array for the whole days
    between), so no segment has to be cut at midnights first."""
    first = (start_ns - day0_ns) // DAY_NS
    last = (end_ns - day0_ns) // DAY_NS  # the day holding `end` (a midnight end: the next day)
    same = first == last
    out = np.zeros(days + 1, dtype=np.float64)
    out += np.bincount(first[same], (end_ns - start_ns)[same] / 1e9, minlength=days + 1)
    cross = ~same
    f, la = first[cross], last[cross]
    out += np.bincount(f, (day0_ns + (f + 1) * DAY_NS - start_ns[cross]) / 1e9, minlength=days + 1)
    out += np.bincount(la, (end_ns[cross] - (day0_ns + la * DAY_NS)) / 1e9, minlength=days + 1)
    whole = (
        np.bincount(f + 1, minlength=days + 2)[: days + 1]
        - np.bincount(la, minlength=days + 2)[: days + 1]
    )
    out += np.cumsum(whole) * (DAY_NS / 1e9)
    return out[:days]


def per_day(segments: pd.DataFrame, spec: SloSpec) -> pd.DataFrame:
    """Per UTC day with provisioned time: day (datetime64[ns, UTC]), provisioned_gpu_hours,
    usable_gpu_hours, usable_ratio, objective, and lost_<layer> GPU-hours of capacity (not
    usable time) for each of names.LAYERS — float64 columns. Exact for any window and span: a
    segment crossing midnights counts on each day by its hours there (`seconds_per_day`)."""
    columns = ["day", "provisioned_gpu_hours", "usable_gpu_hours", "usable_ratio", "objective"]
    columns += [f"lost_{layer}" for layer in names.LAYERS]
    if not len(segments):
        return pd.DataFrame({c: pd.Series(dtype="float64") for c in columns}).astype(
            {"day": "datetime64[ns, UTC]"}
        )
    start = segments["start"].astype("datetime64[ns, UTC]").to_numpy("int64")
    end = segments["end"].astype("datetime64[ns, UTC]").to_numpy("int64")
    day0 = int(start.min() // DAY_NS * DAY_NS)
    days = int((end.max() - day0 + DAY_NS - 1) // DAY_NS)

    def hours(mask: np.ndarray) -> np.ndarray:
        return seconds_per_day(start[mask], end[mask], day0, days) / 3600

    frame = {
        "day": pd.to_datetime(day0 + np.arange(days, dtype=np.int64) * DAY_NS, utc=True),
        "provisioned_gpu_hours": hours(np.ones(len(start), dtype=bool)),
        "usable_gpu_hours": hours(segments["state"].isin(USABLE_STATES).to_numpy()),
    }
    for layer in names.LAYERS:
        frame[f"lost_{layer}"] = hours((segments["layer"] == layer).to_numpy(dtype=bool))
    daily = pd.DataFrame(frame)
    daily = daily[daily["provisioned_gpu_hours"] > 0].reset_index(drop=True)
    daily.insert(3, "usable_ratio", daily["usable_gpu_hours"] / daily["provisioned_gpu_hours"])
    daily.insert(4, "objective", spec.objectives[names.SLO_USABLE_GPU])
    return daily
