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

from gpuslo.exporter.evidence.kernel_log import watch
from gpuslo.exporter.evidence.kernel_log.watch import (
    KernelLogWatcher,
    has_gpu_marker,
    watched_source,
)
from tests.conftest import FIXTURES, REPO, free_port

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


def _follow(log, poll_s: float):
    fired = threading.Event()
    return fired, KernelLogWatcher(log, fired.set, is_kmsg=False, poll_s=poll_s).start()


def test_file_watcher_is_woken_by_inotify_not_its_poll(tmp_path):
    """With a 60 s poll, only inotify can wake the watcher: the Xid is seen all the same."""
    log = tmp_path / "kern.log"
    log.write_text("[ 1.0] boot\n")
    fired, watcher = _follow(log, poll_s=60)
    try:
        assert watcher.ready.wait(20) and watcher.notified
        with log.open("a") as handle:
            handle.write(XID_79)
        assert fired.wait(20)
    finally:
        watcher.stop.set()  # close() would wait out the 60 s poll: the thread is a daemon


def test_file_watcher_follows_a_rotated_log_from_its_start(tmp_path):
    """Renamed away (the path missing a moment), a new file at the path: its Xid is seen, and
    the new file is watched by inotify again."""
    log = tmp_path / "kern.log"
    log.write_text("[ 1.0] boot\n")
    fired, watcher = _follow(log, poll_s=0.05)
    try:
        assert watcher.ready.wait(20)
        log.rename(tmp_path / "kern.log.1")
        time.sleep(0.2)
        log.write_text("[ 3.0] new file\n" + XID_79)
        assert fired.wait(20)
        fired.clear()
        with log.open("a") as handle:
            handle.write(XID_79)
        assert fired.wait(20) and watcher.notified
    finally:
        watcher.close()


def test_file_watcher_polls_where_inotify_is_not_there(tmp_path, monkeypatch):
    monkeypatch.setattr(watch, "open_inotify", lambda path: None)
    log = tmp_path / "kern.log"
    log.write_text("[ 1.0] boot\n")
    fired, watcher = _follow(log, poll_s=0.05)
    try:
        assert watcher.ready.wait(20)
        with log.open("a") as handle:
            handle.write(XID_79)
        assert fired.wait(20) and not watcher.notified
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


RM_INIT = "[ 4243.000000] NVRM: GPU 0000:00:06.0: RmInitAdapter failed! (0x24:0x72:1568)\n"
RM_INIT_2 = "[ 4243.000300] NVRM: GPU 0000:00:06.0: rm_init_adapter failed, device minor number 0\n"


def _samples(url: str, name: str) -> dict[str, str]:
    """{labels: value} of one metric on /metrics ({} when the exporter does not answer)."""
    try:
        text = requests.get(url, timeout=2).text
    except requests.RequestException:
        return {}
    return _parse(text, name)


def _parse(text: str, name: str) -> dict[str, str]:
    """{labels: value} of one metric in an exposition text."""
    return {
        line[len(name) : line.index("}") + 1]: line.split()[-1]
        for line in text.splitlines()
        if line.startswith(name + "{")
    }


def _pci_device(sysfs, address: str, device: str) -> None:
    entry = sysfs / "bus" / "pci" / "devices" / address
    entry.mkdir(parents=True)
    for name, value in (("vendor", "0x10de"), ("device", device), ("class", "0x030200")):
        (entry / name).write_text(value + "\n")


def _environment() -> dict[str, str]:
    replay = REPO / "gpuslo" / "data" / "nvml_replay"
    fake = {"GPUSLO_NVML_PATH": str(replay), "GPUSLO_FAKE_NVML": str(replay / "h200x1.json")}
    return {**os.environ, **fake}


def _tree(tmp_path):
    log = tmp_path / "kern.log"
    shutil.copy(FIXTURES / "h200" / "dmesg.txt", log)
    for sub in ("sys/class", "proc", "state"):
        (tmp_path / sub).mkdir(parents=True)
    return log, [
        "--kernel-log", str(log),
        "--path.sysfs", str(tmp_path / "sys"),
        "--path.procfs", str(tmp_path / "proc"),
        "--state-dir", str(tmp_path / "state"),
    ]


H200_IDS = '{gpu="0",uuid="GPU-4c1d2e3f-0a1b-2c3d-4e5f-60718293a4b5"}'


def test_rminitadapter_failure_appended_to_the_log_reaches_metrics_in_seconds(tmp_path):
    """The driver-message catalogue serves the live xid check: `RmInitAdapter failed` (no Xid
    token) appended to the followed log makes the GPU unhealthy on /metrics in seconds."""
    log, paths = _tree(tmp_path)
    port = free_port()
    listen = ["--listen", f"127.0.0.1:{port}", "--expect-gpus", "1"]
    command = [sys.executable, "-m", "gpuslo", "exporter", *listen, *paths]
    process = subprocess.Popen(command, env=_environment())
    url = f"http://127.0.0.1:{port}/metrics"
    try:
        deadline = time.monotonic() + 60
        while _samples(url, "gpuslo_gpu_usable").get(H200_IDS) != "1.0":
            assert time.monotonic() < deadline, "exporter never reported the healthy GPU"
            time.sleep(0.2)
        time.sleep(1.0)  # the first cycle is done; the next xid run is 30 s away
        with log.open("a") as handle:
            handle.write(RM_INIT + RM_INIT_2)
        appended = time.monotonic()
        while _samples(url, "gpuslo_gpu_usable").get(H200_IDS) != "0.0":
            assert time.monotonic() - appended < 10, "RmInitAdapter waited for the 30 s interval"
            time.sleep(0.05)
        problems = [p for p in _samples(url, "gpuslo_gpu_problem") if "GPU-4c1d" in p]
        assert any('check="xid"' in p and 'reason="gpu_init_failed"' in p for p in problems)
    finally:
        process.terminate()
        process.wait(timeout=30)


def test_a_gpu_only_the_pci_bus_shows_is_in_the_inventory_and_unusable(tmp_path):
    """A GPU the driver could not initialise has no NVML handle and no UUID; sysfs still shows
    it, so it gets gpuslo_gpu_info (keyed by its PCI address), a verdict and usable 0."""
    _, paths = _tree(tmp_path)
    _pci_device(tmp_path / "sys", "0000:00:06.0", "0x2335")  # the H200 NVML lists
    _pci_device(tmp_path / "sys", "0000:0a:00.0", "0x2335")  # on the bus, never initialised
    command = [sys.executable, "-m", "gpuslo", "exporter", "--once", *paths, "--expect-gpus", "2"]
    done = subprocess.run(command, env=_environment(), capture_output=True, text=True, timeout=120)
    usable = _parse(done.stdout, "gpuslo_gpu_usable")
    bus_only = '{gpu="",uuid="pci:00000000:0A:00.0"}'
    assert usable[bus_only] == "0.0" and usable[H200_IDS] == "0.0", done.stdout[-2000:]
    info = _parse(done.stdout, "gpuslo_gpu_info")
    assert any('pci_bus_id="00000000:0A:00.0"' in labels for labels in info)
    verdicts = _parse(done.stdout, "gpuslo_gpu_verdict")
    assert verdicts['{gpu="",uuid="pci:00000000:0A:00.0",verdict="unhealthy"}'] == "1.0"
    problems = _parse(done.stdout, "gpuslo_gpu_problem")
    assert any("pci:00000000:0A" in p and 'reason="gpu_init_failed"' in p for p in problems)
