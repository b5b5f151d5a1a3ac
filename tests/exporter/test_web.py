"""The exporter's HTTP server (issues 12 and 17): idle and half-open clients never stall a scrape,
the connection cap keeps serving, exporter-toolkit's web config (TLS 1.2+, client certificates,
bcrypt basic auth), the landing, health and readiness pages, process metrics, promtool-clean."""

from __future__ import annotations

import shutil
import signal
import socket
import ssl
import subprocess
import sys
import time
from pathlib import Path

import bcrypt
import pytest
import requests
from exporter.test_server import make_certs

from gpuslo.errors import ConfigError
from gpuslo.exporter.server import Exporter
from gpuslo.exporter.snapshot import NodeSnapshot
from gpuslo.exporter.web.admission import Connection, make_room
from gpuslo.exporter.web.config import WebConfig, load_web_config
from gpuslo.exporter.web.server import MetricsServer

needs_openssl = pytest.mark.skipif(not shutil.which("openssl"), reason="openssl not installed")


@pytest.fixture(scope="module")
def certs(tmp_path_factory: pytest.TempPathFactory) -> Path:
    if not shutil.which("openssl"):
        pytest.skip("openssl not installed")
    directory = tmp_path_factory.mktemp("certs")
    make_certs(directory)
    return directory


def _exporter() -> Exporter:
    exporter = Exporter(lambda: NodeSnapshot(node="n", taken_at=time.time()), None)
    exporter.run_checks()
    return exporter


def _idle(port: int, count: int) -> list[socket.socket]:
    """`count` connections that connect and then say nothing (no request, no TLS hello)."""
    out = []
    for _ in range(count):
        sock = socket.create_connection(("127.0.0.1", port), timeout=5)
        out.append(sock)
    return out


@pytest.mark.parametrize("tls", [False, True], ids=["plain", "tls"])
def test_500_idle_connections_never_stall_a_scrape(tls: bool, request, caplog) -> None:
    config = WebConfig()
    if tls:
        d = request.getfixturevalue("certs")
        config = WebConfig(cert_file=str(d / "server.pem"), key_file=str(d / "server.key"))
    server = MetricsServer(_exporter().registry, "127.0.0.1", 0, config).start()
    port = server.address[1]
    idle = _idle(port, 500)
    try:
        scheme = "https" if tls else "http"
        verify = str(request.getfixturevalue("certs") / "ca.pem") if tls else True
        started = time.monotonic()
        answer = requests.get(f"{scheme}://127.0.0.1:{port}/metrics", timeout=5, verify=verify)
        took = time.monotonic() - started
        assert answer.status_code == 200 and "gpuslo_build_info" in answer.text
        assert took < 5, f"a scrape behind 500 idle connections took {took:.1f} s"
        assert server.open_connections() <= 256
        assert "connection cap of 256 reached: closed" in caplog.text  # the log line
    finally:
        for sock in idle:
            sock.close()
        server.shutdown()


def test_idle_connections_are_closed_after_the_idle_timeout() -> None:
    server = MetricsServer(_exporter().registry, "127.0.0.1", 0, idle_timeout_s=0.5,
                           handshake_timeout_s=0.5).start()
    try:
        sock = socket.create_connection(server.address, timeout=5)
        sock.sendall(b"GET /-/healthy HTTP/1.1\r\nHost: x\r\n\r\n")
        answer = b""
        while not answer.endswith(b"Healthy\n"):
            answer += sock.recv(4096)
        assert b"200 OK" in answer  # and kept alive after it
        started = time.monotonic()
        assert sock.recv(4096) == b""  # then closed by the server
        assert time.monotonic() - started < 3
    finally:
        server.shutdown()


def test_a_slow_tls_handshake_is_cut_off_and_does_not_block_others(certs: Path) -> None:
    config = WebConfig(cert_file=str(certs / "server.pem"), key_file=str(certs / "server.key"))
    server = MetricsServer(_exporter().registry, "127.0.0.1", 0, config,
                           handshake_timeout_s=0.5).start()
    try:
        silent = socket.create_connection(server.address, timeout=5)
        answer = requests.get(f"https://127.0.0.1:{server.address[1]}/-/healthy", timeout=5,
                              verify=str(certs / "ca.pem"))
        assert answer.status_code == 200
        started = time.monotonic()
        assert silent.recv(10) == b""  # closed by the handshake deadline
        assert time.monotonic() - started < 3
    finally:
        server.shutdown()


@pytest.mark.filterwarnings("ignore:ssl.TLSVersion:DeprecationWarning")
def test_tls_1_0_and_1_1_are_refused_and_1_2_is_served(certs: Path) -> None:
    config = WebConfig(cert_file=str(certs / "server.pem"), key_file=str(certs / "server.key"))
    server = MetricsServer(_exporter().registry, "127.0.0.1", 0, config).start()
    try:
        for version in (ssl.TLSVersion.TLSv1, ssl.TLSVersion.TLSv1_1, ssl.TLSVersion.TLSv1_2):
            client = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            client.load_verify_locations(str(certs / "ca.pem"))
            client.set_ciphers("ALL:@SECLEVEL=0")
            client.minimum_version = client.maximum_version = version
            with socket.create_connection(server.address, timeout=5) as raw:
                try:
                    with client.wrap_socket(raw, server_hostname="127.0.0.1") as tls:
                        agreed = tls.version()
                except (ssl.SSLError, OSError):
                    agreed = None
            assert agreed == ("TLSv1.2" if version == ssl.TLSVersion.TLSv1_2 else None), version
    finally:
        server.shutdown()


def test_pages_health_and_readiness_are_not_the_metrics_page() -> None:
    exporter = Exporter(lambda: NodeSnapshot(node="n", taken_at=time.time()), None)
    server = MetricsServer(exporter.registry, "127.0.0.1", 0,
                           ready=lambda: exporter.snapshot is not None).start()
    base = f"http://127.0.0.1:{server.address[1]}"
    try:
        assert requests.get(f"{base}/-/ready", timeout=5).status_code == 503
        exporter.run_checks()
        for path, words in (("/-/healthy", "Healthy"), ("/-/ready", "Ready"),
                            ("/", "/metrics")):
            answer = requests.get(base + path, timeout=5)
            assert answer.status_code == 200 and words in answer.text
            assert "gpuslo_build_info" not in answer.text, path
        assert requests.get(f"{base}/healthz", timeout=5).status_code == 404
        assert "gpuslo_build_info" in requests.get(f"{base}/metrics", timeout=5).text
    finally:
        server.shutdown()


def _web_config(tmp: Path, certs: Path, password: str) -> Path:
    hashed = bcrypt.hashpw(password.encode(), bcrypt.gensalt(rounds=4)).decode()
    path = tmp / "web.yml"
    path.write_text(f"tls_server_config:\n  cert_file: {certs / 'server.pem'}\n"
                    f"  key_file: {certs / 'server.key'}\n  min_version: TLS12\n"
                    f"basic_auth_users:\n  prometheus: '{hashed}'\n")
    return path


def test_the_exporter_with_a_web_config_file(tmp_path: Path, certs: Path, promtool: str) -> None:
    """`gpuslo exporter --web.config.file`: basic auth refuses a wrong password, the start-up
    line says what is served, the exposition (with process_* metrics) is promtool-clean, and
    SIGTERM ends it cleanly."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    child = subprocess.Popen(
        [sys.executable, "-m", "gpuslo", "exporter", "--web.listen-address", f"127.0.0.1:{port}",
         "--web.config.file", str(_web_config(tmp_path, certs, "s3cret")),
         "--state-dir", str(tmp_path / "state"), "--path.sysfs", str(tmp_path / "nosys")],
        stderr=subprocess.PIPE, text=True)
    url, ca = f"https://127.0.0.1:{port}/metrics", str(certs / "ca.pem")
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                answer = requests.get(url, verify=ca, auth=("prometheus", "s3cret"), timeout=5)
                break
            except requests.RequestException:
                assert time.monotonic() < deadline, "the exporter never answered"
                time.sleep(0.2)
        assert answer.status_code == 200 and "process_resident_memory_bytes" in answer.text
        wrong = requests.get(url, verify=ca, auth=("prometheus", "guess"), timeout=5)
        assert wrong.status_code == 401 and "gpuslo_" not in wrong.text
        assert requests.get(url, verify=ca, timeout=5).status_code == 401
        lint = subprocess.run([promtool, "check", "metrics"], input=answer.text,
                              capture_output=True, text=True, timeout=60)
        assert lint.returncode == 0 and lint.stdout == lint.stderr == "", lint
    finally:
        child.send_signal(signal.SIGTERM)
        assert child.wait(15) == 0
    log = child.stderr.read()
    assert f"serving https://127.0.0.1:{port}/metrics (basic auth: 1 users" in log, log
    assert "Traceback" not in log


@pytest.mark.parametrize(("text", "field"), [
    ("tls_server_config: {cert_file: a.pem}\n", "tls_server_config"),
    ("tls_server_config: {cert_file: a, key_file: b, min_version: TLS10}\n", "min_version"),
    ("tls_server_config: {cert_file: a, key_file: b, client_auth_type: RequireAndVerifyClientCert}"
     "\n", "client_ca_file"),
    ("basic_auth_users: {prometheus: plain-text}\n", "basic_auth_users.prometheus"),
    ("tls_server_config: {cipher_suites: [x]}\n", "cipher_suites"),
    ("basic_auth_users: [a]\n", "basic_auth_users"),
    ("- not a mapping\n", "top level"),
])
def test_web_config_errors_name_the_file_and_field(tmp_path: Path, text: str, field: str) -> None:
    path = tmp_path / "web.yml"
    path.write_text(text)
    with pytest.raises(ConfigError, match=field) as caught:
        load_web_config(path)
    assert str(path) in str(caught.value)
    done = subprocess.run([sys.executable, "-m", "gpuslo", "exporter", "--once",
                           "--web.config.file", str(path), "--state-dir", str(tmp_path / "s")],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr


@pytest.mark.parametrize("signum", [signal.SIGTERM, signal.SIGINT])
def test_the_exporter_stops_on_a_signal_with_idle_clients_connected(tmp_path: Path, certs: Path,
                                                                    signum: int) -> None:
    """prometheus_client's server did the TLS handshake in its accept loop: one idle client kept
    `shutdown()` waiting, and the exporter ignored SIGTERM until SIGKILL."""
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        port = probe.getsockname()[1]
    child = subprocess.Popen(
        [sys.executable, "-m", "gpuslo", "exporter", "--web.listen-address", f"127.0.0.1:{port}",
         "--tls-cert", str(certs / "server.pem"), "--tls-key", str(certs / "server.key"),
         "--state-dir", str(tmp_path / "state"), "--path.sysfs", str(tmp_path / "nosys")],
        stderr=subprocess.PIPE, text=True)
    idle = []
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                requests.get(f"https://127.0.0.1:{port}/-/ready", verify=str(certs / "ca.pem"),
                             timeout=5)
                break
            except requests.RequestException:
                assert time.monotonic() < deadline, "the exporter never answered"
                time.sleep(0.2)
        idle = _idle(port, 20)  # connected, never a TLS hello
        started = time.monotonic()
        child.send_signal(signum)
        try:
            child.wait(15)
        except subprocess.TimeoutExpired:
            child.send_signal(signal.SIGUSR1)  # faulthandler: every thread's stack on stderr
            time.sleep(1)
            child.kill()
            raise AssertionError(child.communicate()[1][-6000:]) from None
        assert child.returncode == 0
        assert time.monotonic() - started < 10
    finally:
        for sock in idle:
            sock.close()
        if child.poll() is None:
            child.kill()
    assert "stopping: signal received" in child.stderr.read()


def test_make_room_evicts_the_oldest_idle_and_refuses_when_all_are_busy():
    """The cap's choice, by hand: cap 3, open: busy(t=1), idle(t=5), handshake(t=2)."""
    busy, idle, shaking = (Connection(None, 0, 1, "busy"), Connection(None, 0, 5, "idle"),
                           Connection(None, 0, 2, "handshake"))
    # an idle keep-alive connection goes before one in the handshake (maybe a new scrape)
    assert make_room([busy, idle, shaking], 3) == ([idle], False)
    assert make_room([busy, idle], 3) == ([], False)  # room left
    assert make_room([busy, busy, busy], 3) == ([], True)  # all busy: the new one is refused
    gone = Connection(None, 0, 0, "evicted")
    assert make_room([busy, idle, gone], 3) == ([], False)  # an evicted one no longer counts
