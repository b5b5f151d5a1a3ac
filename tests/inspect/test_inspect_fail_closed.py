"""Evidence that cannot show what was asked is unknown, never healthy: a `-q` output cut right
after a GPU header, an expectation (`--expect-gpus`, `--expect-network-devices`) no file can
check; and a transcript whose first line is a prompt (`$ dmesg`) reads as that command's
output. Each with its negative: the complete or checkable input still reads healthy."""

from __future__ import annotations

import json

import pytest

from gpuslo.cli import main
from gpuslo.exporter.inspect.kinds import inspect_text
from gpuslo.exporter.inspect.options import InspectOptions
from gpuslo.verdict import verdict_from_findings

HEADER = """==============NVSMI LOG==============

Timestamp                                 : Sun Dec  6 05:30:00 2026
Driver Version                            : 550.54.15
CUDA Version                              : 12.4

Attached GPUs                             : 1
GPU 00000000:18:00.0
    Product Name                          : NVIDIA H100 80GB HBM3
    GPU UUID                              : GPU-11111111-2222-3333-4444-555555555555
    Minor Number                          : 0
"""
HEALTH = """    Clocks Event Reasons
        Idle                              : Active
        SW Power Cap                      : Not Active
    ECC Errors
        Volatile
            DRAM Correctable              : 0
            DRAM Uncorrectable            : 0
    Remapped Rows
        Correctable Error                 : 0
        Uncorrectable Error               : 0
        Pending                           : No
        Remapping Failure Occurred        : No
    GPU Recovery Action                   : None
"""
CUT = HEADER + "    Clocks Event Reasons\n"  # cut right after the section's title
COMPLETE = HEADER + HEALTH
DMESG = """[    0.000000] Linux version 5.15.0-105-generic
[   13.000001] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.54.15  Tue Mar  5 2024
[   15.000000] mlx5_core 0000:0c:00.0: mlx5_cmd_init:1587:(pid 1): firmware version: 28.39.1002
"""
LISTING = """GPU 0: NVIDIA H100 80GB HBM3 (UUID: GPU-11111111-2222-3333-4444-555555555555)
GPU 1: NVIDIA H100 80GB HBM3 (UUID: GPU-11111111-2222-3333-4444-666666666666)
"""
IBSTAT = """CA 'mlx5_0'
\tCA type: MT4129
\tNumber of ports: 1
\tFirmware version: 28.39.1002
\tPort 1:
\t\tState: Active
\t\tPhysical state: LinkUp
\t\tRate: 400
\t\tLink layer: InfiniBand
"""


def _verdict(text: str, **options) -> tuple[str, list]:
    findings = inspect_text(text, "paste", InspectOptions(**options))
    return verdict_from_findings(findings), findings


def test_a_q_block_cut_before_any_health_section_is_unknown():
    verdict, findings = _verdict(CUT)
    assert verdict == "unknown"
    assert any(f.signal == "gpu_error" and f.reason == "no_data" for f in findings)


def test_a_complete_q_block_still_reads_healthy():
    assert _verdict(COMPLETE)[0] == "healthy"


def _report(tmp_path, capsys, files: dict[str, str], *args: str) -> dict:
    paths = []
    for name, text in files.items():
        (tmp_path / name).write_text(text)
        paths.append(str(tmp_path / name))
    code = main(["inspect", *paths, *args, "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    assert code == (0 if report["verdict"] == "healthy" else 1)
    return report


@pytest.mark.parametrize(
    ("text", "flag"),
    [
        (DMESG, "--expect-gpus=8"),
        (IBSTAT, "--expect-gpus=8"),
        (LISTING, "--expect-network-devices=4"),
        (DMESG, "--expect-network-devices=mlx5_0,mlx5_1"),
        (IBSTAT, "--expect-efa-devices=4"),
    ],
)
def test_an_expectation_no_evidence_can_check_is_unknown(tmp_path, capsys, text, flag):
    report = _report(tmp_path, capsys, {"e.txt": text}, flag)
    assert report["verdict"] == "unknown"
    unchecked = [f for f in report["findings"] if f["kind"] == "expectation"]
    assert [(f["signal"], f["class"], f["reason"]) for f in unchecked] == [
        ("expectation_unchecked", "unknown", "no_data")
    ]
    assert flag.split("=")[0] in unchecked[0]["message"]


@pytest.mark.parametrize(
    ("files", "flag"),
    [
        ({"l.txt": LISTING}, "--expect-gpus=2"),
        ({"ib.txt": IBSTAT}, "--expect-network-devices=1"),
        ({"ib.txt": IBSTAT, "l.txt": LISTING}, "--expect-gpus=2"),  # another file shows it
    ],
)
def test_an_expectation_the_evidence_shows_still_passes(tmp_path, capsys, files, flag):
    report = _report(tmp_path, capsys, files, flag)
    assert report["verdict"] == "healthy"
    assert not [f for f in report["findings"] if f["kind"] == "expectation"]


def test_a_prompt_on_the_first_line_is_the_first_commands_prompt():
    text = "$ dmesg\n" + DMESG + "$ nvidia-smi -q\n" + COMPLETE + "$ ibstat\n" + IBSTAT
    verdict, findings = _verdict(text)
    assert "nothing_recognised" not in {f.signal for f in findings}
    assert {f.kind for f in findings} == {"kernel-log", "nvidia-smi-q", "ibstat"}
    assert verdict == "healthy"


def test_a_lone_unrecognised_first_line_is_still_named():
    text = "hello there\n" + DMESG + "$ nvidia-smi -q\n" + COMPLETE
    assert "nothing_recognised" in {f.signal for f in _verdict(text)[1]}
