"""The one SLO spec: defaults, validation that names every bad field, burn-rate factors derived
from the period, and one change that moves the rules, the dashboards and the report together."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from gpuslo import names
from gpuslo.alerts import generate as rules_generate
from gpuslo.dashboards import generate as dashboards_generate
from gpuslo.errors import ConfigError
from gpuslo.slo import objectives
from gpuslo.slo_spec import (
    SloSpec,
    format_number,
    load_spec,
    sli_record,
    spec_from_mapping,
)


def test_defaults_follow_the_issue():
    spec = load_spec(None)
    assert spec.objectives == {"usable_gpu": 0.98, "check_liveness": 0.999, "job_goodput": 0.90}
    assert spec.period == "28d" and spec.exporter_job == "gpuslo"
    assert spec.sli_windows == ("5m", "30m", "1h", "2h", "6h", "1d", "3d", "28d")
    assert SloSpec(period_days=3).sli_windows[-1] == "3d"
    assert spec_from_mapping({"period_days": 7}).sli_windows[-1] == "7d"


def test_factors_are_the_workbook_table_for_30_days_and_scale_with_the_period():
    thirty = [
        (a.severity, a.long_window, a.short_window, a.factor)
        for a in SloSpec(period_days=30).burn_rate_alerts()
    ]
    assert thirty == [
        ("page", "1h", "5m", 14.4),
        ("page", "6h", "30m", 6.0),
        ("ticket", "1d", "2h", 3.0),
        ("ticket", "3d", "6h", 1.0),
    ]
    # 28 days: 0.02 x 28 x 24 = 13.44 for the 1h page window.
    assert SloSpec().burn_rate_alerts()[0].factor == 13.44


def test_every_bad_field_is_named_in_one_message():
    with pytest.raises(ConfigError) as caught:
        spec_from_mapping(
            {
                "objectives": {"usable_gpu": 1.0, "nope": 0.5},
                "period_days": 0,
                "week": "48",
                "job_stall_factor": 1,
                "exporter_job": "a b",
                "colour": "red",
            },
            "slo.yml",
        )
    message = str(caught.value)
    for field in (
        "objectives.usable_gpu",
        "objectives.nope",
        "period_days",
        "week",
        "job_stall_factor",
        "exporter_job",
        "colour",
    ):
        assert field in message
    assert message.startswith("slo.yml")


def test_a_yaml_error_names_file_and_line(tmp_path):
    path = tmp_path / "slo.yml"
    path.write_text("objectives:\n  usable_gpu: [0.9\n")
    with pytest.raises(ConfigError, match=r"slo\.yml:\d+: not valid YAML"):
        load_spec(path)
    with pytest.raises(ConfigError, match="cannot read"):
        load_spec(tmp_path / "missing.yml")


def test_fixed_float_formatting():
    assert format_number(1 - 13.44 * 0.02) == "0.7312"
    assert format_number(0.1 + 0.2) == "0.3"
    assert format_number(14.4) == "14.4" and format_number(1.0) == "1"


@given(st.floats(min_value=0.001, max_value=0.999, allow_nan=False), st.integers(7, 366))
def test_any_valid_spec_loads_and_factors_shrink_with_longer_windows(objective, period):
    spec = spec_from_mapping({"objectives": {"job_goodput": objective}, "period_days": period})
    assert spec.objectives["job_goodput"] == objective
    factors = [alert.factor for alert in spec.burn_rate_alerts()]
    assert factors[0] > factors[1] > factors[2] > factors[3] > 0


def test_objective_and_period_move_rules_dashboards_and_report_together():
    default = SloSpec()
    changed = spec_from_mapping({"objectives": {"usable_gpu": 0.95}, "period_days": 30})
    rules = rules_generate.build_files(changed)
    boards = dashboards_generate.build_files(changed)
    assert rules != rules_generate.build_files(default)
    assert boards != dashboards_generate.build_files(default)
    # Rules: the objective, the period window and the 30-day page factor 14.4 -> 1 - 14.4 x 0.05.
    assert "vector(0.95)" in rules["gpuslo-slo.rules.yml"]
    assert sli_record(names.SLO_USABLE_GPU, "30d") in rules["gpuslo-slo.rules.yml"]
    assert "gpuslo:gpu_usable:ratio_rate1h < 0.28 " in rules["gpuslo-alerts.rules.yml"]
    # Dashboards: the same period series and budget.
    fleet = boards["gpuslo-fleet-slo.json"]
    # (the fleet board sums the recorded counts over the period window, right for any set of
    # clusters, rather than reading one cluster's recorded ratio)
    assert "[30d]" in fleet and "[28d]" not in fleet and "Usable GPU ratio over 30d" in fleet
    assert "/ 0.05" in fleet and "/ 0.02" not in fleet.split("Check liveness")[0]
    # Report: a week at 0.96 usable meets 0.95 but not 0.98.
    week_s = 7 * 86400
    assert objectives.slo_status("usable_gpu", 96, 100, changed, week_s).compliant is True
    assert objectives.slo_status("usable_gpu", 96, 100, default, week_s).compliant is False


@pytest.mark.parametrize("period", [1, 6])
def test_a_period_shorter_than_a_week_is_refused_naming_the_burn_window(period):
    # period_days: 1 used to load and gave a 3-day burn window longer than the period.
    with pytest.raises(ConfigError, match=r"'period_days' must be a whole number of days 7\.\.366 "
                                          r"\(the longest burn-rate window is 3 days\)"):
        spec_from_mapping({"period_days": period}, "slo.yml")


def test_a_binary_spec_is_a_config_error_naming_the_file(tmp_path):
    path = tmp_path / "g.bin"
    path.write_bytes(bytes(range(256)) * 20)
    with pytest.raises(ConfigError, match=r"g\.bin:2: not UTF-8 text \(SLO spec"):
        load_spec(path)


@pytest.mark.parametrize("command", ["rules", "dashboards", "report"])
def test_every_command_reports_a_binary_spec_in_one_line(tmp_path, capsys, command):
    from gpuslo.cli import main

    path = tmp_path / "g.bin"
    path.write_bytes(b"\x8e\xff" * 2500)
    extra = ["--data", str(tmp_path)] if command == "report" else []
    assert main([command, "--slo", str(path), "--out", str(tmp_path / "x"), *extra]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "g.bin:1: not UTF-8 text (SLO spec" in err[0]


def test_fleet_fields_have_defaults_and_are_validated():
    spec = SloSpec()
    assert spec.fleet_blind_threshold == 0.05 and spec.retired_nodes == ()
    chosen = spec_from_mapping(
        {"fleet_blind_threshold": 0.2, "retired_nodes": ["gpu-9", "gpu-1.example.com", "gpu-9"]}
    )
    assert chosen.fleet_blind_threshold == 0.2
    assert chosen.retired_nodes == ("gpu-1.example.com", "gpu-9")
    assert spec_from_mapping({"retired_nodes": None}).retired_nodes == ()
    with pytest.raises(ConfigError) as caught:
        spec_from_mapping(
            {"fleet_blind_threshold": 1, "retired_nodes": ["ok-1", 'x"}) or vector(1']},
            "slo.yml",
        )
    message = str(caught.value)
    assert "'fleet_blind_threshold'" in message and "'retired_nodes[1]'" in message
    with pytest.raises(ConfigError, match="'retired_nodes' must be a list"):
        spec_from_mapping({"retired_nodes": "gpu-9"}, "slo.yml")
def test_the_crawl_fields_have_defaults_and_every_bad_one_is_named():
    spec = load_spec(None)
    rule = spec.slowdown_rule()
    assert (rule.threshold, rule.min_intervals, rule.reference_intervals) == (1.03, 2, 3)
    assert (spec.crawl_alert_ratio, spec.straggler_score) == (0.03, 0.9)
    custom = spec_from_mapping({"slowdown_threshold": 1.1, "slowdown_min_intervals": 3})
    assert custom.slowdown_rule().threshold == 1.1 and custom.slowdown_rule().min_intervals == 3
    with pytest.raises(ConfigError) as caught:
        spec_from_mapping(
            {"slowdown_threshold": 0.9, "slowdown_min_intervals": 0,
             "slowdown_reference_intervals": 2.5, "crawl_alert_ratio": 3, "straggler_score": 0},
            "slo.yml",
        )
    message = str(caught.value)
    for name in ("slowdown_threshold", "slowdown_min_intervals", "slowdown_reference_intervals",
                 "crawl_alert_ratio", "straggler_score"):
        assert f"'{name}'" in message


def test_rules_help_lists_every_spec_field(capsys):
    """newcomer6 finding 16: the SLO spec's fields were documented only in the source; `gpuslo
    rules --help` lists each one (the module docstring's example, one text), and a field that
    the spec refuses as unknown is not in it (the negative)."""
    from gpuslo.cli import main
    from gpuslo.serving_spec import FIELDS as SERVING_FIELDS
    from gpuslo.slo_spec import KNOWN_FIELDS

    with pytest.raises(SystemExit):
        main(["rules", "--help"])
    text = capsys.readouterr().out
    for name in (*KNOWN_FIELDS, *SERVING_FIELDS, "usable_gpu", "check_liveness", "job_goodput"):
        assert f"{name}:" in text, name
    assert "usable_gpu_objective" not in text


def test_the_listed_spec_is_a_valid_spec(tmp_path):
    """The example `rules --help` prints loads as a spec (a field renamed in the code and not in
    the list would be refused here)."""
    import textwrap

    from gpuslo.slo_spec import load_spec, spec_fields_text

    path = tmp_path / "slo.yaml"
    path.write_text(textwrap.dedent(spec_fields_text()))
    spec = load_spec(str(path))
    assert spec.period_days == 28 and spec.retired_nodes == ("gpu-17",)
