"""The locate-then-read machinery of the Prometheus source's sparse reads
(`gpuslo.slo.sources.sparse`, `listed`, `located`, `serving`, `recorded`): `Reader`, its `Cell`s
and `buckets`, and the helpers every read shares (`window_ms`, `samples_to_intervals`,
`label_column`).

Every per-step read uses a window of one step just under the step (`_ms`), so a sample at t
stands for [t, t + step) on closed (Prometheus 2) and half-open (VictoriaMetrics, Prometheus 3)
ranges alike, whatever the server's lookback delta.

Locate, then read: a range query costs the server series × steps whatever it returns (each step
is evaluated for every series it selects), while what these reads look for — gaps, non-healthy
verdicts, cordons — covers a few per cent of the GPU-time. So each read first locates its cells:
the window is cut into buckets (`BUCKET_S`, a whole number of steps) and one instant query per
bucket (`max_over_time`/`count_over_time` over the bucket: each raw sample read once, nothing
evaluated per step; buckets of one length back to back asked as one range query whose step is
the bucket) names the instances with anything to read there; the per-step range query
then runs only over those instances and buckets. The two reads every GPU has — coverage gaps
and non-healthy verdicts — locate from the recording rules' per-instance locate series where
the rules ran (`Reader.recorded`, filled by `gpuslo.slo.sources.located`), so only the buckets
the rules did not cover read the raw samples. The per-step reads of cells close in time go
out as one query where the samples that adds cost less than the requests it saves (`coalesce`,
`REQUEST_SAMPLES`): a few faults a bucket would otherwise be a request a bucket, which on a
loaded server cost more than the samples. `Reader(..., locate=False)` reads every
instance over the whole window instead (the same frames, at the full cost: the tests compare).

"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from gpuslo.slo.sources.query_api import QueryApi, concat

BUCKET_S = 6 * 3600  # the locating instant queries' bucket: 28 per week
MAX_BUCKETS = 200  # longer windows take longer buckets
# What one request costs, in samples of a range query (instances × series per instance × terms ×
# steps): VictoriaMetrics 1.79 on the 2-core bench host answered a request over a few series in
# 3-7 ms and spent 40-60 ms per million samples, and `report_prometheus.py` saw ~36 ms per small
# request with the client busy beside it (2026-12-07). `Reader.read` merges cells while that pays.
REQUEST_SAMPLES = 500_000
# An instant query evaluated at the time of a series' first sample misses that sample on
# VictoriaMetrics 1.79 (a range query over more than one point sees it): instant queries are
# evaluated this much after the step they stand for, with the same window length.
AFTER = pd.Timedelta(milliseconds=1)


def window_ms(seconds: float) -> str:
    """A PromQL duration just under `seconds`, so a window of one step holds one sample on both
    closed (Prometheus 2) and half-open (VictoriaMetrics, Prometheus 3) ranges."""
    return f"{int(round(seconds * 1000)) - 1}ms"


def samples_to_intervals(samples: pd.DataFrame, keys: list[str], step_s: int,
                         total: str | None = None) -> pd.DataFrame:
    """Merge samples (each standing for [t, t + step)) into intervals per `keys`: columns keys +
    start, end (+ `total`, the sum of that column over the interval's samples). Consecutive
    means exactly one step apart. Pure."""
    if samples.empty:
        return pd.DataFrame(columns=[*keys, "start", "end", *([total] if total else [])])
    s = samples.sort_values([*keys, "time"], kind="stable").reset_index(drop=True)
    step = pd.Timedelta(seconds=step_s)
    same = (s[keys] == s[keys].shift()).all(axis=1)
    new = ~same | (s["time"] - s["time"].shift() != step)
    run = new.cumsum()
    sums = {total: (total, "sum")} if total else {}
    out = s.groupby(run).agg(
        **{k: (k, "first") for k in keys}, start=("time", "first"), end=("time", "last"), **sums
    )
    out["end"] = out["end"] + step
    return out.reset_index(drop=True)


def label_column(frame: pd.DataFrame, name: str) -> pd.Series:
    """`frame[name]` as text, '' where missing (an absent label column: every row ''). Pure."""
    if name in frame.columns:
        return frame[name].fillna("").astype(str)
    return pd.Series("", index=frame.index, dtype=object)


@dataclass(frozen=True)
class Cell:
    """Where a read looks: the `label` values (instances, or nodes) and the steps in [start,
    end)."""

    instances: tuple[str, ...]
    start: pd.Timestamp
    end: pd.Timestamp


def buckets(start: pd.Timestamp, end: pd.Timestamp, step_s: int,
            bucket_s: int = BUCKET_S) -> list[tuple[pd.Timestamp, pd.Timestamp]]:
    """[start, end) cut into buckets of a whole number of steps (at least one, at most
    MAX_BUCKETS buckets; the last may be shorter), each (first step, end). Pure."""
    steps = max(int(-(-(end - start).total_seconds() // step_s)), 1)
    per = max(1, bucket_s // step_s, -(-steps // MAX_BUCKETS))
    return [(start + pd.Timedelta(seconds=a * step_s),
             min(end, start + pd.Timedelta(seconds=min(a + per, steps) * step_s)))
            for a in range(0, steps, per)]


def _runs(spans: list[tuple[pd.Timestamp, pd.Timestamp]]) -> list[list[tuple]]:
    """`spans` (buckets, in order) cut into runs of buckets of one length, each starting where
    the one before ends (their probes a bucket apart: one range query). Pure."""
    out: list[list[tuple]] = []
    for first, last in spans:
        if out and out[-1][-1][1] == first and last - first == out[-1][-1][1] - out[-1][-1][0]:
            out[-1].append((first, last))
        else:
            out.append([(first, last)])
    return out


class Reader:
    """What every per-GPU query shares: the API, the instances, the step and the window; and
    the locate-then-read of the module docstring."""

    def __init__(self, api: QueryApi, gpus: pd.DataFrame, node_of: dict[str, str], start, end,
                 step_s: int, locate: bool = True) -> None:
        self.api, self.start, self.end, self.step = api, start, end, step_s
        self.instances = sorted(gpus["instance"].unique())
        self.gpus_of = gpus.groupby("instance").size().to_dict() if len(gpus) else {}
        self.per_instance = int(max(self.gpus_of.values())) if self.gpus_of else 1
        self.node_of = node_of
        self.locate_cells = locate
        # read name → (cells located from the recording rules' locate series, the buckets left
        # to locate from the raw samples): `gpuslo.slo.sources.located.recorded_cells`
        self.recorded: dict[str, tuple[list[Cell], list[tuple[pd.Timestamp, pd.Timestamp]]]] = {}

    def locate(self, probe, desc: str, instances=None, per_instance=None,
               label: str = "instance", expect: dict[str, int] | None = None,
               recorded: str | None = None) -> list[Cell]:
        """The cells with something to read: per bucket, the `label` values of the series
        `probe(matcher, window, steps)` returns (an instant query over the bucket's samples,
        evaluated AFTER its last step: `window` covers the samples its steps read; `steps` is
        their number) — or,
        with `expect` (label value → count), those whose value is below their count or that
        returned nothing. Every value over the whole window when locating is off. With
        `recorded` (a key of `self.recorded`), the buckets the recording rules covered take the
        cells located from their series and only the others are probed."""
        values = list(self.instances if instances is None else instances)
        if not values:
            return []
        if not self.locate_cells:
            return [Cell(tuple(values), self.start, self.end)]
        known, spans = self.recorded.get(recorded, ([], None)) if recorded else ([], None)
        raw = self._probe(probe, desc, values, per_instance, label, expect,
                          buckets(self.start, self.end, self.step) if spans is None else spans)
        return sorted([*known, *raw], key=lambda cell: cell.start)

    def _probe(self, probe, desc: str, values: list[str], per_instance, label: str,
               expect: dict[str, int] | None, spans: list) -> list[Cell]:
        """`locate` from the raw samples over the buckets `spans`."""
        if not spans:
            return []
        after = pd.Timedelta(seconds=self.step) - AFTER
        per_instance = per_instance or self.per_instance
        found = []
        for run in _runs(spans):  # buckets of one length back to back: one range query
            n = int(round((run[0][1] - run[0][0]).total_seconds() / self.step))
            text = lambda m, n=n: probe(m, window_ms(n * self.step), n)  # noqa: E731
            if len(run) == 1:
                found.append(self.api.sharded_instant(text, values, per_instance, n,
                                                      run[0][1] - after, desc, label))
            else:
                found.append(self.api.sharded_ranges(
                    text, [(tuple(values), run[0][1] - after, run[-1][1] - after + AFTER)],
                    per_instance, n, n * self.step, desc, label))
        found = concat(found)
        cells = []
        for first, last in spans:
            # the answers' times are whole milliseconds (the API's), whatever the window's
            hits = found[found["time"] == (last - after).round("ms")] if len(found) else found
            named = label_column(hits, label)
            if expect is None:
                active = set(named)
            else:
                counts = dict(zip(named, hits["value"], strict=True))
                active = {v for v in values if counts.get(v, 0) < expect.get(v, 1)}
            if active:
                cells.append(Cell(tuple(sorted(active)), first, last))
        return cells

    def read(self, query, terms: int, desc: str, cells: list[Cell], per_instance=None,
             label: str = "instance", overlap: bool = False) -> pd.DataFrame:
        """`query(matcher)` at every step of `cells` (sharded under the sample budget), the
        points concatenated as `QueryApi.range`; `overlap` reads one step past each cell (an
        edge on a cell's first step after a skipped bucket is seen from the cell before).
        Cells close in time are read together where that costs less than their requests
        (`coalesce`): a superset of the cells, so the same points."""
        step = pd.Timedelta(seconds=self.step)
        per_instance = per_instance or self.per_instance
        spans = [(c.instances, c.start, min(self.end, c.end + step) if overlap else c.end)
                 for c in cells]
        spans = coalesce(spans, per_instance * terms, self.step, self.api.max_samples)
        return self.api.sharded_ranges(query, spans, per_instance, terms, self.step, desc, label)


def coalesce(spans: list[tuple[tuple[str, ...], pd.Timestamp, pd.Timestamp]], unit: int,
             step_s: int, most: int, per_request: int = REQUEST_SAMPLES) -> list[tuple]:
    """`spans` (instances, start, end: the steps in [start, end)) in time order, the ones next
    to each other merged into one span (the union of their instances over their whole time)
    while the merged span's samples (instances × `unit` × steps) stay within `most` and within
    the samples of its parts plus `per_request` for each request the merge saves. A merged span
    covers its parts, so a read over it finds every point they hold (and, outside them, only
    what the locate found nothing of). Pure."""
    def steps(start: pd.Timestamp, end: pd.Timestamp) -> int:
        return max(int(-(-(end - start).total_seconds() // step_s)), 1)

    out: list[list] = []  # [instances, start, end, samples of the parts, parts]
    for instances, start, end in sorted(spans, key=lambda span: span[1]):
        cost = len(instances) * unit * steps(start, end)
        if out:
            group = out[-1]
            union = group[0] | set(instances)
            last = max(group[2], end)
            merged = len(union) * unit * steps(group[1], last)
            if merged <= most and merged <= group[3] + cost + per_request * group[4]:
                out[-1] = [union, group[1], last, group[3] + cost, group[4] + 1]
                continue
        out.append([set(instances), start, end, cost, 1])
    return [(tuple(sorted(group[0])), group[1], group[2]) for group in out]
