"""One number per quantity: on the demo's simulated 1,000-GPU week and on the StepFun trace, the
header, the tables, the plots and the JSON show the same value for every quantity of the
report's model (gpuslo.slo.report.figures). The simulated week used to read 149,677.0 productive
GPU-hours in the header and 149,638.1 in the tables; StepFun called all usable time idle and put
4,672 "GPU fault starts" beside a table of 584 faults."""

from __future__ import annotations

import json
import re

import pytest
from conftest import DATASETS, simulate_demo_week

from gpuslo import names
from gpuslo.cli import main
from gpuslo.slo.report.figures import NOT_ALLOCATED, Figures
from gpuslo.slo.report.markdown import GOODPUT_LABEL
from gpuslo.slo.report.model import hours, mttr_text, ratio

STEPFUN = DATASETS / "stepfun_infinitehbd" / "fault_trace.json"


def _report(out, *args) -> dict:
    assert main(["report", *args, "--out", str(out), "--format", "md,html,json"]) == 0
    doc = json.loads((out / "report.json").read_text())
    doc["_md"] = (out / "report.md").read_text()
    doc["_html"] = (out / "report.html").read_text()
    return doc


@pytest.fixture(scope="module")
def simulated(tmp_path_factory) -> dict:
    work = tmp_path_factory.mktemp("week")
    simulate_demo_week(work / "sim")
    return _report(work / "report", "--data", str(work / "sim"), "--week", "2026-W48")


@pytest.fixture(scope="module")
def stepfun(tmp_path_factory) -> dict:
    out = tmp_path_factory.mktemp("stepfun") / "report"
    return _report(out, "--trace", str(STEPFUN), "--trace-format", "stepfun")


def header(md: str) -> dict[str, str]:
    """The Markdown header's `- label: value` items."""
    head = md.split("\n## ", 1)[0]
    return dict(re.findall(r"^- (.+): (.*)$", head, re.M))


def table(md: str, *columns: str) -> dict[str, list[str]]:
    """The Markdown table whose header starts with `columns`: first cell -> the other cells."""
    lines = md.splitlines()
    start = lines.index(next(x for x in lines if x.startswith(f"| {' | '.join(columns)} |")))
    rows = {}
    for line in lines[start + 2 :]:
        if not line.startswith("|"):
            break
        cells = [c.strip() for c in line.strip("|").split(" | ")]
        rows[cells[0]] = cells[1:]
    return rows


@pytest.mark.parametrize("which", ["simulated", "stepfun"])
def test_json_header_tables_and_plots_agree(which, request):
    doc = request.getfixturevalue(which)
    fig = Figures(**doc["report"]["figures"])
    md, page = doc["_md"], doc["_html"]
    # JSON: the engine's keys and the model
    assert doc["provisioned_gpu_hours"] == fig.provisioned
    assert doc["usable_gpu_hours"] == fig.usable and doc["usable_ratio"] == fig.usable_ratio
    assert doc["goodput_ratio"] == fig.goodput_ratio
    assert doc["productive_gpu_hours"] == fig.productive and fig.productive_basis.startswith("cap")
    assert doc["lost_gpu_hours_by_layer"] == fig.lost_by_layer
    # header
    top = header(md)
    assert top["provisioned GPU-hours"] == hours(fig.provisioned)
    assert top["usable GPU-hours"] == hours(fig.usable)
    assert top["usable ratio"] == ratio(fig.usable_ratio)
    if which == "simulated":
        assert top["productive GPU-hours (capacity accounting)"] == hours(fig.productive)
        assert top[GOODPUT_LABEL] == ratio(fig.goodput_ratio)
    else:  # StepFun has no jobs: no productive 0.0 or goodput — in the header
        assert top["jobs"].startswith("no job data")
        assert not any("productive" in label or "goodput" in label for label in top)
    assert top["MTTR (mean fault duration)"] == mttr_text(fig)
    # tables
    capacity = table(md, "category")
    assert capacity["productive"][0] == hours(fig.productive)
    assert capacity["total (provisioned)"][0] == hours(fig.provisioned)
    assert capacity[fig.not_allocated_label][0] == hours(fig.not_allocated)
    days = table(md, "day") if "| day |" in md else table(md, "7 days from")
    assert sum(float(v[0].replace(",", "")) for v in days.values()) == pytest.approx(
        fig.provisioned, abs=0.1 * len(days)
    )
    lost = table(md, "layer", "unusable GPU-hours")
    for layer in names.LAYERS:
        assert lost[layer][2] == hours(fig.lost_by_layer[layer])
    assert f"{hours(fig.lost)} GPU-hours lost in total" in md
    assert f"Lost GPU-hours by layer: {fig.lost:,.1f} in total" in page  # the causes plot
    # HTML shows the Markdown's header and tables
    for label, value in top.items():
        assert f"<li>{label}: {value}</li>" in page
    assert f"<td>productive</td><td>{hours(fig.productive)}</td>" in page


def test_the_simulated_week_has_one_productive_figure(simulated):
    fig = Figures(**simulated["report"]["figures"])
    shown = set(re.findall(r"(\d{3},\d{3}\.\d) ", simulated["_md"]))  # 100,000+ GPU-hours
    assert hours(fig.productive) in shown
    assert hours(simulated["job_productive_gpu_hours"]) not in shown  # the journals' own sum
    waterfall = table(simulated["_md"], "badput waterfall")
    assert waterfall["allocated"][0] == hours(fig.allocated)
    assert waterfall["= productive"] == [
        hours(fig.productive),
        ratio(fig.productive_share_of_allocated),
    ]
    assert (
        f"{fig.allocated:,.1f} allocated to {fig.productive:,.1f} productive"
        in (simulated["_html"])
    )
    lost = sum(fig.badput_by_category.values())
    assert f"own scale: {lost:,.1f} GPU-hours of badput" in simulated["_html"]
    assert f"Goodput ratio {ratio(fig.goodput_ratio)}" in simulated["_md"]
    assert "goodput ratio" not in simulated["_md"].split("badput waterfall", 1)[1].lower()


def test_stepfun_without_job_data_is_not_allocated_and_counts_faults_in_the_tables_unit(stepfun):
    fig = Figures(**stepfun["report"]["figures"])
    md = stepfun["_md"]
    assert fig.not_allocated_label == NOT_ALLOCATED
    assert NOT_ALLOCATED in table(md, "category") and "idle" not in table(md, "category")
    assert not re.search(r"\bidle\b", md)
    reasons = table(md, "reason")
    faults = sum(int(r[1].replace(",", "")) for r in reasons.values() if len(r) == 6)
    hit = sum(int(r[2].replace(",", "")) for r in reasons.values() if len(r) == 6)
    assert (faults, hit) == (fig.faults, fig.gpus_hit) == (584, stepfun["gpu_fault_starts"])
    assert f"{fig.faults:,} faults hit {fig.gpus_hit:,} GPUs" in md
    # MTTR per layer beside the overall figure: node hardware is not averaged with platform
    assert set(fig.mttr_by_layer) == {names.LAYER_NODE, names.LAYER_PLATFORM}
    assert "MTTI —" not in md and "MTTI not available:" in md
