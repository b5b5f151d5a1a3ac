"""DCGM host-engine logs (issue 24, class 2) on real excerpts (tests/fixtures/evidence/issue24):
health-watch results per GPU and system, repeated module errors, ERROR-level chatter that is no
fault, the host engine's own failure, and the live `hostengine` check against `inspect`."""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuslo.errors import DependencyMissing, ParseError
from gpuslo.exporter.checks import hostengine as he_check
from gpuslo.exporter.checks.base import CheckContext
from gpuslo.exporter.evidence.hostengine import health_report, parse_hostengine_log
from gpuslo.exporter.inspect.kinds import detect_kinds, inspect_text
from gpuslo.exporter.inspect.options import InspectOptions
from gpuslo.verdict import node_verdict, verdict_from_findings

EXCERPTS = Path(__file__).resolve().parent.parent / "fixtures" / "evidence" / "issue24"


def read(name: str) -> str:
    return (EXCERPTS / name).read_text()


def inspect(text: str):
    findings = inspect_text(text, "he", InspectOptions())
    return findings, verdict_from_findings(findings)


def test_health_warning_is_attached_to_its_gpu_and_system():
    text = read("hostengine-thermal-warning.log")
    assert "hostengine-log" in detect_kinds(text)
    (record,) = parse_hostengine_log(text).records
    assert (record.level, record.module) == ("ERROR", "Health")
    report = health_report(record)
    assert (report.severity, report.system, report.gpu) == ("WARNING", "Thermal", "2")
    findings, verdict = inspect(text)
    (health,) = [f for f in findings if f.signal == "dcgm_health"]
    assert (health.class_, health.gpu, health.extra["system"]) == ("warn", "2", "thermal")
    assert verdict == "healthy"  # a WARN is investigated, the GPU still works


def test_a_health_failure_fails_its_gpu():
    text = read("hostengine-thermal-warning.log").replace("a WARNING", "a FAILURE")
    findings, verdict = inspect(text)
    (health,) = [f for f in findings if f.signal == "dcgm_health"]
    assert (health.class_, health.reason, health.gpu) == ("fatal", "thermal_slowdown", "2")
    assert verdict == "unhealthy"


@pytest.mark.parametrize(
    "name",
    [
        "hostengine-dcgm4-startup.log",
        "hostengine-no-data-chatter.log",
        "hostengine-dcgm31-debug.log",
    ],
)
def test_debug_info_and_error_level_chatter_stay_healthy(name):
    # `__DCGM_FATAL_XIDS__ unset` holds the word FATAL; "No data is available" is logged at ERROR
    findings, verdict = inspect(read(name))
    assert verdict == "healthy", [f.to_dict() for f in findings]
    assert not [f for f in findings if f.class_ not in ("ok",)]


def test_repeated_module_errors_are_the_host_engines_trouble_not_a_gpu_fault():
    # the loader's "Failed to load module 9" once, and the SysMon module's own error twice
    findings, verdict = inspect(read("hostengine-sysmon-module.log"))
    modules = [f for f in findings if f.signal == "hostengine_module_error"]
    assert [(f.class_, f.layer, f.events) for f in modules] == [
        ("warn", "observability", 2), ("warn", "observability", 1)
    ]
    assert verdict == "healthy"


def test_a_host_engine_that_did_not_start_is_unknown():
    line = "2022-05-15 10:00:00.000 ERROR [11:11] Failed to start DCGM Server: -7 [a.cpp:1] [f]"
    findings, verdict = inspect(line)
    (source,) = [f for f in findings if f.signal == "source_unavailable"]
    assert (source.class_, source.layer) == ("unknown", "observability")
    assert verdict == "unknown"


# --- the live check ---------------------------------------------------------------------------


def run_check(tmp_path: Path, text: str | None):
    path = tmp_path / "nv-hostengine.log"
    if text is not None:
        path.write_text(text)
    ctx = CheckContext(procfs=tmp_path, clock=time.time, hostengine_log=path)
    return he_check.HostEngineCheck().run(ctx)


@pytest.mark.parametrize(
    "text",
    [
        read("hostengine-thermal-warning.log"),
        read("hostengine-thermal-warning.log").replace("a WARNING", "a FAILURE"),
        read("hostengine-dcgm4-startup.log"),
        read("hostengine-sysmon-module.log"),
        read("hostengine-no-data-chatter.log"),
    ],
)
def test_live_check_draws_inspects_conclusions(tmp_path, text):
    findings, verdict = inspect(text)
    output = run_check(tmp_path, text)
    assert node_verdict(output.results) == verdict
    assert {r.reason for r in output.results if r.status == "fail"} == {
        f.reason for f in findings if f.class_ == "fatal"
    }
    gpu2 = [r for r in output.results if r.scope == "gpu:2"]
    assert [r.status for r in gpu2] in ([], ["warn"], ["fail"])  # the GPU the log names


def test_configured_log_unreadable_fails_closed_default_absent_does_not_apply(
    tmp_path, monkeypatch
):
    with pytest.raises(DependencyMissing):
        run_check(tmp_path, None)
    with pytest.raises(ParseError):
        run_check(tmp_path, "nothing of DCGM here\n")
    monkeypatch.setattr(he_check, "DEFAULT_LOG", tmp_path / "absent.log")
    (result,) = he_check.HostEngineCheck().run(CheckContext(clock=time.time)).results
    assert (result.status, result.applicable) == ("ok", False)


@settings(max_examples=200, deadline=None)
@given(st.text(max_size=400))
def test_reader_raises_nothing_but_parse_error(text):
    try:
        log = parse_hostengine_log(text)
    except ParseError:
        return
    for record in log.records:
        health_report(record)
