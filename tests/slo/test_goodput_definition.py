"""One goodput definition: the report's goodput_ratio and job_goodput SLI equal what the
exporter's counters (and so the recording rules) give for the same journals."""

import time

import pytest

from gpuslo.demo import job as demo_job
from gpuslo.slo.engine import compute_week
from gpuslo.slo.sources.journals import load_journals
from gpuslo.slo_spec import SloSpec


def test_report_goodput_equals_the_counters_definition(tmp_path):
    summary = demo_job.record_job(tmp_path, now=time.time() - 60)
    # The Recorder's categories (what gpuslo_job_gpu_seconds_total exposes), by hand:
    # 2400 s productive of 120 init + 4 x 30 save + 60 restore + 300 wasted + 600 recovery + 2400.
    assert summary["goodput_ratio"] == pytest.approx(2400 / 3600)
    result = compute_week(load_journals(tmp_path), None, None, SloSpec())
    assert result.goodput_ratio == pytest.approx(2400 / 3600)
    assert result.slos["job_goodput"].to_dict()["sli"] == pytest.approx(2400 / 3600)
