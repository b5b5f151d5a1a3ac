"""The week's job GPU-seconds per (job, category) from the job tiles group's recorded series
(`gpuslo.alerts.job_tiles`, `names.JOB_TILE_*`) where it ran, and from the counters, summed by
the server per (job, category), where it did not — instead of every node's
`gpuslo_job_gpu_seconds_total` value at both ends of the window (issue 30: that read grew with
the fleet, 28 % of the report's bytes at 10k GPUs).

`read_tiled(reader, instances) -> (DataFrame, jobs) | None` (job, node "", category,
gpu_seconds; the jobs left to the raw read, absent from the rows; None when no single evaluation
series answers for the window: the caller reads the counters per node).
The raw read (`sparse.read_job_seconds`) counts, per counter, its last value before the window's end
minus its last value in the day before the start (the whole value when there is none): the increase
over (start, end − 1 ms]. The group's evaluation at t records the increase of every counter over the
tile (t − interval, t] by the same rule (`gpuslo.alerts.job_tiles.increase_expr`: last value in the
tile minus the last value in the `names.JOB_TILE_HOLD` before it, else whole); increases of back to
back spans telescope, so the window is cut into (`plan`): runs of back-to-back evaluations whose
tiles lie inside it (one `sum_over_time` of the recorded series each) and the spans between and
around them (the same expression's value over the span, `_span`: summed per job by the server for
the counters with a value in the hour before the span, per counter for the few without, so a span
does not read every counter's day before it). The sum is the raw read's, exactly, but for a counter
silent for longer than the hold inside the window: it counts whole again when it comes back, which
double-counts the GPU-seconds before its silence when it kept running (a network partition hid it).
So the group also records each counter a tile counted whole, with its value
(`gpuslo.alerts.job_tiles.whole_expr`, `names.JOB_TILE_WHOLE`: a sample per counter first seen or
back, so few; `_span` names its own), and `_counted_twice` finds the counters counted whole where
the raw read does not — twice, or once after a value in the day before the window (summed per
counter over the runs by the server, answered per job; the day before the window read only for the
jobs with a counter counted whole): such a job is dropped from the tiled rows and read from every
node's counters by the raw read (`sparse.read_job_seconds`), so no GPU-second is counted twice and
every job's sum is the raw read's, exactly — a counter that reset after its silence included (the
raw read's rule: last value minus the value before the window; tests/slo/test_job_tiles.py).

The per-job grain drops which nodes ran a job; the engine wants them only to attribute a job's
slowdown to a degradation on one of its nodes (`crawl.attribute_slowdowns`, beside the
allocations' nodes): `with_job_nodes` adds a zero row per (job, node) of the jobs with a
slowdown episode, from the series index. Raises InputError (the API's).
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from gpuslo import names
from gpuslo.slo.sources.query_api import alternation, groups, tidy
from gpuslo.slo.sources.sparse_reader import Reader, label_column

COUNTER = "gpuslo_job_gpu_seconds_total"
INTERVAL_MS = names.JOB_TILE_INTERVAL_S * 1000
COLUMNS = ["job", "node", "category", "gpu_seconds"]
KEYS = ["instance", "job", "category"]  # a counter
MAX_RUNS = 8  # runs summed apart in one query (each ~130 bytes of a 16 KB query)


def plan(first_ms: int, last_ms: int,
         evaluations_ms: np.ndarray) -> tuple[list[tuple[int, int]], list[tuple[int, int]]]:
    """(runs: (first, last) evaluation times of back-to-back tiles inside (first_ms, last_ms]
    with no other evaluation between them, spans: (a, b] ms the runs leave, to read raw), from
    the evaluation times (ms, sorted, unique). Tiles that overlap one taken (a restart that moved
    the group's phase) are skipped and end the run. Pure."""
    runs: list[tuple[int, int]] = []
    spans: list[tuple[int, int]] = []
    covered, run = first_ms, None
    for t in (int(x) for x in evaluations_ms):
        lo = t - INTERVAL_MS
        if lo >= covered and t <= last_ms:
            if run is not None and lo == run[1]:
                run = (run[0], t)
            else:
                if run is not None:
                    runs.append(run)
                if lo > covered:
                    spans.append((covered, lo))
                run = (t, t)
            covered = t
        elif run is not None:
            runs.append(run)
            run = None
    if run is not None:
        runs.append(run)
    if covered < last_ms:
        spans.append((covered, last_ms))
    return runs, spans


def _stamp(ms: int) -> pd.Timestamp:
    return pd.Timestamp(ms, unit="ms", tz="UTC")


def _evaluations(reader: Reader, first_ms: int, last_ms: int) -> np.ndarray | None:
    """The group's evaluation times in (first_ms, last_ms] (ms, sorted, unique); None when none
    or several evaluation series answer (an unscoped query over several clusters' rules)."""
    found = reader.api.instant(f"{names.JOB_TILE_EVALUATIONS}[{last_ms - first_ms}ms]",
                               _stamp(last_ms), kind="matrix")
    if len(found) != 1:
        return None
    times = [round(float(t) * 1000) for t, _ in found[0].get("values", [])]
    return np.unique(np.asarray(times, dtype=np.int64)) if times else None


def read_tiled(reader: Reader,
               instances: list[str]) -> tuple[pd.DataFrame, list[str]] | None:
    """(the `job_gpu_seconds` rows of the window from the tiles and raw spans, the jobs left to
    the raw read: dropped from the rows) (module docstring), or None where the group recorded
    nothing in it."""
    api = reader.api
    first_ms, last_ms = int(reader.start.value // 1_000_000), int(reader.end.value // 1_000_000) - 1
    found = _evaluations(reader, first_ms, last_ms)
    if found is None:
        return None
    runs, spans = plan(first_ms, last_ms, found)
    if not runs:
        return None
    parts = [tidy(api.instant(f"sum_over_time({names.JOB_TILE_SECONDS}[{b - a + 1}ms])",
                              _stamp(b)), "value") for a, b in runs]
    per_instance = max(len(api.series(f'{COUNTER}{{instance="{instances[0]}"}}', reader.start,
                                      reader.end)), 1) * 2
    spanned = [pd.DataFrame(columns=KEYS)]
    for a, b in spans:
        rows, whole = _span(reader, instances, per_instance, a, b)
        parts.append(rows)
        spanned.append(whole)
    twice = _counted_twice(reader, first_ms, last_ms, runs, pd.concat(spanned, ignore_index=True))
    rows = pd.concat([pd.DataFrame({"job": label_column(p, "job"),
                                    "category": label_column(p, "category"),
                                    "gpu_seconds": p["value"]}) for p in parts if len(p)]
                     or [pd.DataFrame(columns=["job", "category", "gpu_seconds"])])
    rows = rows[~rows["job"].isin(twice)]
    summed = rows.groupby(["job", "category"], as_index=False)["gpu_seconds"].sum()
    return summed.assign(node="")[COLUMNS], twice


def _jobs(frame: pd.DataFrame) -> set[str]:
    return set(label_column(frame, "job")) - {""}


def _counted_twice(reader: Reader, first_ms: int, last_ms: int, runs: list[tuple[int, int]],
                   spanned: pd.DataFrame) -> list[str]:
    """The jobs with a counter the runs' tiles and the spans counted whole where the raw read
    does not: twice (silent for longer than the hold inside the window, then back), or once
    while it had a value in the day before the window (silent across its start). Every counter
    the raw read counts whole (a value in the window, none in the day before it) is counted
    whole exactly once otherwise (its first value in the window has none in the hold before
    it), so the other jobs' sums are the raw read's. `spanned`: (instance, job, category) of
    the spans' counters counted whole (`_span`), once per span. From the recorded counters
    counted whole (a sample per counter and time, so few) summed over the runs per counter by
    the server (over more than `MAX_RUNS` runs, over the span from the first to the last: an
    evaluation skipped between them, a phase moved, may then name a job more, to read raw);
    only the day before the window of the jobs among them is read (new jobs have no samples
    there)."""
    api, at = reader.api, _stamp(last_ms)
    offset, hold = f"{last_ms - first_ms}ms", names.JOB_TILE_HOLD
    if len(runs) > MAX_RUNS:  # one range over them all: the evaluations between them too
        runs = [(runs[0][0], runs[-1][1])]  # (at most more jobs read raw, never fewer)
    per_run = [f'label_replace(count_over_time({names.JOB_TILE_WHOLE}[{b - a + 1}ms] offset '
               f'{last_ms - b}ms), "gpuslo_run", "{i}", "", "")' for i, (a, b) in enumerate(runs)]
    counted = f"sum by (instance, job, category) ({' or '.join(per_run)})"
    twice = _jobs(tidy(api.instant(f"count by (job) ({counted} > 1)", at), "value"))
    jobs = sorted(_jobs(tidy(api.instant(f"count by (job) ({counted})", at), "value")) - twice)
    for group in groups(jobs, len(jobs)):
        before = f'last_over_time({COUNTER}{{job=~"{alternation(group)}"}}[{hold}] offset {offset})'
        twice |= _jobs(tidy(api.instant(
            f"count by (job) ({counted} and on (instance, job, category) {before})", at), "value"))
    if spanned.empty:
        return sorted(twice)
    twice |= set(spanned.loc[spanned.duplicated(KEYS, keep=False), "job"])
    spanned = spanned.drop_duplicates(KEYS)
    for group in groups(sorted(set(spanned["instance"])), len(spanned)):
        jobs = sorted(set(spanned.loc[spanned["instance"].isin(group), "job"]))
        for names_ in groups(jobs, len(jobs)):
            m = f'instance=~"{alternation(group)}",job=~"{alternation(names_)}"'
            found = tidy(api.instant(
                f"({counted.replace(names.JOB_TILE_WHOLE, f'{names.JOB_TILE_WHOLE}{{{m}}}')})"
                f" or last_over_time({COUNTER}{{{m}}}[{hold}] offset {offset})", at), "value")
            seen = pd.DataFrame({k: label_column(found, k) for k in KEYS})
            twice |= set(spanned.merge(seen, on=KEYS)["job"])
    return sorted(twice)


def _span(reader: Reader, instances: list[str], per_instance: int, a: int,
          b: int) -> tuple[pd.DataFrame, pd.DataFrame]:
    """(the rule's `increase_expr` over the span (a, b] ms (`gpuslo.alerts.job_tiles`), per
    (job, category) (`tidy` rows); the counters it counts whole, (instance, job, category):
    `whole_expr`'s), without
    reading every counter's day before it: (1) the counters with a value in the interval
    before the span, the server summing last − that value per job; (2) the others with a value
    in the span, per counter (the jobs and nodes that started or came back in it: few);
    (3) their last value in the rest of the hold before the span, for those only (none: whole).
    (1) + (2) − (3) is the expression's value: the last value before the span within the hold
    is the one in the interval before it where there is one."""
    api, at, step = reader.api, _stamp(b), reader.step
    x, span, near = COUNTER + "{%s}", f"{b - a}ms", f"{INTERVAL_MS}ms"
    points = int((b - a + INTERVAL_MS) / 1000 // step) + 2
    grew = api.sharded_instant(lambda m: (
        f"sum by (job, category) (last_over_time({x % m}[{span}])"
        f" - last_over_time({x % m}[{near}] offset {span}))"), instances, per_instance, points,
        at, "job counters (raw spans)")
    new = api.sharded_instant(lambda m: (
        f"last_over_time({x % m}[{span}]) unless last_over_time({x % m}[{near}] offset {span})"),
        instances, per_instance, points, at, "job counters new in raw spans")
    if new.empty:
        return grew, pd.DataFrame(columns=KEYS)
    keys = ["instance", "job", "category"]
    new = pd.DataFrame({k: label_column(new, k) for k in keys}).assign(value=new["value"])
    hold = f"{names.JOB_TILE_HOLD_S * 1000 - INTERVAL_MS}ms"
    offset = f"{b - a + INTERVAL_MS}ms"
    before = []
    for group in groups(sorted(set(new["instance"])), len(instances)):
        jobs = sorted(set(new.loc[new["instance"].isin(group), "job"]))
        for names_ in groups(jobs, len(jobs)):
            m = f'instance=~"{alternation(group)}",job=~"{alternation(names_)}"'
            found = tidy(api.instant(f"last_over_time({x % m}[{hold}] offset {offset})", at),
                         "value")
            before.append(pd.DataFrame({k: label_column(found, k) for k in keys}).assign(
                before=found["value"]))
    known = pd.concat(before, ignore_index=True).drop_duplicates(keys)
    new = new.merge(known, on=keys, how="left")
    whole = new.loc[new["before"].isna(), keys].reset_index(drop=True)
    new["value"] = new["value"] - new["before"].fillna(0.0)
    return pd.concat([grew, new[["job", "category", "value"]]], ignore_index=True), whole


def with_job_nodes(reader: Reader, jobs: pd.DataFrame, slowdowns: pd.DataFrame) -> pd.DataFrame:
    """`jobs` (tiled: node "") plus a zero `productive` row per (job, node) of the jobs in
    `slowdowns` (the instances of their `productive` counters in the window, from the series
    index: an exporter exposes every category of a job it reports, `exporter.collector.add_jobs`):
    the nodes the crawl weighs a slowdown's causes on; the jobs `jobs` names nodes of already
    (read from the counters: `read_tiled`'s jobs left to the raw read) are left as they are.
    `jobs` itself when nothing is added."""
    named = set(jobs.loc[jobs["node"] != "", "job"])
    wanted = sorted(set(slowdowns["job"]) - named) if len(slowdowns) else []
    if not wanted:
        return jobs
    pairs = set()
    for group in groups(wanted, len(wanted)):
        match = f'{COUNTER}{{category="{names.CATEGORY_PRODUCTIVE}",job=~"{alternation(group)}"}}'
        pairs |= {(s.get("job", ""), s.get("instance", ""))
                  for s in reader.api.series(match, reader.start, reader.end)}
    if not pairs:
        return jobs
    zero = pd.DataFrame(
        [{"job": job, "node": reader.node_of.get(i) or i, "category": names.CATEGORY_PRODUCTIVE,
          "gpu_seconds": 0.0} for job, i in sorted(pairs)], columns=COLUMNS)
    return pd.concat([jobs, zero.drop_duplicates()], ignore_index=True)
