"""`report --training-log` (and journals alone) carry no GPU inventory: provisioned, usable and
unusable-by-layer GPU-hours cannot be known. The headline (terminal, Markdown, HTML) says
"not available" with the reason, never 0.0; the JSON twin writes them null and names the
reason in `not_available`; the causes section agrees. A source with an inventory keeps its
numbers (the negative)."""

from __future__ import annotations

import json
from pathlib import Path

from gpuslo.cli import main
from gpuslo.slo.report import figures
from gpuslo.slo.report.markdown import headline

LOG = Path(__file__).parent.parent / "goodput" / "data" / "torchtitan_crash_restart.log"
WHY = "training logs carry no GPU inventory or verdicts"
LABELS = ("provisioned GPU-hours", "usable GPU-hours",
          "unusable GPU-hours by layer (provisioned − usable)")


def test_training_log_headline_says_not_available(tmp_path, capsys):
    out = tmp_path / "out"
    assert main(["report", "--training-log", str(LOG), "--gpus", "8", "--out", str(out),
                 "--format", "md,html,json"]) == 0
    terminal = capsys.readouterr().out
    md = (out / "report.md").read_text()
    html = (out / "report.html").read_text()
    for text in (terminal, md, html):
        assert f"provisioned GPU-hours: — (not available: {WHY})" in text
        assert "usable GPU-hours: — (not available)" in text
        assert "provisioned GPU-hours: 0.0" not in text and "node 0.0, platform 0.0, training " \
            "0.0, observability 0.0" not in text.split("productive GPU-hours")[0]
    assert "unusable capacity not available (" + WHY in md
    doc = json.loads((out / "report.json").read_text())
    keys = ("provisioned_gpu_hours", "usable_gpu_hours", "unusable_gpu_hours_by_layer")
    assert all(doc[k] is None for k in keys)
    assert doc["not_available"] == dict.fromkeys(keys, WHY)
    fig = doc["report"]["figures"]
    assert fig["provisioned"] is None and fig["usable"] is None and fig["unusable_by_layer"] is None
    assert doc["productive_gpu_hours"] > 0  # the jobs' side is known and shown


def test_negative_a_source_with_inventory_keeps_its_numbers():
    doc = {"provisioned_gpu_hours": 12.0, "usable_gpu_hours": 9.0, "usable_ratio": 0.75,
           "unusable_gpu_hours_by_layer": {"node": 3.0}}
    fig = figures.of(doc)
    assert (fig.provisioned, fig.usable, fig.unusable_by_layer["node"]) == (12.0, 9.0, 3.0)
    shown = dict(headline(doc))
    assert shown["provisioned GPU-hours"] == "12.0" and shown["usable GPU-hours"] == "9.0"
    assert shown[LABELS[2]].startswith("node 3.0")


def test_negative_zero_provisioned_without_a_reason_stays_zero():
    """A window with an inventory and no time in it is 0.0, a number, not 'not available'."""
    fig = figures.of({"provisioned_gpu_hours": 0.0, "usable_gpu_hours": 0.0})
    assert fig.provisioned == 0.0 and dict(headline({}))[LABELS[0]] == "0.0"
