"""The demo's live part: two `gpuslo exporter` servers on loopback and Debian's Prometheus scraping
them with the generated rules loaded, for a few seconds; then the answers to a few queries.

Everything listens on 127.0.0.1 on free ports and is stopped before returning. When Prometheus is
not installed (or `--no-prometheus`), it says plainly what it skipped.
"""

from __future__ import annotations

import json
import shutil
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

import requests

from gpuslo.slo_spec import SloSpec

SCRAPE_INTERVAL_S = 1
QUERIES = {
    "node verdicts": "gpuslo_node_verdict == 1",
    "GPU problems": "gpuslo_gpu_problem == 1",
    "job GPU-seconds by category": "sum by (category) (gpuslo_job_gpu_seconds_total) > 0",
    "firing alerts": 'ALERTS{alertstate="firing"}',
}


@dataclass
class ScrapeResult:
    """What the live part did: a one-line summary and the query answers, one line each."""

    summary: str
    lines: list[str] = field(default_factory=list)


def free_port() -> int:
    """A free TCP port on 127.0.0.1."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def _wait_http(url: str, deadline_s: float) -> bool:
    end = time.monotonic() + deadline_s
    while time.monotonic() < end:
        try:
            if requests.get(url, timeout=1).status_code == 200:
                return True
        except requests.RequestException:
            pass
        time.sleep(0.2)
    return False


def _config(targets: dict[str, int], rules_dir: Path) -> str:
    """Prometheus config scraping each node under the spec's exporter job name (the rules'
    `up{job=...}`); `honor_labels` keeps the exporter's `job` label (the training job) instead
    of renaming it `exported_job`."""
    targets_text = "\n".join(
        f"      - targets: ['127.0.0.1:{port}']\n        labels: {{node: {name}}}"
        for name, port in sorted(targets.items())
    )
    return (
        f"global:\n  scrape_interval: {SCRAPE_INTERVAL_S}s\n"
        f"  evaluation_interval: {SCRAPE_INTERVAL_S}s\n"
        f"rule_files:\n  - {rules_dir}/*.rules.yml\nscrape_configs:\n"
        f"  - job_name: {SloSpec().exporter_job}\n    honor_labels: true\n"
        f"    static_configs:\n{targets_text}\n"
    )


def _describe(name: str, result: list[dict]) -> str:
    if not result:
        return f"{name}: none in the samples so far"
    items = []
    for series in result:
        labels = series["metric"]
        shown = {
            k: v
            for k, v in labels.items()
            if k not in ("__name__", "instance", "job", "alertstate")
        }
        items.append(
            ",".join(f"{k}={v}" for k, v in sorted(shown.items()))
            + f" = {float(series['value'][1]):g}"
        )
    return f"{name}: " + "; ".join(sorted(items))[:400]


def _wait_for_samples(api: str, nodes: int, started: float, seconds: float) -> None:
    """Let Prometheus scrape for `seconds`, and longer (up to 60 s) until it holds a node verdict
    from every node: a loaded machine starts the exporters' first cycle late."""
    while time.monotonic() - started < 60:
        time.sleep(0.5)
        if time.monotonic() - started < seconds:
            continue
        try:
            body = requests.get(
                f"{api}/api/v1/query", params={"query": QUERIES["node verdicts"]}, timeout=5
            ).json()
        except (requests.RequestException, ValueError):
            continue
        if len(body.get("data", {}).get("result", [])) >= nodes:
            return


def scrape_nodes(
    nodes: list[tuple[str, list[str], dict]], out: Path, seconds: float, enabled: bool
) -> ScrapeResult:
    """Serve each node's exporter, let Prometheus scrape them for `seconds`, query, stop all.

    `nodes` holds (name, exporter source flags, environment). Writes prometheus/prometheus.yml and
    prometheus/queries.json under `out`.
    """
    binary = shutil.which("prometheus")
    if not enabled:
        return ScrapeResult("skipped (--no-prometheus)")
    if binary is None:
        return ScrapeResult(
            "skipped: Prometheus is not installed (Debian: apt-get install prometheus); "
            "the exporters ran once each instead"
        )
    base = out / "prometheus"
    base.mkdir(parents=True, exist_ok=True)
    processes: list[subprocess.Popen] = []
    try:
        ports = {}
        for name, flags, env in nodes:
            ports[name] = free_port()
            processes.append(_start_exporter(base, name, ports[name], flags, env))
        for name, port in ports.items():
            if not _wait_http(f"http://127.0.0.1:{port}/metrics", 30):
                return ScrapeResult(
                    f"failed: the {name} exporter did not answer (see {base}/exporter-{name}.log)"
                )
        (base / "prometheus.yml").write_text(_config(ports, out / "rules"))
        prometheus_port = free_port()
        processes.append(_start_prometheus(binary, base, prometheus_port))
        api = f"http://127.0.0.1:{prometheus_port}"
        if not _wait_http(f"{api}/-/ready", 30):
            return ScrapeResult(f"failed: Prometheus did not start (see {base}/prometheus.log)")
        began = time.monotonic()
        _wait_for_samples(api, len(ports), started=began, seconds=seconds)
        seconds = time.monotonic() - began
        lines = _query(api, base)
        # The demo stops Prometheus when it finishes, so its address is not printed as if it lived
        # on; what it stored stays under base/data, and the summary says how to look at it.
        return ScrapeResult(
            f"scraped both nodes for {seconds:.0f} s with the generated rules loaded, then stopped "
            f"(config, data and answers in {base}/; to browse what it stored: prometheus "
            f"--config.file={base}/prometheus.yml --storage.tsdb.path={base}/data)",
            lines,
        )
    finally:
        _stop(processes)


def _start_exporter(base: Path, name: str, port: int, flags: list[str],
                    env: dict) -> subprocess.Popen:
    """One node's `gpuslo exporter` on loopback `port`, its output in base/exporter-<name>.log."""
    log = open(base / f"exporter-{name}.log", "w")  # noqa: SIM115 (closed with the process)
    command = [sys.executable, "-m", "gpuslo", "exporter", "--listen", f"127.0.0.1:{port}",
               "--interval", "5", *flags]
    return subprocess.Popen(command, env=env, stdout=log, stderr=subprocess.STDOUT)


def _start_prometheus(binary: str, base: Path, port: int) -> subprocess.Popen:
    """Prometheus on loopback `port` with base/prometheus.yml, its TSDB under base/data."""
    log = open(base / "prometheus.log", "w")  # noqa: SIM115 (closed with the process)
    command = [binary, f"--config.file={base / 'prometheus.yml'}",
               f"--storage.tsdb.path={base / 'data'}", f"--web.listen-address=127.0.0.1:{port}"]
    return subprocess.Popen(command, stdout=log, stderr=subprocess.STDOUT)


def _query(api: str, base: Path) -> list[str]:
    """Run every demo query; write the answers to base/queries.json and return one line each."""
    answers, lines = {}, []
    for name, query in QUERIES.items():
        body = requests.get(f"{api}/api/v1/query", params={"query": query}, timeout=10).json()
        answers[name] = body.get("data", {}).get("result", [])
        lines.append(_describe(name, answers[name]))
    (base / "queries.json").write_text(json.dumps(answers, indent=1, sort_keys=True))
    return lines


def _stop(processes: list[subprocess.Popen]) -> None:
    """Terminate the processes (last started first), killing any still there after 10 s."""
    for process in reversed(processes):
        process.terminate()
    for process in processes:
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
