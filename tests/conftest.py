"""Shared test helpers: where the real inputs live, and the rule for tests that need Prometheus."""

from __future__ import annotations

import contextlib
import importlib
import os
import shutil
import socket
import subprocess
import time
from collections.abc import Iterator
from pathlib import Path

import pandas as pd
import pytest
import requests

from gpuslo.cli import main

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
CORPUS = SHARED / "corpus"
FIXTURES = SHARED / "fixtures"
DATASETS = SHARED / "datasets"


PACKAGE = {"victoria-metrics": "victoria-metrics", "vmalert": "victoria-metrics"}


def require_binary(name: str) -> str:
    """Path of `name` on PATH. Skips the test when missing on a developer machine, but fails
    under CI (CI=true), where .ci/run installs Debian's prometheus and victoria-metrics
    packages: a missing binary there must not turn into a silent skip."""
    path = shutil.which(name)
    if path:
        return path
    package = PACKAGE.get(name, "prometheus")
    if os.environ.get("CI") == "true":
        pytest.fail(f"{name} is not installed; .ci/run must install Debian's {package} package")
    pytest.skip(f"{name} not installed (apt-get install {package})")


def require_module(name: str, extra: str):
    """Import `name`; skip with the reason when it is not installed on a developer machine, fail
    under CI (CI=true), where .ci/run installs `gpuslo[<extra>]`."""
    try:
        return importlib.import_module(name)
    except ImportError as error:
        message = f"{name} is not installed (pip install 'gpuslo[{extra}]'): {error}"
        if os.environ.get("CI") == "true":
            pytest.fail(f"{message}; .ci/run must install it", pytrace=False)
        pytest.skip(message, allow_module_level=True)


@pytest.fixture
def promtool() -> str:
    return require_binary("promtool")


@pytest.fixture
def prometheus_binary() -> str:
    return require_binary("prometheus")


def free_port() -> int:
    """A free TCP port on 127.0.0.1."""
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return sock.getsockname()[1]


def backfill(promtool: str, openmetrics: Path, tsdb: Path, *flags: str) -> None:
    """Load an OpenMetrics file into a TSDB directory (`promtool tsdb create-blocks-from`)."""
    subprocess.run(
        [promtool, "tsdb", "create-blocks-from", "openmetrics", *flags, str(openmetrics),
         str(tsdb)], check=True, capture_output=True, timeout=600)


def _wait_ready(process: subprocess.Popen, url: str, log: Path, ready_s: float) -> None:
    deadline = time.monotonic() + ready_s
    while True:
        if process.poll() is not None:
            pytest.fail(f"{process.args[0]} exited with {process.returncode}; see {log}")
        try:
            if requests.get(url, timeout=1).ok:
                return
        except requests.RequestException:
            pass
        if time.monotonic() > deadline:
            pytest.fail(f"{process.args[0]} not ready within {ready_s:g} s; see {log}")
        time.sleep(0.1)


@contextlib.contextmanager
def running_victoria_metrics(binary: str, data: Path, *flags: str,
                             ready_s: float = 60) -> Iterator[str]:
    """Debian's single-node VictoriaMetrics on a free loopback port storing into `data`; yields
    its base URL once /health answers; its log is `<data>.log`. Queries are not cached, so what
    a test imports is what the next query sees. Samples of one series with the same timestamp
    are deduplicated (`-dedup.minScrapeInterval=1ms`): vmalert 1.79's replay writes the point on
    each boundary of its query chunks twice, which `sum_over_time` would count twice."""
    url = f"http://127.0.0.1:{free_port()}"
    log_path = Path(f"{data}.log")
    with open(log_path, "w") as log:
        process = subprocess.Popen(
            [binary, f"-storageDataPath={data}", f"-httpListenAddr={url.removeprefix('http://')}",
             "-retentionPeriod=100y", "-search.disableCache", "-dedup.minScrapeInterval=1ms",
             *flags],
            stdout=log, stderr=subprocess.STDOUT)
        try:
            _wait_ready(process, f"{url}/health", log_path, ready_s)
            yield url
        finally:
            process.terminate()
            process.wait(timeout=30)


def import_openmetrics(url: str, openmetrics: Path, chunk_lines: int = 200_000) -> None:
    """Load a `gpuslo simulate` OpenMetrics file into VictoriaMetrics
    (`/api/v1/import/prometheus`, which reads timestamps in milliseconds), then flush it so
    queries see it."""
    def chunks():
        batch = []
        with open(openmetrics) as handle:
            for line in handle:
                if line.startswith("#"):
                    continue
                batch.append(line[:-1] + "000\n")
                if len(batch) >= chunk_lines:
                    yield "".join(batch).encode()
                    batch = []
        if batch:
            yield "".join(batch).encode()

    for body in chunks():
        requests.post(f"{url}/api/v1/import/prometheus", data=body, timeout=600).raise_for_status()
    requests.get(f"{url}/internal/force_flush", timeout=60).raise_for_status()


def vmalert_replay(binary: str, rules: Path, url: str, start, end, *flags: str) -> None:
    """Evaluate `rules` over [start, end) with `vmalert` in replay mode, reading from and writing
    the recorded series back to the VictoriaMetrics at `url`, then flush. vmalert 1.79 replays
    at `-datasource.queryStep` (5 min by default), not at a group's interval:
    `-datasource.queryStep=0` in `flags` replays at the groups' own intervals."""
    done = subprocess.run(
        [binary, f"-rule={rules}", f"-datasource.url={url}", f"-remoteWrite.url={url}",
         f"-replay.timeFrom={start.strftime('%Y-%m-%dT%H:%M:%SZ')}",
         f"-replay.timeTo={end.strftime('%Y-%m-%dT%H:%M:%SZ')}", "-replay.rulesDelay=2s",
         "-replay.disableProgressBar", "-remoteWrite.flushInterval=100ms", *flags],
        capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]
    requests.get(f"{url}/internal/force_flush", timeout=60).raise_for_status()


def backfill_rules(promtool: str, url: str, rules: Path, tsdb: Path, start, end,
                   interval: str = "1m") -> None:
    """Evaluate `rules` over [start, end) against the Prometheus at `url` into new blocks in
    `tsdb` (`promtool tsdb create-blocks-from rules`); restart that Prometheus to read them."""
    done = subprocess.run(
        [promtool, "tsdb", "create-blocks-from", "rules", f"--url={url}",
         f"--start={int(start.timestamp())}", f"--end={int(end.timestamp())}",
         f"--eval-interval={interval}", f"--output-dir={tsdb}", str(rules)],
        capture_output=True, text=True, timeout=600)
    assert done.returncode == 0, done.stdout[-3000:] + done.stderr[-3000:]


@contextlib.contextmanager
def running_prometheus(
    binary: str, config: Path, tsdb: Path, *flags: str, ready_s: float = 60
) -> Iterator[str]:
    """Debian's Prometheus on a free loopback port over `tsdb` with `config` (and extra `flags`);
    yields its base URL once /-/ready answers, stops it afterwards. Fails the test when it exits
    or is not ready within `ready_s`; its log is `<tsdb>.log`."""
    url = f"http://127.0.0.1:{free_port()}"
    with open(f"{tsdb}.log", "w") as log:
        process = subprocess.Popen(
            [
                binary,
                f"--config.file={config}",
                f"--storage.tsdb.path={tsdb}",
                f"--web.listen-address={url.removeprefix('http://')}",
                *flags,
            ],
            stdout=subprocess.DEVNULL,
            stderr=log,
        )
        try:
            _wait_ready(process, f"{url}/-/ready", Path(f"{tsdb}.log"), ready_s)
            yield url
        finally:
            process.terminate()
            process.wait(timeout=30)


def assert_same_frames(a, b) -> None:
    """Two `gpuslo.slo.frames.Frames` hold the same rows (in any order) in every frame the
    SLO engine reads, and say the same about what they could not fill. `job_gpu_seconds` is
    compared per (job, category), summed: read from the job tiles rules it has no node
    (`gpuslo.slo.sources.job_tiles`), read from the counters one row per node."""
    for frame in ("inventory", "verdicts", "schedulability", "job_gpu_seconds", "allocations",
                  "degradations"):
        x, y = getattr(a, frame), getattr(b, frame)
        if frame == "job_gpu_seconds":
            x, y = (f.groupby(["job", "category"], as_index=False)["gpu_seconds"].sum()
                    for f in (x, y))
        keys = sorted(x.columns)
        assert sorted(y.columns) == keys, frame
        x, y = (f[keys].sort_values(keys).reset_index(drop=True) for f in (x, y))
        pd.testing.assert_frame_equal(x, y, check_dtype=False, obj=frame)
    assert a.cannot_fill == b.cannot_fill


def simulate_demo_week(out: Path) -> Path:
    """`gpuslo simulate` of the demo's week (125 nodes × 8 GPUs, 7 days, seed 1, as
    gpuslo/demo/run.py) into `out`; returns `out`."""
    args = ["simulate", "--nodes", "125", "--gpus-per-node", "8", "--days", "7", "--seed", "1",
            "--out", str(out)]
    assert main(args) == 0
    return out
