"""Latency attainment (gpuslo.slo.latency) on the real engine pages of tests/data/serving."""

from __future__ import annotations

import pytest

from gpuslo.errors import ParseError
from gpuslo.slo.latency import attainment, goodput_from_requests, page_attainment
from tests.conftest import REPO

DATA = REPO / "tests" / "data" / "serving"


def page(name: str) -> str:
    return (DATA / name).read_text(encoding="utf-8")


def test_sglang_deepseek_page_ttft_share_at_bucket_bounds():
    # sglang PR 7317: 20 of 58 requests had their first token within 10 s, 24 within 20 s
    text = page("sglang_metrics_pd_pr7317.prom")
    got = page_attainment(text, "sglang:time_to_first_token_seconds", 10.0)
    assert got[()] == (20.0, 58.0, pytest.approx(20 / 58))
    assert page_attainment(text, "sglang:time_to_first_token_seconds", 20)[()][2] == \
        pytest.approx(24 / 58)


def test_objective_between_bounds_is_unknown_never_interpolated():
    text = page("sglang_metrics_pd_pr7317.prom")
    good, total, ratio = page_attainment(text, "sglang:time_to_first_token_seconds", 15.0)[()]
    assert total == 58.0 and ratio is None


def test_vllm_pages_per_model_and_spelling_of_le():
    # vLLM PR 11117: le="10.0" matches an objective of 10 (spelled 10.0 on the page)
    got = page_attainment(page("vllm_metrics_lora_pr11117.prom"),
                          "vllm:time_to_first_token_seconds", 10, by=("model_name",))
    assert got[("sql-lora",)] == (1.0, 1.0, 1.0)
    # vLLM through Triton's vllm_backend: le="1" (no .0), count given: 3 of 3 within 0.5 s
    got = page_attainment(page("vllm_metrics_triton_vllm_backend_pr58.prom"),
                          "vllm:time_to_first_token_seconds", 0.5, by=("model",))
    assert got[("vllm_opt",)] == (3.0, 3.0, 1.0)


def test_page_without_count_or_inf_bucket_is_unknown():
    # IBM's page was cut before +Inf and _count: the total is unknown, so is the share
    got = page_attainment(page("vllm_metrics_tgis_ibm_pr18.prom"),
                          "vllm:time_to_first_token_seconds", 0.04)
    assert got[()][2] is None


def test_attainment_edges_and_bad_page():
    assert attainment([0.1, 0.5], [3, 8], 10, 0.5) == 0.8
    assert attainment([0.1, 0.5], [0, 0], 0, 0.5) is None
    with pytest.raises(ParseError):
        page_attainment("vllm:x_bucket{le=\"0.1\" 3\n", "vllm:x", 0.1)


def test_distserve_goodput_needs_both_at_once():
    rows = [(0.2, 0.05), (0.2, 0.3), (0.9, 0.05), (0.1, None)]
    assert goodput_from_requests(rows, 0.5, 0.1) == 0.5
    assert goodput_from_requests([], 0.5, 0.1) is None
