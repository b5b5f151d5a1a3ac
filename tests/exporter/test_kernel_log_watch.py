"""A fatal Xid appended to the followed kernel log reaches /metrics in seconds, with every check
at its default 30 s interval: the watcher makes the xid check due at once."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time

import requests

from gpuslo.exporter.evidence.kernel_log.watch import (
    KernelLogWatcher,
    has_gpu_marker,
    watched_source,
)
from tests.conftest import FIXTURES, REPO

XID_79 = (
    "[ 4242.123456] NVRM: Xid (PCI:0000:00:06): 79, pid=0, name=python, "
    "GPU has fallen off the bus.\n"
)


def test_marker_and_source_rules(tmp_path):
    assert has_gpu_marker(b"6,1,2,-;NVRM: Xid (PCI:0000:00:06): 79") and not has_gpu_marker(
        b"usb 1-1: new device"
    )
    log = tmp_path / "kern.log"
    assert watched_source(log, tmp_path / "kmsg") is None  # a configured log that is not there
    log.write_text("")
    assert watched_source(log, tmp_path / "kmsg") == (log, False)


def test_file_watcher_fires_on_appended_gpu_records_only(tmp_path):
    log = tmp_path / "kern.log"
    log.write_text("[ 1.0] boot\n")
    fired = threading.Event()
    watcher = KernelLogWatcher(log, fired.set, is_kmsg=False, poll_s=0.05).start()
    try:
        with log.open("a") as handle:
            handle.write("[ 2.0] usb 1-1: new device\n")
        assert not fired.wait(0.3)
        with log.open("a") as handle:
            handle.write(XID_79)
        assert fired.wait(3)
    finally:
        watcher.close()


def _usable(url: str) -> str | None:
    try:
        text = requests.get(url, timeout=2).text
    except requests.RequestException:
        return None
    return next(
        (line.split()[-1] for line in text.splitlines() if line.startswith("gpuslo_gpu_usable{")),
        None,
    )


def test_fatal_xid_reaches_metrics_in_seconds_at_default_intervals(tmp_path):
    log = tmp_path / "kern.log"
    shutil.copy(FIXTURES / "h200" / "dmesg.txt", log)
    for sub in ("sys/class", "proc", "state"):
        (tmp_path / sub).mkdir(parents=True)
    env = {
        **os.environ,
        "GPUSLO_NVML_PATH": str(REPO / "gpuslo" / "data" / "nvml_replay"),
        "GPUSLO_FAKE_NVML": str(REPO / "gpuslo" / "data" / "nvml_replay" / "h200x1.json"),
    }
    with __import__("socket").socket() as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    process = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "gpuslo",
            "exporter",
            "--listen",
            f"127.0.0.1:{port}",
            "--kernel-log",
            str(log),
            "--path.sysfs",
            str(tmp_path / "sys"),
            "--path.procfs",
            str(tmp_path / "proc"),
            "--state-dir",
            str(tmp_path / "state"),
            "--expect-gpus",
            "1",
        ],
        env=env,
    )
    url = f"http://127.0.0.1:{port}/metrics"
    try:
        deadline = time.monotonic() + 60
        while _usable(url) != "1.0":
            assert time.monotonic() < deadline, "exporter never reported the healthy GPU"
            time.sleep(0.2)
        time.sleep(1.0)  # the first cycle is done; the next xid run is 30 s away
        with log.open("a") as handle:
            handle.write(XID_79)
        appended = time.monotonic()
        while _usable(url) != "0.0":
            assert time.monotonic() - appended < 10, "the fatal Xid waited for the 30 s interval"
            time.sleep(0.05)
        assert time.monotonic() - appended < 10
    finally:
        process.terminate()
        process.wait(timeout=30)
