"""Regressions from a newcomer's attempt to break `gpuslo report`: each test starts from the
command or input that used to give a traceback or a misleading figure."""

from __future__ import annotations

import json

import pandas as pd
import pytest
from conftest import DATASETS

from gpuslo import names
from gpuslo.cli import main
from gpuslo.slo.engine import compute_week
from gpuslo.slo.report.build import report_of
from gpuslo.slo.report.markdown import GOODPUT_LABEL, headline, render_markdown
from gpuslo.slo.sources import traces
from gpuslo.slo_spec import SloSpec

STEPFUN = DATASETS / "stepfun_infinitehbd" / "fault_trace.json"
needs_stepfun = pytest.mark.skipif(not STEPFUN.exists(), reason="shared datasets not present")


def fault(node, days, kind, desc="GPU xid Error"):
    return {"node_id": node, "event_time": days, "event_type": kind,
            "fault_type": {"Level": "Hardware Failure", "Class": "GPU", "Desc": desc}}


def _one_line_error(capsys) -> str:
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1, err
    return err[0]


@pytest.mark.parametrize(
    "flag, value", [("--gpus-per-node", "0"), ("--nodes", "-4"), ("--nodes", "0")]
)
def test_a_fleet_size_below_one_names_the_flag(tmp_path, capsys, flag, value):
    # --gpus-per-node 0 was a KeyError traceback; --nodes -4 said "the trace names 2 nodes".
    path = tmp_path / "t.json"
    path.write_text(json.dumps([fault("a", 0.5, "fault_start")]))
    out = tmp_path / "out"
    assert main(["report", "--trace", str(path), "--trace-format", "stepfun", flag, value,
                 "--out", str(out)]) == 2
    assert _one_line_error(capsys) == f"gpuslo report: error: {flag} must be 1 or more, got {value}"
    assert not out.exists()


def test_the_library_refuses_an_empty_inventory_too(tmp_path):
    path = tmp_path / "t.json"
    path.write_text(json.dumps([fault("a", 0.5, "fault_start")]))
    with pytest.raises(traces.InputError, match="--gpus-per-node must be 1 or more"):
        traces.load_trace(path, "stepfun", nodes=2, gpus_per_node=0)


def test_binary_stepfun_input_says_not_json(tmp_path, capsys):
    path = tmp_path / "g.bin"
    path.write_bytes(b"\x8e\xff\x00" * 1000)
    assert (
        main(
            [
                "report",
                "--trace",
                str(path),
                "--trace-format",
                "stepfun",
                "--out",
                str(tmp_path / "o"),
            ]
        )
        == 2
    )
    line = _one_line_error(capsys)
    assert "g.bin:1: not JSON at column 1" in line and "CSV" not in line


def test_a_last_fault_starting_at_midnight_is_inside_the_span(tmp_path):
    # 1 node x 2 GPUs; the fault starts at day 2.0 exactly and never ends: the span runs to day 3,
    # so the fault holds 2 GPUs x 24 h (it used to be cut to nothing at day 2).
    path = tmp_path / "t.json"
    path.write_text(json.dumps([fault("a", 0.5, "fault_start"), fault("a", 1.0, "fault_end"),
                                fault("a", 2.0, "fault_start")]))
    frames = traces.load_trace(path, "stepfun", nodes=1, gpus_per_node=2)
    result = compute_week(frames, None, None, SloSpec())
    assert result.end == traces.STEPFUN_EPOCH + pd.Timedelta(days=3)
    assert result.lost_gpu_hours_by_reason == {"xid_fatal": 2 * 12 + 2 * 24}


def test_a_window_past_the_trace_is_not_provisioned_and_the_report_says_so(tmp_path):
    # 1 node x 2 GPUs, events on days 0.5 and 1.0: the trace covers days 0..2. A 7-day window
    # from day 0 provisions 2 GPUs x 48 h (not 168 h with 120 h of no_data).
    path = tmp_path / "t.json"
    path.write_text(json.dumps([fault("a", 0.5, "fault_start"), fault("a", 1.0, "fault_end")]))
    frames = traces.load_trace(path, "stepfun", nodes=1, gpus_per_node=2)
    start = traces.STEPFUN_EPOCH
    result = compute_week(frames, start, start + pd.Timedelta(days=7), SloSpec())
    assert result.provisioned_gpu_hours == 2 * 48
    assert result.usable_gpu_hours == 2 * 48 - 2 * 12
    assert result.data_quality["no_data_gpu_hours"] == 0
    doc = result.to_json_dict()
    assert doc["data_quality"]["covered"] == {
        "start": "2024-03-30T00:00:00Z",
        "end": "2024-04-01T00:00:00Z",
        "partial": True,
    }
    assert (
        "data covers",
        "2024-03-30T00:00:00Z to 2024-04-01T00:00:00Z only; the rest of the window has no data",
    ) in headline(doc)


@needs_stepfun
def test_stepfun_week_11_of_2025_counts_only_the_days_the_trace_observed(tmp_path, capsys):
    out = tmp_path / "r"
    assert (
        main(
            [
                "report",
                "--trace",
                str(STEPFUN),
                "--trace-format",
                "stepfun",
                "--week",
                "2025-W11",
                "--out",
                str(out),
                "--format",
                "json,md",
            ]
        )
        == 0
    )
    doc = json.loads((out / "report.json").read_text())
    assert doc["usable_ratio"] > 0.9  # was 0.567: the days after the last event were no_data
    assert doc["data_quality"]["no_data_gpu_hours"] == 0
    assert doc["data_quality"]["covered"]["partial"] is True
    assert "- data covers: 2025-03-10T00:00:00Z to " in (out / "report.md").read_text()
    assert "data covers:" in capsys.readouterr().out


def _simulated(tmp_path, *extra) -> dict:
    sim, out = tmp_path / "sim", tmp_path / "rep"
    assert main(["simulate", "--nodes", "2", "--days", "2", "--seed", "5", "--fault-rate", "200",
                 "--out", str(sim)]) == 0
    assert main(["report", *extra, "--out", str(out), "--format", "json,md",
                 *(["--data", str(sim)] if not extra else [])]) == 0
    return json.loads((out / "report.json").read_text()) | {"_md": (out / "report.md").read_text()}


def test_unusable_by_layer_is_provisioned_minus_usable_and_badput_is_the_rest(tmp_path):
    doc = _simulated(tmp_path)
    unusable, badput = doc["unusable_gpu_hours_by_layer"], doc["job_badput_gpu_hours_by_layer"]
    assert sum(unusable.values()) == pytest.approx(
        doc["provisioned_gpu_hours"] - doc["usable_gpu_hours"], abs=1e-4
    )
    daily = sum(day[f"lost_{layer}"] for day in doc["daily"] for layer in names.LAYERS)
    assert daily == pytest.approx(
        sum(unusable.values()), abs=1e-4
    )  # the plot holds what its title says
    for layer in names.LAYERS:
        assert unusable[layer] + badput[layer] == pytest.approx(
            doc["lost_gpu_hours_by_layer"][layer], abs=1e-4
        )
    labels = [label for label, _ in headline(doc)]
    assert "lost GPU-hours by layer" not in labels
    assert "unusable GPU-hours by layer (provisioned − usable)" in labels
    assert (
        "| layer | unusable GPU-hours | job badput GPU-hours | lost GPU-hours | share of lost |"
        in doc["_md"]
    )
    assert "DESIGN.md" not in doc["_md"] and "job badput |" not in doc["_md"]


def test_journals_alone_headline_the_journals_goodput(tmp_path):
    # `--journals` alone headlined "productive 0.0, goodput —" beside a job table at 0.667.
    sim = tmp_path / "sim"
    assert main(["simulate", "--nodes", "2", "--days", "2", "--seed", "5", "--out", str(sim)]) == 0
    doc = _simulated(tmp_path / "j", "--journals", str(sim / "journals"))
    figures = dict(headline(doc))
    assert doc["goodput_ratio"] == pytest.approx(
        doc["job_productive_gpu_hours"] / doc["job_gpu_hours"], abs=1e-6
    )
    assert figures[GOODPUT_LABEL] == f"{doc['goodput_ratio']:.4f}"
    # no capacity accounting: productive comes from the journals, and says so
    assert figures["productive GPU-hours (journals)"] == f"{doc['job_productive_gpu_hours']:,.1f}"
    assert float(figures["productive GPU-hours (journals)"].replace(",", "")) > 0


def _trace_doc(**over) -> dict:
    path_doc = {
        "interruptions": 0,
        "interruptions_per_1000_gpu_days": 4.18,
        "interruption_basis": "faults",
        "gpu_fault_starts": 5,
        "data_quality": {
            "cannot_fill": {
                "interruptions": (
                    "the trace has no jobs, so interruptions are counted per fault, not per job"
                )
            }
        },
    }
    return path_doc | over


def test_the_interruption_rate_names_its_basis():
    # "0 job interruptions; 4.18 per 1000 GPU-days" contradicted itself on a trace.
    report = report_of(_trace_doc(), None, None)
    line = next(s for s in report.sections if s.key == "interruptions").lines[0]
    assert "0 job interruptions" not in line
    # the count is in the rate's unit (GPU fault starts = GPUs hit), beside the faults
    assert line.endswith(
        "instead 0 faults hit 5 GPUs (GPU fault starts, the table's GPUs hit): 4.1800 GPU fault "
        "starts per 1000 provisioned GPU-days."
    )
    jobs = report_of(_trace_doc(interruptions=2, interruption_basis="jobs"), None, None)
    assert next(s for s in jobs.sections if s.key == "interruptions").lines[0] == (
        "2 job interruptions: 4.1800 per 1000 allocated GPU-days.")


def test_badput_reasons_use_the_layer_vocabulary():
    doc = {
        "lost_gpu_hours_by_layer": {"training": 3.0},
        "lost_gpu_hours_by_reason": {"checkpoint_save": 3.0},
    }
    section = next(s for s in report_of(doc, None, None).sections if s.key == "causes")
    assert section.tables[1].rows == (("checkpoint_save", names.LAYER_TRAINING, "3.0", "1.0000"),)


def test_burn_factors_print_like_the_burn_rates():
    rows = [{"severity": "ticket", "long_window": "3d", "short_window": "6h", "factor": 0.933333,
             "long_burn_rate": 1.2397, "short_burn_rate": 0.0, "firing": False},
            {"severity": "page", "long_window": "1h", "short_window": "5m", "factor": 13.44,
             "long_burn_rate": 0.0, "short_burn_rate": 0.0, "firing": False}]
    section = next(
        s for s in report_of({"burn_rates": rows}, None, None).sections if s.key == "slos"
    )
    assert [row[2] for row in section.tables[1].rows] == ["0.9333", "13.4400"]


def test_a_failed_format_leaves_no_other_format_behind(tmp_path, capsys):
    sim, out = tmp_path / "sim", tmp_path / "rep"
    assert main(["simulate", "--nodes", "1", "--days", "1", "--out", str(sim)]) == 0
    (out / "report.json").mkdir(parents=True)  # report.json cannot be written
    assert main(["report", "--data", str(sim), "--out", str(out)]) == 2
    assert "report.json: cannot write" in _one_line_error(capsys)
    assert sorted(p.name for p in out.iterdir()) == [
        "report.json"
    ]  # no report.md, report.html, temp files


def test_markdown_never_cites_a_file_outside_the_repo():
    assert "DESIGN.md" not in render_markdown(report_of({"gpus": 1, "nodes": 1}, None, None))
