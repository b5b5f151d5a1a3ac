"""Round-13 newcomer's inputs (/work/wt/newcomer3_findings.md, the shapes rebuilt inline here),
each a general rule with a negative.

2. A fault-carrying dcgm-exporter field (Xid, ECC, row remapping, recovery action, ...) shown
   only with a value it cannot hold (DCGM's blank sentinels of dcgm_fields.h:
   DCGM_FT_INT64_BLANK .. DCGM_FT_INT64_NOT_PERMISSIONED = 0x7ffffffffffffff0..3, the INT32 and
   FP64 friends; NaN; +-Inf) is unknown for that GPU, in `inspect` and in the live check, never
   "no problem".
10. A negative or fractional count in such a field is the same: unknown, never "Xid -1" or
   "-3 DBE errors"; a label value holding a newline is printed escaped.
7. NUL padding (logrotate `copytruncate`) at the start of a kernel log is skipped and the rest
   read, in `inspect` and in the live `xid` check; scattered NULs are still binary.
11. An ibstat block cut after `State: Active` is unknown (physical state not shown), never
   `port_down ... is Active`.
"""

from __future__ import annotations

import pytest

from gpuslo.cli.inspect import render_text
from gpuslo.config_file import without_nul_padding
from gpuslo.errors import ParseError
from gpuslo.exporter.checks.dcgm import DcgmState, evaluate_page
from gpuslo.exporter.evidence.dcgm.page import parse_dcgm_page, unusable_value
from gpuslo.exporter.evidence.kernel_log.read import parse_kernel_log, scan_kernel_log_file
from gpuslo.exporter.inspect.kinds import inspect_files, inspect_text
from gpuslo.exporter.inspect.options import InspectOptions
from gpuslo.exporter.policy.xid import load_policy
from gpuslo.verdict import verdict_from_findings

LABELS = 'gpu="0",UUID="GPU-aaaa",device="nvidia0",modelName="NVIDIA H100 80GB HBM3",Hostname="n1"'
XID = "DCGM_FI_DEV_XID_ERRORS"
DBE = "DCGM_FI_DEV_ECC_DBE_VOL_TOTAL"


def _page(**values: str) -> str:
    return "".join(f"{name}{{{LABELS}}} {value}\n" for name, value in values.items())


def _inspect(text: str):
    findings = inspect_text(text, "page.txt", InspectOptions())
    return verdict_from_findings(findings), findings


def _live(text: str):
    results, _ = evaluate_page(parse_dcgm_page(text), DcgmState(), load_policy(None), 1000.0)
    return [(r.scope, r.status, r.reason) for r in results], results


# --- 2 and 10: values a fault-carrying field cannot hold ----------------------------------------

@pytest.mark.parametrize(("xid", "dbe"), [
    ("9223372036854775794", "9223372036854775792"),  # DCGM_FT_INT64_NOT_SUPPORTED, _BLANK
    ("NaN", "NaN"),
    ("0", "+Inf"),
    ("-1", "0"),
    ("0", "-3"),
    ("2147483634", "0"),  # 0x7ffffff2 DCGM_FT_INT32_NOT_SUPPORTED
    ("0", "140737488355329"),  # 2^47 + 1 DCGM_FT_FP64_NOT_FOUND
    ("0", "2.5"),
])
def test_a_health_field_without_a_usable_value_is_unknown_in_inspect_and_live(xid, dbe):
    text = _page(**{XID: xid, DBE: dbe})
    verdict, findings = _inspect(text)
    assert verdict == "unknown"
    unreadable = [f for f in findings if f.signal == "health_field_unreadable"]
    assert unreadable and all(f.uuid == "GPU-aaaa" and f.class_ == "unknown" for f in unreadable)
    assert not [f for f in findings if f.class_ == "fatal"]  # never "Xid -1", "-3 DBE errors"
    results, _ = _live(text)
    assert results == [("GPU-aaaa", "unknown", "no_data")]


def test_sentinels_are_named_as_dcgm_fields_h_names_them():
    assert "DCGM_FT_INT64_BLANK" in unusable_value(XID, float(0x7FFFFFFFFFFFFFF0))
    assert unusable_value(XID, 0x7FFFFFF2) == "the DCGM sentinel DCGM_FT_INT32_NOT_SUPPORTED"
    assert unusable_value(DBE, 2.0**47 + 3) == "the DCGM sentinel DCGM_FT_FP64_NOT_PERMISSIONED"
    assert unusable_value(XID, -1.0) == "-1 (negative)"
    # negatives: real values, and a negative in a field that may hold one
    assert unusable_value(XID, 79.0) is None and unusable_value(DBE, 0.0) is None
    assert unusable_value("DCGM_FI_DEV_GPU_TEMP", -5.0) is None


def test_usable_values_are_still_judged_negative():
    verdict, findings = _inspect(_page(**{XID: "0", DBE: "0"}))
    assert verdict == "healthy" and not [f for f in findings if f.class_ == "unknown"]
    assert _live(_page(**{XID: "0", DBE: "0"}))[0] == [("GPU-aaaa", "ok", "")]
    verdict, findings = _inspect(_page(**{XID: "0", DBE: "4"}))
    assert verdict == "unhealthy"
    assert [(f.signal, f.count) for f in findings if f.class_ == "fatal"] == [
        ("ecc_uncorrectable", 4)]
    assert _live(_page(**{XID: "79", DBE: "0"}))[0][0][1] == "fail"


def test_a_blank_non_health_field_is_no_data_not_unknown_negative():
    verdict, findings = _inspect(_page(**{XID: "0", "DCGM_FI_DEV_MEMORY_TEMP": "NaN"}))
    assert verdict == "healthy"
    assert not [f for f in findings if f.signal == "health_field_unreadable"]


def test_a_mig_instance_blank_beside_an_instance_with_a_value_is_judged_by_the_value():
    base = 'gpu="0",UUID="GPU-aaaa",modelName="NVIDIA A100 80GB PCIe",GPU_I_PROFILE="1g.10gb"'
    text = (f'{XID}{{{base},GPU_I_ID="1"}} 9223372036854775792\n'
            f'{XID}{{{base},GPU_I_ID="2"}} 0\n')
    assert _inspect(text)[0] == "healthy"
    assert _inspect(text.replace(" 0\n", " 48\n"))[0] == "unhealthy"


def test_a_label_holding_a_newline_is_printed_escaped():
    text = (f'{XID}{{gpu="0",UUID="GPU-aaaa",modelName="H100\\"}} 1\\nDCGM_X{{gpu=\\"9"}} 0\n'
            f'{XID}{{gpu="1",UUID="GPU-bbbb",modelName="NVIDIA H100 80GB HBM3"}} 0\n')
    (gpu, other) = parse_dcgm_page(text).gpus.values()
    assert "\n" not in gpu.model and "\\n" in gpu.model
    assert other.model == "NVIDIA H100 80GB HBM3"  # negative: a plain label is unchanged


# --- 7: NUL padding in a kernel log -------------------------------------------------------------

XID48 = ("[ 1.0] NVRM: Xid (PCI:0000:18:00): 48, pid=1, name=x, An uncorrectable double bit "
         "error\n")


def test_nul_padding_before_a_kernel_log_is_skipped_and_the_xid_read(tmp_path):
    path = tmp_path / "dmesg_nul.txt"
    path.write_bytes(b"\0" * 4096 + XID48.encode())
    report = inspect_files([str(path)], InspectOptions())
    assert report["verdict"] == "unhealthy"
    assert [f["xid"] for f in report["findings"] if f["class"] == "fatal"] == [48]
    scan = scan_kernel_log_file(str(path), require_kernel_log=True)  # the live check's read
    assert [e.code for e in scan.finish()] == [48]
    assert "Xid 48" in render_text(report)


def test_scattered_nuls_are_still_binary_and_padding_alone_is_empty_negative(tmp_path):
    noise = tmp_path / "noise.bin"
    noise.write_bytes(bytes(range(256)) * 64)
    assert inspect_files([str(noise)], InspectOptions())["verdict"] == "unknown"
    with pytest.raises(ParseError, match="binary"):
        scan_kernel_log_file(str(noise), require_kernel_log=True)
    padding = tmp_path / "padding.txt"
    padding.write_bytes(b"\0" * 8192)
    assert inspect_files([str(padding)], InspectOptions())["verdict"] == "unknown"
    with pytest.raises(ParseError, match="empty"):
        scan_kernel_log_file(str(padding), require_kernel_log=True)


def test_kernel_log_text_with_padding_is_read_and_padding_alone_is_not_negative():
    assert [e.code for e in parse_kernel_log("\0" * 64 + XID48, "kmsg")] == [48]
    with pytest.raises(ParseError, match="binary"):
        parse_kernel_log("\0" * 100, "blob")


def test_nul_padding_rule():
    assert without_nul_padding("\0" * 10 + "a\n") == "a\n"  # at a line start: line kept
    assert without_nul_padding("a\n\0\0\0\0b\n") == "a\nb\n"
    assert without_nul_padding("cut\0\0\0\0next\n") == "cut\nnext\n"  # inside: ends the line
    assert without_nul_padding("a\0\0\0b\n") == "a\0\0\0b\n"  # shorter runs are data


# --- 11: an ibstat block cut short --------------------------------------------------------------

IBSTAT = """CA 'mlx5_0'
\tCA type: MT4123
\tNumber of ports: 1
\tFirmware version: 20.31.1014
\tHardware version: 0
\tNode GUID: 0x0c42a10300a1b2c3
\tSystem image GUID: 0x0c42a10300a1b2c3
\tPort 1:
\t\tState: Active
"""
REST = """\t\tPhysical state: {physical}
\t\tRate: 200
\t\tBase lid: 5
\t\tLMC: 0
\t\tSM lid: 1
\t\tCapability mask: 0x2651e848
\t\tPort GUID: 0x0c42a10300a1b2c3
\t\tLink layer: InfiniBand
"""


def test_an_ibstat_block_cut_after_state_active_is_unknown_not_port_down():
    verdict, findings = _inspect(IBSTAT)
    assert verdict == "unknown"
    assert [(f.signal, f.class_) for f in findings] == [("device_unreadable", "unknown")]
    assert "physical state is not shown" in findings[0].message


def test_whole_ibstat_blocks_are_still_judged_negative():
    verdict, findings = _inspect(IBSTAT + REST.format(physical="LinkUp"))
    assert verdict == "healthy" and any(f.signal == "port_active" for f in findings)
    verdict, findings = _inspect(IBSTAT.replace("Active", "Down") + REST.format(physical="Polling"))
    assert verdict == "unhealthy" and any(f.signal == "port_down" for f in findings)
    verdict, findings = _inspect(IBSTAT.replace("Active", "Down"))  # cut, but shown Down
    assert verdict == "unhealthy" and any(f.signal == "port_down" for f in findings)
