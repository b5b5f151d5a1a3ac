"""`read_dcgm_page` against a real HTTP server on loopback that behaves like a good or a broken
dcgm-exporter (`dcgm_server`, also used by test_check_dcgm.py).

Paths: `/metrics/<name>` serves `pages[name]` (set by the test); `/hang` never answers;
`/hang-body` sends headers and then nothing; `/500` answers HTTP 500; `/truncate` declares a
length and closes halfway; `/huge` sends 50 MB with a Content-Length, `/huge-stream` the same
without one (close-delimited); `/trickle` sends one byte every 0.2 s.
"""

from __future__ import annotations

import threading
from collections.abc import Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

HUGE_BYTES = 50 * 1024 * 1024
LINE = b'DCGM_FI_DEV_GPU_TEMP{gpu="0",UUID="GPU-0"} 34\n'


class _Handler(BaseHTTPRequestHandler):
    server: _Server

    def log_message(self, *args) -> None:  # keep test output quiet
        pass

    def _head(self, length: int | None) -> None:
        self.send_response(200)
        self.send_header("Content-Type", "text/plain; version=0.0.4")
        if length is not None:
            self.send_header("Content-Length", str(length))
        self.end_headers()

    def _huge(self, declare: bool) -> None:
        self._head(HUGE_BYTES if declare else None)
        block = LINE * (65536 // len(LINE))
        sent = 0
        try:
            while sent < HUGE_BYTES and not self.server.release.is_set():
                self.wfile.write(block)
                sent += len(block)
        except OSError:
            pass  # the client stopped reading: what the byte cap is for

    def do_GET(self) -> None:  # noqa: N802 (http.server's name)
        self.close_connection = True
        path = self.path
        if path.startswith("/metrics/"):
            body = self.server.pages[path.removeprefix("/metrics/")].encode()
            self._head(len(body))
            self.wfile.write(body)
        elif path == "/hang":
            self.server.release.wait(30)
        elif path == "/hang-body":
            self._head(1000)
            self.wfile.flush()
            self.server.release.wait(30)
        elif path == "/500":
            self.send_error(500, "Internal Server Error")
        elif path == "/truncate":
            body = self.server.pages["truncate"].encode()
            self._head(len(body))
            self.wfile.write(body[: len(body) // 2])
        elif path in ("/huge", "/huge-stream"):
            self._huge(declare=path == "/huge")
        elif path == "/trickle":
            self._head(None)
            for _ in range(200):
                if self.server.release.wait(0.2):
                    break
                self.wfile.write(b"#")
                self.wfile.flush()
        else:
            self.send_error(404)


class _Server(ThreadingHTTPServer):
    daemon_threads = True
    pages: dict[str, str]
    release: threading.Event


@contextmanager
def dcgm_server(pages: dict[str, str] | None = None) -> Iterator[tuple[str, dict[str, str]]]:
    """Start the server on 127.0.0.1 (a free port); yields (base URL, the mutable pages dict)."""
    server = _Server(("127.0.0.1", 0), _Handler)
    server.pages = dict(pages or {})
    server.release = threading.Event()
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", server.pages
    finally:
        server.release.set()
        server.shutdown()
        server.server_close()


# ------------------------------------------------------------------------------------------------
# read_dcgm_page against the server: every broken answer fails closed within the deadline
# ------------------------------------------------------------------------------------------------

import socket  # noqa: E402
import time  # noqa: E402

import pytest  # noqa: E402
from conftest import CORPUS  # noqa: E402

from gpuslo.exporter.checks.base import DependencyMissing, ToolError  # noqa: E402
from gpuslo.exporter.dcgm import parse_dcgm_page, read_dcgm_page  # noqa: E402

TIMEOUT_S = 1.0
MIG_PAGE = (CORPUS / "dcgm-exporter" / "xid_errors_a30_mig.prom").read_text()


@pytest.fixture(scope="module")
def server():
    with dcgm_server({"mig": MIG_PAGE, "truncate": MIG_PAGE}) as (url, pages):
        yield url


def _timed(call):
    started = time.monotonic()
    try:
        return call(), time.monotonic() - started
    except Exception as error:  # noqa: BLE001 (returned for the assertion)
        return error, time.monotonic() - started


def test_recorded_page_is_read_whole(server):
    text = read_dcgm_page(f"{server}/metrics/mig", TIMEOUT_S, 1 << 20)
    assert text == MIG_PAGE
    assert len(parse_dcgm_page(text).gpus) == 2


@pytest.mark.parametrize(
    ("path", "error", "words"),
    [
        ("/hang", ToolError, "within"),
        ("/hang-body", ToolError, "transfer failed"),
        ("/500", ToolError, "HTTP 500"),
        ("/truncate", ToolError, "transfer failed"),
        ("/huge", ToolError, "byte cap"),
        ("/huge-stream", ToolError, "byte cap"),
        ("/trickle", ToolError, "deadline"),
    ],
)
def test_broken_answers_fail_closed_within_the_deadline(server, path, error, words):
    result, took = _timed(lambda: read_dcgm_page(f"{server}{path}", TIMEOUT_S, 1 << 20))
    assert isinstance(result, error), result
    assert words in str(result)
    assert took < TIMEOUT_S + 1.0


def test_connection_refused_is_a_missing_dependency():
    with socket.socket() as sock:  # a port nothing listens on: bind, note it, close
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    result, took = _timed(lambda: read_dcgm_page(f"http://127.0.0.1:{port}/metrics", TIMEOUT_S))
    assert isinstance(result, DependencyMissing), result
    assert took < TIMEOUT_S + 1.0
