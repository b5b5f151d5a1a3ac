"""Round-12 newcomer's inputs (tests/data/newcomer12_inspect, built by hand by a tester from the
tools' documented layouts: see its SOURCES.md), each a general rule with a negative.

1. nvidia-smi's GPU Reset Status ("Reset Required", "Drain and Reset Recommended") in `-q` text,
   `-q -x` XML and `--query-gpu` CSV is the recovery action read another way: fatal
   `recovery_action` (reset_gpu / drain_and_reset). "No" stays healthy.
2. A `-q` capture cut off before nvidia-smi finished (a last line stopping in a field name's
   padding without its newline; a whole capture ending on a bare section header) is unknown
   unless what it shows is already a fault. An output that shows none of the fault-carrying
   fields says so (`health_fields_not_shown`); dcgm-exporter pages use the live check's rule.
3. `[GPU is lost]` in a field's place (NVML_ERROR_GPU_IS_LOST) is the GPU inaccessible, reboot.
4. Counts: a dcgm page of two hosts is counted per host and names each finding's host; a table
   row of `ERR!`s is still a GPU shown.
"""

from __future__ import annotations

from pathlib import Path

from gpuslo.cli.inspect import render_text
from gpuslo.exporter.checks.dcgm import DcgmState, evaluate_page
from gpuslo.exporter.evidence.dcgm.page import parse_dcgm_page
from gpuslo.exporter.evidence.nvml import node_from_smi
from gpuslo.exporter.inspect.kinds import inspect_files, inspect_text
from gpuslo.exporter.inspect.options import InspectOptions
from gpuslo.exporter.policy.gpu import evaluate_gpu
from gpuslo.exporter.policy.xid import load_policy
from gpuslo.verdict import verdict_from_findings
from tests.inspect.corpus_classes import per_model

DATA = Path(__file__).resolve().parent.parent / "data" / "newcomer12_inspect"


def _read(name: str) -> str:
    return (DATA / name).read_text()


def _inspect(text: str, name: str, **options):
    findings = inspect_text(text, name, InspectOptions(**options))
    return verdict_from_findings(findings), findings


def _of(findings, signal):
    return [f for f in findings if f.signal == signal]


# --- 1. GPU Reset Status -------------------------------------------------------------------------


def test_reset_required_in_q_text_is_a_fatal_recovery_action():
    verdict, findings = _inspect(_read("smi_q_reset_required.txt"), "q.txt")
    (found,) = _of(findings, "recovery_action")
    assert verdict == "unhealthy"
    assert found.class_ == "fatal" and found.action == "reset_gpu"
    assert found.pci == "00000000:18:00.0" and "reset required" in found.message


def test_drain_and_reset_recommended_in_q_text_asks_for_drain_and_reset():
    verdict, findings = _inspect(_read("smi_q_drain.txt"), "q.txt")
    (found,) = _of(findings, "recovery_action")
    assert verdict == "unhealthy" and found.action == "drain_and_reset"


def test_reset_status_with_recovery_action_is_one_finding_at_the_worst_action():
    text = _read("smi_q_reset_required.txt").replace(
        "    PCI\n", "    GPU Recovery Action                   : Drain and Reset\n    PCI\n", 1
    )
    (found,) = _of(_inspect(text, "q.txt")[1], "recovery_action")
    assert found.action == "drain_and_reset"
    assert "Drain and Reset" in found.message and "reset required" in found.message


def test_reset_status_in_xml_and_csv_reads_the_same():
    for name, kind in (("smi_xml_reset.xml", "nvidia-smi-xml"), ("smi_csv_reset.csv", "smi-csv")):
        verdict, findings = _inspect(_read(name), name)
        (found,) = _of(findings, "recovery_action")
        assert verdict == "unhealthy", name
        assert (found.kind, found.class_, found.action) == (kind, "fatal", "drain_and_reset")


def test_live_nvidia_smi_fallback_reads_the_reset_status_with_the_same_rule():
    (status,) = node_from_smi(_read("smi_xml_reset.xml"), "nvidia-smi -q -x").gpus
    assert status.reset_required and status.drain_and_reset_recommended
    (problem,) = [p for p in evaluate_gpu(status) if p.signal == "recovery_action"]
    assert (problem.class_, problem.action) == ("fatal", "drain_and_reset")


def test_gpu_requires_reset_in_a_csv_cell_is_a_required_reset():
    text = "index, pci.bus_id, ecc.errors.uncorrected.volatile.total\n0, 00000000:18:00.0, " \
           "[GPU requires reset]\n"
    (found,) = _of(_inspect(text, "c.csv")[1], "recovery_action")
    assert found.class_ == "fatal" and found.action == "reset_gpu"


def test_negative_reset_status_no_stays_healthy_in_every_form():
    q = _read("smi_q_reset_required.txt").replace(
        "Reset Required                    : Yes", "Reset Required                    : No")
    xml = _read("smi_xml_reset.xml").replace(">Yes<", ">No<")
    csv = _read("smi_csv_reset.csv").replace("Yes, Yes", "No, No")
    na = _read("smi_csv_reset.csv").replace("Yes, Yes", "[N/A], [N/A]")
    # 570 drivers print NVML_ERROR_DEPRECATED's string there (Recovery Action replaced them)
    gone = _read("smi_xml_reset.xml").replace(">Yes<", ">Requested functionality has been "
                                              "deprecated<")
    cases = ((q, "q.txt"), (xml, "x.xml"), (csv, "c.csv"), (na, "na.csv"), (gone, "d.xml"))
    for text, name in cases:
        verdict, findings = _inspect(text, name)
        assert not _of(findings, "recovery_action"), name
        assert verdict == "healthy", name


# --- 2. partial evidence -------------------------------------------------------------------------


def test_q_cut_inside_a_field_without_newline_is_unknown():
    text = _read("smi_q_cut_midline.txt")
    assert not text.endswith("\n")
    verdict, findings = _inspect(text, "q.txt")
    (cut,) = [f for f in _of(findings, "gpu_error") if f.reason == "no_data"]
    assert verdict == "unknown"
    assert cut.class_ == "unknown" and cut.pci == "00000000:18:00.0"
    assert "cut off at line" in cut.message and "not seen" in cut.message


def test_whole_q_capture_ending_on_a_bare_section_header_is_unknown():
    verdict, findings = _inspect(_read("smi_q_truncated.txt"), "q.txt")
    (cut,) = [f for f in _of(findings, "gpu_error") if f.reason == "no_data"]
    assert verdict == "unknown" and "'PCIe Generation'" in cut.message


def test_a_fault_before_the_cut_still_makes_the_verdict_unhealthy():
    zero = "            DRAM Uncorrectable            : 0"
    text = _read("smi_q_cut_midline.txt").replace(zero, zero[:-1] + "2", 1)
    verdict, findings = _inspect(text, "q.txt")
    assert verdict == "unhealthy" and _of(findings, "ecc_uncorrectable")


def test_negative_the_same_text_whole_is_healthy_and_an_excerpt_ending_on_a_header_is_judged():
    whole = _read("smi_q_reset_required.txt").replace(": Yes", ": No")
    verdict, findings = _inspect(whole, "q.txt")
    assert verdict == "healthy" and not _of(findings, "gpu_error")
    # the same cut line with its newline, and an excerpt (no NVSMI LOG banner) ending on a header
    midline = _read("smi_q_cut_midline.txt")
    completed = midline.rstrip() + "       : 0\n"
    excerpt = "\n".join(_read("smi_q_truncated.txt").splitlines()[8:]) + "\n"
    for text in (completed, excerpt):
        assert not [f for f in _inspect(text, "q.txt")[1] if f.reason == "no_data"]


def test_csv_without_fault_columns_says_what_it_did_not_read():
    verdict, findings = _inspect(_read("smi_csv_nothing_judged.csv"), "c.csv")
    (note,) = _of(findings, "health_fields_not_shown")
    assert note.class_ == "ok" and note.count == 1
    assert "ECC errors, row remapping" in note.message
    # negative: an ECC column is a fault field, even at N/A (a GPU without ECC says so)
    with_ecc = "index, name, ecc.errors.uncorrected.volatile.total\n0, NVIDIA A10, [N/A]\n"
    assert not _of(_inspect(with_ecc, "c.csv")[1], "health_fields_not_shown")


def test_dcgm_page_without_xid_field_reads_as_the_live_check_reads_it():
    text = _read("dcgm_utilonly.prom")
    (note,) = _of(_inspect(text, "page.prom")[1], "health_fields_not_shown")
    assert "DCGM_FI_DEV_XID_ERRORS" in note.message and note.count == 8
    results, _ = evaluate_page(parse_dcgm_page(text), DcgmState(), load_policy(None), 0.0)
    node = [r for r in results if r.scope == "node"]
    assert node and node[0].status == "unknown" and "DCGM_FI_DEV_XID_ERRORS" in node[0].message
    # negative: a page with the Xid field has no such note
    page = _read("dcgm_two_nodes.prom")
    assert not _of(_inspect(page, "page.prom")[1], "health_fields_not_shown")


# --- 3. GPU is lost ------------------------------------------------------------------------------


def test_gpu_is_lost_in_a_csv_cell_is_the_gpu_inaccessible_reboot():
    verdict, findings = _inspect(_read("smi_csv_lost.csv"), "c.csv")
    (lost,) = _of(findings, "gpu_inaccessible")
    assert verdict == "unhealthy"
    assert (lost.pci, lost.class_, lost.action) == ("00000000:2A:00.0", "fatal", "reboot_node")
    # negative: `[Unknown Error]` in the other row is a field not read, not a lost GPU
    (unread,) = _of(findings, "gpu_error")
    assert unread.pci == "00000000:18:00.0" and unread.class_ == "unknown"


# --- 4. counts -----------------------------------------------------------------------------------


def test_dcgm_page_of_two_hosts_counts_per_host_and_names_the_host(tmp_path):
    path = tmp_path / "two.prom"
    path.write_text(_read("dcgm_two_nodes.prom"))
    report = inspect_files([str(path)], InspectOptions(expect_gpus=8))
    per_host = [f for f in report["findings"] if f.get("signal") == "gpus_seen" and "gpu" not in f]
    assert sorted((f["host"], f["count"]) for f in per_host) == [("node-17", 8), ("node-18", 8)]
    (xid,) = [f for f in report["findings"] if f.get("xid") == 79]
    assert xid["host"] == "node-18" and xid["gpu"] == "3"
    assert len(report["gpus"]) == 16 and not [
        f for f in report["findings"] if f.get("signal") == "gpu_missing"
    ]
    text = render_text(report)
    assert "GPUs seen: 16 on 2 hosts (node-17, node-18)" in text
    assert "node-18 3 00000000:48:00.0" in text


def test_negative_one_host_page_names_no_host():
    text = _read("dcgm_two_nodes.prom")
    one = "\n".join(line for line in text.splitlines() if "node-18" not in line) + "\n"
    findings = _inspect(one, "one.prom")[1]
    assert all("host" not in f.extra for f in findings)
    assert [f.count for f in _of(findings, "gpus_seen") if f.gpu is None] == [8]


def test_table_row_of_errors_is_still_a_gpu_shown():
    findings = _inspect(_read("smi_table_err.txt"), "t.txt")[1]
    (seen,) = per_model(findings)
    assert seen.count == 3 and seen.message.startswith("3 x NVIDIA H100")
    # negative: without the ERR! row, the two GPUs that read are two
    lines = _read("smi_table_err.txt").splitlines()
    start = next(i for i, line in enumerate(lines) if "00000000:2A:00.0" in line)
    two = "\n".join(lines[:start] + lines[start + 4:]) + "\n"
    assert [f.count for f in per_model(_inspect(two, "t.txt")[1])] == [2]
