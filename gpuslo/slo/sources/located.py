"""Where the Prometheus source's two fleet-wide reads — coverage gaps and non-healthy verdicts —
must look, from the recording rules' locate series (`gpuslo.alerts.locate`, `names.LOCATE_*`):
~one recorded series per node instead of every GPU's raw samples (three verdict series and a
usable series per GPU), so locating no longer grows with the GPUs (issue 30).

`recorded_cells(reader) -> {read: (cells, buckets left)}` for `sparse.Reader.recorded`. Per
bucket of the window (`sparse.buckets`), the raw locate reads the samples in
R = [first − step + 2 ms, last − step + 1 ms] (its instant query one millisecond after the last
step, over a window one millisecond short of the bucket). The locate group's evaluation at t
covers the raw samples of the tile (t − offset − interval, t − offset]; the evaluations whose
tile meets R (`plan`) answer for the bucket when their tiles cover R without a hole (the rules
ran at their interval throughout, as `names.LOCATE_EVALUATIONS` shows); any other bucket — the
rules not run there yet, an evaluation missed, a restart that moved their phase — is left to the
raw locate. One instant query per bucket over exactly those evaluations then names:

- non-healthy verdicts: the instances whose `names.LOCATE_NOT_HEALTHY` reached 1;
- coverage gaps (only when the step divides the interval, so a GPU without a gap has exactly
  interval / step samples in every tile): the instances with fewer recorded tiles than the
  bucket's evaluations (no usable sample in a tile) or a tile with fewer samples than
  gpus × interval / step (`Reader.gpus_of`, as the raw locate expects). A tile that reaches
  before the first sample of the data (a window that starts where the data starts) is short,
  so such a first bucket names every instance: a bucket that names more than half of them is
  left to the raw locate (one sample per GPU step read once, one answer per instance), which
  costs less than reading them all step by step and names exactly the gaps.

Tiles reach up to one interval past R on either side, so a bucket may name an instance whose
non-healthy sample or gap lies just outside it: its cells are those of the raw locate plus, at
most, such neighbours, and the per-step reads over them find the same samples — the same frames
(tests/slo/test_located.py). Several evaluation series (an unscoped query over a global store's
clusters) leave every bucket to the raw locate. Raises InputError (the API's).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd

from gpuslo import names
from gpuslo.slo.sources.query_api import MAX_POINTS, alternation, groups, tidy
from gpuslo.slo.sources.sparse_reader import Cell, Reader, buckets, label_column

INTERVAL_MS = names.LOCATE_INTERVAL_S * 1000
OFFSET_MS = names.LOCATE_OFFSET_S * 1000


@dataclass(frozen=True)
class Tiles:
    """The evaluations that answer for one bucket [first, last): `count` of them, selected by
    an instant query at `at` over `window_ms` (exactly them on closed and half-open ranges)."""

    first: pd.Timestamp
    last: pd.Timestamp
    at: pd.Timestamp
    window_ms: int
    count: int


def _ms(stamp: pd.Timestamp) -> int:
    return int(stamp.value // 1_000_000)


def plan(spans: list[tuple[pd.Timestamp, pd.Timestamp]], step_s: int,
         evaluations_ms: np.ndarray) -> tuple[list[Tiles], list[tuple]]:
    """(the buckets the recorded evaluations answer for, the buckets left to the raw locate),
    from the evaluations' times (ms, sorted, unique; see the module docstring). Pure."""
    step, done, left = step_s * 1000, [], []
    ends = evaluations_ms - OFFSET_MS  # each tile is (end - interval, end]
    for first, last in spans:
        lo, hi = _ms(first) - step + 2, _ms(last) - step + 1
        chosen = evaluations_ms[(ends >= lo) & (ends - INTERVAL_MS + 1 <= hi)]
        tiled = (len(chosen) > 0 and chosen[0] - OFFSET_MS - INTERVAL_MS + 1 <= lo
                 and chosen[-1] - OFFSET_MS >= hi and bool(np.all(np.diff(chosen) == INTERVAL_MS)))
        if not tiled:
            left.append((first, last))
            continue
        # (a − 1 ms, b + 1 ms]: no other evaluation is within an interval of either edge
        a, b = int(chosen[0]), int(chosen[-1])
        done.append(Tiles(first, last, pd.Timestamp(b + 1, unit="ms", tz="UTC"), b - a + 2,
                          len(chosen)))
    return done, left


def evaluations(reader: Reader) -> np.ndarray | None:
    """The locate group's evaluation times (ms, sorted, unique) whose tiles can meet the window,
    from `names.LOCATE_EVALUATIONS`; None when none or several such series answer."""
    step = pd.Timedelta(seconds=reader.step)
    at = reader.end - step + pd.Timedelta(seconds=names.LOCATE_OFFSET_S + names.LOCATE_INTERVAL_S)
    since = reader.start - step + pd.Timedelta(seconds=names.LOCATE_OFFSET_S)
    found = reader.api.instant(f"{names.LOCATE_EVALUATIONS}[{_ms(at) - _ms(since)}ms]", at,
                               kind="matrix")
    if len(found) != 1:
        return None
    times = [round(float(t) * 1000) for t, _ in found[0].get("values", [])]
    return np.unique(np.asarray(times, dtype=np.int64)) if times else None


def runs(tiles: list[Tiles], most: int) -> list[list[int]]:
    """`tiles`' indices cut into runs one range query can answer: the same window and count,
    evaluated a bucket apart (whole seconds), at most `most` buckets a run. Pure."""
    out: list[list[int]] = []
    for i, tile in enumerate(tiles):
        if out and len(out[-1]) < most:
            before = tiles[out[-1][-1]]
            gap = tile.at - before.at
            if ((tile.window_ms, tile.count) == (before.window_ms, before.count)
                    and gap == tile.first - before.first and gap.total_seconds() % 1 == 0
                    and (len(out[-1]) < 2 or gap == before.at - tiles[out[-1][-2]].at)):
                out[-1].append(i)
                continue
        out.append([i])
    return out


def _query(reader: Reader, tiles: list[Tiles], query, desc: str) -> list[pd.DataFrame]:
    """`query(matcher, window, tile)` at each bucket's `at`: one frame per bucket. Buckets a
    bucket apart with the same window share one range query (`runs`); unsharded while every
    instance's recorded samples fit the sample budget (a matcher-less query, its answer kept to
    the reader's instances), else sharded by instance."""
    api, values = reader.api, reader.instances
    per_bucket = max(tile.count for tile in tiles) * 2  # samples per instance and bucket
    shards = ([None] if len(values) * per_bucket <= api.max_samples
              else groups(values, max(1, api.max_samples // per_bucket)))
    most = max(1, api.max_samples // (per_bucket * max(len(shard or values) for shard in shards)))
    items = [(run, shard) for run in runs(tiles, min(most, MAX_POINTS)) for shard in shards]

    def run(item) -> tuple[list[int], pd.DataFrame]:
        indices, shard = item
        matcher = "" if shard is None else f'instance=~"{alternation(shard)}"'
        first, last = tiles[indices[0]], tiles[indices[-1]]
        text = query(matcher, f"{first.window_ms}ms", first)
        if len(indices) == 1:
            return indices, tidy(api.instant(text, first.at), "value").assign(time=first.at)
        step = int((tiles[indices[1]].at - first.at).total_seconds())
        return indices, api.range(text, first.at, last.at, step)

    frames: list[list[pd.DataFrame]] = [[] for _ in tiles]
    for indices, frame in api.each(run, items, desc):
        by_time = dict(tuple(frame.groupby("time", sort=False))) if len(frame) else {}
        for i in indices:
            frames[i].append(by_time.get(tiles[i].at.round("ms"), frame.iloc[:0]))
    out = []
    for parts in frames:
        both = pd.concat([f for f in parts if len(f)] or [pd.DataFrame()], ignore_index=True)
        mine = label_column(both, "instance").isin(set(values)) if len(both) else []
        out.append(both[mine] if len(both) else both)
    return out


def _non_healthy(reader: Reader, tiles: list[Tiles]) -> list[Cell]:
    x = names.LOCATE_NOT_HEALTHY
    found = _query(reader, tiles, lambda m, w, _: (
        f"max by (instance) (max_over_time({x}{{{m}}}[{w}])) == 1"),
        "locate non-healthy verdicts (recorded)")
    return [Cell(tuple(sorted(set(label_column(hits, "instance")))), tile.first, tile.last)
            for tile, hits in zip(tiles, found, strict=True) if len(hits)]


def _coverage(reader: Reader, tiles: list[Tiles]) -> tuple[list[Cell], list[tuple]]:
    """(the coverage cells of `tiles`, the buckets among them left to the raw locate: those
    whose tiles name more than half the instances, as when the data starts inside the bucket's
    first tile — the raw locate then reads each of their samples once and answers one row per
    instance, where reading them step by step would cost more and say the same)."""
    x, per_tile = names.LOCATE_USABLE_SAMPLES, names.LOCATE_INTERVAL_S // reader.step

    def fewest(m: str, w: str, tile: Tiles) -> str:  # the fewest samples in a tile, 0: one missing
        return (f"min by (instance) (min_over_time({x}{{{m}}}[{w}])) * (min by (instance)"
                f" (count_over_time({x}{{{m}}}[{w}])) >= bool {tile.count})")

    cells, left = [], []
    for tile, found in zip(tiles, _query(reader, tiles, fewest, "coverage gaps (recorded)"),
                           strict=True):
        least = dict(zip(label_column(found, "instance"), found["value"], strict=True))
        gaps = {i for i in reader.instances
                if least.get(i, 0) < reader.gpus_of.get(i, 1) * per_tile}
        if 2 * len(gaps) > len(reader.instances):
            left.append((tile.first, tile.last))
        elif gaps:
            cells.append(Cell(tuple(sorted(gaps)), tile.first, tile.last))
    return cells, left


def recorded_cells(reader: Reader) -> dict[str, tuple[list[Cell], list[tuple]]]:
    """`Reader.recorded` for the coverage and non-healthy reads (see the module docstring):
    per read, the cells located from the recorded series and the buckets left to the raw
    locate; empty when the rules recorded nothing usable for the window."""
    if not reader.instances:
        return {}
    found = evaluations(reader)
    if found is None:
        return {}
    tiles, left = plan(buckets(reader.start, reader.end, reader.step), reader.step, found)
    if not tiles:
        return {}
    out = {"non_healthy": (_non_healthy(reader, tiles), left)}
    if names.LOCATE_INTERVAL_S % reader.step == 0:
        cells, wide = _coverage(reader, tiles)
        out["coverage"] = (cells, sorted([*left, *wide]))
    return out
