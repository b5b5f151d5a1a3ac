"""The exporter's HTTP(S) server: a client never stalls it, and it speaks exporter-toolkit.

prometheus_client's `start_http_server` is a `ThreadingHTTPServer` that does the TLS handshake in
its accept loop (one idle TCP connection blocks every scrape) and has no idle timeout or
connection cap (a few hundred idle connections exhaust the file descriptors). This server keeps
prometheus_client for the exposition (`make_wsgi_app`: content negotiation, gzip, `name[]`) and
owns the connections:
- the accept thread only accepts; each connection gets its own thread, which does the TLS
  handshake with a deadline (`HANDSHAKE_TIMEOUT_S`, 5 s) and then serves HTTP/1.1 keep-alive
  requests, closing the connection after `IDLE_TIMEOUT_S` (10 s) without a request;
- at most `max_connections` (default 256) are open; at the cap the oldest idle connections
  (waiting for a request or still in the handshake) are closed to admit new ones, so scrapes
  are still served, and a log line says so; when every connection is busy the new one is
  refused (closed at once).
Paths: `/metrics` (the exposition), `/` (a small landing page), `/-/healthy` (200 while the
process serves), `/-/ready` (200 once the first check cycle is done, else 503); anything else is
404. With `basic_auth_users` every path needs a user and password (bcrypt hashes).

The web config file (`--web.config.file`) has exporter-toolkit's format
(https://github.com/prometheus/exporter-toolkit/blob/master/docs/web-configuration.md):

    tls_server_config:
      cert_file: server.pem
      key_file: server.key
      client_auth_type: RequireAndVerifyClientCert   # or NoClientCert, VerifyClientCertIfGiven
      client_ca_file: ca.pem
      min_version: TLS12                             # TLS12 (default) or TLS13
      max_version: TLS13
    http_server_config:
      headers: {X-Frame-Options: deny}
    basic_auth_users:
      prometheus: $2y$10$...                         # bcrypt (htpasswd -nBC 10 "" | tr -d ':')

Fields it does not support (TLS 1.0/1.1, `RequestClientCert`, `RequireAnyClientCert`, cipher
suites, curves, HTTP/2) are a ConfigError naming the file and the field: never silently ignored.
"""

from __future__ import annotations

import base64
import binascii
import contextlib
import hashlib
import html
import logging
import os
import selectors
import socket
import ssl
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import bcrypt
import yaml
from prometheus_client import make_wsgi_app

from gpuslo import __version__
from gpuslo.errors import ConfigError

log = logging.getLogger(__name__)
HANDSHAKE_TIMEOUT_S = 5.0
IDLE_TIMEOUT_S = 10.0
DEFAULT_MAX_CONNECTIONS = 256
# A deep backlog (the kernel caps it at net.core.somaxconn): a burst of connects waits in it
# instead of having SYNs dropped (prometheus_client's server keeps socketserver's 5).
LISTEN_BACKLOG = 1024
LOG_EVERY_S = 10.0  # connection-cap log lines at most this often
TLS_VERSIONS = {"TLS12": ssl.TLSVersion.TLSv1_2, "TLS13": ssl.TLSVersion.TLSv1_3}
CLIENT_AUTH = {
    "NoClientCert": ssl.CERT_NONE,
    "VerifyClientCertIfGiven": ssl.CERT_OPTIONAL,
    "RequireAndVerifyClientCert": ssl.CERT_REQUIRED,
}
_TLS_KEYS = ("cert_file", "key_file", "client_auth_type", "client_ca_file", "min_version",
             "max_version")
_TOP_KEYS = ("tls_server_config", "http_server_config", "basic_auth_users")


@dataclass(frozen=True)
class WebConfig:
    """What `--web.config.file` (or the `--tls-*` flags) asks for.

    Attributes:
        cert_file, key_file: the server certificate and key (PEM); None for plain HTTP.
        client_ca_file: CA bundle that signs client certificates, or None.
        client_auth: an `ssl.CERT_*` verify mode (CERT_NONE: no client certificate asked).
        min_version, max_version: `ssl.TLSVersion` bounds (at least TLS 1.2).
        users: {user name: bcrypt hash (bytes)}; empty means no basic auth.
        headers: extra response headers.
    """

    cert_file: str | None = None
    key_file: str | None = None
    client_ca_file: str | None = None
    client_auth: int = ssl.CERT_NONE
    min_version: ssl.TLSVersion = ssl.TLSVersion.TLSv1_2
    max_version: ssl.TLSVersion | None = None
    users: dict[str, bytes] = field(default_factory=dict)
    headers: dict[str, str] = field(default_factory=dict)

    @property
    def tls(self) -> bool:
        """True when the server speaks HTTPS."""
        return self.cert_file is not None

    def ssl_context(self) -> ssl.SSLContext:
        """The server's SSLContext; raises ConfigError naming a file that cannot be loaded."""
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.minimum_version = self.min_version
        if self.max_version is not None:
            context.maximum_version = self.max_version
        try:
            context.load_cert_chain(self.cert_file, self.key_file)
            if self.client_ca_file:
                context.load_verify_locations(self.client_ca_file)
        except (OSError, ssl.SSLError) as error:
            raise ConfigError(f"TLS certificate, key or CA cannot be loaded: {error}") from None
        context.verify_mode = self.client_auth
        return context


def _field_error(source: str, name: str, message: str) -> ConfigError:
    return ConfigError(f"{source}: field {name}: {message}")


def _mapping(value: Any, source: str, name: str) -> dict:
    if value is None:
        return {}
    if not isinstance(value, dict):
        raise _field_error(source, name, "must be a mapping")
    return value


def _known(section: dict, keys: tuple[str, ...], source: str, prefix: str) -> None:
    for key in section:
        if key not in keys:
            known = ", ".join(keys)
            raise _field_error(source, f"{prefix}{key}", f"not supported (known: {known})")


def _string(section: dict, key: str, source: str, prefix: str) -> str | None:
    value = section.get(key)
    if value is not None and (not isinstance(value, str) or not value):
        raise _field_error(source, f"{prefix}{key}", "must be a non-empty string")
    return value


def parse_web_config(raw: Any, source: str, base: Path = Path(".")) -> WebConfig:
    """A WebConfig from a decoded web config file (pure but for path joining; no file is read).
    Relative file paths are relative to `base` (the config file's directory), as in
    exporter-toolkit. Raises ConfigError naming `source` and the field."""
    top = _mapping(raw, source, "(top level)")
    _known(top, _TOP_KEYS, source, "")
    tls = _mapping(top.get("tls_server_config"), source, "tls_server_config")
    _known(tls, _TLS_KEYS, source, "tls_server_config.")
    http = _mapping(top.get("http_server_config"), source, "http_server_config")
    _known(http, ("headers",), source, "http_server_config.")
    files = {k: _string(tls, k, source, "tls_server_config.") for k in _TLS_KEYS}
    paths = {k: str(base / v) for k, v in files.items() if k.endswith("_file") and v}
    if tls and not (paths.get("cert_file") and paths.get("key_file")):
        raise _field_error(source, "tls_server_config", "needs cert_file and key_file")
    auth_name = files["client_auth_type"] or "NoClientCert"
    if auth_name not in CLIENT_AUTH:
        raise _field_error(source, "tls_server_config.client_auth_type",
                           f"{auth_name!r} not supported (known: {', '.join(CLIENT_AUTH)})")
    if CLIENT_AUTH[auth_name] != ssl.CERT_NONE and not paths.get("client_ca_file"):
        raise _field_error(source, "tls_server_config.client_ca_file",
                           f"required by client_auth_type {auth_name}")
    versions = {}
    for key in ("min_version", "max_version"):
        name = files[key]
        if name is not None and name not in TLS_VERSIONS:
            raise _field_error(source, f"tls_server_config.{key}",
                               f"{name!r} not supported (known: {', '.join(TLS_VERSIONS)}; "
                               "TLS 1.0 and 1.1 are refused)")
        versions[key] = TLS_VERSIONS[name] if name else None
    return WebConfig(
        cert_file=paths.get("cert_file"),
        key_file=paths.get("key_file"),
        client_ca_file=paths.get("client_ca_file"),
        client_auth=CLIENT_AUTH[auth_name],
        min_version=versions["min_version"] or ssl.TLSVersion.TLSv1_2,
        max_version=versions["max_version"],
        users=_users(top.get("basic_auth_users"), source),
        headers=_headers(http.get("headers"), source),
    )


def _users(value: Any, source: str) -> dict[str, bytes]:
    users = {}
    for user, hashed in _mapping(value, source, "basic_auth_users").items():
        name = f"basic_auth_users.{user}"
        if not isinstance(user, str) or not isinstance(hashed, str):
            raise _field_error(source, name, "user and bcrypt hash must be strings")
        if not hashed.startswith(("$2a$", "$2b$", "$2y$")) or len(hashed) != 60:
            raise _field_error(source, name, "not a bcrypt hash ($2y$10$... , 60 characters)")
        users[user] = hashed.encode()
    return users


def _headers(value: Any, source: str) -> dict[str, str]:
    headers = _mapping(value, source, "http_server_config.headers")
    for key, text in headers.items():
        if not isinstance(key, str) or not isinstance(text, str) or "\n" in key + text:
            raise _field_error(source, f"http_server_config.headers.{key}", "must be one line")
    return dict(headers)


def load_web_config(path: str | os.PathLike[str]) -> WebConfig:
    """Read and check a web config file; ConfigError naming the file (and field) when it cannot
    be read, is not YAML, or has an invalid or unsupported field; its TLS files are loaded once
    here so a bad certificate stops the exporter at start."""
    source = str(path)
    try:
        raw = yaml.safe_load(Path(path).read_text(encoding="utf-8"))
    except OSError as error:
        raise ConfigError(f"{source}: cannot read ({error.strerror or error})") from None
    except (yaml.YAMLError, UnicodeDecodeError) as error:
        raise ConfigError(f"{source}: not valid YAML ({str(error).splitlines()[0]})") from None
    config = parse_web_config(raw, source, Path(path).parent)
    if config.tls:
        try:
            config.ssl_context()
        except ConfigError as error:
            raise ConfigError(f"{source}: {error}") from None
    return config


class _Authenticator:
    """Basic-auth check with bcrypt; a successful (user, password) is cached (bcrypt costs
    tens of milliseconds by design), a wrong one never is."""

    def __init__(self, users: dict[str, bytes]) -> None:
        self.users = users
        self._ok: set[tuple[str, bytes]] = set()
        self._lock = threading.Lock()

    def allows(self, header: str | None) -> bool:
        if not self.users:
            return True
        if not header or not header.startswith("Basic "):
            return False
        try:
            user, _, password = base64.b64decode(header[6:], validate=True).decode().partition(":")
        except (binascii.Error, UnicodeDecodeError):
            return False
        hashed = self.users.get(user)
        if hashed is None:
            return False
        key = (user, hashlib.sha256(password.encode()).digest())
        with self._lock:
            if key in self._ok:
                return True
        if not bcrypt.checkpw(password.encode(), hashed):
            return False
        with self._lock:
            self._ok.add(key)
        return True


@dataclass
class _Connection:
    sock: socket.socket
    opened: float
    last_active: float
    state: str = "handshake"  # handshake -> idle <-> busy


LANDING = """<!DOCTYPE html>
<html><head><title>gpuslo exporter</title></head>
<body><h1>gpuslo exporter</h1><p>version {version}</p>
<ul><li><a href="/metrics">/metrics</a></li><li><a href="/-/healthy">/-/healthy</a></li>
<li><a href="/-/ready">/-/ready</a></li></ul></body></html>
"""


class _Handler(BaseHTTPRequestHandler):
    """One connection: keep-alive HTTP/1.1 requests, each timed by the server."""

    protocol_version = "HTTP/1.1"
    server_version = f"gpuslo/{__version__}"
    timeout = IDLE_TIMEOUT_S  # socket timeout between and within requests
    web: MetricsServer  # set on the subclass the server builds
    connection_record: _Connection

    def handle_one_request(self) -> None:
        self.web.mark(self.connection_record, "idle")
        super().handle_one_request()

    def parse_request(self) -> bool:
        self.web.mark(self.connection_record, "busy")
        return super().parse_request()

    def log_message(self, format: str, *args: Any) -> None:  # noqa: A002 - the base's name
        log.debug("%s %s", self.address_string(), format % args)

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
        self.wfile.write(body)


class MetricsServer:
    """Serves `registry` on `host:port` with `config` (plain HTTP when it has no certificate).

    Args:
        registry: the prometheus_client registry to expose on /metrics.
        ready: returns True once the exporter has data (for /-/ready).
        max_connections: open connections at most (the oldest idle ones make room).
    Raises OSError when the address cannot be listened on, ConfigError for unloadable TLS files.
    """

    def __init__(
        self,
        registry: Any,
        host: str,
        port: int,
        config: WebConfig | None = None,
        *,
        ready: Callable[[], bool] = lambda: True,
        max_connections: int = DEFAULT_MAX_CONNECTIONS,
        idle_timeout_s: float = IDLE_TIMEOUT_S,
        handshake_timeout_s: float = HANDSHAKE_TIMEOUT_S,
    ) -> None:
        self.config = config or WebConfig()
        self.app = make_wsgi_app(registry)
        self.auth = _Authenticator(self.config.users)
        self.ready = ready
        self.max_connections = max_connections
        self.handshake_timeout_s = handshake_timeout_s
        self._ssl = self.config.ssl_context() if self.config.tls else None
        self._handler = type("Handler", (_Handler,), {"web": self, "timeout": idle_timeout_s})
        self._connections: dict[int, _Connection] = {}
        self._pressure, self._last_log = [0, 0], -LOG_EVERY_S  # [evicted, refused] not logged
        self._lock = threading.Lock()
        self._stop = threading.Event()
        family = socket.AF_INET6 if ":" in host else socket.AF_INET
        self.socket = socket.socket(family, socket.SOCK_STREAM)
        try:
            self.socket.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
            self.socket.bind((host, port))
            self.socket.listen(LISTEN_BACKLOG)
            self.socket.setblocking(False)
        except OSError:
            self.socket.close()
            raise
        self.address = self.socket.getsockname()[:2]
        self._thread = threading.Thread(target=self._accept_loop, name="gpuslo-http-accept",
                                        daemon=True)

    def start(self) -> MetricsServer:
        """Start accepting; returns self."""
        self._thread.start()
        return self

    def mark(self, connection: _Connection, state: str) -> None:
        """Record what a connection is doing (its handler calls this)."""
        with self._lock:
            connection.state, connection.last_active = state, time.monotonic()

    def open_connections(self) -> int:
        """Connections open now."""
        with self._lock:
            return len(self._connections)

    def _accept_loop(self) -> None:
        with selectors.DefaultSelector() as selector:
            selector.register(self.socket, selectors.EVENT_READ)
            while not self._stop.is_set():
                if not selector.select(timeout=0.5):
                    continue
                while True:  # drain the backlog: a full one drops SYNs (1 s retransmits)
                    try:
                        sock, _ = self.socket.accept()
                    except OSError:  # BlockingIOError: nothing more waiting
                        break
                    sock.setblocking(True)
                    self._admit(sock)

    def _admit(self, sock: socket.socket) -> None:
        now = time.monotonic()
        record = _Connection(sock, now, now)
        with self._lock:
            live = [c for c in self._connections.values() if c.state != "evicted"]
            idle = sorted((c for c in live if c.state in ("handshake", "idle")),
                          key=lambda c: c.last_active)
            evict = idle[: max(0, len(live) + 1 - self.max_connections)]
            refused = len(live) - len(evict) >= self.max_connections
            for connection in evict:
                connection.state = "evicted"
            if not refused:
                self._connections[id(record)] = record
        for old in evict:
            _shut(old.sock)
        self._log_pressure(len(evict), refused, now)
        if refused:
            sock.close()
            return
        threading.Thread(target=self._serve, args=(record,), name="gpuslo-http",
                         daemon=True).start()

    def _log_pressure(self, evicted: int, refused: bool, now: float) -> None:
        """A log line when the cap closed or refused connections: the first at once, then at
        most one per `LOG_EVERY_S` with the counts since the last."""
        self._pressure[0] += evicted
        self._pressure[1] += int(refused)
        if not any(self._pressure) or now - self._last_log < LOG_EVERY_S:
            return
        log.warning("connection cap of %d reached: closed %d oldest idle connections and "
                    "refused %d (all busy) to serve new ones", self.max_connections,
                    *self._pressure)
        self._pressure, self._last_log = [0, 0], now

    def _serve(self, record: _Connection) -> None:
        sock = record.sock
        try:
            if self._ssl is not None:
                sock.settimeout(self.handshake_timeout_s)
                sock = self._ssl.wrap_socket(sock, server_side=True, do_handshake_on_connect=False)
                record.sock = sock
                if record.state == "evicted":
                    return
                sock.do_handshake()
            self.mark(record, "idle")
            handler = type("Connection", (self._handler,), {"connection_record": record})
            handler(sock, sock.getpeername(), self)
        except (OSError, ssl.SSLError, ValueError) as error:
            log.debug("connection closed: %s", error)
        finally:
            with self._lock:
                self._connections.pop(id(record), None)
            _shut(sock)
            sock.close()

    def shutdown(self) -> None:
        """Stop accepting, close every connection and the listening socket."""
        self._stop.set()
        if self._thread.is_alive():
            self._thread.join(timeout=5)
        with self._lock:
            connections = list(self._connections.values())
        for connection in connections:
            _shut(connection.sock)
        self.socket.close()


def _shut(sock: socket.socket) -> None:
    """Wake and end whatever reads `sock` (also a TLS socket mid-handshake), without touching
    the TLS state another thread uses."""
    with contextlib.suppress(OSError):
        socket.socket.shutdown(sock, socket.SHUT_RDWR)
