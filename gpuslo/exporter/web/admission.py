"""Who gets in: the connection cap's choice (`make_room`, pure), the record of each open
connection (`Connection`), when one has taken too long (`overdue`, pure), and basic auth
(`Authenticator`, bcrypt).

At most `max_connections` connections are open; at the cap connections that are not being
answered are closed to admit a new one, so scrapes are still served: first those still sending
a request head (the oldest head first: a scraper sends its head in one segment, a trickler sits
there for seconds), then idle keep-alive ones (the oldest first: a scraper reconnects), then
those in the TLS handshake (the oldest first: the newest may be a scrape); when every
connection is busy the new one is refused. With `per_client`, one client address holds at most
that many connections (its own oldest waiting one makes room, else the new one is refused).

Deadlines are totals, not per `recv` (a client that trickles a byte every few seconds never
trips a per-read timeout): the TLS handshake must end `HANDSHAKE_TIMEOUT_S` after the
connection opened, and a request head (request line and headers) `HEAD_TIMEOUT_S` after its
first byte, or the connection is closed — before basic auth, which reads the finished head.
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import socket
import threading
from collections.abc import Iterable
from dataclasses import dataclass

import bcrypt

HANDSHAKE_TIMEOUT_S = 5.0
HEAD_TIMEOUT_S = 5.0  # Prometheus sends its whole request head in one segment
IDLE_TIMEOUT_S = 10.0
WAITING = ("head", "idle", "handshake")  # not being answered, in the order they make room
DEFAULT_MAX_CONNECTIONS = 256


@dataclass
class Connection:
    """One open connection: its socket, when it opened and was last active (monotonic seconds),
    its state (handshake -> idle -> head -> busy -> idle ...; evicted once closed for the cap or
    a deadline), when its current request head began (`head_since`), and the client address."""

    sock: socket.socket
    opened: float
    last_active: float
    state: str = "handshake"
    head_since: float = 0.0
    client: str = ""


def make_room(connections: Iterable[Connection], max_connections: int, client: str = "",
              per_client: int | None = None) -> tuple[list[Connection], bool]:
    """(the connections to evict, whether the new one is refused) for one more connection from
    `client`: the oldest waiting ones (`WAITING`) go first; refused when the busy ones alone fill
    the cap, or `client`'s busy ones fill `per_client`. Pure (the caller marks and closes)."""
    live = [c for c in connections if c.state != "evicted"]
    evict: list[Connection] = []
    if per_client is not None:
        own = [c for c in live if c.client == client]
        evict = _waiting(own)[: max(0, len(own) + 1 - per_client)]
        if len(own) - len(evict) >= per_client:
            return [], True
    rest = [c for c in live if c not in evict]
    evict += _waiting(rest)[: max(0, len(rest) + 1 - max_connections)]
    return evict, len(live) - len(evict) >= max_connections


def _waiting(connections: list[Connection]) -> list[Connection]:
    """The connections not being answered, in the order they make room (module docstring)."""
    waiting = [c for c in connections if c.state in WAITING]
    return sorted(waiting, key=lambda c: (WAITING.index(c.state), c.last_active))


def overdue(connection: Connection, now: float, handshake_s: float = HANDSHAKE_TIMEOUT_S,
            head_s: float = HEAD_TIMEOUT_S) -> bool:
    """True when `connection` is past a total deadline: its TLS handshake not done
    `handshake_s` after it opened, or its request head not read `head_s` after its first byte.
    Pure."""
    if connection.state == "handshake":
        return now - connection.opened > handshake_s
    return connection.state == "head" and now - connection.head_since > head_s


class Authenticator:
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
