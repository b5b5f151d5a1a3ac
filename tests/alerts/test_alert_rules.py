"""Generated Prometheus rules: promtool lints them and runs their generated unit tests; the
committed copy in deploy/prometheus matches the generator; the CLI fails cleanly."""

from __future__ import annotations

import re
import subprocess
from pathlib import Path

import pytest
import yaml
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuslo import cli, names
from gpuslo.alerts import generate, rules, sli
from gpuslo.slo_spec import SloSpec, spec_from_mapping
from tests.conftest import REPO, require_binary

DEPLOY = REPO / "deploy" / "prometheus"


def _write(spec: SloSpec, directory: Path) -> Path:
    for name, text in generate.build_files(spec).items():
        (directory / name).write_text(text, encoding="utf-8")
    return directory


def _promtool(directory: Path, *args: str, pattern: str = "") -> subprocess.CompletedProcess:
    tool = require_binary("promtool")
    pattern = pattern or ("*.rules.yml" if args[0] == "check" else "*_test.yml")
    files = sorted(p.name for p in directory.glob(pattern))
    return subprocess.run(
        [tool, *args, *files], cwd=directory, capture_output=True, text=True, timeout=120
    )


@pytest.mark.prometheus
@pytest.mark.parametrize(
    "mapping",
    [
        {},
        {
            "period_days": 30,
            "objectives": {"usable_gpu": 0.95, "job_goodput": 0.8},
            "retired_nodes": ["gpu-17.example.com", "gpu-2"],
        },
    ],
    ids=["defaults", "30d-with-retired-nodes"],
)
def test_promtool_checks_and_runs_the_generated_tests(tmp_path, mapping):
    directory = _write(spec_from_mapping(mapping), tmp_path)
    checked = _promtool(directory, "check", "rules")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    tested = _promtool(directory, "test", "rules")
    assert tested.returncode == 0, tested.stdout + tested.stderr


@pytest.mark.prometheus
def test_example_configuration_loads_the_rules_and_honours_job_labels(tmp_path):
    directory = _write(SloSpec(), tmp_path)
    checked = subprocess.run(
        [require_binary("promtool"), "check", "config", "prometheus.yml"],
        cwd=directory,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert checked.returncode == 0, checked.stdout + checked.stderr
    recording = sum(len(group["rules"]) for group in sli.recording_groups(SloSpec()))
    assert recording == 68  # 38 SLI rules, 7 of the provisioned inventory, 4 of the crawl group,
    # 10 of the per-check liveness group, 3 of the per-job series group, 3 of the locate group,
    # 3 of the job tiles group
    assert f"SUCCESS: {recording} rules found" in checked.stdout + checked.stderr
    config = yaml.safe_load((directory / "prometheus.yml").read_text())
    exporters = config["scrape_configs"][0]
    assert exporters["job_name"] == "gpuslo" and exporters["honor_labels"] is True


@pytest.mark.prometheus
def test_generated_tests_catch_a_threshold_moved_past_the_boundary(tmp_path):
    directory = _write(SloSpec(), tmp_path)
    path = directory / "gpuslo-alerts.rules.yml"
    # 1h/5m page pair of the usable-GPU SLO at 28 days: 1 - 13.44 x 0.02 = 0.7312.
    text = path.read_text()
    assert text.count("< 0.7312)") == 1 and text.count("< 0.7312 ") == 1
    path.write_text(text.replace("< 0.7312)", "< 0.73121)").replace("< 0.7312 ", "< 0.73121 "))
    tested = _promtool(directory, "test", "rules", pattern="gpuslo-slo_test.yml")
    assert tested.returncode != 0
    assert "GpusloUsableGpuBudgetBurn" in tested.stdout + tested.stderr


def _alerts(spec: SloSpec) -> list[dict]:
    return [rule for group in rules.alert_groups(spec) for rule in group["rules"]]


def test_every_alert_named_in_the_issue_exists_with_a_severity():
    expected = {
        "GpusloUsableGpuBudgetBurn",
        "GpusloCheckLivenessBudgetBurn",
        "GpusloJobGoodputBudgetBurn",
        "GpusloCheckHeartbeatStale",
        "GpusloCheckDependencyMissing",
        "GpusloExporterDown",
        "GpusloFleetBlind",
        "GpusloGpuUnhealthy",
        "GpusloNodeUnhealthySchedulable",
        "GpusloJobStalled",
        "GpusloKernelLogRecordsLost",
        "GpusloNetworkDevicesBelowExpected",
        "GpusloJobCrawling",
        "GpusloStragglerNode",
    }
    alerts = _alerts(SloSpec())
    assert {rule["alert"] for rule in alerts} == expected
    assert all(rule["labels"]["severity"] in names.SEVERITIES for rule in alerts)


def test_every_alert_has_a_firing_and_a_silent_test():
    files = generate.build_files(SloSpec())
    tests = [
        t
        for name in ("gpuslo-slo_test.yml", "gpuslo-alerts_test.yml")
        for t in yaml.safe_load(files[name])["tests"]
    ]
    checks = [c for t in tests for c in t.get("alert_rule_test", [])]
    for alert in {rule["alert"] for rule in _alerts(SloSpec())}:
        outcomes = {bool(c["exp_alerts"]) for c in checks if c["alertname"] == alert}
        assert outcomes == {True, False}, alert


def test_gpu_unhealthy_carries_one_runbook_line_per_action():
    gpu_rules = rules.gpu_unhealthy_rules()
    assert sorted(rule["labels"]["action"] for rule in gpu_rules) == sorted(names.ACTIONS)
    for rule in gpu_rules:
        assert rules.RUNBOOK[rule["labels"]["action"]] in rule["annotations"]["description"]
        assert "\n" not in rules.RUNBOOK[rule["labels"]["action"]]


def test_pairs_that_cannot_fire_are_left_out_and_named():
    # Goodput 0.90 at 28 days: 13.44 x 0.10 >= 1, so its 1h/5m page pair can never fire.
    spec = SloSpec()
    assert rules.unreachable_pairs(spec) == ["job_goodput 1h/5m (factor 13.44)"]
    page = rules.burn_rule(spec, names.SLO_JOB_GOODPUT, "page")
    assert "ratio_rate1h" not in page["expr"] and "ratio_rate6h < 0.44" in page["expr"]
    assert "unreachable" not in generate.build_files(spec)["gpuslo-alerts.rules.yml"]
    assert "job_goodput 1h/5m" in generate.build_files(spec)["gpuslo-alerts.rules.yml"]


@settings(max_examples=50, deadline=None)
@given(
    objective=st.floats(min_value=0.5, max_value=0.99999),
    period=st.integers(min_value=7, max_value=366),
)
def test_thresholds_are_good_ratios_strictly_between_0_and_1(objective, period):
    spec = spec_from_mapping({"objectives": {"usable_gpu": objective}, "period_days": period})
    for severity in names.SEVERITIES:
        for pair in rules.reachable_pairs(spec, names.SLO_USABLE_GPU, severity):
            assert 0 < rules.burn_threshold(spec, names.SLO_USABLE_GPU, pair) < 1


def test_generation_is_deterministic_and_headed():
    first, second = generate.build_files(SloSpec()), generate.build_files(SloSpec())
    assert first == second
    for text in first.values():
        assert text.startswith("# Generated by gpuslo")
        assert generate.REGENERATE in text.splitlines()[1]
        assert not re.search(r"\d\.\d*(0{6,}|9{6,})\d", text), "unformatted float"


def test_deploy_prometheus_matches_the_generator():
    for name, text in generate.build_files(SloSpec()).items():
        path = DEPLOY / name
        assert path.is_file() and path.read_text(encoding="utf-8") == text, (
            f"{path} drifted from the generator; regenerate with: {generate.REGENERATE}"
        )


def test_cli_writes_files_and_reports_a_bad_spec_in_one_line(tmp_path, capsys):
    assert cli.main(["rules", "--out", str(tmp_path / "out")]) == 0
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == sorted(
        generate.build_files(SloSpec())
    )
    bad = tmp_path / "slo.yml"
    bad.write_text("objectives:\n  usable_gpu: 1.5\n")
    assert cli.main(["rules", "--slo", str(bad), "--out", str(tmp_path / "bad")]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "objectives.usable_gpu" in err and str(bad) in err
    assert not (tmp_path / "bad").exists()
