"""`gpuslo report` on the real fault traces (StepFun InfiniteHBD, OLCF Titan) and on bad trace
input."""

from __future__ import annotations

import json

import pytest
from conftest import DATASETS

from gpuslo import names
from gpuslo.cli import main

STEPFUN = DATASETS / "stepfun_infinitehbd" / "fault_trace.json"
TITAN = DATASETS / "titan" / "gc_full.csv"


def _report(tmp_path, *args) -> tuple[dict, str]:
    out = tmp_path / "report"
    assert main(["report", *args, "--out", str(out), "--format", "json,md"]) == 0
    return json.loads((out / "report.json").read_text()), (out / "report.md").read_text()


def test_stepfun_trace_gives_a_full_report_and_says_what_it_cannot_fill(tmp_path):
    doc, text = _report(tmp_path, "--trace", str(STEPFUN), "--trace-format", "stepfun")
    assert doc["gpus"] == 400 * 8 and doc["nodes"] == 400  # the trace README's fleet
    span_h = (_hours(doc["end"]) - _hours(doc["start"]))
    assert doc["provisioned_gpu_hours"] == pytest.approx(3200 * span_h, rel=1e-9)
    assert doc["lost_gpu_hours_by_layer"][names.LAYER_NODE] > 0
    assert 0 < doc["usable_ratio"] < 1
    assert doc["goodput_ratio"] is None and doc["data_quality"]["cannot_fill"]
    assert "## Goodput, ETTR and badput\n\nNot available:" in text
    assert "## Top causes by layer and reason" in text and "| ecc_uncorrectable |" in text


def test_stepfun_one_week_has_the_previous_week(tmp_path):
    doc, text = _report(tmp_path, "--trace", str(STEPFUN), "--trace-format", "stepfun",
                        "--week", "2024-W20")
    assert doc["start"] == "2024-05-13T00:00:00Z" and doc["provisioned_gpu_hours"] == 3200 * 168
    assert doc["report"]["week_over_week"] is not None and "## Week over week\n\n| figure" in text


def test_titan_trace_gives_a_full_report(tmp_path):
    doc, text = _report(tmp_path, "--trace", str(TITAN), "--trace-format", "titan",
                        "--start", "2018-01-01", "--end", "2018-01-08")
    assert doc["gpus"] > 18000
    assert doc["lost_gpu_hours_by_layer"][names.LAYER_NODE] > 0
    assert "Not available:" in text  # no jobs in the Titan trace


def _hours(iso: str) -> float:
    import pandas as pd

    return pd.Timestamp(iso).timestamp() / 3600


@pytest.mark.parametrize("content, fmt, words", [
    (None, "stepfun", "x.json"),
    ("[]", "stepfun", "empty.json"),
    ("not json at all", "stepfun", "empty.json"),
    ("SN,location\n", "titan", "empty.json"),
])
def test_bad_trace_is_one_line_naming_the_file(tmp_path, capsys, content, fmt, words):
    path = tmp_path / ("x.json" if content is None else "empty.json")
    if content is not None:
        path.write_text(content)
    out = tmp_path / "out"
    assert main(["report", "--trace", str(path), "--trace-format", fmt, "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and words in err[0]
    assert not out.exists()


def test_stepfun_file_read_as_titan_is_one_line(tmp_path, capsys):
    assert main(["report", "--trace", str(STEPFUN), "--trace-format", "titan",
                 "--out", str(tmp_path / "o")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "fault_trace.json" in err[0]
