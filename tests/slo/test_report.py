"""The weekly report: derived figures by hand, sections that say why they are empty, escaping,
well-formed HTML, deterministic plots, and the CLI's one-line errors."""

from __future__ import annotations

import copy
import json
import xml.etree.ElementTree as ET
from html.parser import HTMLParser

import pandas as pd
import pytest

from gpuslo import names
from gpuslo.cli import main
from gpuslo.slo import reliability
from gpuslo.slo.report import plots
from gpuslo.slo.report.build import derived, report_of, week_over_week
from gpuslo.slo.report.html import render_html
from gpuslo.slo.report.inputs import parse_week
from gpuslo.slo.report.markdown import render_markdown

EVIL = '<script>alert("x")</script> & | pipe'


# A WeeklyResult-shaped dict for 16 GPUs over one day (384 GPU-hours).
_DOC = {
    "start": "2026-11-23T00:00:00Z",
    "end": "2026-11-24T00:00:00Z",
    "gpus": 16,
    "nodes": 2,
    "provisioned_gpu_hours": 384.0,
    "usable_gpu_hours": 360.0,
    "usable_ratio": 0.9375,
    "productive_gpu_hours": 300.0,
    "allocated_gpu_hours": 320.0,
    "goodput_ratio": 0.9375,
    "categories_gpu_hours": {
        "no_data": 4.0,
        "unknown": 4.0,
        "unhealthy_node": 8.0,
        "unschedulable": 8.0,
        "idle": 40.0,
        "productive": 300.0,
        "checkpoint_save": 12.0,
        "wasted_progress": 4.0,
        "recovery": 4.0,
    },
    "lost_gpu_hours_by_layer": {
        "node": 12.0,
        "platform": 8.0,
        "training": 12.0,
        "observability": 8.0,
    },
    "lost_gpu_hours_by_reason": {
        "xid_fatal": 12.0,
        "drained": 8.0,
        "checkpoint_save": 12.0,
        "no_data": 4.0,
        "stale_data": 4.0,
    },
    "badput_gpu_hours_by_category": {
        "checkpoint_save": 12.0,
        "wasted_progress": 4.0,
        "recovery": 4.0,
    },
    "interruptions": 2,
    "interruptions_per_1000_gpu_days": 150.0,
    "interruption_basis": "jobs",
    "slos": {
        names.SLO_USABLE_GPU: {
            "name": names.SLO_USABLE_GPU,
            "objective": 0.98,
            "sli": 0.9375,
            "good": 1.0,
            "total": 1.0,
            "compliant": False,
            "error_budget_remaining": -0.5,
            "burn_rate": 3.125,
        }
    },
    "burn_rates": [],
    # job A: 8 GPUs × 20 h wall, 150 GPU-h productive; job B: 8 GPUs × 20 h, 150 productive
    "jobs": [
        {
            "job": EVIL,
            "gpus": 8,
            "wall_seconds": 72000.0,
            "productive": 540000.0,
            "allocated_gpu_seconds": 576000.0,
            "goodput_ratio": 0.9375,
            "ettr": 0.9375,
        },
        {
            "job": "job-b",
            "gpus": 8,
            "wall_seconds": 72000.0,
            "productive": 540000.0,
            "allocated_gpu_seconds": 576000.0,
            "goodput_ratio": 0.9375,
            "ettr": 0.9375,
        },
    ],
    # 3 faults of 2 h ended, 1 still open; 1 fault of 5 h ended
    "reliability": [
        {
            "reason": "xid_fatal",
            "layer": "node",
            "faults": 4,
            "open": 1,
            "mtbf_gpu_hours": 96.0,
            "mttr_hours": 2.0,
        },
        {
            "reason": EVIL,
            "layer": "node",
            "faults": 1,
            "open": 0,
            "mtbf_gpu_hours": 384.0,
            "mttr_hours": 5.0,
        },
    ],
    "lemon_nodes": [{"node": EVIL, "faults": 4, "faulty_hours": 6.0, "reasons": "xid_fatal"}],
    "blast_radius": [
        {
            "job": "job-b",
            "time": "2026-11-23T05:00:00Z",
            "fault_node": "n1",
            "fault_uuid": "GPU-1",
            "reason": "xid_fatal",
            "layer": "node",
            "job_lost_gpu_hours": 8.0,
            "fault_gpu_hours": 2.0,
            "blast_radius": 4.0,
        }
    ],
    "daily": [
        {
            "day": "2026-11-23T00:00:00Z",
            "provisioned_gpu_hours": 384.0,
            "usable_gpu_hours": 360.0,
            "usable_ratio": 0.9375,
            "objective": 0.98,
            "lost_node": 8.0,
            "lost_platform": 8.0,
            "lost_training": 0.0,
            "lost_observability": 8.0,
        }
    ],
    "data_quality": {
        "no_data_gpu_hours": 4.0,
        "unknown_gpu_hours": 4.0,
        "blind_ratio": 8 / 384,
        "blind_gpu_hours_by_reason": {"no_data": 4.0, "stale_data": 4.0},
        "jobs_without_journal": [],
        "cannot_fill": {},
        "source": EVIL,
    },
}


def _doc(**over) -> dict:
    """A fresh copy of `_DOC` with `over` replacing its top-level keys."""
    return {**copy.deepcopy(_DOC), **over}


def _fleet(doc: dict) -> dict:
    """What `WeeklyResult.fleet_figures()` gives for `doc`'s tables (the engine's functions)."""
    jobs, table = pd.DataFrame(doc["jobs"]), pd.DataFrame(doc["reliability"])
    mttr, by_layer = reliability.mean_repair(table)
    return {"fleet_ettr": reliability.fleet_ettr(jobs),
            "mtti_hours": reliability.mtti_hours(jobs, doc["interruptions"]),
            "mttr_hours": mttr, "mttr_by_layer": by_layer,
            "lost_gpu_hours": sum(doc["lost_gpu_hours_by_layer"].values())}


def test_the_engine_derives_the_fleet_figures_by_hand():
    fleet = _fleet(_doc())
    assert fleet["fleet_ettr"] == pytest.approx(1080000 / (2 * 8 * 72000))  # 0.9375
    assert fleet["mtti_hours"] == pytest.approx(40 / 2)  # 2 jobs × 20 wall hours / 2 interruptions
    assert fleet["mttr_hours"] == pytest.approx((2.0 * 3 + 5.0 * 1) / 4)  # open faults left out
    assert fleet["mttr_by_layer"] == {"node": {"mttr_hours": pytest.approx(11 / 4), "faults": 4}}
    empty = pd.DataFrame(columns=["layer", "faults", "open", "mttr_hours"])
    assert reliability.mean_repair(empty) == (None, {})
    assert reliability.fleet_ettr(pd.DataFrame(_doc()["jobs"]).iloc[:0]) is None


def test_the_report_shows_the_engine_figures_and_prices_the_loss():
    extra = derived(_doc(), _fleet(_doc()), price=2.0)
    assert extra["fleet_ettr"] == pytest.approx(0.9375) and extra["lost_gpu_hours"] == 40.0
    assert "mttr_by_layer" not in extra  # it goes to the Figures model, not the report block
    assert extra["cost"] == {"price_per_gpu_hour": 2.0, "lost": 80.0,
                             "by_layer": {"node": 24.0, "observability": 16.0, "platform": 16.0,
                                          "training": 24.0}}
    assert derived(_doc(), _fleet(_doc()), price=None)["cost"] is None
    # no engine figures: the report says none, it never computes its own
    assert derived(_doc(), None, price=None)["fleet_ettr"] is None


def test_week_over_week_changes():
    before = _doc(usable_ratio=0.9, provisioned_gpu_hours=400.0)
    wow = week_over_week(_doc(), before)
    assert wow["usable_ratio"] == {"current": 0.9375, "previous": 0.9, "change": 0.0375}
    assert wow["provisioned_gpu_hours"]["change"] == -16.0
    assert week_over_week(_doc(), None) is None


def test_sections_without_data_say_why():
    doc = _doc(jobs=[], allocated_gpu_hours=0.0, blast_radius=[], interruptions=0,
               data_quality={**_doc()["data_quality"],
                             "cannot_fill": {"goodput": "the StepFun trace has no jobs"}})
    report = report_of(doc, None, None)
    missing = {s.key: s.missing for s in report.sections if s.missing}
    assert missing["goodput"] == "the StepFun trace has no jobs"
    assert "price per GPU-hour" in missing["cost"]
    assert "previous window" in missing["week_over_week"]
    assert "blast_radius" in missing
    text = render_markdown(report)
    assert "Not available: the StepFun trace has no jobs." in text


def test_json_document_has_the_issue_keys_and_the_report_extras():
    document = report_of(_doc(), None, 1.0, _fleet(_doc())).document
    for key in ("start", "end", "provisioned_gpu_hours", "usable_gpu_hours", "usable_ratio",
                "productive_gpu_hours", "goodput_ratio", "lost_gpu_hours_by_layer",
                "lost_gpu_hours_by_reason", "interruptions_per_1000_gpu_days", "slos",
                "data_quality"):
        assert key in document
    assert set(document["lost_gpu_hours_by_layer"]) == set(names.LAYERS)
    assert document["report"]["cost"]["lost"] == 40.0
    json.dumps(document, allow_nan=False)


class _Strict(HTMLParser):
    def __init__(self) -> None:
        super().__init__()
        self.stack: list[str] = []
        self.scripts = 0

    def handle_starttag(self, tag, attrs):
        self.scripts += tag == "script"
        if tag not in ("meta", "br", "img", "path", "use", "rect", "circle", "line"):
            self.stack.append(tag)

    def handle_endtag(self, tag):
        if tag in ("meta", "br", "img", "path", "use", "rect", "circle", "line"):
            return
        assert self.stack and self.stack[-1] == tag, (tag, self.stack[-5:])
        self.stack.pop()


def test_html_escapes_every_label_and_is_well_formed():
    page = render_html(report_of(_doc(), _doc(), 2.0))
    assert "<script>" not in page and "&lt;script&gt;" in page
    parser = _Strict()
    parser.feed(page)
    parser.close()
    assert parser.scripts == 0 and parser.stack == []
    body = page.split("\n", 2)[2]  # after the DOCTYPE and the generated-file comment
    root = ET.fromstring(body)
    svgs = root.findall(".//{http://www.w3.org/2000/svg}svg")
    assert len(svgs) == 3  # usable ratio per day, lost GPU-hours by layer per day, waterfall


def test_markdown_escapes_table_pipes_and_has_a_header():
    text = render_markdown(report_of(_doc(), None, None))
    assert text.startswith("<!-- gpuslo report (generated file; do not edit) -->")
    assert "\\| pipe" in text
    rows = [line for line in text.splitlines() if line.startswith("| ") and "alert(" in line]
    assert rows and all(line.count(" | ") == rows[0].count(" | ") for line in rows[:1])
    # issue 12: Markdown passes raw HTML through, so text from the inputs is escaped there too
    assert "<script>" not in text and "&lt;script&gt;alert" in text


def test_plots_are_byte_stable_and_carry_no_date():
    doc = _doc()
    first = plots.lost_by_layer_per_day(doc["daily"])
    assert first == plots.lost_by_layer_per_day(doc["daily"])
    assert "<dc:date>" not in first and first.startswith("<svg")
    assert plots.badput_waterfall(0.0, {}, 0.0) is None
    assert plots.usable_ratio_per_day([], 0.98) is None


def test_parse_week_is_monday_to_monday_utc():
    start, end = parse_week("2026-W48")
    assert start.isoformat() == "2026-11-23T00:00:00+00:00" and (end - start).days == 7


@pytest.mark.parametrize("args, words", [
    (["--data", "{tmp}/nothing"], "no such directory"),
    (["--data", "{tmp}", "--week", "2026-W48", "--start", "2026-11-23"], "either --week"),
    (["--data", "{tmp}", "--week", "2026-48"], "ISO week"),
    (["--data", "{tmp}", "--format", "pdf"], "--format"),
    (["--week", "2026-W48"], "give one source"),
    (["--trace", "{tmp}/x.json"], "--trace-format"),
    (["--data", "{tmp}", "--start", "2026-11-23"], "go together"),
    (["--data", "{tmp}", "--slo", "{tmp}/missing.yaml"], "missing.yaml"),
])
def test_bad_input_is_one_line_exit_2_and_writes_nothing(tmp_path, capsys, args, words):
    out = tmp_path / "out"
    argv = ["report", *[a.format(tmp=tmp_path) for a in args], "--out", str(out)]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("gpuslo report: error:") and words in err[0]
    assert not out.exists()


def test_an_slo_the_source_cannot_measure_is_not_shown_as_met():
    doc = _doc(data_quality={**_doc()["data_quality"],
                             "cannot_fill": {names.SLO_USABLE_GPU: "no heartbeats in a trace"}})
    section = next(s for s in report_of(doc, None, None).sections if s.key == "slos")
    assert section.tables[0].rows[0] == (names.SLO_USABLE_GPU, "0.9800", "—", "—", "—", "—")
    assert any("no heartbeats in a trace" in line for line in section.lines)


def test_long_spans_list_availability_per_7_days():
    day = _doc()["daily"][0]
    daily = [{**day, "day": f"2026-01-{i + 1:02d}T00:00:00Z"} for i in range(31)] * 3
    section = next(s for s in report_of(_doc(daily=daily), None, None).sections
                   if s.key == "availability")
    table = section.tables[0]
    assert table.columns[0] == "7 days from" and len(table.rows) == 14  # ceil(93 / 7)
    assert table.rows[0][1:] == ("2,688.0", "2,520.0", "0.9375")  # 7 × 384, 7 × 360


LINKS = ["[click](javascript:alert(1))", "![x](javascript:alert(2))", "<javascript:alert(3)>",
         "\\[esc](javascript:alert(4))", "[ref]\n\n[ref]: javascript:alert(5)",
         "[data](data:text/html;base64,PHNjcmlwdD4=)", "[[nested](vbscript:x)](y)"]


@pytest.mark.parametrize("evil", LINKS)
def test_markdown_from_hostile_trace_data_forms_no_link(evil):
    """Issue 25 #10: a job, reason, node or source holding Markdown link syntax with a
    `javascript:` (or any) target stays text: rendered by a CommonMark renderer that does not
    filter targets itself, the report has no link and no image, and the text is still there."""
    from markdown_it import MarkdownIt

    doc = json.loads(json.dumps(_doc()).replace(json.dumps(EVIL)[1:-1], json.dumps(evil)[1:-1]))
    text = render_markdown(report_of(doc, None, None))
    renderer = MarkdownIt("commonmark").enable("table")
    renderer.validateLink = lambda url: True  # a renderer that trusts every target
    page = renderer.render(text)
    assert "<a " not in page and "<img" not in page, page
    assert "javascript:alert" not in page or "href" not in page
    assert evil.split("(")[0].split("\n")[0].lstrip("\\!<[") in page
