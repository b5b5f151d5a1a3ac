"""The exporter's HTTP(S) server: a client never stalls it, and it speaks exporter-toolkit.

prometheus_client's `start_http_server` is a `ThreadingHTTPServer` that does the TLS handshake in
its accept loop (one idle TCP connection blocks every scrape) and has no idle timeout or
connection cap (a few hundred idle connections exhaust the file descriptors). This server keeps
prometheus_client for the exposition (`make_wsgi_app`: content negotiation, gzip, `name[]`) and
owns the connections:
- the accept thread only accepts; each connection gets its own thread, which does the TLS
  handshake and then serves HTTP/1.1 keep-alive requests, closing the connection after
  `IDLE_TIMEOUT_S` (10 s) without a request;
- total deadlines, not per-read timeouts: a reaper thread closes a connection whose TLS
  handshake is not done `HANDSHAKE_TIMEOUT_S` (5 s) after it opened, or whose request head is
  not read `HEAD_TIMEOUT_S` (5 s) after its first byte (a client trickling a header line every
  few seconds held its connection, and 256 of them every scrape, for ever);
- at most `max_connections` (default 256) are open; at the cap the oldest connections not
  being answered (in the handshake, waiting for a request, or still sending its head) are
  closed to admit new ones, so scrapes are still served, and a log line says so; when every
  connection is busy the new one is refused (closed at once); `max_per_client` caps what one
  client address holds (off by default: Prometheus servers behind one NAT share an address).
Paths: `/metrics` (the exposition), `/` (a small landing page), `/-/healthy` (200 while the
process serves), `/-/ready` (200 once the first check cycle is done, else 503); anything else is
404. With `basic_auth_users` every path needs a user and password (bcrypt hashes).

The pieces: `config` (the web config file), `admission` (which connection is admitted, which
idle one makes room, who may ask: basic auth), `handlers` (the HTTP paths), `server` (sockets
and threads).
"""

from __future__ import annotations

import contextlib
import logging
import selectors
import socket
import ssl
import threading
import time
from collections.abc import Callable
from typing import Any

from prometheus_client import make_wsgi_app

from gpuslo.exporter.web.admission import (
    DEFAULT_MAX_CONNECTIONS,
    HANDSHAKE_TIMEOUT_S,
    HEAD_TIMEOUT_S,
    IDLE_TIMEOUT_S,
    Authenticator,
    Connection,
    make_room,
    overdue,
)
from gpuslo.exporter.web.config import WebConfig
from gpuslo.exporter.web.handlers import Handler

log = logging.getLogger(__name__)
# A deep backlog (the kernel caps it at net.core.somaxconn): a burst of connects waits in it
# instead of having SYNs dropped (prometheus_client's server keeps socketserver's 5).
LISTEN_BACKLOG = 1024
LOG_EVERY_S = 10.0  # connection-cap log lines at most this often
REAP_EVERY_S = 0.25  # how often the deadlines are checked


class MetricsServer:
    """Serves `registry` on `host:port` with `config` (plain HTTP when it has no certificate).

    Args:
        registry: the prometheus_client registry to expose on /metrics.
        ready: returns True once the exporter has data (for /-/ready).
        max_connections: open connections at most (the oldest waiting ones make room).
        max_per_client: open connections one client address holds at most (None: no cap).
        head_timeout_s: seconds from a request's first byte to the end of its head.
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
        head_timeout_s: float = HEAD_TIMEOUT_S,
        max_per_client: int | None = None,
    ) -> None:
        self.config = config or WebConfig()
        self.app = make_wsgi_app(registry)
        self.auth = Authenticator(self.config.users)
        self.ready = ready
        self.max_connections = max_connections
        self.handshake_timeout_s, self.head_timeout_s = handshake_timeout_s, head_timeout_s
        self.max_per_client = max_per_client
        self._ssl = self.config.ssl_context() if self.config.tls else None
        self._handler = type("Handler", (Handler,), {"web": self, "timeout": idle_timeout_s})
        self._connections: dict[int, Connection] = {}
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
        self._reaper = threading.Thread(target=self._reap_loop, name="gpuslo-http-deadlines",
                                        daemon=True)

    def start(self) -> MetricsServer:
        """Start accepting; returns self."""
        self._thread.start()
        self._reaper.start()
        return self

    def mark(self, connection: Connection, state: str) -> None:
        """Record what a connection is doing (its handler calls this); an evicted connection
        stays evicted."""
        with self._lock:
            if connection.state == "evicted":
                return
            now = time.monotonic()
            connection.state, connection.last_active = state, now
            if state == "head":
                connection.head_since = now

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

    def _reap_loop(self) -> None:
        """Close every connection past its handshake or request-head deadline (`overdue`)."""
        while not self._stop.wait(REAP_EVERY_S):
            now = time.monotonic()
            with self._lock:
                late = [c for c in self._connections.values()
                        if overdue(c, now, self.handshake_timeout_s, self.head_timeout_s)]
                for connection in late:
                    connection.state = "evicted"
            for connection in late:
                _shut(connection.sock)
            if late:
                log.debug("closed %d connections past their handshake or head deadline",
                          len(late))

    def _admit(self, sock: socket.socket) -> None:
        now = time.monotonic()
        try:
            client = str(sock.getpeername()[0])
        except OSError:
            client = ""
        record = Connection(sock, now, now, client=client)
        with self._lock:
            evict, refused = make_room(self._connections.values(), self.max_connections, client,
                                       self.max_per_client)
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
        log.warning("connection cap of %d reached: closed %d oldest waiting connections (in "
                    "the handshake, idle or still sending a request head) and refused %d (all "
                    "busy) to serve new ones", self.max_connections, *self._pressure)
        self._pressure, self._last_log = [0, 0], now

    def _serve(self, record: Connection) -> None:
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
