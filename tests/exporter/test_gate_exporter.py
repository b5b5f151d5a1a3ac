"""The return-to-service gate through a running exporter's /metrics (a child `gpuslo exporter`
on the replayed H200 with the probe replay): fault → cleared → validating →
the probe passes → healthy, and a gate that fails; validators run on their own thread, so the
checks keep their rhythm meanwhile. Checks every 2 s (results stale after 6 s)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest
import requests
from conftest import FIXTURES, REPO, free_port
from prometheus_client.parser import text_string_to_metric_families

NVML = REPO / "gpuslo" / "data" / "nvml_replay"
REPLAY = json.loads((REPO / "gpuslo" / "data" / "probe_replay" / "h200.json").read_text())
HEALTHY_LOG = (FIXTURES / "h200" / "dmesg.txt").read_text()
XID79 = ("[  100.000000] NVRM: Xid (PCI:0000:00:06): 79, pid='<unknown>', name=<unknown>, "
         "GPU has fallen off the bus.\n")
UUID = "GPU-4c1d2e3f-0a1b-2c3d-4e5f-60718293a4b5"


class Exporter:
    """A child exporter and the node it watches (kernel log, boot id, probe replay)."""

    def __init__(self, root, max_tries):
        self.root, self.port = root, free_port()
        (root / "proc/sys/kernel/random").mkdir(parents=True)
        (root / "node.yaml").write_text(
            f"validation: {{validators: [probe], max_tries: {max_tries}}}\n")
        self.boot("boot-1", HEALTHY_LOG + XID79)
        self.probe(300.0)
        env = {**os.environ, "PYTHONPATH": str(REPO), "GPUSLO_NVML_PATH": str(NVML),
               "GPUSLO_FAKE_NVML": str(NVML / "h200x1.json"),
               "GPUSLO_PROBE_REPLAY": str(root / "probe.json")}
        self.child = subprocess.Popen(
            [sys.executable, "-m", "gpuslo", "exporter", "--listen", f"127.0.0.1:{self.port}",
             "--interval", "2", "--kernel-log", str(root / "kern.log"), "--path.procfs",
             str(root / "proc"), "--state-dir", str(root / "state"), "--config",
             str(root / "node.yaml")],
            env=env, stdout=subprocess.DEVNULL, stderr=open(root / "exporter.log", "wb"))  # noqa: SIM115

    def boot(self, boot_id, log=HEALTHY_LOG):
        (self.root / "proc/sys/kernel/random/boot_id").write_text(boot_id + "\n")
        (self.root / "kern.log").write_text(log)

    def probe(self, tflops):
        idle = {**REPLAY["idle"], "bf16_tflops": tflops, "seconds": 0.05}
        (self.root / "probe.json").write_text(json.dumps({**REPLAY, "idle": idle}))

    def metrics(self) -> dict:
        try:
            text = requests.get(f"http://127.0.0.1:{self.port}/metrics", timeout=2).text
        except requests.RequestException:
            return {}
        return {(s.name, tuple(sorted(s.labels.items()))): s.value
                for f in text_string_to_metric_families(text) for s in f.samples}

    def gpu(self, name, **labels):
        wanted = {"gpu": "0", "uuid": UUID, **labels}
        for (metric, found), value in self.metrics().items():
            if metric == name and dict(found) == wanted:
                return value
        return None

    def verdict(self):
        return next((v for v in ("healthy", "unhealthy", "unknown", "validating")
                     if self.gpu("gpuslo_gpu_verdict", verdict=v) == 1.0), None)

    def wait(self, predicate, timeout_s=60.0):
        deadline = time.monotonic() + timeout_s
        while not predicate():
            assert self.child.poll() is None, (self.root / "exporter.log").read_text()[-2000:]
            assert time.monotonic() < deadline, (self.verdict(), self.metrics())
            time.sleep(0.2)

    def stop(self):
        self.child.terminate()
        self.child.wait(30)


@pytest.fixture
def exporter(tmp_path, request):
    node = Exporter(tmp_path, getattr(request, "param", 3))
    yield node
    node.stop()


def test_fault_cleared_validating_passed_on_metrics(exporter):
    exporter.wait(lambda: exporter.verdict() == "unhealthy")
    assert exporter.gpu("gpuslo_gpu_validation_state", state="held") == 1.0
    assert exporter.gpu("gpuslo_gpu_usable") == 0.0
    exporter.boot("boot-2")  # the node rebooted: the Xid is gone; the probe is still slow
    exporter.wait(lambda: (exporter.gpu("gpuslo_gpu_validation_tries") or 0) >= 1)
    assert exporter.verdict() == "validating"
    assert exporter.gpu("gpuslo_gpu_usable") == 0.0
    assert exporter.gpu("gpuslo_gpu_validation_state", state="validating") == 1.0
    assert exporter.gpu("gpuslo_gpu_problem", check="validation", reason="validation",
                        layer="platform", action="none") == 1.0
    exporter.probe(779.0)
    exporter.wait(lambda: exporter.verdict() == "healthy")
    assert exporter.gpu("gpuslo_gpu_usable") == 1.0
    assert exporter.gpu("gpuslo_gpu_validation_gates_total", outcome="passed") == 1.0
    assert exporter.gpu("gpuslo_gpu_validation_state", state="validating") == 0.0
    validators = {dict(k)["validator"]: dict(k)["state"] for (m, k), v in
                  exporter.metrics().items() if m == "gpuslo_gpu_validation_validator" and v}
    assert validators == {"probe": "available", "dcgm_diag": "not_configured"}


@pytest.mark.parametrize("exporter", [2], indirect=True)
def test_a_failed_gate_on_metrics(exporter):
    exporter.wait(lambda: exporter.verdict() == "unhealthy")
    exporter.boot("boot-2")
    exporter.wait(lambda: exporter.gpu("gpuslo_gpu_validation_state", state="failed") == 1.0)
    assert exporter.verdict() == "unhealthy"
    assert exporter.gpu("gpuslo_gpu_problem", check="validation", reason="validation_failed",
                        layer="node", action="drain_and_reset") == 1.0
    assert exporter.gpu("gpuslo_gpu_validation_gates_total", outcome="failed") == 1.0
