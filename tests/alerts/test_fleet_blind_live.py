"""End to end: a real Prometheus (Debian's, on loopback) with the generated rules scrapes two
real `gpuslo exporter` processes replaying an 8-GPU H200 node (gpuslo/data/nvml_replay). One
exporter is killed with SIGKILL: its 8 GPUs stay provisioned, count as blind
(`observability`/`no_data`), and the usable ratio drops from 1 to 0.5, and GpusloFleetBlind goes
pending at once (it pages after its 5 min `for`; before, a dead exporter raised only a ticket).
That the GPUs stay for the whole SLO period, where the old `last_over_time(gpuslo_gpu_info[1h])`
let them go after an hour, is the promtool test's part (gpuslo-fleet_test.yml): a live test
cannot wait 28 days."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path

import pytest
import requests
import yaml

from gpuslo.alerts import generate
from gpuslo.slo_spec import SloSpec
from tests.conftest import REPO, free_port, require_binary, running_prometheus

pytestmark = pytest.mark.prometheus
REPLAY = REPO / "gpuslo" / "data" / "nvml_replay"
HEALTHY_LOG = REPO / "gpuslo" / "data" / "demo" / "h200" / "dmesg.txt"


def start_exporter(root: Path, name: str, port: int) -> subprocess.Popen:
    """`gpuslo exporter` for node `name` on the 8-GPU NVML replay, in its own process group."""
    for sub in ("sysfs/class", "procfs", "state", "journals"):
        (root / name / sub).mkdir(parents=True, exist_ok=True)
    env = {k: v for k, v in os.environ.items() if not k.startswith("GPUSLO_")}
    env |= {"GPUSLO_NVML_PATH": str(REPLAY), "GPUSLO_FAKE_NVML": str(REPLAY / "h200x8.json")}
    args = ["--node", name, "--listen", f"127.0.0.1:{port}", "--interval", "1"]
    args += ["--kernel-log", str(HEALTHY_LOG), "--expect-gpus", "8"]
    paths = {"--path.sysfs": "sysfs", "--path.procfs": "procfs", "--state-dir": "state"}
    for flag, sub in (paths | {"--journal-dir": "journals"}).items():
        args += [flag, str(root / name / sub)]
    return subprocess.Popen(
        [sys.executable, "-m", "gpuslo", "exporter", *args],
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.DEVNULL,
        start_new_session=True,
    )


def stop(process: subprocess.Popen) -> None:
    """SIGKILL the exporter's own process group (it and its check children) and reap it."""
    with contextlib.suppress(ProcessLookupError):
        os.killpg(process.pid, signal.SIGKILL)
    process.wait(10)


@pytest.fixture(scope="module")
def fleet(tmp_path_factory) -> Iterator[dict]:
    binary = require_binary("prometheus")
    root = tmp_path_factory.mktemp("fleet")
    ports = {"gpu-a": free_port(), "gpu-b": free_port()}
    exporters = {name: start_exporter(root, name, port) for name, port in ports.items()}
    for name, text in generate.build_files(SloSpec()).items():
        if name.endswith(".rules.yml"):
            (root / name).write_text(text)
    config = {
        "global": {"scrape_interval": "1s", "scrape_timeout": "1s", "evaluation_interval": "1s"},
        "rule_files": [str(root / "*.rules.yml")],
        "scrape_configs": [
            {
                "job_name": "gpuslo",
                "honor_labels": True,
                "static_configs": [{"targets": [f"127.0.0.1:{p}" for p in ports.values()]}],
            }
        ],
    }
    (root / "prometheus.yml").write_text(yaml.safe_dump(config))
    try:
        with running_prometheus(binary, root / "prometheus.yml", root / "tsdb") as url:
            yield {"url": url, "exporters": exporters, "ports": ports}
    finally:
        for process in exporters.values():
            stop(process)


def value(url: str, expr: str) -> float | None:
    """The single sample of `expr` now, None when the result is empty."""
    answer = requests.get(f"{url}/api/v1/query", params={"query": expr}, timeout=5).json()
    assert answer["status"] == "success", answer
    result = answer["data"]["result"]
    return float(result[0]["value"][1]) if result else None


def wait_until(url: str, checks: dict[str, float], timeout: float) -> None:
    """Poll until every expression of `checks` reads its value; fail naming what did not."""
    deadline = time.monotonic() + timeout
    while True:
        seen = {expr: value(url, expr) for expr in checks}
        if seen == checks:
            return
        if time.monotonic() > deadline:
            pytest.fail(f"after {timeout:g} s: wanted {checks}, read {seen}")
        time.sleep(0.5)


def wait_for_value(url: str, expr: str, timeout: float) -> float:
    """The first sample `expr` gives within `timeout` seconds (its rule group may lag)."""
    deadline = time.monotonic() + timeout
    while (found := value(url, expr)) is None:
        if time.monotonic() > deadline:
            pytest.fail(f"{expr} gave no sample within {timeout:g} s")
        time.sleep(0.5)
    return found


def test_killing_one_exporter_keeps_its_gpus_and_drops_the_ratio(fleet):
    url = fleet["url"]
    both_healthy = {
        "gpuslo:gpu_provisioned:count": 16,
        "gpuslo:gpu_usable:count": 16,
        "gpuslo:gpu_blind:count": 0,
    }
    wait_until(url, both_healthy, timeout=60)
    before = wait_for_value(url, "gpuslo:gpu_usable:ratio_rate5m", timeout=10)
    assert before > 0.5

    fleet["exporters"]["gpu-b"].send_signal(signal.SIGKILL)
    dead = f'up{{instance="127.0.0.1:{fleet["ports"]["gpu-b"]}"}}'
    wait_until(url, {dead: 0}, timeout=20)
    one_blind = {
        "gpuslo:gpu_provisioned:count": 16,
        'gpuslo:node_gpus_provisioned:max{node="gpu-b"}': 8,
        "gpuslo:gpu_usable:count": 8,
        "gpuslo:gpu_blind:count": 8,
        "gpuslo:gpu_blind:ratio": 0.5,
        'gpuslo:gpu_lost:count{layer="observability",reason="no_data"}': 8,
    }
    wait_until(url, one_blind, timeout=20)
    time.sleep(3)  # more evaluations: the dead node stays (carried forward, not re-read)
    wait_until(url, one_blind, timeout=5)
    after = value(url, "gpuslo:gpu_usable:ratio_rate5m")
    assert after is not None and after < before
    alerts = requests.get(f"{url}/api/v1/alerts", timeout=5).json()["data"]["alerts"]
    assert any(a["labels"]["alertname"] == "GpusloFleetBlind" for a in alerts), alerts
