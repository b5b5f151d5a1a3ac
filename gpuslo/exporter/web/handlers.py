"""The exporter's HTTP paths, one keep-alive connection per handler: `/metrics` (the exposition,
by prometheus_client's WSGI app: content negotiation, gzip, `name[]`), `/` (a landing page),
`/-/healthy` (200 while the process serves), `/-/ready` (200 once the first check cycle is done,
else 503); anything else is 404. `HEAD` is answered like `GET` without the body (RFC 9110
§9.3.2). With basic-auth users every path needs a user and password.

A connection is `idle` until the first byte of a request arrives, `head` while its request line
and headers are read (the server closes it `HEAD_TIMEOUT_S` after that first byte, and may
close it at the connection cap), and `busy` only once the head is whole and it is answered.
"""

from __future__ import annotations

import html
import logging
from collections.abc import Callable, Iterable
from http.server import BaseHTTPRequestHandler
from typing import Any, Protocol
from urllib.parse import urlsplit

from gpuslo import __version__
from gpuslo.exporter.web.admission import IDLE_TIMEOUT_S, Authenticator, Connection
from gpuslo.exporter.web.config import WebConfig

log = logging.getLogger(__name__)


class Served(Protocol):
    """What a handler needs of its server (`server.MetricsServer`)."""

    config: WebConfig
    auth: Authenticator
    app: Callable[..., Iterable[bytes]]
    ready: Callable[[], bool]

    def mark(self, connection: Connection, state: str) -> None: ...


LANDING = """<!DOCTYPE html>
<html><head><title>gpuslo exporter</title></head>
<body><h1>gpuslo exporter</h1><p>version {version}</p>
<ul><li><a href="/metrics">/metrics</a></li><li><a href="/-/healthy">/-/healthy</a></li>
<li><a href="/-/ready">/-/ready</a></li></ul></body></html>
"""


class Handler(BaseHTTPRequestHandler):
    """One connection: keep-alive HTTP/1.1 requests, each timed by the server."""

    protocol_version = "HTTP/1.1"
    server_version = f"gpuslo/{__version__}"
    timeout = IDLE_TIMEOUT_S  # socket timeout between and within requests
    web: Served  # set on the subclass the server builds
    connection_record: Connection

    def handle_one_request(self) -> None:
        self.web.mark(self.connection_record, "idle")
        try:
            first = self.rfile.peek(1)  # waits for the request's first byte (idle timeout)
        except (TimeoutError, OSError):
            first = b""
        if not first:
            self.close_connection = True
            return
        self.web.mark(self.connection_record, "head")
        super().handle_one_request()

    def parse_request(self) -> bool:
        whole = super().parse_request()  # reads the headers: still `head`
        self.web.mark(self.connection_record, "busy")
        return whole

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base's name
        log.debug("%s %s", self.address_string(), format % args)

    def do_HEAD(self) -> None:  # noqa: N802 - http.server's name
        """GET's status and headers, no body (a HEAD /metrics was 501)."""
        self._head_only = True
        self.do_GET()

    def do_GET(self) -> None:  # noqa: N802 - http.server's name
        if not self.web.auth.allows(self.headers.get("Authorization")):
            self._send(401, b"Unauthorized\n", "text/plain; charset=utf-8",
                       [("WWW-Authenticate", 'Basic realm="gpuslo"')])
            return
        path = urlsplit(self.path).path
        if path == "/metrics":
            self._metrics()
        elif path == "/":
            page = LANDING.format(version=html.escape(__version__)).encode()
            self._send(200, page, "text/html; charset=utf-8")
        elif path == "/-/healthy":
            self._send(200, b"Healthy\n", "text/plain; charset=utf-8")
        elif path == "/-/ready":
            ready = self.web.ready()
            body = b"Ready\n" if ready else b"Not ready: no check cycle finished yet\n"
            self._send(200 if ready else 503, body, "text/plain; charset=utf-8")
        else:
            self._send(404, b"Not found: see / for the endpoints\n", "text/plain; charset=utf-8")

    def _metrics(self) -> None:
        environ = {
            "REQUEST_METHOD": "GET",
            "PATH_INFO": "/metrics",
            "QUERY_STRING": urlsplit(self.path).query,
            "HTTP_ACCEPT": self.headers.get("Accept", ""),
            "HTTP_ACCEPT_ENCODING": self.headers.get("Accept-Encoding", ""),
        }
        answer: dict[str, Any] = {}

        def start_response(status: str, headers: list[tuple[str, str]]) -> None:
            answer["status"], answer["headers"] = int(status.split()[0]), headers

        body = b"".join(self.web.app(environ, start_response))
        headers = [(k, v) for k, v in answer["headers"] if k.lower() != "content-type"]
        content_type = dict((k.lower(), v) for k, v in answer["headers"]).get("content-type", "")
        self._send(answer["status"], body, content_type, headers)

    def _send(self, code: int, body: bytes, content_type: str,
              headers: list[tuple[str, str]] = ()) -> None:
        self.send_response(code)
        if content_type:
            self.send_header("Content-Type", content_type)
        for key, value in [*headers, *self.web.config.headers.items()]:
            self.send_header(key, value)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if not getattr(self, "_head_only", False):
            self.wfile.write(body)
        self._head_only = False
