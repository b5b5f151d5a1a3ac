"""The outputs recorded on a real H200 (tests/fixtures/h200-live) stay valid for their consumers."""

import json
import subprocess

import pytest

from tests.conftest import REPO, require_binary

LIVE = REPO / "tests" / "fixtures" / "h200-live"


def test_recorded_check_is_healthy_with_durations():
    report = json.loads((LIVE / "check.json").read_text())
    assert report["verdict"] == "healthy"
    assert all(r["status"] == "ok" and r["duration_s"] > 0 for r in report["results"])


@pytest.mark.parametrize(
    "name", ["metrics-healthy.prom", "metrics-after-xid.prom", "metrics-after-restart.prom"]
)
def test_recorded_expositions_pass_promtool(name):
    promtool = require_binary("promtool")
    proc = subprocess.run(
        [promtool, "check", "metrics"],
        input=(LIVE / name).read_text(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 0 and not proc.stdout.strip(), proc.stdout


def _value(name, prefix):
    return next(
        line.split()[-1]
        for line in (LIVE / name).read_text().splitlines()
        if line.startswith(prefix)
    )


def test_recorded_injected_xid_and_restart():
    assert _value("metrics-healthy.prom", "gpuslo_gpu_usable{") == "1.0"
    assert _value("metrics-after-xid.prom", "gpuslo_gpu_usable{") == "0.0"
    counter = 'gpuslo_xid_events_total{class="fatal",pci_bus_id="00000000:00:06.0",xid="79"}'
    assert (
        _value("metrics-after-xid.prom", counter)
        == _value("metrics-after-restart.prom", counter)
        == "1.0"
    )
