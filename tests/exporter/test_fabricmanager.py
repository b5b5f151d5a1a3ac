"""nvidia-fabricmanager logs (issue 24, class 1) on real excerpts (tests/fixtures/evidence/issue24):
the reader (file stamps, journal lines, a zh_CN month, continuation lines, gpud's verdict lines),
the SXid catalogue of the Fabric Manager user guide, not-applicable vs failed, the live
`fabricmanager` check drawing `inspect`'s conclusions, and its fail-closed edges."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuslo.errors import DependencyMissing, ParseError
from gpuslo.exporter.checks import fabricmanager as fm_check
from gpuslo.exporter.checks.base import CheckContext
from gpuslo.exporter.evidence.fabricmanager import parse_fabricmanager_log
from gpuslo.exporter.inspect.kinds import detect_kinds, inspect_text
from gpuslo.exporter.inspect.options import InspectOptions
from gpuslo.exporter.policy.fabricmanager import packaged_fm_policy
from gpuslo.verdict import node_verdict, verdict_from_findings

EXCERPTS = Path(__file__).resolve().parent.parent / "fixtures" / "evidence" / "issue24"


def read(name: str) -> str:
    return (EXCERPTS / name).read_text()


def inspect(text: str):
    findings = inspect_text(text, "fm", InspectOptions())
    return findings, verdict_from_findings(findings)


def test_reader_keeps_multi_line_records_and_reads_the_stamp():
    log = parse_fabricmanager_log(read("fm-gpud-testdata.log"))
    assert [r.level for r in log.records][-1] == "ERROR"
    inband = log.records[0]
    assert inband.lines == 2 and "Team release request" in inband.message  # continuation joined
    assert inband.timestamp == 1740491985.0  # [Feb 25 2025 13:59:45] UTC
    (error,) = log.switch_errors()
    assert (error.code, error.token, error.pci, error.physical_id, error.port) == (
        12028, "Non-fatal", "00000000:86:00.0", 3, 61
    )


def test_non_fatal_sxid_is_warn_and_fatal_sxid_fails_with_its_port():
    findings, verdict = inspect(read("fm-gpud-testdata.log"))
    (sxid,) = [f for f in findings if f.sxid == 12028]
    assert (sxid.class_, sxid.pci, sxid.extra["port"], sxid.events) == (
        "warn", "00000000:86:00.0", 61, 1
    )
    assert "non-fatal" in sxid.message  # the guide's section is named
    assert verdict == "healthy"
    findings, verdict = inspect(read("fm-gpud-fatal-multicast.log"))
    (fatal,) = [f for f in findings if f.sxid == 20034]
    assert (fatal.class_, fatal.reason, fatal.extra["port"]) == ("fatal", "sxid_fatal", 33)
    (multicast,) = [f for f in findings if f.signal == "fabric_manager_error"]
    assert (multicast.class_, multicast.reason) == ("fatal", "fabric_unhealthy")  # NVLS broken
    assert verdict == "unhealthy"


@pytest.mark.parametrize(
    ("code", "token", "class_", "action"),
    [
        (12028, "Non-fatal", "warn", "none"),  # D.4
        (20034, "Fatal", "fatal", "drain_and_reset"),  # D.5
        (12020, "Non-fatal", "fatal", "reboot_node"),  # D.6 always fatal: worse than the token
        (22013, "Non-fatal", "noise", "none"),  # D.4 "can be safely ignored"
        (99999, "Non-fatal", "warn", "none"),  # not in the guide: FM's own token decides
        (99999, None, "fatal", "drain_and_reset"),  # no token, not catalogued: fail closed
    ],
)
def test_sxid_catalogue_of_the_fabric_manager_guide(code, token, class_, action):
    rule = packaged_fm_policy().sxid_rule(code, token)
    assert (rule.class_, rule.action) == (class_, action)


@pytest.mark.parametrize("name", ["fm-journal-zh-nothing-to-do.txt", "fm-journal-pre-nvl5.txt"])
def test_no_nvswitch_is_not_applicable_and_its_exit_is_not_a_failure(name):
    text = read(name)
    assert "fabricmanager-log" in detect_kinds(text)
    findings, verdict = inspect(text)
    assert [f.signal for f in findings if f.signal.startswith("fabric_manager")] == [
        "fabric_manager_not_applicable"
    ]
    assert verdict == "healthy"


def test_the_same_service_failure_on_an_nvswitch_node_is_fatal():
    # The zh_CN journal without its NV_WARN_NOTHING_TO_DO line: FM exited and nothing says the
    # node has no NVSwitch, so the fabric is not configured.
    text = "\n".join(
        line for line in read("fm-journal-zh-nothing-to-do.txt").splitlines()
        if "NOTHING_TO_DO" not in line
    )
    findings, verdict = inspect(text)
    (failed,) = [f for f in findings if f.signal == "fabric_manager_failed"]
    assert (failed.class_, failed.reason) == ("fatal", "fabric_unhealthy")
    assert verdict == "unhealthy"


def test_gpud_verdict_lines_per_host():
    findings, verdict = inspect(read("fm-gpud-status.txt"))
    signals = {f.signal for f in findings}
    assert {"fabric_manager_not_applicable", "fabric_manager_running"} <= signals
    assert verdict == "healthy"


def test_an_error_line_no_entry_knows_is_never_healthy():
    line = "[Mar 03 2025 10:00:00] [ERROR] [tid 77] unexpected response from LFM for request 12"
    findings, verdict = inspect(line)
    (unknown,) = [f for f in findings if f.signal == "fabric_manager_error"]
    assert (unknown.class_, unknown.reason) == ("unknown", "unrecognised_message")
    assert verdict == "unknown"
    fatal = line.replace("unexpected response", "fatal error in the response")
    assert inspect(fatal)[1] == "unhealthy"


# --- the live check ---------------------------------------------------------------------------


def run_check(tmp_path: Path, text: str | None, **context):
    path = tmp_path / "fabricmanager.log"
    if text is not None:
        path.write_text(text)
    ctx = CheckContext(
        sysfs=tmp_path / "sys", procfs=tmp_path / "proc", clock=time.time,
        fabricmanager_log=path, **context,
    )
    return fm_check.FabricManagerCheck().run(ctx)


@pytest.mark.parametrize(
    "name",
    [
        "fm-gpud-testdata.log",
        "fm-gpud-fatal-multicast.log",
        "fm-journal-zh-nothing-to-do.txt",
        "fm-journal-pre-nvl5.txt",
        "fm-gpud-status.txt",
    ],
)
def test_live_check_draws_inspects_conclusions(tmp_path, name):
    text = read(name)
    findings, verdict = inspect(text)
    output = run_check(tmp_path, text)
    assert node_verdict(output.results) == verdict
    fails = {(r.reason) for r in output.results if r.status == "fail"}
    assert fails == {f.reason for f in findings if f.class_ == "fatal"}


def test_live_check_counts_unrecognised_lines_as_warn(tmp_path):
    text = read("fm-gpud-testdata.log") + (
        "[Feb 27 2025 15:11:00] [INFO] [tid 1] GPU 3 link training error on port 7\n"
    )
    output = run_check(tmp_path, text)
    assert output.facts.unrecognised_messages == {"fabricmanager": 1}
    assert any(r.status == "warn" and r.scope == "gpu:3" for r in output.results)
    assert node_verdict(output.results) == "healthy"


def test_configured_log_unreadable_fails_closed(tmp_path):
    with pytest.raises(DependencyMissing):
        run_check(tmp_path, None)
    with pytest.raises(ParseError):
        run_check(tmp_path, "not a fabric-manager log\n")


def test_default_log_absent(tmp_path, monkeypatch):
    monkeypatch.setattr(fm_check, "DEFAULT_LOG", tmp_path / "absent.log")
    ctx = CheckContext(sysfs=tmp_path / "sys", procfs=tmp_path / "proc", clock=time.time)
    (result,) = fm_check.FabricManagerCheck().run(ctx).results
    assert (result.status, result.applicable) == ("ok", False)  # no NVSwitch: not applicable
    switch = tmp_path / "sys" / "bus" / "pci" / "devices" / "0000:86:00.0"
    switch.mkdir(parents=True)
    (switch / "vendor").write_text("0x10de\n")
    (switch / "class").write_text("0x068000\n")
    with pytest.raises(DependencyMissing, match="1 NVSwitch"):
        fm_check.FabricManagerCheck().run(ctx)  # FM must run here: its log missing is unknown


# --- hostile input ----------------------------------------------------------------------------


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=400))
def test_reader_raises_nothing_but_parse_error(text):
    try:
        log = parse_fabricmanager_log(text)
    except ParseError:
        return
    log.switch_errors()


def test_a_pathological_megabyte_line_is_read_quickly():
    line = "[Feb 27 2025 15:10:02] [ERROR] [tid 1] detected NVSwitch " + " " * 1_000_000
    started = time.perf_counter()
    inspect(line)
    assert time.perf_counter() - started < 2.0
