"""Golden files for `gpuslo report` on a small simulated fleet, byte for byte.

Regenerate (after a deliberate change to the simulator, the engine or the report):

    UPDATE_GOLDEN=1 python -m pytest -q tests/slo/test_report_golden.py

which runs, in a temporary directory (relative paths, so the source line is stable):

    gpuslo simulate --nodes 4 --gpus-per-node 8 --days 14 --seed 3 --fault-rate 40 --out sim
    gpuslo report --data sim --week 2026-W49 --price-per-gpu-hour 2.5 --out report
"""

from __future__ import annotations

import json
import os
import xml.etree.ElementTree as ET

import pytest
from conftest import REPO

from gpuslo.cli import main
from gpuslo.slo.engine import compute_week
from gpuslo.slo.frames import Frames
from gpuslo.slo.report.build import FLEET_FIGURES
from gpuslo.slo.report.inputs import Sources, parse_week
from gpuslo.slo.report.pipeline import STAGES, ReportRequest, build_report
from gpuslo.slo.simulate.files import read_simulation
from gpuslo.slo_spec import load_spec

GOLDEN = REPO / "tests" / "golden" / "report"
FILES = ("report.md", "report.html", "report.json")


@pytest.fixture(scope="module")
def generated(tmp_path_factory):
    work = tmp_path_factory.mktemp("golden")
    cwd = os.getcwd()
    os.chdir(work)
    try:
        assert main(["simulate", "--nodes", "4", "--gpus-per-node", "8", "--days", "14",
                     "--seed", "3", "--fault-rate", "40", "--out", "sim"]) == 0
        assert main(["report", "--data", "sim", "--week", "2026-W49", "--price-per-gpu-hour",
                     "2.5", "--out", "report"]) == 0
    finally:
        os.chdir(cwd)
    return work / "report"


@pytest.mark.parametrize("name", FILES)
def test_report_matches_golden(generated, name):
    produced = (generated / name).read_bytes()
    if os.environ.get("UPDATE_GOLDEN") == "1":
        GOLDEN.mkdir(parents=True, exist_ok=True)
        (GOLDEN / name).write_bytes(produced)
    assert produced == (GOLDEN / name).read_bytes(), f"{name} differs; see this module's docstring"


def test_golden_week_has_previous_week_and_sums(generated):
    doc = json.loads((generated / "report.json").read_text())
    assert doc["start"] == "2026-11-30T00:00:00Z" and doc["end"] == "2026-12-07T00:00:00Z"
    assert doc["provisioned_gpu_hours"] == 32 * 7 * 24
    assert sum(doc["categories_gpu_hours"].values()) == pytest.approx(32 * 7 * 24, abs=1e-3)
    assert doc["report"]["week_over_week"]["usable_ratio"]["previous"] is not None
    assert doc["report"]["cost"]["price_per_gpu_hour"] == 2.5
    assert doc["data_quality"]["source"] == "gpuslo simulate output sim"
    ET.fromstring((generated / "report.html").read_text().split("\n", 2)[2])


def test_a_week_without_data_is_one_line_and_writes_nothing(generated, capsys):
    out = generated.parent / "none"
    argv = [
        "report",
        "--data",
        str(generated.parent / "sim"),
        "--week",
        "2027-W10",
        "--out",
        str(out),
    ]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "no data in 2027-03-08T00:00:00Z" in err[0]
    assert not out.exists()


def test_the_pipeline_is_one_call_giving_every_artefact_the_cli_writes(generated):
    """`build_report(request)` alone gives the files `gpuslo report` wrote, byte for byte, and
    the report's fleet figures are the engine's (`WeeklyResult.fleet_figures`)."""
    work = generated.parent
    cwd = os.getcwd()
    os.chdir(work)
    try:
        request = ReportRequest(Sources(data="sim"), load_spec(None), week="2026-W49",
                                price_per_gpu_hour=2.5)
        seen = []
        result = build_report(request, progress=seen.append)
        frames, _, _ = read_simulation("sim")
        start, end = parse_week("2026-W49")
        engine = compute_week(Frames(**frames), start, end, load_spec(None)).fleet_figures()
    finally:
        os.chdir(cwd)
    assert seen == list(STAGES)
    assert {name: text.encode() for name, text in result.files.items()} == {
        name: (generated / name).read_bytes() for name in FILES}
    block = result.report.document["report"]
    assert {key: block[key] for key in FLEET_FIGURES} == {k: engine[k] for k in FLEET_FIGURES}
    assert block["figures"]["mttr_by_layer"] == engine["mttr_by_layer"]
