"""The evidence kinds of issue 11 on real output formats (tests/fixtures/evidence/SOURCES.md):
dcgmi nvlink -s / -e, dcgmi diag (text and JSON, DCGM 3.x and 4.x), dcgmi health -c (text and
JSON), lspci -vv, nvidia-smi -L, dmesg's time formats, the driver-message catalogue and
dcgm-exporter pages' per-GPU inventory. Each parser also meets hypothesis (no exception but
ParseError) and corrupted, truncated and binary versions of its input (never healthy; unknown
naming the file and line)."""

from __future__ import annotations

import contextlib
import json
import re
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuslo.errors import ParseError
from gpuslo.exporter.evidence.dcgm.dcgmi import parse_health_incidents
from gpuslo.exporter.evidence.dcgm.diag import parse_diag
from gpuslo.exporter.evidence.dcgm.links import parse_link_errors, parse_link_status, parse_tree
from gpuslo.exporter.evidence.kernel_log.read import looks_like_kernel_log, parse_kernel_log
from gpuslo.exporter.evidence.lspci import parse_lspci
from gpuslo.exporter.evidence.nvidia_smi.listing import parse_gpu_list
from gpuslo.exporter.inspect.kinds import detect_kind, inspect_text
from gpuslo.exporter.inspect.options import InspectOptions
from gpuslo.exporter.policy.xid import load_policy, policy_from_mapping
from gpuslo.verdict import verdict_from_findings
from tests.conftest import CORPUS

EVIDENCE = Path(__file__).resolve().parent.parent / "fixtures" / "evidence"
OPTIONS = InspectOptions()


def read(name: str) -> str:
    return (EVIDENCE / name).read_text()


def findings_of(text: str, name: str = "f"):
    findings = inspect_text(text, name, OPTIONS)
    return findings, verdict_from_findings(findings), [f.to_dict() for f in findings]


# --- dcgmi nvlink ---------------------------------------------------------------------------------
def test_nvlink_status_down_and_disabled_links_fail_not_supported_are_not_links():
    findings, verdict, _ = findings_of(read("dcgmi-nvlink-s-h100-disabled.txt"))
    assert detect_kind(read("dcgmi-nvlink-s-h100-disabled.txt")) == "dcgmi"
    inactive = {f.gpu: f.links for f in findings if f.signal == "nvlink_inactive"}
    assert inactive == {"1": [9], "3": [0, 1]} and verdict == "unhealthy"
    up = {f.gpu: f.count for f in findings if f.signal == "nvlink_active"}
    assert up == {"0": 18, "1": 17, "2": 8, "3": 6}  # `_` is no link at all


def test_nvlink_errors_text_and_json():
    findings, verdict, _ = findings_of(read("dcgmi-nvlink-e-gpu1.txt"))
    (errors,) = [f for f in findings if f.signal == "nvlink_errors"]
    assert (errors.gpu, errors.links, errors.count, errors.class_) == ("1", [2], 37, "warn")
    assert verdict == "healthy"  # counters since boot alone do not make a link unusable
    report = parse_link_errors(read("dcgmi-nvlink-e-gpu0.json"))
    assert report.gpu == "0" and report.counts[1]["Replay Error"] == 0 and len(report.counts) == 2
    assert findings_of(read("dcgmi-nvlink-e-gpu0.json"))[1] == "healthy"


# --- dcgmi diag -----------------------------------------------------------------------------------
def test_diag_3x_table_per_gpu_results_and_wrapped_warning():
    findings, verdict, _ = findings_of(read("dcgmi-diag-r3-3x.txt"))
    (failed,) = [f for f in findings if f.class_ == "fatal"]
    assert (failed.gpu, failed.extra["test"], failed.reason) == ("2", "PCIe", "diagnostic_failed")
    assert "minimum allowed link width of 16X" in failed.message  # the wrapped cell, joined
    assert verdict == "unhealthy"
    results = [f for f in findings if f.signal == "diagnostic_result"]
    assert {f.extra["status"] for f in results if f.gpu is None} == {"Pass", "Skip"}


def test_diag_4x_table_per_gpu_lines_and_dcgm_advice():
    findings, verdict, _ = findings_of(read("dcgmi-diag-r1-4x.txt"))
    (failed,) = [f for f in findings if f.class_ == "fatal"]
    assert (failed.gpu, failed.extra["test"], failed.action) == ("1", "memory", "reboot_node")
    results = [f for f in findings if f.signal == "diagnostic_result"]
    assert not any(f.gpu is None for f in results)  # summaries give way to the GPU lines
    assert verdict == "unhealthy"


def test_diag_json_3x_and_4x():
    results = parse_diag(read("dcgmi-diag-r1-3x.json"))
    assert ("GPU Memory", "0", "Fail") in [(r.test, r.gpu, r.status) for r in results]
    assert findings_of(read("dcgmi-diag-r1-3x.json"))[1] == "unhealthy"
    (warned,) = parse_diag(read("dcgmi-diag-r1-4x.json"))
    assert (warned.test, warned.gpu, warned.status) == ("software", "0", "Warn")
    assert findings_of(read("dcgmi-diag-r1-4x.json"))[1] == "healthy"


def test_diag_corpus_053_blames_gpu_0_only():
    text = next((CORPUS / "cases").glob("053_*.txt")).read_text()
    findings, _, _ = findings_of(text)
    # GPU 0's Fail is CUDA finding it busy or unavailable: a test that did not run (unknown),
    # not a failed GPU (policy.diagnostics, DCGM's plugin reference); GPU 1 is never blamed.
    assert {f.gpu for f in findings if f.class_ in ("fatal", "unknown")} == {"0"}
    assert not [f for f in findings if f.class_ == "fatal"]


# --- dcgmi health ---------------------------------------------------------------------------------
def test_health_incidents_text_and_json():
    (incident,) = parse_health_incidents(read("dcgmi-health-c-warning.txt"))
    assert (incident.group, incident.entity, incident.health) == ("GPU", "3", "Warning")
    assert incident.systems[0][0] == "InfoROM system" and "InfoROM" in incident.systems[0][2][0]
    findings, verdict, _ = findings_of(read("dcgmi-health-c-failure.json"))
    (gpu,) = [f for f in findings if f.gpu == "1" and f.signal == "health_report"]
    assert (gpu.class_, gpu.reason, gpu.action) == ("fatal", "diagnostic_failed", "drain_and_reset")
    # the incident's own text names GPU 1 and its system: one dcgm_health finding for it too
    assert {f.gpu for f in findings if f.signal == "dcgm_health"} <= {"1"}
    assert verdict == "unhealthy"


# --- lspci -vv ------------------------------------------------------------------------------------
def test_lspci_width_below_capability_and_aer_on_the_upstream_port():
    text = read("lspci-vv-a100-and-bridge.txt")
    assert detect_kind(text) == "lspci"
    findings, verdict, _ = findings_of(text)
    by_signal = {f.signal: f for f in findings if f.pci != "00000000:5E:00.0"}
    assert by_signal["pcie_degraded"].pci == "00000000:3B:00.0"
    degraded = by_signal["pcie_degraded"].message
    assert "x8" in degraded and "x16" in degraded
    assert "upstream port 00000000:00:02.0" in by_signal["pcie_aer_corrected"].message
    assert by_signal["gpus_seen"].extra["family"] == "ampere"
    # x8 of x16 under a root port capable of x16: lanes lost between them, not a x8-wired slot
    # (policy.pcie_width.lspci_narrow)
    assert by_signal["pcie_degraded"].class_ == "fatal" and "lanes lost" in degraded
    assert verdict == "unhealthy"
    # The NIC's narrower link (x4 of x8) is noted as the NIC's own warn, never a GPU's fault
    # (policy.pcie: a non-NVIDIA endpoint's narrowed link; fresh15 case 1706).
    (nic,) = [f for f in findings if f.pci == "00000000:5E:00.0"]
    assert (nic.signal, nic.class_, nic.gpu) == ("pcie_degraded", "warn", None)
    assert "not a GPU" in nic.message


def test_lspci_uncorrectable_aer_is_fatal_and_a_device_not_answering_fell_off_the_bus():
    text = read("lspci-vv-a100-and-bridge.txt").replace(
        "UESta:\tDLP- SDES- TLP- FCP- CmpltTO+", "UESta:\tDLP- SDES- TLP- FCP- CmpltTO-", 1
    )
    text = text.replace("\t\tUESta:\tDLP- SDES- TLP-", "\t\tUESta:\tDLP- SDES- TLP+", 2)
    assert findings_of(text)[1] == "unhealthy"
    gone = (
        "3b:00.0 3D controller: NVIDIA Corporation GA100 (rev ff) (prog-if ff)\n"
        "\t!!! Unknown header type 7f\n"
    )
    (finding,) = [f for f in findings_of(gone)[0] if f.signal == "fallen_off_bus"]
    assert finding.class_ == "fatal"


# --- nvidia-smi -L --------------------------------------------------------------------------------
def test_gpu_list_with_mig_devices_counts_gpus_not_instances():
    reading = parse_gpu_list(read("nvidia-smi-L-mig.txt"))
    assert [g.status.index for g in reading.gpus] == ["0", "1"]
    findings = inspect_text(read("nvidia-smi-L-mig.txt"), "l", InspectOptions(expect_gpus=3))
    assert any(f.signal == "gpu_missing" and f.count == 1 for f in findings)


def test_gpu_list_046_counts_the_gpu_it_cannot_open_as_present_but_inaccessible():
    text = next((CORPUS / "cases").glob("046_*.txt")).read_text()
    findings = inspect_text(text, "046", InspectOptions(expect_gpus=4))
    assert not any(f.signal == "gpu_missing" for f in findings)
    assert [f.pci for f in findings if f.signal == "gpu_inaccessible"] == ["00000000:18:00.0"]


# --- dmesg time formats ---------------------------------------------------------------------------
XID = "NVRM: Xid (PCI:0000:3b:00): 48, pid=1, name=python, Ch 00000008"


PREFIXES = [
    ("[Mar 6 21:34] ", "wall"),  # dmesg -H / -e, first record of a minute
    ("[Dec22 12:26] ", "wall"),
    ("[  +0.000123] ", ""),  # dmesg -H / -e, relative to the previous record
    ("[<    0.000123>] ", ""),  # --time-format delta
    ("[  123.456789 <    0.000123>] ", "uptime"),  # dmesg -d
    ("2023-12-22T12:26:24,559615-08:00 ", "wall"),  # --time-format iso
    ("[Mon Mar  6 21:34:31 2023] ", "wall"),  # dmesg -T
]


@pytest.mark.parametrize(("prefix", "clock"), PREFIXES)
def test_dmesg_time_formats_are_kernel_log_records(prefix, clock):
    (event,) = parse_kernel_log(prefix + XID)
    assert (event.code, event.clock_kind) == (48, clock)
    assert looks_like_kernel_log(prefix + "usb 1-1: new high-speed USB device")


# --- the driver-message catalogue -----------------------------------------------------------------
GSP = [
    "[   88.669319] NVRM: GPU6 _kgspBootGspRm: unexpected WPR2 already up, cannot proceed with "
    "booting GSP",
    "[   88.669328] NVRM: GPU6 _kgspBootGspRm: (the GPU is likely in a bad state and may need to "
    "be reset)",
    "[   88.669358] NVRM: GPU6 RmInitAdapter: Cannot initialize GSP firmware RM",
    "[   88.669932] NVRM: GPU 0000:a1:00.0: RmInitAdapter failed! (0x62:0x40:2168)",
    "[   88.671698] NVRM: GPU 0000:a1:00.0: rm_init_adapter failed, device minor number 7",
    "[ 2052.745833] NVRM: gpuWaitForGfwBootComplete_TU102: failed to wait for GFW_BOOT: "
    "(progress 0x3)",
]  # the lines of NVIDIA/open-gpu-kernel-modules#1230 and #789


def test_gsp_and_firmware_boot_failures_are_fatal_and_one_attempt_is_one_event():
    findings, verdict, dicts = findings_of("\n".join(GSP) + "\n")
    ids = {(d["message_id"], d.get("pci"), d["events"]) for d in dicts if "message_id" in d}
    assert ("rm_init_adapter_failed", "00000000:A1:00.0", 1) in ids
    assert {"gsp_init_failed", "firmware_boot_failed"} <= {i[0] for i in ids}
    assert verdict == "unhealthy"


def test_an_unrecognised_error_line_is_unknown_until_a_driver_reload_and_an_overlay_classifies_it():
    line = "[  900.0] NVRM: GPU 0000:0a:00.0: kgrmgrFoo_GH100: failed to frobnicate the widget"
    findings, verdict, _ = findings_of(line + "\n")
    (finding,) = [f for f in findings if f.signal == "unrecognised_driver_message"]
    expected = ("unknown", "unrecognised_driver_message", "00000000:0A:00.0", 1)
    assert (finding.class_, finding.reason, finding.pci, finding.line) == expected
    assert verdict == "unknown" and "frobnicate" in finding.message
    reload = "[  950.0] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  580.159.04"
    assert findings_of(line + "\n" + reload + "\n")[1] == "healthy"
    base = load_policy()
    entry = {"patterns": ["frobnicate"], "class": "noise", "action": "none", "source": "runbook"}
    overlay = {"driver_messages": {"messages": {"widget": entry}}}
    policy = policy_from_mapping(dict(base.data), "packaged", overlay, "site.yaml")
    classified = inspect_text(line + "\n", "x", InspectOptions(policy=policy))
    assert verdict_from_findings(classified) == "healthy"


def test_chatter_and_catalogued_noise_do_not_change_the_verdict():
    for case in ("011", "016", "029", "032"):
        text = next((CORPUS / "cases").glob(f"{case}_*.txt")).read_text()
        assert not any(f.signal == "unrecognised_driver_message" for f in findings_of(text)[0])


# --- dcgm-exporter pages: per-GPU inventory -------------------------------------------------------
GRACE_PAGE = "\n".join(
    f'DCGM_FI_DEV_GPU_TEMP{{gpu="{i}",UUID="GPU-2e2b6342-3996-51b9-5480-e20df571e0{i}c",'
    f'pci_bus_id="0000{d}:01:00.0",device="nvidia{i}",modelName="NVIDIA GB200",Hostname="h"}} 33'
    for i, d in enumerate(("0008", "0009", "0018", "0019"))
)  # the labels dcgm-exporter#581 shows on a GB200 node


def test_dcgm_page_lists_each_gpu_with_8_hex_digit_domains():
    findings = inspect_text("# TYPE DCGM_FI_DEV_GPU_TEMP gauge\n" + GRACE_PAGE + "\n", "p", OPTIONS)
    gpus = {f.gpu: f.pci for f in findings if f.signal == "gpus_seen" and f.gpu}
    domains = ("00000008", "00000009", "00000018", "00000019")
    assert gpus == {str(i): f"{domain}:01:00.0" for i, domain in enumerate(domains)}


# --- corrupted, truncated and binary versions: never healthy; unknown names the file and line -----
FIXTURES = sorted(p.name for p in EVIDENCE.iterdir() if p.suffix in (".txt", ".json"))


def _cut_mid_line(text: str) -> str:
    lines = text.splitlines()
    middle = len(lines) // 2
    return "\n".join(lines[:middle] + [lines[middle][: max(1, len(lines[middle]) // 2)]])


WORDS = r"\b(?:Pass|Fail|Warn|Skip|Healthy|Warning|Failure|Speed|Width|U|D|\d+)\b"


def _corrupt(text: str) -> str:
    """The first three status words or numbers replaced by junk."""
    return re.sub(WORDS, "Q#", text, count=3)


@pytest.mark.parametrize("name", FIXTURES)
@pytest.mark.parametrize("damage", ["truncated", "corrupted", "binary"])
def test_damaged_evidence_is_never_healthy(name, damage):
    text = read(name)
    if damage == "truncated":
        damaged = _cut_mid_line(text)
    elif damage == "corrupted":
        damaged = _corrupt(text)
    else:
        damaged = bytes(range(256)).decode("latin-1") * 4 + text[:100]
    findings = inspect_text(damaged, f"/evidence/{name}", OPTIONS)
    verdict = verdict_from_findings(findings)
    healthy_before = verdict_from_findings(inspect_text(text, name, OPTIONS)) == "healthy"
    if damage == "truncated" and not healthy_before:
        return  # a cut that keeps the fault keeps the verdict
    assert verdict != "healthy", (name, damage, [f.to_dict() for f in findings])
    unknown = [f for f in findings if f.class_ == "unknown"]
    if verdict == "unknown":
        assert any(f"/evidence/{name}" in (f.message or "") for f in unknown)


# --- hypothesis: every parser returns or raises ParseError, nothing else --------------------------
PARSERS = {
    "link_status": parse_link_status,
    "link_errors": parse_link_errors,
    "tree": parse_tree,
    "diag": parse_diag,
    "health": parse_health_incidents,
    "lspci": parse_lspci,
    "gpu_list": parse_gpu_list,
}
SEEDS = [read(name) for name in FIXTURES]


@settings(max_examples=80, deadline=None)
@given(
    st.sampled_from(sorted(PARSERS)),
    st.sampled_from(SEEDS),
    st.integers(min_value=0, max_value=4000),
    st.text(max_size=40),
)
def test_parsers_raise_only_parse_error(parser, seed, cut, noise):
    text = seed[:cut] + noise + seed[cut:]
    with contextlib.suppress(ParseError):
        PARSERS[parser](text)
    findings = inspect_text(text, "h", OPTIONS)
    assert findings and all(f.class_ for f in findings)


@settings(max_examples=60, deadline=None)
@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=300))
def test_any_nvrm_line_is_classified_or_chatter_never_an_exception(text):
    line = "[  12.0] NVRM: " + text.replace("\n", " ")
    findings = inspect_text(line, "h", OPTIONS, kind="kernel-log")
    assert findings
    json.dumps([f.to_dict() for f in findings])
