"""Who gets in: the connection cap's choice (`make_room`, pure), the record of each open
connection (`Connection`), and basic auth (`Authenticator`, bcrypt).

At most `max_connections` connections are open; at the cap the oldest idle connections (waiting
for a request or still in the handshake) are closed to admit a new one, so scrapes are still
served; when every connection is busy the new one is refused.
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
IDLE_TIMEOUT_S = 10.0
DEFAULT_MAX_CONNECTIONS = 256


@dataclass
class Connection:
    """One open connection: its socket, when it opened and was last active (monotonic seconds),
    and its state (handshake -> idle <-> busy; evicted once the cap closed it)."""

    sock: socket.socket
    opened: float
    last_active: float
    state: str = "handshake"


def make_room(connections: Iterable[Connection],
              max_connections: int) -> tuple[list[Connection], bool]:
    """(the connections to evict, whether the new one is refused) for one more connection: the
    oldest idle or handshaking ones go first; refused when the busy ones alone fill the cap.
    Pure (the caller marks and closes)."""
    live = [c for c in connections if c.state != "evicted"]
    idle = sorted((c for c in live if c.state in ("handshake", "idle")),
                  key=lambda c: c.last_active)
    evict = idle[: max(0, len(live) + 1 - max_connections)]
    return evict, len(live) - len(evict) >= max_connections


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
