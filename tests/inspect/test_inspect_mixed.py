"""One evidence file holding several kinds of output (`cat dmesg nvidia-smi-q > paste`): every
part is read, findings are merged, and a part nothing recognises is `unknown`, never dropped."""

from __future__ import annotations

import itertools
import json

import pytest

from gpuslo.cli import main
from gpuslo.exporter.inspect.kinds import detect_kinds, inspect_text
from gpuslo.exporter.inspect.options import InspectOptions
from gpuslo.exporter.inspect.split import split_evidence
from gpuslo.verdict import verdict_from_findings
from tests.conftest import CORPUS, FIXTURES

CASES = CORPUS / "cases"
LOG = (
    CASES / "040_journalctl-k-mlx5-ib-port-link-init-active-mixed-units.txt"
).read_text()  # healthy
REMAP = (CASES / "022_nvidia-smi-q-remapped-rows-pending.txt").read_text()  # -q fragment, pending
BASELINE = (CASES / "030_nvidia-smi-q-healthy-a100-baseline.txt").read_text()  # healthy -q
IBSTAT_DOWN = (CASES / "006_ibstat-state-down-physical-linkup.txt").read_text()  # port down
TABLE = (CASES / "015_nvidia-smi-table-power-err-transient.txt").read_text()  # healthy table
PANIC = (CASES / "008_ibstat-partial-output-ibpanic.txt").read_text()  # one device unreadable


def _report(tmp_path, capsys, text: str) -> dict:
    path = tmp_path / "paste.txt"
    path.write_text(text)
    code = main(["inspect", str(path), "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    assert code == (0 if report["verdict"] == "healthy" else 1)
    return report


def _signals(report: dict) -> set[tuple[str, str]]:
    return {(f["kind"], f.get("signal") or "") for f in report["findings"]}


@pytest.mark.parametrize("order", ["log-first", "q-first"])
def test_dmesg_and_nvidia_smi_q_in_one_file_are_both_read(tmp_path, capsys, order):
    text = LOG + REMAP if order == "log-first" else REMAP + LOG
    report = _report(tmp_path, capsys, text)
    assert report["verdict"] == "unhealthy"
    assert {("nvidia-smi-q", "row_remap_pending"), ("kernel-log", "port_state")} <= _signals(report)
    assert set(report["files"][0]["kind"].split("+")) == {"kernel-log", "nvidia-smi-q"}


def test_lines_of_a_later_part_are_numbered_as_in_the_file(tmp_path, capsys):
    report = _report(tmp_path, capsys, LOG + REMAP)
    (pending,) = [f for f in report["findings"] if f.get("signal") == "row_remap_pending"]
    assert pending["line"] > len(LOG.splitlines())


def test_a_part_nothing_recognises_is_unknown_naming_its_lines(tmp_path, capsys):
    junk = "free-form notes the engineer typed\nabout the node\n"
    report = _report(tmp_path, capsys, LOG + "\n" + junk + "\n" + BASELINE)
    first = len(LOG.splitlines()) + 2
    assert report["verdict"] == "unknown"
    assert any(
        f["signal"] == "nothing_recognised" and f"lines {first}-{first + 1}" in f["message"]
        for f in report["findings"]
    )


@pytest.mark.parametrize(
    ("first", "second", "signal"),
    [
        (BASELINE, IBSTAT_DOWN, "port_down"),  # two tools, a blank line apart
        (TABLE, REMAP, "row_remap_pending"),  # `cat a b`: no blank line, no banner between
        (PANIC + "\n", TABLE, "device_unreadable"),
    ],  # an ibpanic line just before a table
)
def test_two_tools_pasted_together_keep_the_finding_of_each(first, second, signal):
    findings = inspect_text(
        first + "\n" + second if first is BASELINE else first + second, "p", InspectOptions()
    )
    assert signal in {f.signal for f in findings}
    assert verdict_from_findings(findings) != "healthy"


def test_two_nvidia_smi_q_captures_are_two_readings():
    findings = inspect_text(REMAP + BASELINE, "p", InspectOptions())
    assert "row_remap_pending" in {f.signal for f in findings}


@pytest.mark.parametrize(
    "path",
    sorted(CASES.iterdir()) + sorted((FIXTURES / "h200").iterdir()),
    ids=lambda p: p.name[:40],
)
def test_evidence_of_one_kind_is_one_part(path):
    assert len(split_evidence(path.read_text(), detect_kinds)) == 1


def test_a_kernel_log_with_lines_nothing_recognises_is_still_one_part():
    text = "[  1.000000] NVRM: loading NVIDIA UNIX x86_64 Kernel Module\nsome stray line\n"
    assert len(split_evidence(text, detect_kinds)) == 1


def test_a_prompt_line_above_a_tool_output_is_part_of_it():
    findings = inspect_text(LOG + "$ nvidia-smi -q\n" + BASELINE, "p", InspectOptions())
    assert "nothing_recognised" not in {f.signal for f in findings}
    assert verdict_from_findings(findings) == "healthy"


def test_given_kind_reads_the_whole_file_as_that_kind():
    findings = inspect_text(LOG + REMAP, "p", InspectOptions(), "kernel-log")
    assert {f.kind for f in findings} == {"kernel-log"}


def test_any_two_corpus_cases_pasted_together_are_never_healthier_than_the_worse():
    # `cat a b` for every ordered pair of corpus cases: a problem either shows is never lost
    # (healthy), and two healthy captures never make a problem (unhealthy).
    texts = {path.name[:3]: path.read_text() for path in sorted(CASES.iterdir())}
    alone = {
        name: verdict_from_findings(inspect_text(text, name, InspectOptions()))
        for name, text in texts.items()
    }
    lost, invented = [], []
    for a, b in itertools.permutations(texts, 2):
        verdict = verdict_from_findings(
            inspect_text(texts[a] + texts[b], f"{a}+{b}", InspectOptions())
        )
        if verdict == "healthy" and not alone[a] == alone[b] == "healthy":
            lost.append((a, b, alone[a], alone[b]))
        if verdict == "unhealthy" and alone[a] != "unhealthy" and alone[b] != "unhealthy":
            invented.append((a, b))
    assert lost == [] and invented == []


def test_every_h200_capture_pasted_into_one_file_is_one_healthy_hopper(tmp_path, capsys):
    files = sorted((FIXTURES / "h200").iterdir())
    report = _report(tmp_path, capsys, "".join(path.read_text() for path in files))
    assert report["verdict"] == "healthy"
    assert [(g["model"], g["family"]) for g in report["gpus"]] == [("NVIDIA H200", "hopper")]
    each = {kind for path in files for kind in detect_kinds(path.read_text())}
    assert set(report["files"][0]["kind"].split("+")) == each  # the XML, CSV and table too
