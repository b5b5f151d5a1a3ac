"""Fetch a dcgm-exporter page over HTTP (the I/O edge of the `dcgm` check).

`requests` with a connect/read timeout, streaming with a byte cap so a runaway answer (50 MB) is
refused after `max_bytes` without being read whole, and an overall deadline so a server that
trickles bytes cannot hold the check past `timeout_s`. Failures map onto the check contract
(`gpuslo.exporter.checks.base`): a refused connection or an unresolvable host is
`DependencyMissing` (dcgm-exporter is not running there); a deadline that expires (connect, read,
the whole transfer) is `DeadlineExceeded` (`check_timeout`, the deadline in the message); an HTTP
error status, a cut connection or an oversized answer is `ToolError`.
"""

from __future__ import annotations

import time

import requests
import urllib3

from gpuslo.errors import DeadlineExceeded, DependencyMissing, ToolError

DEFAULT_MAX_BYTES = 16 * 1024 * 1024  # an 8-GPU page with every field is well under 1 MiB
CHUNK_BYTES = 64 * 1024


def _stream(
    response: requests.Response, url: str, max_bytes: int, deadline: float, timeout_s: float
) -> bytes:
    declared = response.headers.get("Content-Length", "")
    if declared.isascii() and declared.isdigit() and int(declared) > max_bytes:
        raise ToolError(f"{url}: answer of {int(declared)} bytes exceeds the {max_bytes}-byte cap")
    body = bytearray()
    # read1 returns what has arrived (at least one byte, or b"" at the end), so a server that
    # trickles bytes meets the deadline check after every read instead of filling a whole chunk.
    while chunk := response.raw.read1(CHUNK_BYTES, decode_content=True):
        body += chunk
        if len(body) > max_bytes:
            raise ToolError(f"{url}: answer exceeds the {max_bytes}-byte cap; not read further")
        if time.monotonic() > deadline:
            raise DeadlineExceeded(
                f"{url}: answer not complete within the deadline of {timeout_s:g} s"
            )
    return bytes(body)


def read_dcgm_page(
    url: str,
    timeout_s: float,
    max_bytes: int = DEFAULT_MAX_BYTES,
    session: requests.Session | None = None,
) -> str:
    """GET `url` and return the page text (UTF-8, undecodable bytes replaced).

    `timeout_s` (seconds) bounds the transfer: connecting and each read may take half of it, and
    reading stops once it has passed (a silent server is cut off within 1.5 x `timeout_s` in the
    worst case); `max_bytes` caps the body. Raises DependencyMissing (connection refused, unknown
    host), DeadlineExceeded (a deadline expired) or ToolError (HTTP status >= 400, truncated
    transfer, over the cap).
    """
    deadline = time.monotonic() + timeout_s
    http = session or requests.Session()
    try:
        response = _connect(http, url, timeout_s)
        with response:
            if response.status_code >= 400:
                raise ToolError(f"{url}: HTTP {response.status_code} {response.reason}")
            try:
                body = _stream(response, url, max_bytes, deadline, timeout_s)
            except (
                requests.exceptions.RequestException,
                urllib3.exceptions.HTTPError,
                OSError,
            ) as error:
                # A read that times out, or a connection cut before the declared length.
                if _is_timeout(error):
                    raise DeadlineExceeded(
                        f"{url}: body not complete within the deadline of {timeout_s:g} s"
                    ) from None
                raise ToolError(f"{url}: transfer failed ({_short(error)})") from None
    finally:
        if session is None:
            http.close()
    return body.decode("utf-8", errors="replace")


def _connect(http: requests.Session, url: str, timeout_s: float) -> requests.Response:
    try:
        # Each connect and each read may take half the budget: a server that goes silent part-way
        # is cut off by at most 1.5 x timeout_s.
        return http.get(url, timeout=(timeout_s / 2, timeout_s / 2), stream=True)
    except requests.exceptions.ConnectTimeout:
        raise DeadlineExceeded(
            f"{url}: connect not done within the deadline of {timeout_s:g} s"
        ) from None
    except requests.exceptions.Timeout:
        raise DeadlineExceeded(f"{url}: no answer within the deadline of {timeout_s:g} s") from None
    except requests.exceptions.ConnectionError as error:
        # Refused or unresolvable: nothing listens there. Anything else (the server accepted and
        # then hung up) is the tool failing.
        if any(name in str(error) for name in ("NewConnectionError", "NameResolutionError")):
            raise DependencyMissing(f"{url}: cannot connect ({_short(error)})") from None
        raise ToolError(f"{url}: connection failed ({_short(error)})") from None
    except requests.exceptions.RequestException as error:
        raise ToolError(f"{url}: {_short(error)}") from None


def _is_timeout(error: BaseException) -> bool:
    """True for a read that ran out of time, however requests/urllib3 wrapped it."""
    timeouts = (requests.exceptions.Timeout, urllib3.exceptions.TimeoutError, TimeoutError)
    while error is not None:
        if isinstance(error, timeouts) or "timed out" in str(error):
            return True
        error = error.__context__ or error.__cause__
    return False


def _short(error: Exception) -> str:
    text = str(error)
    return text if len(text) <= 200 else text[:200] + "..."
