"""A hostile Prometheus (issue 25 #3, #4): a server that trickles its answer a byte at a time
cannot hold a request past its wall-clock deadline, an answer past the byte cap is refused, and
every malformed answer is one InputError naming what was wrong — `gpuslo report` exits 2 with
one line, never a traceback."""

from __future__ import annotations

import time

import pandas as pd
import pytest
from hostile_peers import deep_json, http_answer, prometheus_success, scripted_server

from gpuslo.cli import main
from gpuslo.errors import InputError
from gpuslo.slo.sources.query_api import QueryApi

AT = pd.Timestamp("2026-11-23", tz="UTC")
EMPTY = prometheus_success({"resultType": "vector", "result": []})


@pytest.mark.parametrize("trickle_from", [
    9,  # inside the status line
    len(EMPTY) - len(b"[]}}"),  # inside the body
    EMPTY.index(b"\r\n") + 2,  # inside the headers
])
def test_a_trickling_server_ends_the_request_at_its_deadline(trickle_from):
    """A byte every 0.3 s: each recv succeeds well within the 1 s timeout, so only a deadline
    for the whole request ends it; 3 retries are allowed and none may outlive it."""
    with scripted_server(EMPTY, trickle_from=trickle_from, every_s=0.3) as url:
        api = QueryApi(url, timeout_s=1.0, retries=3)
        began = time.monotonic()
        with pytest.raises(InputError, match=r"no complete answer within the 1 s deadline"):
            api.instant("up", AT)
        assert time.monotonic() - began < 2.5


def test_an_answer_over_the_byte_cap_is_refused():
    big = prometheus_success({"resultType": "vector", "result": [
        {"metric": {"instance": "x" * 1000}, "value": [1, "1"]}] * 200})
    with scripted_server(big) as url:
        with pytest.raises(InputError, match="over the 100,000-byte cap"):
            QueryApi(url, timeout_s=5, max_bytes=100_000).instant("up", AT)
        assert len(QueryApi(url, timeout_s=5).instant("up", AT)) == 200


def _vector(*entries) -> bytes:
    return prometheus_success({"resultType": "vector", "result": list(entries)})


MALFORMED = {
    "a JSON list": (http_answer(b"[1, 2]"), "the answer is a list, not an object"),
    "not JSON": (http_answer(b"<html>"), "HTTP 200, not JSON"),
    "no data": (http_answer(b'{"status": "success"}'), "a success without `data`"),
    "string data": (prometheus_success("nope"), "`data` is a string, not an object"),
    "no result": (prometheus_success({"resultType": "vector"}),
                  "`data.result` is null, not a list"),
    "a matrix for a vector": (prometheus_success({"resultType": "matrix", "result": []}),
                              "`data.resultType` is 'matrix', not 'vector'"),
    "an entry that is a number": (_vector(7), r"`data.result\[0\]` is a number"),
    "labels that are a list": (_vector({"metric": [], "value": [1, "1"]}),
                               r"`data.result\[0\]`.metric is a list"),
    "a label that is a number": (_vector({"metric": {"a": 1}, "value": [1, "1"]}),
                                 r"metric\['a'\] is a number, not a string"),
    "no value": (_vector({"metric": {}}), r"`data.result\[0\]`.value is null"),
    "a value of three": (_vector({"metric": {}, "value": [1, "1", 2]}),
                         r"is a list, not a \[time, \"value\"\] pair"),
    "a string time": (_vector({"metric": {}, "value": ["1", "1"]}),
                      "the time is a string, not a finite number"),
    "a number value": (_vector({"metric": {}, "value": [1, 1]}),
                       "the value is a number, not a string"),
    "a word value": (_vector({"metric": {}, "value": [1, "lots"]}),
                     "the value 'lots' is not a number"),
    "100k-deep nesting": (deep_json(100_000), "not JSON"),
    "an error without text": (http_answer(b'{"status": "error", "error": 5}'), "error: "),
}


@pytest.mark.parametrize("name", sorted(MALFORMED))
def test_a_malformed_answer_is_an_input_error_naming_what_is_wrong(name):
    answer, expected = MALFORMED[name]
    with scripted_server(answer) as url, pytest.raises(InputError, match=expected):
        QueryApi(url, timeout_s=5, retries=0).instant("up", AT)


@pytest.mark.parametrize("method, answer, expected", [
    ("series", prometheus_success({"a": "b"}), "not a list of label sets"),
    ("series", prometheus_success([{"a": ["b"]}]), r"`data\[0\]`\['a'\] is a list"),
    ("label_values", prometheus_success([1]), r"`data\[0\]` is a number, not a string"),
    ("range", prometheus_success({"resultType": "matrix", "result": [
        {"metric": {}, "values": [[1, "1"], [2]]}]}), r"values\[1\] is a list, not a"),
])
def test_series_labels_and_ranges_are_checked_too(method, answer, expected):
    with scripted_server(answer) as url:
        api = QueryApi(url, timeout_s=5, retries=0)
        call = {"series": lambda: api.series("up", AT, AT),
                "label_values": lambda: api.label_values("instance", "up", AT, AT),
                "range": lambda: api.range("up", AT, AT, 60)}[method]
        with pytest.raises(InputError, match=expected):
            call()


@pytest.mark.parametrize("answer, trickle_from", [
    (http_answer(b"[]"), None),
    (deep_json(100_000), None),
    (EMPTY, 20),
])
def test_report_against_a_hostile_prometheus_exits_2_with_one_line(answer, trickle_from,
                                                                   tmp_path, capsys):
    """The trickling one ends within 6 x its 1 s timeout."""
    with scripted_server(answer, trickle_from=trickle_from, every_s=0.3) as url:
        began = time.monotonic()
        code = main(["report", "--prometheus", url, "--timeout", "1", "--start", "2026-11-23",
                     "--end", "2026-11-24", "--out", str(tmp_path / "r")])
        elapsed = time.monotonic() - began
    err = capsys.readouterr().err
    assert code == 2 and elapsed < 6, (code, elapsed)
    assert len(err.strip().splitlines()) == 1 and "Traceback" not in err, err
    assert err.startswith(f"gpuslo report: error: {url}/api/v1/")
    assert not (tmp_path / "r").exists()
