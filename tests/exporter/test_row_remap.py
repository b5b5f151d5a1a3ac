"""Row remapping as NVIDIA's memory-error document tells it, in every source that reports it: a
remap pending after correctable errors only is warn (reset at the next drain); one pending with
any uncorrectable remapped row, or with that count unreported, is fatal; a remap failure is
fatal. The H200's real outputs are changed one field at a time."""

from __future__ import annotations

import copy
import dataclasses
import json
import re

import pytest
from conftest import CORPUS, FIXTURES, REPO

from gpuslo.exporter.checks.base import CheckContext
from gpuslo.exporter.checks.registry import load_checks
from gpuslo.exporter.evidence.gpu_status import GpuStatus
from gpuslo.exporter.inspect import dcgm, nvidia_smi
from gpuslo.exporter.inspect.kinds import inspect_text
from gpuslo.exporter.inspect.options import InspectOptions
from gpuslo.exporter.policy.gpu import evaluate_gpu
from gpuslo.exporter.runner import Runner

OPTIONS = InspectOptions(csv_columns=None)
H200 = FIXTURES / "h200"
FAKE_NVML = REPO / "gpuslo" / "data" / "nvml_replay"
PAGE = REPO / "tests" / "fixtures" / "dcgm" / "h200_healthy.synthetic.prom"


def remap(findings) -> str | None:
    """The class of the row_remap_pending finding, None when there is none."""
    return next((f.class_ for f in findings if f.signal == "row_remap_pending"), None)


def change(text: str, pattern: str, replacement: str) -> str:
    changed, count = re.subn(pattern, replacement, text, count=1, flags=re.M)
    assert count == 1, pattern
    return changed


@pytest.mark.parametrize(
    ("uncorrectable", "expected"), [(0, "warn"), (3, "fatal"), (None, "fatal")]
)
def test_the_rule(uncorrectable, expected):
    status = GpuStatus(remapped_rows_pending=True, remapped_rows_uncorrectable=uncorrectable)
    (problem,) = evaluate_gpu(status)
    expected_problem = ("row_remap_pending", expected, "drain_and_reset")
    assert (problem.signal, problem.class_, problem.action) == expected_problem
    failure = evaluate_gpu(dataclasses.replace(status, remapped_rows_failure=True))
    assert {p.signal: p.class_ for p in failure}["row_remap_failure"] == "fatal"


@pytest.mark.parametrize(("uncorrectable", "expected"), [("0", "warn"), ("2", "fatal")])
def test_nvidia_smi_q_text(uncorrectable, expected):
    text = (H200 / "nvidia-smi-q.txt").read_text()
    rows = r"(    Remapped Rows\n(?:.*\n){2}\s+Uncorrectable Error\s+: )0"
    text = change(text, rows, rf"\g<1>{uncorrectable}")
    text = change(text, r"(Remapped Rows\n(?:.*\n){4}\s+Pending\s+: )No", r"\1Yes")
    assert remap(nvidia_smi.inspect_query(text, OPTIONS, "q")) == expected


def test_nvidia_smi_q_corpus_pending_with_uncorrectable_rows_stays_fatal():
    for case in ("022", "027"):
        (path,) = (CORPUS / "cases").glob(f"{case}_*.txt")
        assert remap(inspect_text(path.read_text(), case, OPTIONS)) == "fatal"


@pytest.mark.parametrize(("uncorrectable", "expected"), [("0", "warn"), ("1", "fatal")])
def test_nvidia_smi_xml(uncorrectable, expected):
    xml = (H200 / "nvidia-smi-q.xml").read_text()
    xml = change(xml, r"<remapped_row_unc>0<", f"<remapped_row_unc>{uncorrectable}<")
    xml = change(xml, r"<remapped_row_pending>No<", "<remapped_row_pending>Yes<")
    assert remap(nvidia_smi.inspect_xml(xml, OPTIONS, "x")) == expected


@pytest.mark.parametrize(("uncorrectable", "expected"), [("0", "warn"), ("4", "fatal")])
def test_nvidia_smi_csv(uncorrectable, expected):
    header, row = (H200 / "nvidia-smi-query-gpu.csv").read_text().splitlines()
    names = [n.strip() for n in header.split(",")]
    values = [v.strip() for v in row.split(",")]
    values[names.index("remapped_rows.uncorrectable")] = uncorrectable
    values[names.index("remapped_rows.pending")] = "Yes"
    text = header + "\n" + ", ".join(values) + "\n"
    assert remap(nvidia_smi.inspect_csv(text, OPTIONS, "c")) == expected


@pytest.mark.parametrize(("uncorrectable", "expected"), [("0.0", "warn"), ("2.0", "fatal")])
def test_dcgm_exporter_page(uncorrectable, expected):
    page = PAGE.read_text()
    page = change(page, r"^(DCGM_FI_DEV_ROW_REMAP_PENDING\{.*\}) 0\.0$", r"\1 1.0")
    counted = r"^(DCGM_FI_DEV_UNCORRECTABLE_REMAPPED_ROWS\{.*\}) 0\.0$"
    page = change(page, counted, rf"\1 {uncorrectable}")
    assert remap(dcgm.inspect_metrics(page, OPTIONS, "p")) == expected


@pytest.mark.parametrize(("rows", "status"), [([1, 0, 1, 0], "warn"), ([0, 2, 1, 0], "fail")])
def test_nvml_gpu_memory_check(tmp_path, monkeypatch, rows, status):
    node = copy.deepcopy(json.loads((FAKE_NVML / "h200x1.json").read_text()))
    node["gpus"][0]["nvmlDeviceGetRemappedRows"] = rows  # corrected, uncorrected, pending, fail
    path = tmp_path / "node.json"
    path.write_text(json.dumps(node))
    monkeypatch.setenv("GPUSLO_NVML_PATH", str(FAKE_NVML))
    monkeypatch.setenv("GPUSLO_FAKE_NVML", str(path))
    runner = Runner(load_checks(["gpu_memory"]), CheckContext(timeout_s=5.0, state_dir=tmp_path))
    try:
        (result,) = [r for r in runner.cycle().results if r.gpu]
    finally:
        runner.close()
    assert (result.status, result.reason) == (status, "row_remap_pending")
