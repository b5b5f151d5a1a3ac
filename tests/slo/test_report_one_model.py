"""One model of every figure, whatever the source (issue 27, item 2).

For `--journals` and `--training-log` (no capacity data) report.json's top-level
`badput_gpu_hours_by_category` and `job_badput_gpu_hours_by_layer` were all 0 while
`report.figures` and the waterfall held the badput, and the header said "job badput by layer
0.0". Every figure shown more than once — JSON top level, `report.figures`, the Markdown and HTML
headers, the tables and the summary `gpuslo report` prints — is compared here, on the demo's
journal (one job, interrupted by a fatal Xid and restarted), on the shared training logs and on
the simulated week (capacity accounting). `gpuslo goodput` and `gpuslo report --training-log`
give one log the same slowdown GPU-seconds.
"""

from __future__ import annotations

import json
import re

import pytest
from conftest import SHARED, simulate_demo_week

from gpuslo import names
from gpuslo.cli import main
from gpuslo.demo.job import record_job
from gpuslo.slo.report.figures import Figures
from gpuslo.slo.report.markdown import BADPUT_LABEL
from gpuslo.slo.report.model import hours

LOGS = SHARED / "training_logs" / "cases"
SLOW_LOG = LOGS / "T15_llama2-accessory-epoch-end-checkpoint-save-3m37s.log"


def _report(tmp, capsys, *args) -> dict:
    out = tmp / "report"
    assert main(["report", *args, "--out", str(out)]) == 0
    doc = json.loads((out / "report.json").read_text())
    doc["_md"], doc["_html"] = (out / "report.md").read_text(), (out / "report.html").read_text()
    doc["_printed"] = capsys.readouterr().out
    return doc


@pytest.fixture(scope="module")
def journals(tmp_path_factory) -> tuple:
    root = tmp_path_factory.mktemp("journals")
    summary = record_job(root / "journals", now=1_780_000_000.0)
    return root, summary


@pytest.fixture(params=["journals", "training-logs", "simulated"])
def doc(request, tmp_path, capsys, journals) -> dict:
    if request.param == "journals":
        return _report(tmp_path, capsys, "--journals", str(journals[0] / "journals"))
    if request.param == "training-logs":
        return _report(tmp_path, capsys, "--training-log", str(LOGS), "--gpus", "8")
    simulate_demo_week(tmp_path / "sim")
    return _report(tmp_path, capsys, "--data", str(tmp_path / "sim"), "--week", "2026-W48")


def _header(text: str, prefix: str) -> dict[str, str]:
    return dict(re.findall(rf"^{prefix}(.+?): (.*)$", text, re.M))


def test_every_duplicated_figure_has_one_value(doc):
    fig = Figures(**doc["report"]["figures"])
    # JSON top level = the model
    assert doc["badput_gpu_hours_by_category"] == fig.badput_by_category
    assert doc["job_badput_gpu_hours_by_layer"] == fig.job_badput_by_layer
    assert doc["lost_gpu_hours_by_layer"] == fig.lost_by_layer
    assert doc["allocated_gpu_hours"] == fig.allocated
    assert doc["productive_gpu_hours"] == fig.productive
    assert doc["job_basis"] == fig.productive_basis
    # the job badput by layer is the badput by category, attributed (slowdown included)
    assert sum(fig.job_badput_by_layer.values()) == pytest.approx(
        sum(fig.badput_by_category.values()), abs=1e-5)
    assert sum(fig.badput_by_category.values()) > 0
    # the Markdown header, the HTML header and the printed summary say the same
    md = _header(doc["_md"].split("\n## ", 1)[0], "- ")
    html = dict(re.findall(r"<li>(.+?): (.*?)</li>", doc["_html"].split("<section", 1)[0]))
    printed = _header(doc["_printed"], "  ")
    printed.pop("wrote", None)
    assert md == printed
    assert {k: v.replace("&gt;", ">") for k, v in md.items()} == {
        k.replace("&gt;", ">"): v.replace("&gt;", ">") for k, v in html.items()}
    assert md[BADPUT_LABEL] == ", ".join(
        f"{layer} {hours(fig.job_badput_by_layer[layer])}" for layer in names.LAYERS)
    # the waterfall table (there is one whenever some GPU-time was allocated)
    assert fig.allocated > 0 and "| badput waterfall |" in doc["_md"]
    waterfall = dict(re.findall(r"^\| − (\w+) \| ([\d,.]+) \|", doc["_md"], re.M))
    assert waterfall == {c: hours(v) for c, v in fig.badput_by_category.items()}


def test_the_job_figures_name_what_was_read(doc):
    """A newcomer's `report --training-log` said `productive GPU-hours (journals)`, `job
    GPU-time in the journals` and `Per-job goodput from the journals only`: it read training
    logs. The words follow `Frames.jobs_from` (the basis without a capacity accounting)."""
    said = doc["_md"].split("\n## The crawl", 1)[0] + doc["_printed"]
    if doc["data_quality"]["source"].startswith("training logs"):
        assert doc["job_basis"] == "training logs" and "journal" not in said.lower()
        assert "productive GPU-hours (training logs)" in said
        assert "job GPU-time in the training logs)" in said
        assert "jobs' training logs record" in said or "from the training logs only" in said
    else:
        assert "job GPU-time in the journals)" in said


def test_the_journal_job_badput_is_on_its_layers(journals, tmp_path, capsys):
    """The demo job: 120 s initialization, 120 s saves, 300 s wasted progress, 600 s recovery
    and 60 s restore on one GPU: 1,200 GPU-s of badput. No node data, so no fault can be matched
    to its interruption: it goes on the layer of the job's own account, as the calculator counts
    it (`interruption_layer`): the demo's `job_end("failed", layer="node")` puts its wasted
    progress and recovery on node; the phases are the job's own (training)."""
    root, summary = journals
    doc = _report(tmp_path, capsys, "--journals", str(root / "journals"))
    badput = doc["badput_gpu_hours_by_category"]
    assert badput["recovery"] == pytest.approx(600 / 3600, abs=1e-6)
    assert badput["wasted_progress"] == pytest.approx(300 / 3600, abs=1e-6)
    by_layer = doc["job_badput_gpu_hours_by_layer"]
    assert by_layer[names.LAYER_TRAINING] == pytest.approx((120 + 120 + 60) / 3600, abs=1e-5)
    assert by_layer[names.LAYER_NODE] == pytest.approx((300 + 600) / 3600, abs=1e-5)


def test_goodput_and_report_file_one_slowdown_for_one_log(tmp_path, capsys):
    main(["goodput", "--gpus", "8", "--format", "json", str(SLOW_LOG)])
    facts = json.loads(capsys.readouterr().out)
    doc = _report(tmp_path, capsys, "--training-log", str(SLOW_LOG), "--gpus", "8")
    filed = facts["goodput"]["gpu_seconds"][names.CATEGORY_SLOWDOWN]
    assert filed > 0
    assert doc["badput_gpu_hours_by_category"][names.CATEGORY_SLOWDOWN] == pytest.approx(
        filed / 3600, abs=1e-6)


def test_a_training_log_with_nothing_to_report_says_why(tmp_path, capsys):
    """T14 (torchrun: a worker fails, the agent restarts, rendezvous fails) prints no step: the
    report said `the data holds no timestamps (empty trace or directory)` of a stamped log."""
    log = next(LOGS.glob("T14_*.log"))
    assert main(["report", "--training-log", str(log), "--gpus", "8", "--out",
                 str(tmp_path / "out")]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no training log to report on" in err, err
    assert "no progress lines" in err and "timestamps" not in err, err
