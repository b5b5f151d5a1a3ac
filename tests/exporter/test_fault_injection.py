"""Fault-injection matrix: each evidence source × {missing, hangs forever, crashes, exits non-zero
with the error on stdout, prints garbage, prints partial output, answers slowly within the
deadline}. Real child processes (the runner's, a fake NVML inside them, fake journalctl/dmesg
programs) and a real HTTP server on loopback serving a recorded dcgm-exporter page. Each run: the
result is what fail-closed demands, the run ends within the deadline plus one second, and a
healthy sibling check still reports."""

from __future__ import annotations

import http.server
import os
import socket
import stat
import threading
import time
from pathlib import Path

import pytest
from conftest import CORPUS, FIXTURES, REPO
from exporter.test_runner_checks import Behaving

from gpuslo.exporter.checks.base import CheckContext
from gpuslo.exporter.checks.registry import load_check
from gpuslo.exporter.runner import Runner

DEADLINE = 1.0
FAKE_NVML = REPO / "gpuslo" / "data" / "nvml_replay"
UNANSWERED = {"check_timeout", "tool_error", "dependency_missing", "parse_error", "no_data"}


def run_cycle(names: list[str], context: CheckContext):
    checks = [load_check(name) for name in names] + [Behaving("sibling", "ok")]
    runner = Runner(checks, context)
    started = time.monotonic()
    try:
        snapshot = runner.cycle()
    finally:
        runner.close()
    took = time.monotonic() - started
    assert took < context.timeout_s + 1.0, f"cycle took {took:.2f} s"
    sibling = [r for r in snapshot.results if r.check == "sibling"]
    assert [r.status for r in sibling] == ["ok"], "the other checks must still report"
    return [r for r in snapshot.results if r.check != "sibling"]


# --- NVML (a fake pynvml inside the runner's children) -------------------------------------------

NVML_EXPECTED = {
    # mode: (status, reason) every GPU-check result must have; None = see the test
    "missing": ("unknown", "dependency_missing"),
    "hang": ("unknown", "check_timeout"),
    "crash": ("unknown", "tool_error"),
    "exit": ("unknown", "tool_error"),
    "garbage": ("unknown", "parse_error"),
    "partial": None,
    "slow": ("ok", ""),
}


@pytest.mark.parametrize("mode", list(NVML_EXPECTED))
def test_nvml_source(mode, tmp_path, monkeypatch):
    monkeypatch.setenv("GPUSLO_NVML_PATH", str(FAKE_NVML))
    monkeypatch.setenv("GPUSLO_FAKE_NVML_MODE", mode)
    context = CheckContext(state_dir=tmp_path, timeout_s=DEADLINE, expect_gpus=8)
    results = run_cycle(["gpu_inventory", "gpu_memory"], context)
    expected = NVML_EXPECTED[mode]
    if expected is not None:
        assert {(r.status, r.reason) for r in results} == {expected}
        return
    # partial: NVML counts 8 GPUs, 4 answer. The inventory fails the 4 that do not; the memory
    # check cannot judge them (unknown) and judges the others.
    inventory = [r for r in results if r.check == "gpu_inventory" and r.scope != "node"]
    assert sorted(r.status for r in inventory) == ["fail"] * 4 + ["ok"] * 4
    assert {r.reason for r in inventory if r.status == "fail"} == {"gpu_inaccessible"}
    memory = sorted((r.status, r.reason) for r in results if r.check == "gpu_memory")
    assert memory == [("ok", "")] * 4 + [("unknown", "tool_error")] * 4


def test_nvml_error_on_every_call_is_not_healthy(tmp_path, monkeypatch):
    monkeypatch.setenv("GPUSLO_NVML_PATH", str(FAKE_NVML))
    monkeypatch.setenv("GPUSLO_FAKE_NVML_MODE", "error")
    results = run_cycle(
        ["gpu_inventory", "thermal"], CheckContext(state_dir=tmp_path, timeout_s=DEADLINE)
    )
    assert "ok" not in {r.status for r in results if r.scope != "node"}
    assert {r.reason for r in results if r.check == "thermal"} == {"tool_error"}


# --- nvidia-smi, the fallback when NVML is missing (a fake nvidia-smi program on PATH) -----------

SMI_XML = FIXTURES / "h200" / "nvidia-smi-q.xml"
SMI_PROGRAMS = {
    "hang": "exec sleep 1000\n",
    "crash": "kill -SEGV $$\n",
    "exit": (
        "echo 'Unable to determine the device handle for GPU0000:00:06.0: Unknown Error'; "
        "exit 255\n"
    ),
    "garbage": "head -c 3000 /dev/urandom | tr -d '\\000'\n",
    "partial": f"head -c 4000 '{SMI_XML}'\n",
    "slow": f"sleep {DEADLINE * 0.3}; cat '{SMI_XML}'\n",
}
SMI_EXPECTED = {
    "missing": ("unknown", "dependency_missing"),
    "hang": ("unknown", "check_timeout"),  # nvidia-smi's own deadline (0.8 x the check's) fires
    "crash": ("unknown", "tool_error"),
    "exit": ("unknown", "tool_error"),
    "garbage": ("unknown", "parse_error"),
    "partial": ("unknown", "parse_error"),
    "slow": ("ok", ""),
}


@pytest.mark.parametrize("mode", list(SMI_EXPECTED))
def test_nvidia_smi_fallback(mode, tmp_path, monkeypatch):
    monkeypatch.setenv("GPUSLO_NVML_PATH", str(FAKE_NVML))
    monkeypatch.setenv("GPUSLO_FAKE_NVML_MODE", "missing")  # no NVML library: fall back
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    if mode != "missing":
        program = bin_dir / "nvidia-smi"
        program.write_text("#!/bin/sh\n" + SMI_PROGRAMS[mode])
        program.chmod(program.stat().st_mode | stat.S_IXUSR)
    # our fake shadows a real nvidia-smi; "missing" hides every directory that could hold one
    monkeypatch.setenv("PATH", f"{bin_dir}:/usr/bin:/bin" if mode != "missing" else str(bin_dir))
    context = CheckContext(state_dir=tmp_path / "state", timeout_s=DEADLINE, expect_gpus=1)
    results = run_cycle(["gpu_inventory", "gpu_memory"], context)
    assert {(r.status, r.reason) for r in results} == {SMI_EXPECTED[mode]}, results
    if mode == "hang":
        assert all("deadline" in r.message for r in results), results
    if mode == "exit":  # the error nvidia-smi printed on stdout is in the message
        assert all("Unknown Error" in r.message for r in results)
    if mode == "slow":
        assert {r.source for r in results} == {"nvidia-smi"}


# --- dcgm-exporter over HTTP (a real server on loopback) ----------------------------------------

PAGE = (CORPUS / "dcgm-exporter" / "xid_errors_a30_mig.prom").read_bytes()
# The HTTP source's deadline. Every answer but `hang` comes in well under a second; with a 1 s
# deadline a loaded machine (the full suite on 2 cores) spent it starting the runner's child
# and read check_timeout for slow, garbage, partial and huge (7 of 8 failed beside 3 busy
# loops). 5 s leaves room for the load; `hang` (a 30 s sleep) still has to be cut off by it,
# and `slow` still answers late (SLOW_S) yet within it.
DCGM_DEADLINE = 5.0
SLOW_S = 0.3


class Handler(http.server.BaseHTTPRequestHandler):
    mode = "slow"

    def log_message(self, *args) -> None:
        pass

    def _send(self, code: int, body: bytes, length: int | None = None) -> None:
        self.send_response(code)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        self.send_header("Content-Length", str(len(body) if length is None else length))
        self.end_headers()
        self.wfile.write(body)

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        mode = self.server.mode  # type: ignore[attr-defined]
        if mode == "hang":
            time.sleep(30)
        elif mode == "crash":
            self.connection.shutdown(socket.SHUT_RDWR)  # the exporter died mid-request
        elif mode == "exit":
            self._send(500, b"error: DCGM initialization failed: host engine not running\n")
        elif mode == "garbage":
            self._send(200, b"\x00\xff<html>{not: exposition}\x07 ### \n" * 20)
        elif mode == "partial":
            self._send(200, PAGE[: len(PAGE) // 2], length=len(PAGE))
        elif mode == "huge":
            self._send(200, PAGE + b"#" * (50 * 1024 * 1024))
        else:
            time.sleep(SLOW_S)
            self._send(200, PAGE)


@pytest.fixture
def dcgm_server():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    yield server
    server.shutdown()
    server.server_close()


@pytest.mark.parametrize(
    "mode", ["missing", "hang", "crash", "exit", "garbage", "partial", "huge", "slow"]
)
def test_dcgm_exporter_source(mode, tmp_path, dcgm_server):
    dcgm_server.mode = mode
    port = dcgm_server.server_address[1]
    if mode == "missing":
        with socket.socket() as probe:  # a port nobody listens on
            probe.bind(("127.0.0.1", 0))
            port = probe.getsockname()[1]
    url = f"http://127.0.0.1:{port}/metrics"
    results = run_cycle(
        ["dcgm"], CheckContext(state_dir=tmp_path, timeout_s=DCGM_DEADLINE, dcgm_url=url)
    )
    if mode == "slow":  # answered within the deadline: the page is judged, not the transport
        assert results and not {r.reason for r in results} & {
            "check_timeout",
            "tool_error",
            "dependency_missing",
            "parse_error",
        }
        return
    # a deadline that expires is check_timeout, whoever's it is (the HTTP read's here)
    expected = {"missing": "dependency_missing", "hang": "check_timeout",
                "garbage": "parse_error"}.get(mode, "tool_error")
    assert {r.status for r in results} == {"unknown"}
    reasons = {r.reason for r in results}
    assert reasons <= UNANSWERED and (expected is None or reasons == {expected}), reasons


# --- kernel log via journalctl / dmesg (fake programs on PATH) -----------------------------------

KERNEL_LINE = "[  301.000000] NVRM: Xid (PCI:0000:00:06): 79, pid=0, GPU has fallen off the bus.\n"
PROGRAMS = {
    "hang": "exec sleep 1000\n",
    "crash": "kill -SEGV $$\n",
    "exit": "echo 'journalctl: Failed to open journal: Permission denied'; exit 1\n",
    "garbage": "printf '\\001\\002 not a kernel log \\377\\n%.0s' $(seq 1 50)\n",
    "partial": "printf '[  301.000000] NVRM: Xid (PCI:0000:00'\n",
    "slow": f"sleep {DEADLINE * 0.3}; printf '%s'\n".replace("%s", KERNEL_LINE.strip()),
}


def install(bin_dir: Path, mode: str) -> None:
    bin_dir.mkdir()
    if mode == "missing":
        return
    for name in ("journalctl", "dmesg"):
        program = bin_dir / name
        program.write_text("#!/bin/sh\n" + PROGRAMS[mode])
        program.chmod(program.stat().st_mode | stat.S_IXUSR)


@pytest.mark.parametrize("mode", ["missing", "hang", "crash", "exit", "garbage", "partial", "slow"])
def test_kernel_log_commands(mode, tmp_path, monkeypatch):
    install(tmp_path / "bin", mode)
    monkeypatch.setenv(
        "PATH", f"{tmp_path / 'bin'}:/usr/bin:/bin" if mode != "missing" else str(tmp_path / "bin")
    )
    if mode != "missing":  # only our fakes may answer: hide the real ones behind them
        assert (tmp_path / "bin" / "journalctl").exists()
    context = CheckContext(
        state_dir=tmp_path / "state",
        timeout_s=DEADLINE,
        kmsg_path=tmp_path / "no-kmsg",
        procfs=tmp_path / "proc",
    )
    results = run_cycle(["xid"], context)
    statuses = {r.status for r in results}
    if mode == "slow":  # a fatal Xid 79 answered in time must be seen
        assert "fail" in statuses, results
        return
    if mode == "partial":  # a cut-off record is not a healthy log
        assert statuses != {"ok"}, results
        return
    assert statuses == {"unknown"}, results
    assert {r.reason for r in results} <= UNANSWERED
    if mode == "hang":  # journalctl's and dmesg's own deadlines expired
        assert {r.reason for r in results} == {"check_timeout"}, results
        assert all(" s" in r.message and "deadline" in r.message for r in results), results


def test_the_matrix_covers_every_fault(tmp_path):
    faults = {"missing", "hang", "crash", "exit", "garbage", "partial", "slow"}
    assert faults <= set(NVML_EXPECTED)
    assert faults <= set(PROGRAMS) | {"missing"}
    assert os.access(FAKE_NVML / "pynvml.py", os.R_OK)
