"""A client of the Prometheus HTTP query API that keeps every request under a sample budget.

Prometheus, Thanos Query, Mimir and VictoriaMetrics serve the same `/api/v1/query`,
`/api/v1/query_range`, `/api/v1/series` and `/api/v1/label/<name>/values`; this client uses
only those, by POST (a shard's matcher can be long; label values by GET, the only method Prometheus
serves there). Each server bounds what one query may load:
Prometheus `--query.max-samples` (5e7 by default), Mimir `-querier.max-samples`, Thanos the
same flag on its queriers, VictoriaMetrics `-search.maxSamplesPerQuery` (1e9) and
`-search.maxUniqueTimeseries`; a range query also holds at most 11,000 points per series. A range
query over a selector materialises every series at every step (series × steps × terms samples at
once), so `QueryApi.sharded_ranges` splits it by series — shards of `instance` values — and, only
when one instance alone is too large, by time, so that series × steps × terms ≤ `max_samples`.

Each request ends within `timeout_s` seconds of wall clock, retries included, and its answer
is refused past `max_bytes` (`gpuslo.slo.sources.api_http`: a server that trickles bytes cannot
hold the report); connection errors, read errors and HTTP 500/502/503/504 are retried `retries`
times with exponential backoff inside that deadline; other errors (422: the query was refused,
400: bad query) are not. Every answer's shape is checked before it is read (a JSON list, a
missing `data`, an odd `result` entry, a value that is not a number). A tqdm progress bar goes
to stderr when it is a terminal (`progress`). Errors raise InputError naming the URL and the
query (and, for a malformed answer, the first place that is wrong). `bytes_received`
counts the response bytes and `timings` holds (what, seconds, bytes) per request (for the
benchmarks). `scope` (label → value, e.g. `{"cluster": "a"}`) confines every query and series
match to one cluster of a global store (`gpuslo.slo.sources.scope`).
"""

from __future__ import annotations

import re
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass

import numpy as np
import pandas as pd
import requests
from tqdm import tqdm

from gpuslo.errors import InputError
from gpuslo.slo.sources.api_http import (
    DEFAULT_MAX_BYTES,
    AnswerError,
    check_result,
    check_series,
    check_strings,
    deadline_session,
    fetch,
    parse_answer,
)
from gpuslo.slo.sources.limits import DEFAULT_MAX_SAMPLES, DEFAULT_TIMEOUT_S
from gpuslo.slo.sources.scope import scoped

DEFAULT_RETRIES = 3
MAX_POINTS = 11_000  # Prometheus: points per series in one range query
# Bytes of one shard's `label=~"..."` alternation: VictoriaMetrics refuses a query longer than
# -search.maxQueryLen (16,384 bytes by default) and some queries repeat the matcher 4 times.
MAX_MATCHER_BYTES = 3_000


def alternation(values: list[str]) -> str:
    """A PromQL regex string literal body matching exactly `values` (RE2, anchored by PromQL)."""
    return "|".join(re.escape(v).replace("\\", "\\\\") for v in values)


def groups(values: list[str], most: int, max_bytes: int = MAX_MATCHER_BYTES) -> list[list[str]]:
    """`values` in order, cut into groups of at most `most` values whose `alternation` stays
    within `max_bytes` (a single longer value makes a group of its own). Pure."""
    out: list[list[str]] = []
    group: list[str] = []
    size = 0
    for value in values:
        length = len(alternation([value])) + 1
        if group and (len(group) >= most or size + length > max_bytes):
            out.append(group)
            group, size = [], 0
        group.append(value)
        size += length
    if group:
        out.append(group)
    return out


@dataclass(frozen=True)
class Piece:
    """One request of a split range query: the instances of its shard and its time range."""

    instances: tuple[str, ...]
    start: pd.Timestamp
    end: pd.Timestamp  # last step (inclusive)


def plan(instances: list[str], per_instance: int, terms: int, start: pd.Timestamp,
         end: pd.Timestamp, step_s: int, max_samples: int) -> list[Piece]:
    """Pieces covering the steps start, start + step, ... < end for every instance, each at most
    `max_samples` (series × steps × terms) and MAX_POINTS steps, each shard's matcher within
    MAX_MATCHER_BYTES (`groups`). Pure."""
    steps = max(int(np.ceil((end - start).total_seconds() / step_s)), 1)
    cost = max(per_instance * terms, 1)
    chunk = max(1, min(MAX_POINTS, steps, max_samples // cost))
    shard = max(1, max_samples // (cost * chunk))
    pieces = []
    for members in groups(instances, shard):
        group = tuple(members)
        for first in range(0, steps, chunk):
            last = min(first + chunk, steps) - 1
            pieces.append(Piece(group, start + pd.Timedelta(seconds=first * step_s),
                                start + pd.Timedelta(seconds=last * step_s)))
    return pieces


class QueryApi:
    """The query API at `url` (see the module docstring for limits, retries and errors)."""

    def __init__(self, url: str, session: requests.Session | None = None,
                 timeout_s: float = DEFAULT_TIMEOUT_S, retries: int = DEFAULT_RETRIES,
                 max_samples: int = DEFAULT_MAX_SAMPLES, progress: bool | None = None,
                 workers: int = 2, max_bytes: int = DEFAULT_MAX_BYTES,
                 scope: dict[str, str] | None = None) -> None:
        self.url = url.rstrip("/")
        self.scope = dict(scope or {})
        self.session = session or deadline_session(retries)
        self.timeout_s, self.max_samples, self.workers = timeout_s, max_samples, workers
        self.max_bytes = max_bytes
        self.progress = sys.stderr.isatty() if progress is None else progress
        self.bytes_received = 0
        self.requests = 0
        self.timings: list[tuple[str, float, int]] = []

    def _post(self, path: str, params: dict, what: str, check, method: str = "POST"):
        """`check(data)` of the answer to one request (see the module docstring)."""
        if self.scope:
            params = {key: scoped(value, self.scope) if key in ("query", "match[]") else value
                      for key, value in params.items()}
        began, url = time.perf_counter(), f"{self.url}{path}"
        status, body = fetch(self.session, method, url, params, self.timeout_s, self.max_bytes,
                             what)
        self.bytes_received += len(body)
        self.requests += 1
        self.timings.append((what, time.perf_counter() - began, len(body)))
        try:
            return check(parse_answer(status, body))
        except AnswerError as error:
            raise InputError(url, f"{what}: {error}") from None

    def instant(self, query: str, at: pd.Timestamp, kind: str = "vector") -> list[dict]:
        """`/api/v1/query` at `at`: [{"metric": {...}, "value": [t, "v"]}, ...] (`kind`
        "matrix" for a range selector: "values" [[t, "v"], ...])."""
        return self._post("/api/v1/query", {"query": query, "time": _unix(at)},
                          f"query {query!r}", lambda data: check_result(data, kind))

    def label_values(self, label: str, match: str, start: pd.Timestamp,
                     end: pd.Timestamp) -> list[str]:
        """Values of `label` on the series matching `match` in [start, end] (index only)."""
        data = self._post(f"/api/v1/label/{label}/values",  # GET only in Prometheus
                          {"match[]": match, "start": _unix(start), "end": _unix(end)},
                          f"label values of {label} for {match!r}", check_strings, method="GET")
        return sorted(data)

    def series(self, match: str, start: pd.Timestamp, end: pd.Timestamp) -> list[dict]:
        """Label sets of the series matching `match` in [start, end] (index only)."""
        return self._post("/api/v1/series",
                          {"match[]": match, "start": _unix(start), "end": _unix(end)},
                          f"series {match!r}", check_series)

    def range(self, query: str, start: pd.Timestamp, last: pd.Timestamp,
              step_s: int) -> pd.DataFrame:
        """One `/api/v1/query_range` from `start` to `last` inclusive: a tidy frame, one row per
        point, the series' labels as columns, `time` (datetime64[ns, UTC]), `value` (float64)."""
        result = self._post("/api/v1/query_range", {"query": query, "start": _unix(start),
                                                    "end": _unix(last), "step": step_s},
                            f"query {query!r}", lambda data: check_result(data, "matrix"))
        return tidy(result, "values")

    def sharded_ranges(self, query, cells: list[tuple[tuple[str, ...], pd.Timestamp,
                                                      pd.Timestamp]],
                       per_instance: int, terms: int, step_s: int, desc: str,
                       label: str = "instance") -> pd.DataFrame:
        """`query(matcher)` (a function of the matcher text, e.g. `instance=~"a|b"`, on
        `label`) over several cells at once — (instances, start, end) each, the steps in
        [start, end) of those instances — every cell split by `plan` and all the pieces run in
        one pool; the points concatenated (see `range`)."""
        pieces = [piece for instances, start, end in cells
                  for piece in plan(list(instances), per_instance, terms, start, end, step_s,
                                    self.max_samples)]

        def run(piece: Piece) -> pd.DataFrame:
            matcher = f'{label}=~"{alternation(list(piece.instances))}"'
            return self.range(query(matcher), piece.start, piece.end, step_s)

        return concat(self._map(run, pieces, desc))

    def sharded_instant(self, query, instances: list[str], per_instance: int, points: int,
                        at: pd.Timestamp, desc: str, label: str = "instance") -> pd.DataFrame:
        """`query(matcher)` at `at`, sharded so each shard loads ≤ max_samples
        (per_instance × points samples per instance); results as `tidy`."""
        return self.sharded_instants(lambda m, _at: query(m), instances, per_instance, points,
                                     [at], desc, label)

    def sharded_instants(self, query, instances: list[str], per_instance: int, points: int,
                         times: list[pd.Timestamp], desc: str,
                         label: str = "instance") -> pd.DataFrame:
        """`query(matcher, at)` at each of `times`, sharded as `sharded_instant`, all requests
        in one pool; results as `tidy` (each point's `time` is its evaluation time)."""
        shard = max(1, self.max_samples // max(per_instance * points, 1))
        items = [(group, at) for at in times for group in groups(instances, shard)]

        def run(item: tuple[list[str], pd.Timestamp]) -> pd.DataFrame:
            group, at = item
            matcher = f'{label}=~"{alternation(group)}"'
            return tidy(self.instant(query(matcher, at), at), "value")

        return concat(self._map(run, items, desc))

    def each(self, run, items: list, desc: str) -> list:
        """`run(item)` for every item, `workers` requests at a time, the results in order."""
        return self._map(run, items, desc)

    def _map(self, run, items: list, desc: str) -> list:
        bar = tqdm(total=len(items), desc=desc, unit="query", file=sys.stderr,
                   disable=not self.progress or len(items) < 2)
        out = []
        with ThreadPoolExecutor(max_workers=max(self.workers, 1)) as pool:
            for result in pool.map(run, items):
                out.append(result)
                bar.update()
        bar.close()
        return out


def _unix(stamp: pd.Timestamp) -> str:
    return f"{stamp.value / 1e9:.3f}"


def tidy(result: list[dict], key: str) -> pd.DataFrame:
    """API `result` as one row per point: label columns, `time`, `value` (see QueryApi.range);
    `key` is "values" (matrix) or "value" (vector). One frame built from columns, not one per
    series (a vector of a thousand series is a thousand rows, not a thousand frames to join);
    a label a series lacks is NaN."""
    kept = [(series["metric"], series[key] if key == "values" else [series[key]])
            for series in result]
    kept = [(metric, points) for metric, points in kept if points]
    if not kept:
        return concat([])
    sizes = np.fromiter((len(points) for _, points in kept), dtype=np.int64, count=len(kept))
    names = list(dict.fromkeys(name for metric, _ in kept for name in metric))
    columns = {name: np.repeat(np.array([metric.get(name, np.nan) for metric, _ in kept],
                                        dtype=object), sizes) for name in names}
    flat = [point for _, points in kept for point in points]
    columns["time"] = np.fromiter((float(t) for t, _ in flat), dtype=float, count=len(flat))
    columns["value"] = np.fromiter((float(v) for _, v in flat), dtype=float, count=len(flat))
    return concat([pd.DataFrame(columns)])


def concat(frames: list[pd.DataFrame]) -> pd.DataFrame:
    """Points frames as one (times as datetime64[ns, UTC], to the millisecond)."""
    frames = [f for f in frames if len(f)]
    if not frames:
        return pd.DataFrame({"time": pd.Series([], dtype="datetime64[ns, UTC]"),
                             "value": pd.Series([], dtype="float64")})
    out = pd.concat(frames, ignore_index=True)
    if not isinstance(out["time"].dtype, pd.DatetimeTZDtype):
        out["time"] = pd.to_datetime(np.rint(out["time"] * 1000).astype("int64"), unit="ms",
                                     utc=True)
    return out
