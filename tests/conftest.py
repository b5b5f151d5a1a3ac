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

import pytest
import requests

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"
CORPUS = SHARED / "corpus"
FIXTURES = SHARED / "fixtures"
DATASETS = SHARED / "datasets"


def require_binary(name: str) -> str:
    """Path of `name` on PATH. Skips the test when missing on a developer machine, but fails
    under CI (CI=true), where .ci/run installs Debian's prometheus package: a missing binary
    there must not turn into a silent skip."""
    path = shutil.which(name)
    if path:
        return path
    if os.environ.get("CI") == "true":
        pytest.fail(f"{name} is not installed; .ci/run must install Debian's prometheus package")
    pytest.skip(f"{name} not installed (apt-get install prometheus)")


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


def backfill(promtool: str, openmetrics: Path, tsdb: Path) -> None:
    """Load an OpenMetrics file into a TSDB directory (`promtool tsdb create-blocks-from`)."""
    subprocess.run(
        [promtool, "tsdb", "create-blocks-from", "openmetrics", str(openmetrics), str(tsdb)],
        check=True,
        capture_output=True,
        timeout=600,
    )


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
            deadline = time.monotonic() + ready_s
            while True:
                if process.poll() is not None:
                    pytest.fail(f"prometheus exited with {process.returncode}; see {tsdb}.log")
                try:
                    if requests.get(f"{url}/-/ready", timeout=1).ok:
                        break
                except requests.RequestException:
                    pass
                if time.monotonic() > deadline:
                    pytest.fail(f"prometheus not ready within {ready_s:g} s; see {tsdb}.log")
                time.sleep(0.1)
            yield url
        finally:
            process.terminate()
            process.wait(timeout=30)
