"""`read_dcgm_page` against a real HTTP server on loopback (tests/fixtures/dcgm/loopback_server.py)
that serves recorded pages, hangs, answers 500, truncates, trickles and floods: every broken answer
fails closed within the deadline."""

from __future__ import annotations

import socket
import time

import pytest
from conftest import CORPUS
from fixtures.dcgm.loopback_server import dcgm_server

from gpuslo.errors import DeadlineExceeded, DependencyMissing, ToolError
from gpuslo.exporter.evidence.dcgm.http import read_dcgm_page
from gpuslo.exporter.evidence.dcgm.page import parse_dcgm_page

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
        ("/hang", DeadlineExceeded, "deadline of 1 s"),
        ("/hang-body", DeadlineExceeded, "deadline of 1 s"),
        ("/500", ToolError, "HTTP 500"),
        ("/truncate", ToolError, "transfer failed"),
        ("/huge", ToolError, "byte cap"),
        ("/huge-stream", ToolError, "byte cap"),
        ("/trickle", DeadlineExceeded, "deadline of 1 s"),
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
