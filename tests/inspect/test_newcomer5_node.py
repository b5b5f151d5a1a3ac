"""Round-15 newcomer's node evidence (tests/data/newcomer5_node, real public excerpts: see its
SOURCES.md), each a general rule with a negative.

7. A `dcgmi diag` table cut off before dcgmi finished it (its last row stopped before the
   closing bar; or, in DCGM 4.x's layout, no closing rule and a last test listing fewer GPUs than
   the run has) is unknown beside what it shows; a closed table, or a 3.x excerpt that stops at
   a row boundary, is judged on what it shows.
15. `--expect-gpus` is checked by a dcgmi output only where it shows a GPU count: a diag's
   `GPU Device IDs Detected` (fewer than expected: those GPUs were not tested, unknown), the
   `nvlink -s` grid (every GPU DCGM sees: fewer is fatal); a diag without its Metadata or a
   health report shows none and leaves the expectation unchecked (unknown), never passed.
8. An output that names no GPU model and shows every NVLink of every GPU down with no NVSwitch
   (a PCIe board without a bridge reads so) is unknown per GPU, never drain and reset; one link
   up anywhere, or an NVSwitch listed, and a down link is the fault it always was.
16. An `nvidia-smi -q` paste that opens inside the report's identity head (its first lines lost)
   and stops before the fault sections is cut, unknown naming where it stops, as one that opens
   at `Product Name` is; a range of lines from PCI on, or a `-q -d` filtered block, shows none of
   the identity head and is judged on what it shows.
"""

from __future__ import annotations

from pathlib import Path

from gpuslo.exporter.evidence.dcgm.diag import parse_diag, run_gpus, table_cut
from gpuslo.exporter.inspect.expectations import unchecked
from gpuslo.exporter.inspect.options import InspectOptions
from tests.inspect.corpus_classes import corpus_case, fatal, inspect, of

ROOT = Path(__file__).resolve().parent.parent
DATA = ROOT / "data" / "newcomer5_node"
CLOSING_RULE = "+---------------------------+------------------------------------------------+\n"


def _read(name: str) -> str:
    return (DATA / name).read_text()


def _lines(text: str, count: int) -> str:
    return "".join(text.splitlines(keepends=True)[:count])


# --- 7. a dcgmi diag table cut off ---------------------------------------------------------------


def test_diag_table_cut_mid_row_is_unknown_and_the_cut_row_vouches_for_nothing():
    findings, verdict = inspect(_read("n07_dcgm253_diag_cut_mid_row.txt"))
    (cut,) = [f for f in findings if f.class_ == "unknown"]
    assert verdict == "unknown"
    assert (cut.signal, cut.reason, cut.line) == ("diagnostic_result", "no_data", 17)
    assert "inside a row" in cut.message and "memory" in cut.message
    # the four GPUs' software results are still read; the cut `memory | Pass` is not a pass
    assert sorted(f.gpu for f in of(findings, "diagnostic_result") if f.class_ == "ok") == [
        "0", "1", "2", "3"]
    assert not [f for f in findings if f.extra.get("test") == "memory"]


def test_diag_4x_table_without_its_closing_rule_cut_inside_a_test_is_unknown():
    text = _read("n07_dcgm253_diag_cut_mid_row.txt")
    after_gpu0 = _lines(text, 12)  # `software | Pass`, `GPU0: Pass`, then nothing
    findings, verdict = inspect(after_gpu0)
    assert verdict == "unknown"
    assert table_cut(after_gpu0) == (11, "the table has no closing rule and its last test "
                                         "(software) lists 1 of the run's 4 GPUs")
    row_closed = _lines(text, 16) + "| memory                    | Pass" + " " * 41 + "|\n"
    assert inspect(row_closed)[1] == "unknown"  # 0 of memory's 4 GPU lines shown


def test_diag_closed_table_and_3x_excerpt_at_a_row_boundary_are_judged_on_what_they_show():
    text = _read("n07_dcgm253_diag_cut_mid_row.txt")
    whole_deployment = _lines(text, 15) + CLOSING_RULE  # the same run, closed by dcgmi's rule
    findings, verdict = inspect(whole_deployment)
    assert verdict == "healthy" and table_cut(whole_deployment) is None
    assert len(of(findings, "diagnostic_result")) == 4
    # fresh9 case 1106: a 3.x Deployment block committed without its closing rule reads healthy
    assert inspect(corpus_case("fresh9", 1106))[1] == "healthy"


def test_diag_row_cut_mid_row_still_shows_a_fail_and_a_cut_word_is_no_error():
    text = _read("n07_dcgm253_diag_cut_mid_row.txt")
    head = _lines(text, 16)
    failed = inspect(head + "| memory                    | Fail")
    assert failed[1] == "unhealthy" and fatal(failed[0])
    assert of(failed[0], "diagnostic_result")[-1].class_ == "unknown"
    assert [r.status for r in parse_diag(head + "| memory                    | Fai")] == [
        "Pass"] * 4


# --- 15. --expect-gpus against a dcgmi diag ------------------------------------------------------


def test_diag_run_on_fewer_gpus_than_expected_is_unknown_never_healthy():
    text = _read("n07_dcgm253_diag_cut_mid_row.txt")
    closed = _lines(text, 15) + CLOSING_RULE  # 4 GPUs in `GPU Device IDs Detected`
    findings, verdict = inspect(closed, expect_gpus=8)
    (missing,) = of(findings, "gpu_missing")
    assert verdict == "unknown"
    assert (missing.class_, missing.reason, missing.count) == ("unknown", "no_data", 4)
    assert [f.count for f in of(findings, "gpus_seen")] == [4]
    # the run's count is what the node expects: checked, and the diag is judged on its results
    findings, verdict = inspect(closed, expect_gpus=4)
    assert verdict == "healthy" and not of(findings, "expectation_unchecked")


def test_dcgmi_output_that_shows_no_gpu_count_leaves_the_expectation_unchecked():
    eight = InspectOptions(expect_gpus=8)
    # fresh9 case 1106: a 2021 table with no Metadata rows: how many GPUs ran is not shown
    findings, verdict = inspect(corpus_case("fresh9", 1106), expect_gpus=8)
    assert verdict == "healthy" and not of(findings, "gpus_seen")
    (left,) = unchecked(findings, eight)
    assert (left.signal, left.class_) == ("expectation_unchecked", "unknown")
    health = (ROOT / "fixtures" / "evidence" / "dcgmi-health-c-warning.txt").read_text()
    assert unchecked(inspect(health, expect_gpus=8)[0], eight)
    # a diag that shows its run's GPUs checks it
    text = _lines(_read("n07_dcgm253_diag_cut_mid_row.txt"), 15) + CLOSING_RULE
    assert not unchecked(inspect(text, expect_gpus=8)[0], eight)


def test_dcgmi_nvlink_grid_lists_every_gpu_dcgm_sees_and_is_compared():
    grid = corpus_case("fresh2", 305)  # eight H100, every link up, no NVSwitch
    assert inspect(grid, expect_gpus=8)[1] == "healthy"
    (missing,) = of(inspect(grid, expect_gpus=9)[0], "gpu_missing")
    assert (missing.class_, missing.count) == ("fatal", 1)


# --- 8. every NVLink of every GPU down, no NVSwitch, no model named -------------------------------


def test_no_link_up_anywhere_and_no_nvswitch_is_unknown_not_drain_and_reset():
    findings, verdict = inspect(_read("n08_dcgm198_nvlink_s_h100_nvl_all_down.txt"))
    down = of(findings, "nvlink_inactive")
    assert verdict == "unknown" and not fatal(findings)
    assert [(f.gpu, f.class_, f.reason, f.action, f.count) for f in down] == [
        ("0", "unknown", "no_data", "none", 18), ("1", "unknown", "no_data", "none", 18)]
    assert "bridge" in down[0].message


def test_a_link_up_or_an_nvswitch_listed_keeps_a_down_link_fatal():
    text = _read("n08_dcgm198_nvlink_s_h100_nvl_all_down.txt")
    all_down = " ".join("D" * 18)
    one_up = text.replace(all_down, "U" + all_down[1:], 1)  # gpuId 0's link 0 up
    findings, verdict = inspect(one_up)
    assert verdict == "unhealthy"
    assert [(f.gpu, f.action) for f in fatal(findings)] == [
        ("0", "drain_and_reset"), ("1", "drain_and_reset")]
    switch = text.replace("    No NvSwitches found.\n",
                          "    physicalId 0:\n        U U U U U U U U U U U U U U U U U U\n")
    assert [f.gpu for f in fatal(inspect(switch)[0])] == ["0", "1"]


# --- 16. nvidia-smi -q head, its first lines lost, cut before the fault sections ----------------


def test_q_head_without_its_first_lines_cut_before_the_fault_sections_is_unknown():
    findings, verdict = inspect(_read("n16_dcgm152_nvidia_smi_q_head_to_pci.txt"))
    (cut,) = [f for f in findings if f.class_ == "unknown"]
    assert verdict == "unknown"
    assert (cut.signal, cut.reason, cut.line) == ("gpu_error", "no_data", 28)
    assert cut.uuid == "GPU-072b19bd-4ccf-63cf-6435-cf462aff833d"
    assert "shown from 'serial number'" in cut.message and "Remapped Rows" in cut.message


def test_q_ranges_without_the_identity_head_and_filtered_blocks_are_judged_on_what_they_show():
    # holdout 129 (PCI tail .. Compute Mode) and fresh3 416 (.. BAR1, Conf Compute): healthy
    assert inspect(corpus_case("holdout", 129))[1] == "healthy"
    assert inspect(corpus_case("fresh3", 416))[1] == "healthy"
    memory_compute = (  # `-q -d MEMORY,COMPUTE`: leading fields in order, none of the head's
        "GPU 00000000:07:00.0\n    FB Memory Usage\n        Total : 81559 MiB\n"
        "    BAR1 Memory Usage\n        Total : 131072 MiB\n    Compute Mode : Default\n")
    assert not [f for f in inspect(memory_compute)[0] if f.class_ == "unknown"]
    # lines a reader joined skip a leading field (Minor Number .. Board ID): an excerpt
    lines = _read("n16_dcgm152_nvidia_smi_q_head_to_pci.txt").splitlines(keepends=True)
    joined = "".join(lines[:3] + lines[6:])
    assert not [f for f in inspect(joined)[0] if f.class_ == "unknown"]


def _wrapped_ids(count: int) -> str:
    """The Metadata row `GPU Device IDs Detected` of `count` GPUs as dcgmi prints it: the
    cell hard-wrapped at its 46 characters, mid-ID (the Info rows of corpus fresh case 226)."""
    ids = ",".join(["1db8"] * count)
    cells = [ids[k:k + 46] for k in range(0, len(ids), 46)]
    keys = ["GPU Device IDs Detected"] + [""] * (len(cells) - 1)
    return "".join(f"| {key:<25} | {cell:<46} |\n" for key, cell in zip(keys, cells, strict=True))


def test_diag_run_count_reads_a_device_id_row_wrapped_over_lines():
    text = _lines(_read("n07_dcgm253_diag_cut_mid_row.txt"), 15) + CLOSING_RULE
    row = next(line for line in text.splitlines(keepends=True) if "GPU Device IDs" in line)
    sixteen = text.replace(row, _wrapped_ids(16))  # a DGX-2's 16 V100s: 79 characters
    assert run_gpus(sixteen) == 16
    findings, verdict = inspect(sixteen, expect_gpus=16)
    assert verdict == "healthy" and not of(findings, "gpu_missing")
    # negative: one GPU more expected than the wrapped row lists is still missing, untested
    (missing,) = of(inspect(sixteen, expect_gpus=17)[0], "gpu_missing")
    assert (missing.class_, missing.count) == ("unknown", 1)
