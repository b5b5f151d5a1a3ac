"""SLO maths: burn-rate factors from the period, compliance, error budget, burn rates."""

from __future__ import annotations

import pandas as pd
import pytest

from gpuslo import names
from gpuslo.slo import frames, objectives
from gpuslo.slo.accounting import account
from gpuslo.slo_spec import SloSpec

T0 = pd.Timestamp("2026-11-23", tz="UTC")


def test_burn_rate_factors_for_30_28_and_7_days():
    # factor = budget share × period / long window (SRE Workbook table 5-8 for 30 days)
    assert objectives.burn_rate_factors(30) == {"1h": 14.4, "6h": 6.0, "1d": 3.0, "3d": 1.0}
    # rounded to 6 decimals so generated rules stay stable
    assert objectives.burn_rate_factors(28) == {"1h": 13.44, "6h": 5.6, "1d": 2.8, "3d": 0.933333}
    assert objectives.burn_rate_factors(7) == {"1h": 3.36, "6h": 1.4, "1d": 0.7, "3d": 0.233333}


def test_error_budget_of_a_week_in_a_28_day_period():
    # 100 GPU-hours provisioned in a week, 99 usable; objective 0.98 over 28 days:
    # the period's budget at this rate is 0.02 × 100 × 4 = 8 GPU-hours; 1 spent → 7/8 left.
    status = objectives.slo_status(
        names.SLO_USABLE_GPU, 99, 100, SloSpec(period_days=28), 7 * 86400
    )
    assert status.sli == pytest.approx(0.99)
    assert status.compliant is True
    assert status.error_budget_remaining == pytest.approx(1 - 1 / 8)
    assert status.burn_rate == pytest.approx(0.01 / 0.02)


def test_overspent_budget_goes_negative_and_no_data_is_none():
    status = objectives.slo_status(names.SLO_USABLE_GPU, 90, 100, SloSpec(period_days=7), 7 * 86400)
    assert status.compliant is False
    assert status.error_budget_remaining == pytest.approx(1 - 10 / 2)
    empty = objectives.slo_status(names.SLO_USABLE_GPU, 0, 0, SloSpec(), 86400)
    assert empty.sli is None and empty.compliant is None and empty.error_budget_remaining is None


def test_burn_rates_over_the_last_windows():
    # One GPU healthy for 3 days except unhealthy during the last 30 min: the 1 h window's bad
    # ratio is 0.5 → burn 0.5 / 0.02 = 25 > 13.44, the 5 m window's 1.0 → 50: the page fires.
    end = T0 + pd.Timedelta(days=3)
    inv = frames.make_frame("inventory", [{"node": "n0", "uuid": "GPU-0", "provisioned_start": T0}])
    verdicts = frames.make_frame(
        "verdicts",
        [
            {
                "node": "n0",
                "uuid": "GPU-0",
                "start": T0,
                "end": end - pd.Timedelta(minutes=30),
                "verdict": "healthy",
            },
            {
                "node": "n0",
                "uuid": "GPU-0",
                "start": end - pd.Timedelta(minutes=30),
                "end": end,
                "verdict": "unhealthy",
                "reason": "xid_fatal",
            },
        ],
    )
    acc = account(
        inv, verdicts, frames.empty("schedulability"), frames.empty("allocations"), T0, end
    )
    rows = {
        row["long_window"]: row
        for row in objectives.burn_rates(acc.segments, end, SloSpec(period_days=28))
    }
    assert rows["1h"]["long_burn_rate"] == pytest.approx(0.5 / 0.02)
    assert rows["1h"]["short_burn_rate"] == pytest.approx(1 / 0.02)
    assert rows["1h"]["firing"] is True
    assert rows["6h"]["long_burn_rate"] == pytest.approx((0.5 / 6) / 0.02)  # 2.08 < 5.6
    assert rows["6h"]["firing"] is False
    assert rows["3d"]["long_burn_rate"] == pytest.approx((0.5 / 72) / 0.02)
