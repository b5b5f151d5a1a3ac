"""One test per class of evidence the eighth fresh first-contact batch (tests/data/corpus/fresh8,
scored 19/20 on 2026-12-06 at 61d2d51, tests/data/first_contact/corpus_fresh8_2026-12-06.txt)
found misread: the real excerpt (the case file itself), a variant that is not the case's text,
and a negative that must not be read the same way."""

from __future__ import annotations

from gpuslo.exporter.inspect.fabric import inspect_fi_info
from gpuslo.exporter.inspect.options import InspectOptions
from gpuslo.verdict import verdict_from_findings
from tests.inspect.corpus_classes import CORPUS

PROVIDER_FAILED = next((CORPUS / "fresh8" / "cases").glob("1017_*")).read_text()
ONE_DEVICE = next((CORPUS / "fresh2" / "cases").glob("317_*")).read_text()


def _count(findings):
    return next(f for f in findings if f.signal == "efa_devices")


def test_fi_getinfo_error_where_efa_devices_are_expected_is_no_ok_count():
    findings = inspect_fi_info(PROVIDER_FAILED, InspectOptions(expect_efa_devices=1), "1017")
    count = _count(findings)
    assert count.count == 0 and count.class_ == "fatal"
    assert count.reason == "network_devices_missing"
    assert verdict_from_findings(findings) == "unhealthy"


def test_a_device_short_of_a_larger_expectation_is_not_ok_either():
    findings = inspect_fi_info(ONE_DEVICE, InspectOptions(expect_efa_devices=4), "317")
    assert _count(findings).class_ == "fatal" and _count(findings).count == 1


def test_the_expected_count_met_is_ok_and_no_expectation_with_nothing_seen_is_unknown():
    met = inspect_fi_info(ONE_DEVICE, InspectOptions(expect_efa_devices=1), "317")
    assert _count(met).class_ == "ok"
    blind = inspect_fi_info(PROVIDER_FAILED, InspectOptions(), "1017")
    assert _count(blind).class_ == "unknown"
