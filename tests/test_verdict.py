"""The fail-closed combination rules of gpuslo.verdict."""

import pytest

from gpuslo import names
from gpuslo.verdict import (
    CheckResult,
    Finding,
    combine,
    gpu_verdicts,
    stale_as_unknown,
    verdict_from_findings,
    worst_verdict,
)


def test_combine_is_fail_closed():
    assert combine([]) == "unknown"
    assert combine(["ok", "warn"]) == "healthy"
    assert combine(["ok", "unknown"]) == "unknown"
    assert combine(["unknown", "fail", "ok"]) == "unhealthy"


def test_unknown_result_needs_reason_and_gets_observability_layer():
    with pytest.raises(ValueError):
        CheckResult(check="xid", scope="node", status="unknown")
    result = CheckResult(check="xid", scope="node", status="unknown", reason="check_timeout")
    assert result.layer == names.LAYER_OBSERVABILITY


def test_stale_result_becomes_unknown_after_three_intervals():
    ok = CheckResult(check="thermal", scope="GPU-1", status="ok", observed_at=1000.0)
    assert stale_as_unknown(ok, now=1090.0, interval_s=30).status == "ok"
    stale = stale_as_unknown(ok, now=1090.1, interval_s=30)
    assert (stale.status, stale.reason, stale.layer) == ("unknown", "stale_data", "observability")


def test_node_scoped_failure_reaches_every_gpu_and_missing_gpu_is_unknown():
    results = [
        CheckResult(check="thermal", scope="GPU-a", status="ok"),
        CheckResult(check="network_links", scope="node", status="fail", reason="network_port_down"),
    ]
    assert gpu_verdicts(results, ["GPU-a"]) == {"GPU-a": "unhealthy"}
    assert gpu_verdicts([], ["GPU-b"]) == {"GPU-b": "unknown"}


def test_findings_verdict_nothing_read_is_unknown():
    assert verdict_from_findings([]) == "unknown"
    seen = Finding(kind="smi-csv", class_="ok", signal="gpus_seen", count=1)
    assert verdict_from_findings([seen]) == "healthy"
    fatal = Finding(kind="kernel-log", class_="fatal", xid=79, reason="fallen_off_bus")
    assert verdict_from_findings([seen, fatal]) == "unhealthy"
    assert fatal.to_dict()["class"] == "fatal" and fatal.to_dict()["layer"] == "node"
    assert worst_verdict(["healthy", "unknown"]) == "unknown"
