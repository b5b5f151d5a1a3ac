"""Peers that misbehave on purpose, on loopback only, shared by the hostile-world tests and
`bench/attack.py`: an HTTP server that answers whatever bytes it is given (malformed
Prometheus answers) or trickles them a byte at a time. Every loop is bounded: a trickle stops
after `max_s` seconds or when the client goes away.
"""

from __future__ import annotations

import contextlib
import json
import re
import socket
import socketserver
import threading
import time
from collections.abc import Iterator


def http_answer(body: bytes, status: str = "200 OK",
                content_type: str = "application/json") -> bytes:
    """A whole HTTP/1.1 answer carrying `body` (the connection closes after it)."""
    head = (f"HTTP/1.1 {status}\r\nContent-Type: {content_type}\r\n"
            f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n")
    return head.encode() + body


def prometheus_success(data: object) -> bytes:
    return http_answer(json.dumps({"status": "success", "data": data}).encode())


def deep_json(depth: int) -> bytes:
    """A success answer whose `data` is `depth` nested lists (100k: past any recursion limit)."""
    return http_answer(b'{"status": "success", "data": ' + b"[" * depth + b"]" * depth + b"}")


@contextlib.contextmanager
def scripted_server(answer: bytes, trickle_from: int | None = None, every_s: float = 0.3,
                    max_s: float = 30.0) -> Iterator[str]:
    """Serve `answer` (raw bytes) to every connection after reading its request head; from
    byte `trickle_from` on, one byte every `every_s` seconds (at most `max_s` seconds per
    connection). Yields the base URL; the server stops when the block ends."""

    class Handler(socketserver.BaseRequestHandler):
        def handle(self) -> None:
            self.request.settimeout(5)
            with contextlib.suppress(OSError):
                if not _read_request(self.request):
                    return
                cut = len(answer) if trickle_from is None else trickle_from
                self.request.sendall(answer[:cut])
                began = time.monotonic()
                for i in range(cut, len(answer)):
                    if time.monotonic() - began > max_s:
                        return
                    time.sleep(every_s)
                    self.request.sendall(answer[i:i + 1])
                # Close only once the client has: unread bytes make close() send a reset that
                # can overtake the answer.
                self.request.shutdown(socket.SHUT_WR)
                while self.request.recv(65536):
                    pass

    class Server(socketserver.ThreadingTCPServer):
        daemon_threads = True
        allow_reuse_address = True

    server = Server(("127.0.0.1", 0), Handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()



def _read_request(sock: socket.socket) -> bool:
    """Read one request (head and a Content-Length body); False when the client went away."""
    seen = b""
    while b"\r\n\r\n" not in seen:
        chunk = sock.recv(65536)
        if not chunk or len(seen) > 1 << 20:
            return False
        seen += chunk
    head, _, body = seen.partition(b"\r\n\r\n")
    length = re.search(rb"(?im)^content-length:\s*(\d+)", head)
    want = int(length.group(1)) if length else 0
    while len(body) < want:
        chunk = sock.recv(65536)
        if not chunk:
            return False
        body += chunk
    return True


class Tricklers:
    """`count` clients that each connect to 127.0.0.1:`port` (TLS when `tls`, no client
    certificate, no password), send a request line and then one header line every `every_s`
    seconds, never finishing the head; when the server closes one it reconnects after
    `reconnect_s`. Each thread stops on `stop()` or after `max_s` seconds. `opened` counts
    connections made, `closed` those the server ended."""

    def __init__(self, port: int, count: int, every_s: float = 2.0, tls: bool = False,
                 reconnect_s: float = 0.2, max_s: float = 60.0) -> None:
        self.port, self.every_s, self.tls, self.reconnect_s = port, every_s, tls, reconnect_s
        self.max_s = max_s
        self.opened = self.closed = 0
        self._lock = threading.Lock()
        self._stop = threading.Event()
        self._open: set[socket.socket] = set()
        self._threads = [threading.Thread(target=self._run, daemon=True) for _ in range(count)]
        self._tls = None
        if tls:  # one client context for all: loading CA bundles per connect costs the GIL
            import ssl

            self._tls = ssl.SSLContext(ssl.PROTOCOL_TLS_CLIENT)
            self._tls.check_hostname, self._tls.verify_mode = False, ssl.CERT_NONE

    def __enter__(self) -> Tricklers:
        for thread in self._threads:
            thread.start()
        return self

    def __exit__(self, *exc) -> None:
        self._stop.set()
        with self._lock:
            for sock in self._open:  # wake every thread blocked in a send or a handshake
                with contextlib.suppress(OSError):
                    socket.socket.shutdown(sock, socket.SHUT_RDWR)
        ends = time.monotonic() + 10
        for thread in self._threads:
            thread.join(timeout=max(0.0, ends - time.monotonic()))

    def _connect(self) -> socket.socket:
        sock = socket.create_connection(("127.0.0.1", self.port), timeout=10)
        with self._lock:
            self._open.add(sock)
        if self._tls is not None:
            try:
                tls = self._tls.wrap_socket(sock)
            except OSError:
                self._forget(sock)
                sock.close()
                raise
            self._forget(sock)
            with self._lock:
                self._open.add(tls)
            return tls
        return sock

    def _forget(self, sock: socket.socket) -> None:
        with self._lock:
            self._open.discard(sock)

    def _run(self) -> None:
        ends = time.monotonic() + self.max_s
        while not self._stop.is_set() and time.monotonic() < ends:
            try:
                sock = self._connect()
            except OSError:
                self._stop.wait(self.reconnect_s)
                continue
            with self._lock:
                self.opened += 1
            try:
                sock.sendall(b"GET /metrics HTTP/1.1\r\nHost: x\r\n")
                n = 0
                while not self._stop.wait(self.every_s) and time.monotonic() < ends:
                    n += 1
                    sock.sendall(f"X-Trickle-{n}: {'a' * 8}\r\n".encode())
            except OSError:
                with self._lock:
                    self.closed += 1
            finally:
                self._forget(sock)
                with contextlib.suppress(OSError):
                    sock.close()
            self._stop.wait(self.reconnect_s)
