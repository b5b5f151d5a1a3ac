"""Prometheus (Debian's package) scrapes the exporter on loopback; values are read back through
its HTTP API.

Two targets, one Prometheus: (1) the exporter's HTTP server in this process, its check cycle
returning the fixture node's snapshot (exactly known values) and its journal directory fed by a
Recorder; (2) the real `gpuslo exporter` command in a child process against the corpus kernel
log and the same journals — then SIGTERM, which must end it cleanly with exit 0.
"""

from __future__ import annotations

import subprocess
import sys
import threading
import time
from collections.abc import Iterator

import pytest
import requests
from conftest import CORPUS, REPO, free_port, require_binary, running_prometheus
from exporter.test_collector_node import PLATFORM, fixture_snapshot, samples, write_job
from prometheus_client import start_http_server

from gpuslo import names
from gpuslo.exporter.evidence.kubelet.pod_resources import PodDevice
from gpuslo.exporter.jobs.allocations import KubeletAllocations
from gpuslo.exporter.jobs.hpc import HpcJobAllocations
from gpuslo.exporter.jobs.journals import JournalTailer
from gpuslo.exporter.jobs.logs import JobLogTailer
from gpuslo.exporter.server import Exporter
from gpuslo.exporter.slurm.state import PlatformSampler
from gpuslo.exporter.state import CounterCarry

pytestmark = pytest.mark.prometheus
NO_COMMIT = REPO / "tests" / "fixtures" / "newcomer12" / "hf_nockpt.log"
# A recorded kernel log with fatal (Xid 48 double-bit ECC, 171, 154) and benign (63 warn,
# 31 application) Xids: corpus cases 026 and 011 one after the other.
FATAL_AND_BENIGN = (
    "026_xid48-xid171-xid63-xid154-drain-and-reset-journal.txt",
    "011_xid31-mmu-fault-app-with-gpu-at-pci-uuid.txt",
)


def wait_for(predicate, timeout: float, what: str):  # noqa: ANN001, ANN201
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            value = predicate()
            if value:
                return value
        except (requests.RequestException, KeyError, IndexError):
            pass
        time.sleep(0.2)
    raise AssertionError(f"timed out waiting for {what}")


@pytest.fixture(scope="module")
def stack(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict]:
    prometheus = require_binary("prometheus")
    tmp = tmp_path_factory.mktemp("stack")
    journals = tmp / "journals"
    kernel_log = tmp / "kern.log"
    kernel_log.write_bytes(b"".join((CORPUS / "cases" / n).read_bytes() for n in FATAL_AND_BENIGN))
    write_job(journals, "train-llm-7", start=time.time() - 10_000)
    snapshot = fixture_snapshot(now=time.time())
    platform = PlatformSampler(None)
    platform.samples = lambda: PLATFORM  # what a Slurm node with a job on GPU 0 adds
    (tmp / "map").mkdir()
    (tmp / "map" / "0").write_text("4242\n")  # a Slurm job on GPU 0 (HPC job mapping)
    pod = PodDevice("ml", "train-llm-7-worker-0", "trainer", "nvidia.com/gpu",
                    snapshot.gpus[0].uuid)
    sources = [HpcJobAllocations(tmp / "map", lambda: snapshot.gpus),
               KubeletAllocations("kubelet.sock", lambda: snapshot.gpus, read=lambda *_: [pod])]
    (tmp / "logs").mkdir()  # a job whose log proves no commit: progress, goodput unknown
    (tmp / "logs" / "slurm-1.out").write_bytes(NO_COMMIT.read_bytes())
    job_logs = JobLogTailer([str(tmp / "logs" / "*")], tmp / "state", default_gpus=8,
                            settle_s=0)
    exporter = Exporter(lambda: snapshot, JournalTailer(journals), CounterCarry(tmp / "state"),
                        platform=platform, allocation_sources=sources, job_logs=job_logs)
    exporter.run_checks()
    exporter.poll_journals()
    exporter.sample_platform()
    server, _ = start_http_server(0, addr="127.0.0.1", registry=exporter.registry)
    inproc = f"127.0.0.1:{server.server_port}"
    child_port = free_port()
    child = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gpuslo",
            "exporter",
            "--listen",
            f"127.0.0.1:{child_port}",
            "--interval",
            "1",
            "--kernel-log",
            str(kernel_log),
            "--journal-dir",
            str(journals),
            "--state-dir",
            str(tmp / "child-state"),
            "--path.sysfs",
            str(tmp / "nosys"),
        ],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
    )
    config = tmp / "prometheus.yml"
    config.write_text(
        "global: {scrape_interval: 1s, scrape_timeout: 1s}\nscrape_configs:\n"
        f"- job_name: inproc\n  static_configs: [{{targets: ['{inproc}']}}]\n"
        f"- job_name: child\n  static_configs: [{{targets: ['127.0.0.1:{child_port}']}}]\n"
    )
    try:
        with running_prometheus(prometheus, config, tmp / "tsdb", ready_s=30) as url:
            yield {"api": f"{url}/api/v1", "exporter": exporter, "child": child}
    finally:
        child.terminate()
        child.wait(10)
        server.shutdown()


def query(api: str, expr: str) -> list[dict]:
    answer = requests.get(f"{api}/query", params={"query": expr}, timeout=5).json()
    assert answer["status"] == "success", answer
    return answer["data"]["result"]


def test_prometheus_sees_every_metric_with_its_value(stack: dict) -> None:
    api, expected = stack["api"], samples(stack["exporter"].exposition().decode())
    # Prometheus stores no empty labels (gpuslo_gpu_allocation's pod labels on a Slurm node)
    expected = {(name, tuple((k, v) for k, v in labels if v)): value
                for (name, labels), value in expected.items()}  # fmt: skip
    wait_for(lambda: query(api, 'gpuslo_job_step{job="inproc"}'), 30, "a scrape of the exporter")
    seen: dict = {}
    for name in names.METRICS:
        for series in query(api, f'{name}{{job="inproc"}}'):
            labels = {k: v for k, v in series["metric"].items() if k not in ("instance", "job")}
            if "exported_job" in labels:  # the §4 `job` label meets Prometheus's target label
                labels["job"] = labels.pop("exported_job")
            seen[(labels.pop("__name__"), tuple(sorted(labels.items())))] = float(
                series["value"][1]
            )
    assert seen == expected
    assert {name for name, _ in seen} == set(names.METRICS)
    wasted = query(api, 'gpuslo_job_gpu_seconds_total{job="inproc",category="wasted_progress"}')
    assert [(s["metric"]["exported_job"], float(s["value"][1])) for s in wasted] == [
        ("train-llm-7", 1200.0)
    ]  # issue 4's worked example; `job` renamed without honor_labels
    assert float(query(api, 'gpuslo_node_usable{job="inproc"}')[0]["value"][1]) == 0.0


def test_the_exporter_command_is_scraped_and_stops_on_sigterm(stack: dict) -> None:
    api, child = stack["api"], stack["child"]
    up = wait_for(lambda: query(api, 'up{job="child"} == 1'), 30, "the exporter command up")
    assert up
    runs = wait_for(lambda: query(api, 'gpuslo_check_runs_total{job="child"} >= 2'), 30, "2 cycles")
    assert runs  # checks run in the background, at the 1 s interval
    # No GPU here: the node is never healthy (fail closed), but the job counters are exact.
    assert float(query(api, 'gpuslo_node_usable{job="child"}')[0]["value"][1]) == 0.0
    # The log shows the fatal Xid's GPU reset (a driver reload after it), so the Xid no longer
    # fails the GPU by itself: the return-to-service gate holds it. With no inventory here the
    # node is unknown; whatever the state, never healthy.
    assert (
        float(query(api, 'gpuslo_node_verdict{job="child",verdict="healthy"}')[0]["value"][1])
        == 0
    )
    xids = {
        (s["metric"]["xid"], s["metric"]["class"]): float(s["value"][1])
        for s in query(api, 'gpuslo_xid_events_total{job="child"}')
    }
    assert xids[("48", "fatal")] == 2 and xids[("31", "application")] == 1
    recovery = query(api, 'gpuslo_job_gpu_seconds_total{job="child",category="recovery"}')
    assert [float(s["value"][1]) for s in recovery] == [600.0]
    child.terminate()
    assert child.wait(15) == 0
    assert "Traceback" not in child.stderr.read()


def test_scrapes_do_not_run_checks(stack: dict) -> None:
    """Scraping 20 times in a row returns the same snapshot: nothing ran in between."""
    exporter = stack["exporter"]
    calls = []
    real = exporter._cycle
    exporter._cycle = lambda: calls.append(1) or real()
    try:
        first = exporter.exposition()
        threads = [threading.Thread(target=exporter.exposition) for _ in range(20)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert calls == [] and exporter.exposition() == first
    finally:
        exporter._cycle = real
