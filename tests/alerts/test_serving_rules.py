"""Serving rules (gpuslo.alerts.serving): promtool lints them and runs their generated tests;
they exist only for a spec with a `serving` section; their metric names are the real ones."""

from __future__ import annotations

import re
import subprocess

import pytest

from gpuslo.alerts import generate, serving
from gpuslo.slo_spec import SloSpec, spec_from_mapping
from tests.conftest import REPO, require_binary

DATA = REPO / "tests" / "data" / "serving"


@pytest.mark.prometheus
@pytest.mark.parametrize("objectives", [
    {"ttft_seconds": 0.5, "itl_seconds": 0.1},
    {"ttft_seconds": 1, "ttft_target": 0.99, "itl_seconds": 0.05, "itl_target": 0.9},
])
def test_promtool_checks_and_runs_serving_tests(tmp_path, objectives):
    tool = require_binary("promtool")
    spec = spec_from_mapping({"serving": objectives, "period_days": 30})
    for name, text in generate.build_files(spec).items():
        (tmp_path / name).write_text(text, encoding="utf-8")
    check = subprocess.run([tool, "check", "rules", serving.RULE_FILE], cwd=tmp_path,
                           capture_output=True, text=True, timeout=120)
    assert check.returncode == 0, check.stdout + check.stderr
    run = subprocess.run([tool, "test", "rules", serving.TEST_FILE], cwd=tmp_path,
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
    config = (tmp_path / "prometheus.yml").read_text(encoding="utf-8")
    assert serving.RULE_FILE in config


def test_default_spec_generates_no_serving_files():
    files = generate.build_files(SloSpec())
    assert serving.RULE_FILE not in files and serving.TEST_FILE not in files
    assert serving.RULE_FILE not in files["prometheus.yml"]


def test_le_regex_matches_both_spellings_and_no_other_bound():
    for seconds, scale, spellings, others in (
        (0.5, 1, ["0.5"], ["0.05", "0.25", "5.0"]),
        (1, 1, ["1", "1.0"], ["10.0", "0.1"]),
        (0.5, 1000, ["500", "500.0"], ["5000", "50"]),
    ):
        pattern = serving.le_regex(seconds, scale).replace("\\\\", "\\")
        assert all(re.fullmatch(pattern, s) for s in spellings)
        assert not any(re.fullmatch(pattern, s) for s in others)


def test_rules_read_metric_families_seen_on_real_engine_pages():
    pages = "\n".join(p.read_text(encoding="utf-8") for p in DATA.glob("*.prom"))
    for family in ("vllm:time_to_first_token_seconds", "sglang:time_to_first_token_seconds",
                   "vllm:num_requests_running", "nv_inference_request_success",
                   "tgi_queue_size"):
        assert f"{family}" in pages, family
    rules = generate.build_files(spec_from_mapping({"serving": {}}))[serving.RULE_FILE]
    for family in ("vllm:time_to_first_token_seconds_bucket", "sglang:num_running_reqs",
                   "nv_inference_request_success", "nv_inference_request_duration_us"):
        assert family in rules
    assert "sglang:num_running_reqs" in pages
