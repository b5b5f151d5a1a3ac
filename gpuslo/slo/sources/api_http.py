"""The HTTP edge of the query API client (`gpuslo.slo.sources.query_api`): one request under a
wall-clock deadline and a byte cap, and the answer's shape checked before anything reads it.

Deadline. `requests`' `timeout` bounds each socket operation, not the request: a server that
trickles a byte every few seconds (in its status line, its headers or its body) keeps a request
alive for ever. `deadline_session(retries)` builds a session whose connections report themselves
to the request running in their thread; `fetch` arms a timer for `timeout_s` and, when it
fires, shuts the socket down (a `recv` blocked in another thread then returns), so every request
ends within `timeout_s` plus the time to tear it down. Retries (urllib3 `Retry`: connection
errors, read errors, 500/502/503/504) happen inside the same deadline; once it has passed no
retry starts and no backoff sleeps past it. A caller's own session keeps only the checks between
body reads.

Byte cap. The body is read as it arrives (`read1`, decoded) and refused past `max_bytes`, a
declared `Content-Length` above it before reading anything.

Shape (Prometheus HTTP API, https://prometheus.io/docs/prometheus/latest/querying/api/): the
answer is an object with `status`; on success its `data` is, for `/api/v1/query` and
`/api/v1/query_range`, an object with `resultType` (`vector`: entries `{"metric": {..},
"value": [t, "v"]}`; `matrix`: `{"metric": {..}, "values": [[t, "v"], ...]}`) and `result`;
for `/api/v1/series` a list of label objects; for `/api/v1/label/<name>/values` a list of
strings. Label names and values are strings, `t` a finite number, `v` a string that is a float
(`NaN` and `+Inf` included). Anything else raises `AnswerError` naming the first place that
is wrong; JSON nested past the parser's recursion limit is "not JSON".
"""

from __future__ import annotations

import contextlib
import json
import logging
import math
import socket
import threading
import time

import requests
import urllib3
from requests.adapters import HTTPAdapter
from urllib3.connectionpool import HTTPConnectionPool, HTTPSConnectionPool
from urllib3.exceptions import MaxRetryError
from urllib3.util.retry import Retry

from gpuslo.errors import InputError

DEFAULT_MAX_BYTES = 256 * 1024 * 1024  # a 10k-GPU week is 17.5 MB over ~930 answers
CHUNK_BYTES = 256 * 1024
_current = threading.local()  # the Deadline of the request running in this thread


class AnswerError(ValueError):
    """An answer that does not have the shape of the Prometheus HTTP API (message: where)."""


class Deadline:
    """A request's wall-clock deadline: `watch(conn)` registers a connection (its socket is shut
    down when the deadline fires, at once if it already has)."""

    def __init__(self, seconds: float) -> None:
        self.at = time.monotonic() + seconds
        self.fired = False
        self._connections: list = []
        self._lock = threading.Lock()
        self._timer = threading.Timer(seconds, self.fire)
        self._timer.daemon = True

    def __enter__(self) -> Deadline:
        _current.deadline = self
        self._timer.start()
        return self

    def __exit__(self, *exc) -> None:
        self._timer.cancel()
        _current.deadline = None

    def left(self) -> float:
        return self.at - time.monotonic()

    def watch(self, connection) -> None:
        with self._lock:
            self._connections.append(connection)
            fired = self.fired
        if fired:
            _cut(connection)

    def fire(self) -> None:
        with self._lock:
            self.fired = True
            connections = list(self._connections)
        for connection in connections:
            _cut(connection)


def _cut(connection) -> None:
    """Shut the connection's socket down (the TCP one under TLS too): a blocked recv returns."""
    for sock in (getattr(connection, "sock", None), getattr(connection, "_gpuslo_raw", None)):
        if sock is not None:
            with contextlib.suppress(OSError):
                socket.socket.shutdown(sock, socket.SHUT_RDWR)


def _watched(base: type) -> type:
    class Watched(base):
        def _new_conn(self):  # the TCP socket, before any TLS handshake on it
            deadline = getattr(_current, "deadline", None)
            sock = super()._new_conn()
            self._gpuslo_raw = sock
            if deadline is not None:
                deadline.watch(self)
            return sock

        def request(self, *args, **kwargs):  # a kept-alive connection serving a new request
            deadline = getattr(_current, "deadline", None)
            if deadline is not None:
                deadline.watch(self)
            return super().request(*args, **kwargs)

    Watched.__name__ = f"Watched{base.__name__}"
    return Watched


class _HTTPPool(HTTPConnectionPool):
    ConnectionCls = _watched(HTTPConnectionPool.ConnectionCls)


class _HTTPSPool(HTTPSConnectionPool):
    ConnectionCls = _watched(HTTPSConnectionPool.ConnectionCls)


class _DeadlineRetry(Retry):
    """urllib3's Retry that neither retries nor sleeps past the running request's deadline."""

    def increment(self, *args, **kwargs):
        deadline = getattr(_current, "deadline", None)
        if deadline is not None and deadline.left() <= 0:
            raise MaxRetryError(kwargs.get("_pool"), kwargs.get("url", ""),
                                kwargs.get("error") or "deadline passed")
        return super().increment(*args, **kwargs)

    def get_backoff_time(self) -> float:
        deadline = getattr(_current, "deadline", None)
        wait = super().get_backoff_time()
        return wait if deadline is None else max(0.0, min(wait, deadline.left()))


class _Adapter(HTTPAdapter):
    def init_poolmanager(self, *args, **kwargs) -> None:
        super().init_poolmanager(*args, **kwargs)
        self.poolmanager.pool_classes_by_scheme = {"http": _HTTPPool, "https": _HTTPSPool}

    def proxy_manager_for(self, *args, **kwargs):
        manager = super().proxy_manager_for(*args, **kwargs)
        manager.pool_classes_by_scheme = {"http": _HTTPPool, "https": _HTTPSPool}
        return manager


def _not_after_a_cut(record: logging.LogRecord) -> bool:
    """urllib3 logs "Failed to parse headers" with a traceback for a head the deadline cut
    short; that request ends in its own one-line error, so the log record is dropped."""
    deadline = getattr(_current, "deadline", None)
    return deadline is None or not deadline.fired


def deadline_session(retries: int) -> requests.Session:
    """A session whose requests `fetch` can cut at their deadline, retrying connection errors,
    read errors and 500/502/503/504 `retries` times with exponential backoff (0.5 s base)."""
    logging.getLogger("urllib3.connection").addFilter(_not_after_a_cut)  # added once
    retry = _DeadlineRetry(total=retries, connect=retries, read=retries, status=retries,
                           backoff_factor=0.5, status_forcelist=(500, 502, 503, 504),
                           allowed_methods=None, raise_on_status=False)
    session = requests.Session()
    session.mount("http://", _Adapter(max_retries=retry))
    session.mount("https://", _Adapter(max_retries=retry))
    return session


def fetch(session: requests.Session, method: str, url: str, params: dict, timeout_s: float,
          max_bytes: int, what: str) -> tuple[int, bytes]:
    """(HTTP status, body bytes) of one request, ended within `timeout_s` seconds of wall clock
    (see the module docstring) and refused past `max_bytes`. Raises InputError naming `url` and
    `what`: failed, the deadline passed, or the answer over the cap."""
    with Deadline(timeout_s) as deadline:
        try:
            if method == "POST":
                response = session.post(url, data=params, timeout=timeout_s, stream=True)
            else:
                response = session.get(url, params=params, timeout=timeout_s, stream=True)
            with response:
                body = _read(response, deadline, max_bytes)
        except (requests.RequestException, urllib3.exceptions.HTTPError, OSError) as error:
            if deadline.fired or deadline.left() <= 0:
                raise _late(url, what, timeout_s) from None
            raise InputError(url, f"{what} failed: {_short(error)}") from None
        except _TooLarge:
            raise InputError(url, f"{what}: answer over the {max_bytes:,}-byte cap; not read "
                                  "further") from None
    if deadline.fired:
        raise _late(url, what, timeout_s)
    return response.status_code, body


class _TooLarge(Exception):
    pass


def _read(response: requests.Response, deadline: Deadline, max_bytes: int) -> bytes:
    declared = response.headers.get("Content-Length", "")
    if declared.isascii() and declared.isdigit() and int(declared) > max_bytes:
        raise _TooLarge
    body = bytearray()
    while chunk := response.raw.read1(CHUNK_BYTES, decode_content=True):
        body += chunk
        if len(body) > max_bytes:
            raise _TooLarge
        if deadline.left() <= 0:
            deadline.fire()
            break
    return bytes(body)


def _late(url: str, what: str, timeout_s: float) -> InputError:
    return InputError(url, f"{what}: no complete answer within the {timeout_s:g} s deadline "
                           "(--timeout)")


def _short(error: BaseException) -> str:
    text = " ".join(str(error).split())
    return text if len(text) <= 300 else text[:300] + "..."


# --- the answer's shape -------------------------------------------------------------------------


def parse_answer(status: int, body: bytes) -> object:
    """The `data` of a successful answer. Raises AnswerError: not JSON (nesting past the
    recursion limit included), not an object, or `status` not "success" (the server's
    errorType and error in the message)."""
    try:
        answer = json.loads(body)
    except (ValueError, RecursionError):
        raise AnswerError(f"HTTP {status}, not JSON") from None
    if not isinstance(answer, dict):
        raise AnswerError(f"HTTP {status}: the answer is {_kind(answer)}, not an object")
    if answer.get("status") != "success":
        kind, text = answer.get("errorType", "error"), answer.get("error", "")
        detail = text if isinstance(text, str) and text else json.dumps(answer)[:300]
        raise AnswerError(f"{_short(str(kind))}: {_short(detail)}")
    if "data" not in answer:
        raise AnswerError("a success without `data`")
    return answer["data"]


def check_result(data: object, kind: str) -> list[dict]:
    """`data.result` of a query answer whose resultType is `kind` ("vector" or "matrix"), every
    entry checked (see the module docstring). Raises AnswerError."""
    if not isinstance(data, dict):
        raise AnswerError(f"`data` is {_kind(data)}, not an object")
    if data.get("resultType") != kind:
        raise AnswerError(f"`data.resultType` is {_short(repr(data.get('resultType')))}, "
                          f"not {kind!r}")
    result = data.get("result")
    if not isinstance(result, list):
        raise AnswerError(f"`data.result` is {_kind(result)}, not a list")
    key = "value" if kind == "vector" else "values"
    for i, series in enumerate(result):
        where = f"`data.result[{i}]`"
        if not isinstance(series, dict):
            raise AnswerError(f"{where} is {_kind(series)}, not an object")
        _check_labels(series.get("metric"), f"{where}.metric")
        if kind == "vector":
            _check_point(series.get(key), f"{where}.value")
        else:
            points = series.get(key)
            if not isinstance(points, list):
                raise AnswerError(f"{where}.values is {_kind(points)}, not a list")
            for j, point in enumerate(points):
                _check_point(point, f"{where}.values[{j}]")
    return result


def check_series(data: object) -> list[dict]:
    """`/api/v1/series` data: a list of label objects. Raises AnswerError."""
    if not isinstance(data, list):
        raise AnswerError(f"`data` is {_kind(data)}, not a list of label sets")
    for i, labels in enumerate(data):
        _check_labels(labels, f"`data[{i}]`")
    return data


def check_strings(data: object) -> list[str]:
    """`/api/v1/label/<name>/values` data: a list of strings. Raises AnswerError."""
    if not isinstance(data, list):
        raise AnswerError(f"`data` is {_kind(data)}, not a list of label values")
    for i, value in enumerate(data):
        if not isinstance(value, str):
            raise AnswerError(f"`data[{i}]` is {_kind(value)}, not a string")
    return data


def _check_labels(labels: object, where: str) -> None:
    if not isinstance(labels, dict):
        raise AnswerError(f"{where} is {_kind(labels)}, not an object of labels")
    for name, value in labels.items():
        if not isinstance(value, str):
            raise AnswerError(f"{where}[{_short(repr(name))}] is {_kind(value)}, not a string")


def _check_point(point: object, where: str) -> None:
    if not isinstance(point, list) or len(point) != 2:
        raise AnswerError(f"{where} is {_kind(point)}, not a [time, \"value\"] pair")
    stamp, value = point
    if type(stamp) not in (int, float) or not math.isfinite(stamp):
        raise AnswerError(f"{where}: the time is {_kind(stamp)}, not a finite number")
    if not isinstance(value, str):
        raise AnswerError(f"{where}: the value is {_kind(value)}, not a string")
    try:
        float(value)
    except ValueError:
        raise AnswerError(f"{where}: the value {_short(repr(value))} is not a number") from None


def _kind(value: object) -> str:
    """JSON's name for what `value` is: "a list", "a string", "null", ..."""
    if value is None:
        return "null"
    names = {bool: "a boolean", int: "a number", float: "a number", str: "a string",
             list: "a list", dict: "an object"}
    return names.get(type(value), type(value).__name__)
