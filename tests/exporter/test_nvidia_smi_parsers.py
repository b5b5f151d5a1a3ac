"""Each nvidia-smi parser on the real H200 outputs with one field changed, and on the other
layouts and error outputs nvidia-smi prints."""

from __future__ import annotations

import re

import pytest
from conftest import CORPUS, FIXTURES

from gpuslo.errors import ParseError
from gpuslo.exporter.inspect import nvidia_smi
from gpuslo.exporter.inspect.kinds import detect_kind, inspect_text
from gpuslo.exporter.inspect.options import InspectOptions
from gpuslo.verdict import verdict_from_findings

H200 = FIXTURES / "h200"
OPTIONS = InspectOptions()


def h200(name: str) -> str:
    return (H200 / name).read_text()


def change(text: str, pattern: str, replacement: str) -> str:
    changed, count = re.subn(pattern, replacement, text, count=1, flags=re.M)
    assert count == 1, pattern
    return changed


def signals(findings) -> dict[str, str]:
    return {f.signal: f.class_ for f in findings}


# --- nvidia-smi -q text ------------------------------------------------------------------------
@pytest.mark.parametrize(
    ("pattern", "replacement", "signal", "klass"),
    [
        (r"(HW Thermal Slowdown\s+: )Not Active", r"\1Active", "thermal_slowdown", "fatal"),
        (r"(Link Width\n\s+Max\s+: 16x\n\s+Current\s+: )16x", r"\g<1>8x", "pcie_degraded", "warn"),
        (r"(GPU Recovery Action\s+: )None", r"\1Drain and Reset", "recovery_action", "fatal"),
        (r"(DRAM Uncorrectable\s+: )0", r"\g<1>3", "ecc_uncorrectable", "fatal"),
        (r"(Remapping Failure Occurred\s+: )No", r"\1Yes", "row_remap_failure", "fatal"),
        (r"(Fabric\n\s+State\s+: )N/A", r"\1In Progress", "fabric_unhealthy", "fatal"),
        (r"(Summary\s+: )N/A", r"\1Unhealthy", "fabric_unhealthy", "fatal"),
    ],
)
def test_query_rule_from_real_h200(pattern, replacement, signal, klass):
    findings = nvidia_smi.inspect_query(
        change(h200("nvidia-smi-q.txt"), pattern, replacement), OPTIONS, "q"
    )
    assert signals(findings)[signal] == klass
    bad = next(f for f in findings if f.signal == signal)
    assert (bad.pci, bad.gpu) == ("00000000:00:06.0", "0")


def test_query_pcie_generation_below_max_at_idle_is_fine():
    text = change(
        h200("nvidia-smi-q.txt"), r"(PCIe Generation\n\s+Max\s+: 5\n\s+Current\s+: )5", r"\g<1>1"
    )
    assert verdict_from_findings(nvidia_smi.inspect_query(text, OPTIONS, "q")) == "healthy"


def test_query_unknown_error_in_a_health_field_is_unknown():
    text = change(
        h200("nvidia-smi-q.txt"),
        r"(Remapped Rows\n(?:.*\n){4}\s+Pending\s+: )No",
        r"\1[Unknown Error]",
    )
    findings = nvidia_smi.inspect_query(text, OPTIONS, "q")
    assert verdict_from_findings(findings) == "unknown"
    assert any(f.signal == "gpu_error" and "remapped_rows_pending" in f.message for f in findings)


def test_query_unreadable_identity_is_inaccessible():
    text = change(h200("nvidia-smi-q.txt"), r"(Product Name\s+: ).*", r"\1Unknown Error")
    text = change(text, r"(GPU UUID\s+: ).*", r"\1Unknown Error")
    assert signals(nvidia_smi.inspect_query(text, OPTIONS, "q"))["gpu_inaccessible"] == "fatal"


def test_query_malformed_count_names_line_and_field():
    text = change(h200("nvidia-smi-q.txt"), r"(DRAM Uncorrectable\s+: )0", r"\1lots")
    with pytest.raises(ParseError) as error:
        nvidia_smi.parse_query(text, "q.txt")
    assert error.value.line == 1 + text.splitlines().index(
        next(x for x in text.splitlines() if "lots" in x)
    )
    assert "dram_uncorrectable" in error.value.field
    findings = inspect_text(text, "q.txt", OPTIONS)
    assert verdict_from_findings(findings) == "unknown" and "q.txt:" in findings[0].message


VOLTA_ECC = """\
GPU 00000000:00:1E.0
    Product Name                    : Tesla V100-SXM2-16GB
    Ecc Mode
        Current                     : Enabled
    ECC Errors
        Volatile
            Single Bit
                Device Memory       : 5
                Total               : 5
            Double Bit
                Device Memory       : 1
                Register File       : 0
                Total               : 1
        Aggregate
            Double Bit
                Total               : 1
    Retired Pages
        Single Bit ECC              : 0
        Double Bit ECC              : 1
        Pending Page Blacklist      : Yes
"""


def test_query_volta_ecc_layout_and_pending_retirement():
    reading = nvidia_smi.parse_query(VOLTA_ECC, "v100")
    (gpu,) = reading.gpus
    assert (gpu.status.ecc_sbe_volatile, gpu.status.ecc_dbe_volatile) == (5, 1)
    assert gpu.status.retired_pages_pending is True and gpu.status.family == "volta"


def test_query_several_logs_of_one_gpu_merge():
    reading = nvidia_smi.parse_query(
        h200("nvidia-smi-q.txt") + h200("nvidia-smi-q-ecc-temp-perf.txt"), "q"
    )
    assert len(reading.gpus) == 1 and reading.gpus[0].status.model == "NVIDIA H200"


def test_query_text_without_gpu_fields_is_not_claimed():
    assert not nvidia_smi.looks_like_query("Status : fine\nName : x\n")
    assert nvidia_smi.parse_query("Status : fine\n", "x").gpus == ()


# --- nvidia-smi -q -x -------------------------------------------------------------------------
def test_xml_row_remap_pending():
    xml = change(
        h200("nvidia-smi-q.xml"), r"<remapped_row_pending>No<", "<remapped_row_pending>Yes<"
    )
    # The H200 counts no uncorrectable remapped row: a pending remap is warn (test_row_remap.py).
    assert signals(nvidia_smi.inspect_xml(xml, OPTIONS, "x"))["row_remap_pending"] == "warn"
    xml = change(xml, r"<remapped_row_unc>0<", "<remapped_row_unc>1<")
    assert signals(nvidia_smi.inspect_xml(xml, OPTIONS, "x"))["row_remap_pending"] == "fatal"


def test_xml_entities_are_refused():
    bomb = (
        '<?xml version="1.0"?><!DOCTYPE l [<!ENTITY a "aaaa"><!ENTITY b "&a;&a;">]>'
        "<nvidia_smi_log>&b;</nvidia_smi_log>"
    )
    assert nvidia_smi.looks_like_xml(bomb)
    with pytest.raises(ParseError, match="entity"):
        nvidia_smi.parse_xml(bomb, "bomb.xml")


def test_xml_truncated_names_the_line():
    text = h200("nvidia-smi-q.xml")
    with pytest.raises(ParseError) as error:
        nvidia_smi.parse_xml(text[: len(text) // 2], "cut.xml")
    assert error.value.line is not None and error.value.line > 1


# --- --query-gpu CSV --------------------------------------------------------------------------
def test_csv_with_units_and_bitmask():
    text = change(h200("nvidia-smi-query-gpu.csv"), r"0x0000000000000001", "0x0000000000000040")
    assert signals(nvidia_smi.inspect_csv(text, OPTIONS, "c"))["thermal_slowdown"] == "fatal"


def test_csv_error_lines_are_never_data():
    text = (
        "index, pci.bus_id, ecc.errors.uncorrected.volatile.total\n0, 00000000:07:00.0, 0\n"
        "Unable to determine the device handle for GPU 0000:09:00.0: Unknown Error\n"
        "Failed to get ECC errors: GPU is lost\n"
    )
    findings = nvidia_smi.inspect_csv(text, OPTIONS, "c")
    assert signals(findings) == {
        "gpu_inaccessible": "fatal",
        "nvml_error": "unknown",
        "gpus_seen": "ok",
    }
    assert next(f for f in findings if f.signal == "gpu_inaccessible").pci == "00000000:09:00.0"


def test_csv_row_with_wrong_field_count_is_a_parse_error():
    with pytest.raises(ParseError) as error:
        nvidia_smi.parse_csv("index, name\n0, NVIDIA H200, extra\n", "c.csv")
    assert error.value.line == 2


def test_csv_headerless_with_columns():
    findings = nvidia_smi.inspect_csv(
        "0, 2\n1, 0\n",
        InspectOptions(csv_columns=("index", "ecc.errors.uncorrected.volatile.total")),
        "c",
    )
    bad = next(f for f in findings if f.signal == "ecc_uncorrectable")
    assert (bad.gpu, bad.count) == ("0", 2)


# --- default table ----------------------------------------------------------------------------
TABLE_ROWS = """\
|   0  NVIDIA A100-SXM4-80GB          On  |   00000000:07:00.0 Off |                    2 |
| N/A   31C    P0             62W /  400W |       1MiB /  81920MiB |      0%      Default |
+-----------------------------------------+------------------------+----------------------+
|   1  NVIDIA A100-SXM4-80GB          On  |   00000000:0F:00.0 Off |                 ERR! |
| N/A   30C    P0             61W /  400W |       1MiB /  81920MiB |      0%      Default |
+-----------------------------------------+------------------------+----------------------+
|   2  ERR!                           ERR! |   00000000:47:00.0 Off |                 ERR! |
|ERR!  ERR!  ERR!           ERR! /  ERR! |       1MiB /  81920MiB |    ERR!      Default |
+-----------------------------------------+------------------------+----------------------+
"""


def test_table_ecc_count_err_field_and_err_row():
    findings = nvidia_smi.inspect_table(TABLE_ROWS, OPTIONS, "t")
    by_gpu = {(f.gpu, f.signal): f.class_ for f in findings}
    assert by_gpu[("0", "ecc_uncorrectable")] == "fatal"
    assert by_gpu[("1", "gpu_error")] == "unknown"
    assert by_gpu[("2", "gpu_inaccessible")] == "fatal"
    assert detect_kind(TABLE_ROWS) == "nvidia-smi-table"


# --- nvlink -s / -e ---------------------------------------------------------------------------
NVLINK_E_OLD = """\
GPU 0: Tesla V100-SXM2-16GB (UUID: GPU-11111111-2222-4333-8444-555555555555)
\t Link 0: Replay Errors: 0
\t Link 0: Recovery Errors: 0
\t Link 0: CRC Errors: 0
\t Link 1: Replay Errors: 7
\t Link 1: Recovery Errors: 1
\t Link 1: CRC Errors: 0
"""
NVLINK_E_BLACKWELL = """\
GPU 0: NVIDIA B200 (UUID: GPU-11111111-2222-4333-8444-555555555555)
\t Link 0:
\t\t Malformed Packet Errors: 0
\t\t Rx Errors: 0
\t\t Link Recovery Failed Events: 0
\t\t Effective BER: 15e-255
\t Link 1:
\t\t Malformed Packet Errors: 0
\t\t Rx Errors: 12
\t\t Effective BER: 1e-12
"""


@pytest.mark.parametrize(
    ("text", "link", "count"), [(NVLINK_E_OLD, 1, 8), (NVLINK_E_BLACKWELL, 1, 12)]
)
def test_nvlink_errors_both_layouts(text, link, count):
    assert detect_kind(text) == "nvlink-errors"
    findings = nvidia_smi.inspect_nvlink_errors(text, OPTIONS, "e")
    bad = next(f for f in findings if f.signal == "nvlink_errors")
    assert (bad.class_, bad.links, bad.count, bad.gpu) == ("warn", [link], count, "0")
    assert verdict_from_findings(findings) == "healthy"


def test_nvlink_status_all_links_inactive_message():
    text = (
        "GPU 0: NVIDIA H200 NVL (UUID: GPU-1)\n"
        "\t NVML: Unable to retrieve NVLink information as all links are inActive\n"
    )
    assert detect_kind(text) == "nvlink-status"
    assert (
        signals(nvidia_smi.inspect_nvlink_status(text, OPTIONS, "s"))["nvlink_inactive"] == "warn"
    )


# --- NVML errors and /proc/driver/nvidia ------------------------------------------------------
@pytest.mark.parametrize(
    ("text", "signal", "klass"),
    [
        ("Failed to initialize NVML: Unknown Error\n", "nvml_error", "unknown"),
        ("No devices were found\n", "gpu_missing", "fatal"),
        (
            "NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. "
            "Make sure that "
            "the latest NVIDIA driver is installed and running.\n",
            "nvml_error",
            "unknown",
        ),
    ],
)
def test_nvml_errors(text, signal, klass):
    assert detect_kind(text) == "nvml-error"
    findings = inspect_text(text, "err", OPTIONS)
    assert signals(findings) == {signal: klass}
    assert verdict_from_findings(findings) != "healthy"


def test_proc_driver_excluded_gpu_is_not_usable():
    text = change(
        h200("proc-driver-nvidia-gpus-information.txt"), r"(GPU Excluded:\s+)No", r"\1Yes"
    )
    findings = nvidia_smi.inspect_proc_driver(text, OPTIONS, "p")
    # an excluded GPU is still a GPU present (counted in gpus_seen), but never usable
    assert signals(findings) == {"gpu_inaccessible": "fatal", "gpus_seen": "ok"}
    assert verdict_from_findings(findings) == "unhealthy"


@pytest.mark.parametrize(
    ("pattern", "replacement", "signal"),
    [
        (r"(Channel Repair Pending\s+: )No", r"\1Yes", "row_remap_pending"),
        (r"(Unrepairable Memory\s+: )No", r"\1Yes", "row_remap_failure"),
    ],
)
def test_query_blackwell_repair_fields(pattern, replacement, signal):
    text = (
        CORPUS / "cases" / "027_nvidia-smi-q-blackwell-ecc-dram-uncorr-row-remapper-pending.txt"
    ).read_text()
    text = change(text, r"(Pending\s+: )Yes", r"\1No")  # the remapper's own pending flag
    text = change(text, r"(DRAM Uncorrectable\s+: )2", r"\g<1>0")
    findings = nvidia_smi.inspect_query(change(text, pattern, replacement), OPTIONS, "q")
    assert [f.signal for f in findings if f.class_ == "fatal"] == [signal]


# --- recorded on the H200 node (driver 580.159.04) with the commands named ----------------------
LIVE_CSV = (  # nvidia-smi --query-gpu=<these columns> --format=csv
    "index, uuid, name, pci.bus_id, gpu_recovery_action, remapped_rows.pending, "
    "remapped_rows.failure, clocks_event_reasons.hw_thermal_slowdown, "
    "clocks_event_reasons.hw_slowdown, pcie.link.gen.max, pcie.link.width.max, "
    "pcie.link.width.current, fabric.state, fabric.status, temperature.gpu, "
    "ecc.errors.uncorrected.volatile.total\n"
    "0, GPU-f3d1ff86-e987-2d2e-d620-d0a84cd621d5, NVIDIA H200, 00000000:00:06.0, None, No, No, "
    "Not Active, Not Active, 5, 16, 16, N/A, N/A, 38, 0\n"
)


def test_live_csv_every_health_column_read_and_healthy():
    (gpu,) = nvidia_smi.parse_csv(LIVE_CSV, "live").gpus
    s = gpu.status
    assert (s.recovery_action, s.remapped_rows_pending, s.hw_thermal_slowdown) == (
        "None",
        False,
        False,
    )
    assert (s.pcie_width_current, s.pcie_width_max, s.temperature_c, s.ecc_dbe_volatile) == (
        16,
        16,
        38.0,
        0,
    )
    assert verdict_from_findings(inspect_text(LIVE_CSV, "live", OPTIONS)) == "healthy"


@pytest.mark.parametrize(
    ("text", "signal"),
    [
        ("No devices were found\n", "gpu_missing"),  # nvidia-smi -i 7 -q (exit 6)
        ('Field "nonsense.field" is not a valid field to query.\n\n', "nvml_error"),
    ],  # exit 2
)
def test_live_error_outputs_are_never_healthy(text, signal):
    findings = inspect_text(text, "live", OPTIONS)
    assert [f.signal for f in findings] == [signal]
    assert verdict_from_findings(findings) != "healthy"


def test_live_nvlink_output_of_a_pcie_h200_is_empty_and_unknown():
    # nvidia-smi nvlink -s and -e print nothing (exit 0) on this PCIe H200.
    assert verdict_from_findings(inspect_text("", "live", OPTIONS, "nvlink-status")) == "unknown"


def test_query_of_one_gpu_counts_attached_gpus_against_the_expected_count():
    # 030 is `nvidia-smi -q` of one GPU block under "Attached GPUs : 8".
    text = (CORPUS / "cases" / "030_nvidia-smi-q-healthy-a100-baseline.txt").read_text()
    assert verdict_from_findings(nvidia_smi.inspect_query(text, OPTIONS, "q")) == "healthy"
    missing = nvidia_smi.inspect_query(text, InspectOptions(expect_gpus=9), "q")
    assert [(f.signal, f.count) for f in missing if f.class_ == "fatal"] == [("gpu_missing", 1)]


def test_query_of_one_gpu_of_eight_expected_is_unknown_for_the_seven_not_shown():
    # The 8 attached GPUs meet --expect-gpus 8, but 8 - 1 = 7 were not read: never healthy.
    text = (CORPUS / "cases" / "030_nvidia-smi-q-healthy-a100-baseline.txt").read_text()
    findings = nvidia_smi.inspect_query(text, InspectOptions(expect_gpus=8), "q")
    assert verdict_from_findings(findings) == "unknown"
    hidden = [(f.signal, f.class_, f.reason, f.count) for f in findings if f.class_ != "ok"]
    assert hidden == [("gpu_missing", "unknown", "no_data", 7)]
    # Attached 8, expected 9: one GPU missing (fatal) and 8 - 1 = 7 not shown (unknown).
    findings = nvidia_smi.inspect_query(text, InspectOptions(expect_gpus=9), "q")
    assert sorted((f.class_, f.count) for f in findings if f.signal == "gpu_missing") == [
        ("fatal", 1),
        ("unknown", 7),
    ]


def test_xml_of_one_gpu_of_eight_expected_is_unknown():
    text = change(
        h200("nvidia-smi-q.xml"),
        r"<attached_gpus>1</attached_gpus>",
        "<attached_gpus>8</attached_gpus>",
    )
    findings = nvidia_smi.inspect_xml(text, InspectOptions(expect_gpus=8), "x")
    assert [(f.class_, f.count) for f in findings if f.signal == "gpu_missing"] == [("unknown", 7)]
    assert verdict_from_findings(nvidia_smi.inspect_xml(text, OPTIONS, "x")) == "healthy"


def test_query_old_retired_pages_pending():
    text = (
        "GPU 00000000:04:00.0\n    Retired Pages\n        Single Bit ECC : 2\n"
        "        Pending : Yes\n"
    )
    findings = nvidia_smi.inspect_query(text, OPTIONS, "q")
    assert signals(findings)["row_remap_pending"] == "fatal"
