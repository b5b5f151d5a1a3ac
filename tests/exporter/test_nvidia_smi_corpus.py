"""Every corpus case of the nvidia-smi/NVML kinds through `inspect_text`, judged against
shared/corpus/expected.yaml with check_corpus.py's matching rules; and the real H200 node."""

from __future__ import annotations

import re

import pytest
import yaml
from conftest import CORPUS, FIXTURES

from gpuslo.exporter.inspect.kinds import detect_kind, inspect_text
from gpuslo.exporter.inspect.options import InspectOptions
from gpuslo.verdict import verdict_from_findings

MY_KINDS = {
    "nvml-error",
    "nvidia-smi-xml",
    "nvidia-smi-q",
    "nvidia-smi-table",
    "nvlink-status",
    "nvlink-errors",
    "smi-csv",
    "proc-driver",
}
ENTRIES = [
    e for e in yaml.safe_load((CORPUS / "expected.yaml").read_text()) if e["kind"] in MY_KINDS
]


# --- check_corpus.py's matching rules --------------------------------------------------------
def pci_key(value):
    match = re.match(
        r"^(?:([0-9a-fA-F]+):)?([0-9a-fA-F]{2}):([0-9a-fA-F]{2})(?:\.[0-9a-fA-F])?$",
        str(value).strip(),
    )
    if not match:
        return str(value)
    return (int(match.group(1) or "0", 16), int(match.group(2), 16), int(match.group(3), 16))


def same(key, want, got):
    if got is None:
        return False
    if key == "pci":
        return pci_key(want) == pci_key(got)
    if key == "links":
        try:
            return {int(x) for x in want} == {int(x) for x in got}
        except (TypeError, ValueError):
            return False
    if key in ("state", "physical_state"):
        return str(want).lower() == str(got).lower()
    if isinstance(want, bool):
        return want == got
    if isinstance(want, int | float):
        try:
            return float(want) == float(got)
        except (TypeError, ValueError):
            return False
    return str(want) == str(got)


def matches(entry, finding):
    return all(same(k, v, finding.get(k)) for k, v in entry.items())


def options_of(entry) -> InspectOptions:
    opts = entry.get("options") or {}
    columns = opts.get("columns")
    return InspectOptions(
        expect_gpus=opts.get("expect_gpus"), csv_columns=tuple(columns) if columns else None
    )


# --- the corpus ------------------------------------------------------------------------------
def test_corpus_has_cases_of_every_common_kind():
    kinds = {e["kind"] for e in ENTRIES}
    assert {"nvidia-smi-q", "nvidia-smi-table", "nvlink-status", "smi-csv", "nvml-error"} <= kinds


@pytest.mark.parametrize("entry", ENTRIES, ids=[e["case"] for e in ENTRIES])
def test_corpus_case(entry):
    text = (CORPUS / "cases" / entry["case"]).read_text()
    assert detect_kind(text) == entry["kind"]
    findings = inspect_text(text, entry["case"], options_of(entry))
    dicts = [f.to_dict() for f in findings]
    want = entry["verdict"] if isinstance(entry["verdict"], list) else [entry["verdict"]]
    assert verdict_from_findings(findings) in want, dicts
    for wanted in entry.get("find") or []:
        assert any(matches(wanted, d) for d in dicts), (wanted, dicts)
    for forbidden in entry.get("not") or []:
        assert not any(matches(forbidden, d) for d in dicts), (forbidden, dicts)


def test_headerless_csv_without_columns_is_unknown_not_healthy():
    text = (CORPUS / "cases" / "033_smi-csv-gpu-recovery-action-reset.txt").read_text()
    findings = inspect_text(text, "033", InspectOptions())
    assert verdict_from_findings(findings) == "unknown"
    assert "--csv-columns" in findings[0].message


# --- the real healthy H200 node --------------------------------------------------------------
H200_FILES = {
    "nvidia-smi-q.txt": "nvidia-smi-q",
    "nvidia-smi-q-ecc-temp-perf.txt": "nvidia-smi-q",
    "nvidia-smi-q.xml": "nvidia-smi-xml",
    "nvidia-smi-query-gpu.csv": "smi-csv",
    "nvidia-smi.txt": "nvidia-smi-table",
    "proc-driver-nvidia-gpus-information.txt": "proc-driver",
    "proc-driver-nvidia-version.txt": "proc-driver",
}


@pytest.mark.parametrize(("name", "kind"), sorted(H200_FILES.items()))
def test_h200_file_is_recognised_and_healthy(name, kind):
    text = (FIXTURES / "h200" / name).read_text()
    assert detect_kind(text) == kind
    findings = inspect_text(text, name, InspectOptions(expect_gpus=1))
    assert verdict_from_findings(findings) == "healthy", [f.to_dict() for f in findings]
    assert {f.class_ for f in findings} == {"ok"}


@pytest.mark.parametrize(
    "name",
    [
        "nvidia-smi-q.txt",
        "nvidia-smi-q.xml",
        "nvidia-smi-query-gpu.csv",
        "nvidia-smi.txt",
        "proc-driver-nvidia-gpus-information.txt",
    ],
)
def test_h200_inventory_is_one_nvidia_h200_hopper(name):
    text = (FIXTURES / "h200" / name).read_text()
    seen = [f for f in inspect_text(text, name, InspectOptions()) if f.signal == "gpus_seen"]
    assert len(seen) == 1
    assert (seen[0].count, seen[0].pci) == (1, "00000000:00:06.0")
    assert seen[0].extra["model"] == "NVIDIA H200" and seen[0].extra["family"] == "hopper"


def test_h200_driver_version():
    text = (FIXTURES / "h200" / "proc-driver-nvidia-version.txt").read_text()
    (finding,) = inspect_text(text, "version", InspectOptions())
    assert finding.signal == "driver_version" and finding.extra["driver_version"] == "580.159.04"


def test_h200_missing_gpu_against_expected_count():
    text = (FIXTURES / "h200" / "nvidia-smi.txt").read_text()
    findings = inspect_text(text, "table", InspectOptions(expect_gpus=8))
    missing = [f for f in findings if f.signal == "gpu_missing"]
    assert [(f.class_, f.count) for f in missing] == [("fatal", 7)]
