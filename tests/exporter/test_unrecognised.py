"""The device-and-severity fallback (issue 24): a line no reader claims that names a device and
reads as an error is never dropped — `unknown` in `inspect`, `warn` with a counter in the live
checks, fatal either way with a fatal-class word — and benign output stays healthy (every
healthy shared case, the real H200 node)."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from conftest import CORPUS, FIXTURES

from gpuslo.exporter.checks.base import CheckContext
from gpuslo.exporter.checks.xid import XidCheck
from gpuslo.exporter.evidence.devices import DeviceRef, device_of
from gpuslo.exporter.inspect.kinds import inspect_path, inspect_text
from gpuslo.exporter.inspect.options import InspectOptions
from gpuslo.exporter.policy.unrecognised import is_fatal_text, judge_line
from gpuslo.verdict import node_verdict, verdict_from_findings

EXCERPTS = Path(__file__).resolve().parent.parent / "fixtures" / "evidence" / "issue24"


def read(name: str) -> str:
    return (EXCERPTS / name).read_text()


def inspect(text: str):
    findings = inspect_text(text, "f", InspectOptions())
    return findings, verdict_from_findings(findings)


@pytest.mark.parametrize(
    ("line", "device"),
    [
        ("[  652.483325] nvidia: probe of 0000:01:00.0 failed with error -1",
         DeviceRef("pci", "00000000:01:00.0")),
        ("detected NVSwitch fatal error 20034 on fid 0 on NVSwitch pci bus id 00000000:86:00.0",
         DeviceRef("pci", "00000000:86:00.0")),
        ("Detected clocks event due to thermal violation in GPU 2.", DeviceRef("gpu", "2")),
        ("mlx5_core mlx5_5: failed to query port", DeviceRef("nic", "mlx5_5")),
        ("nvidia-nvswitch3: link training error", DeviceRef("nvswitch", "nvidia-nvswitch3")),
        ("GPU_UUID:GPU-d1816eb1-2926-4fbc-13f6-1cf1ba1b921b failed",
         DeviceRef("uuid", "GPU-d1816eb1-2926-4fbc-13f6-1cf1ba1b921b")),
        # time stamps are not PCI addresses
        ("2025-01-23 22:23:53.671 DEBUG [46345:46359] Thread handle failed", None),
        ("[Fri Aug 30 11:43:09 2024] something failed", None),
        ("Dec  1 02:16:37 node-01 kernel: timeout", None),
    ],
)
def test_the_device_a_line_names(line, device):
    assert device_of(line) == device


def test_fatal_class_words_and_never_non_fatal():
    assert is_fatal_text("pcieport 0000:00:01.0: AER: Uncorrected (Fatal) error received")
    assert is_fatal_text("GPU 0000:3b:00.0 has fallen off the bus")
    assert is_fatal_text("(the GPU is likely in a bad state and may need to be reset)")
    assert not is_fatal_text("pcieport 0000:00:02.0: AER: Uncorrected (Non-Fatal) error received")
    assert not is_fatal_text("__DCGM_FATAL_XIDS__ unset. Not loading")  # a variable's name
    assert judge_line(1, "ACPI Error: AE_NOT_FOUND, no device named") is None  # no device


def test_an_unclaimed_kernel_line_is_unknown_for_its_device():
    findings, verdict = inspect(read("nvrm-280-not-supported.txt"))
    (probe,) = [f for f in findings if f.signal == "unrecognised_message"]
    assert (probe.class_, probe.pci, probe.line) == ("unknown", "00000000:01:00.0", 8)
    assert "probe of 0000:01:00.0 failed" in probe.message
    assert verdict == "unhealthy"  # the not-supported block itself is fatal


def test_a_fatal_class_word_fails_closed_in_any_shape():
    findings, verdict = inspect(read("aer-fatal-syslog.txt"))
    fatal = [f for f in findings if f.signal == "unrecognised_message"]
    assert fatal and {(f.class_, f.pci, f.reason) for f in fatal} == {
        ("fatal", "00000000:00:01.0", "unrecognised_fatal_message")
    }
    assert verdict == "unhealthy"


def test_a_file_no_parser_knows_names_its_tool_and_its_devices():
    text = "| GPU 0000:3B:00.0 | nvidia-smi says: Unknown Error, GPU has fallen off the bus |\n"
    findings, verdict = inspect(text)
    signals = {f.signal: f for f in findings}
    assert signals["unrecognised_output"].extra["tool"] == "nvidia-smi"
    assert signals["unrecognised_message"].class_ == "fatal"
    assert verdict == "unhealthy"


def _healthy_shared_cases() -> list[str]:
    entries = yaml.safe_load((CORPUS / "expected.yaml").read_text())
    out = []
    for entry in entries:
        verdicts = entry["verdict"] if isinstance(entry["verdict"], list) else [entry["verdict"]]
        if verdicts == ["healthy"]:
            out.append(entry["case"])
    return out


@pytest.mark.parametrize("case", _healthy_shared_cases())
def test_no_false_alarm_on_healthy_shared_cases(case):
    findings = inspect_path(str(CORPUS / "cases" / case), InspectOptions())
    assert verdict_from_findings(findings) == "healthy"
    assert not [f for f in findings if f.signal and f.signal.startswith("unrecognised")]


@pytest.mark.parametrize("name", sorted(p.name for p in (FIXTURES / "h200").iterdir()))
def test_no_false_alarm_on_the_real_h200_node(name):
    findings = inspect_path(str(FIXTURES / "h200" / name), InspectOptions())
    assert verdict_from_findings(findings) == "healthy"
    assert not [f for f in findings if f.signal and f.signal.startswith("unrecognised")]


# --- the live xid check -------------------------------------------------------------------------


def xid_run(tmp_path: Path, text: str):
    log = tmp_path / "kern.log"
    log.write_text(text)
    context = CheckContext(
        kernel_log=log, procfs=tmp_path, state_dir=tmp_path / "state", clock=lambda: 1e9
    )
    output = XidCheck().run(context)
    return {r.scope: r for r in output.results}, output.facts[1]


def test_live_unrecognised_driver_chatter_warns_and_is_counted(tmp_path):
    # inspect reads it unknown; the live check must not make the GPU unusable until reboot
    line = "[  900.0] NVRM: GPU 0000:0a:00.0: kgrmgrFoo_GH100: failed to frobnicate the widget\n"
    assert inspect(line)[1] == "unknown"
    results, facts = xid_run(tmp_path, line)
    assert results["pci:00000000:0A:00.0"].status == "warn"
    assert "frobnicate" in results["pci:00000000:0A:00.0"].message
    assert facts.unrecognised_messages == {"xid": 1}
    assert node_verdict(results.values()) == "healthy"


def test_live_fatal_class_words_still_fail(tmp_path):
    results, facts = xid_run(tmp_path, read("aer-fatal-syslog.txt"))
    root_port = results["pci:00000000:00:01.0"]
    assert (root_port.status, root_port.reason) == ("fail", "unrecognised_fatal_message")
    assert facts.unrecognised_messages == {"xid": 2}
    results, _ = xid_run(tmp_path, read("nvrm-kgspbootgsprm-wpr2.txt"))
    assert results["pci:00000000:A1:00.0"].status == "fail"  # catalogued: RmInitAdapter failed


def test_live_unclaimed_device_error_line_warns(tmp_path):
    results, facts = xid_run(tmp_path, read("nvrm-280-not-supported.txt"))
    assert results["pci:00000000:01:00.0"].status == "fail"  # the block: GPU not supported
    assert facts.unrecognised_messages["xid"] >= 1


def test_a_kernel_log_file_is_read_once_with_its_fallback_lines(tmp_path):
    # the scan keeps the error lines in the same pass (a FIFO cannot be read twice), across
    # chunk boundaries, with file line numbers
    from gpuslo.exporter.evidence.kernel_log.read import scan_kernel_log_file
    from gpuslo.exporter.policy.unrecognised import ERROR_WORDS

    lines = read("nvrm-280-not-supported.txt").splitlines() * 40
    path = tmp_path / "big.log"
    path.write_text("\n".join(lines) + "\n")
    scan = scan_kernel_log_file(str(path), chunk_bytes=512, extra=ERROR_WORDS)
    probes = [n for n, line in scan.extra_lines if "probe of 0000:01:00.0 failed" in line]
    assert probes == [8 + 10 * k for k in range(40)]
    from gpuslo.exporter.inspect.kernel_log import inspect_kernel_log_file

    for findings in (
        inspect_kernel_log_file(str(path), InspectOptions()),  # the streamed path (any size)
        inspect_path(str(path), InspectOptions(), "kernel-log"),  # the text path
    ):
        (probe,) = [f for f in findings if f.signal == "unrecognised_message"]
        assert (probe.events, probe.pci, probe.line) == (40, "00000000:01:00.0", 8)


def test_the_exporter_publishes_what_the_fallback_read(tmp_path, capsys):
    """`gpuslo exporter --once`: the xid check's fallback count reaches /metrics (the runner once
    dropped UnrecognisedFacts on the way to the snapshot, so the series never left the checks)."""
    from gpuslo.cli import main

    log = tmp_path / "kern.log"
    log.write_text("[  900.0] NVRM: GPU 0000:0a:00.0: kgrmgrFoo_GH100: failed to frobnicate the "
                   "widget\n")
    code = main(["exporter", "--once", "--kernel-log", str(log), "--state-dir",
                 str(tmp_path / "state"), "--path.sysfs", str(tmp_path / "nosys")])
    out = capsys.readouterr().out
    assert code == 0
    assert 'gpuslo_unrecognised_messages_total{source="xid"} 1.0' in out.splitlines()
