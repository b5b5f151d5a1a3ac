"""Window stamps are displayed one way (`frames.iso_utc`): rounded to the microsecond, to the
precision they have. A training log's float seconds printed `01:00:20.729599953Z` (float noise
in nanoseconds) as the report's window."""

from __future__ import annotations

import json
import re

import pandas as pd
from conftest import SHARED

from gpuslo.cli import main
from gpuslo.slo.frames import iso_utc

T03 = next((SHARED / "training_logs" / "cases").glob("T03_*.log"))
_NOISE = re.compile(r"T\d\d:\d\d:\d\d\.\d{7,}")


def test_iso_utc_rounds_and_prints_the_precision_held():
    assert iso_utc(pd.Timestamp("2021-08-08T01:00:20.729599953Z")) == "2021-08-08T01:00:20.729600Z"
    assert iso_utc(pd.Timestamp("2026-11-23", tz="UTC")) == "2026-11-23T00:00:00Z"
    assert iso_utc(pd.Timestamp("2026-11-23 01:00:00")) == "2026-11-23T01:00:00Z"  # naive: UTC
    assert iso_utc(1_709_747_611.149) == "2024-03-06T17:53:31.149Z"
    assert iso_utc(1_709_747_611.149481) == "2024-03-06T17:53:31.149481Z"
    assert iso_utc(110.99999999) == "1970-01-01T00:01:51Z"


def test_a_training_log_report_window_has_no_float_noise(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["report", "--training-log", str(T03), "--gpus", "8", "--out", str(out),
                 "--format", "md,json"]) == 0
    printed = capsys.readouterr().out
    doc = json.loads((out / "report.json").read_text())
    assert doc["start"] == "2021-08-08T01:00:20.729600Z", doc["start"]
    for text in (printed, (out / "report.md").read_text(), json.dumps(doc)):
        assert not _NOISE.search(text), _NOISE.search(text)
