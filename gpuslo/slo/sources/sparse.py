"""The sparse reads of the Prometheus source (`gpuslo.slo.sources.prometheus`), each a query
split under the sample budget by `gpuslo.slo.sources.query_api`: coverage edges, non-healthy
verdicts with their problem reasons (and the check-error fallback), kube-state-metrics cordons,
missing GPUs, Slurm node states, the GPUs' workload allocations, warn-level degradations, the job
counters' increases (over the window, and step by step for `slowdown`); the recorded SLIs are
read by `gpuslo.slo.sources.recorded`.

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
the rules did not cover read the raw samples. `Reader(..., locate=False)` reads every
instance over the whole window instead (the same frames, at the full cost: the tests compare).
"""

from __future__ import annotations

from dataclasses import dataclass

import pandas as pd

from gpuslo import names
from gpuslo.slo.sources.provisioned import UNSEEN_PREFIX
from gpuslo.slo.sources.query_api import QueryApi, concat
from gpuslo.slo.sources.slurm import node_state_frames

START_HOLD = "1d"  # how far before the window a job counter's value is looked for
_REASON_RANK = {reason: rank for rank, reason in enumerate(names.REASONS)}
INCREASE = "gpuslo:job_gpu_seconds:increase1m"  # gpuslo.alerts.sli.JOB_SECONDS_INCREASE
BUCKET_S = 6 * 3600  # the locating instant queries' bucket: 28 per week
MAX_BUCKETS = 200  # longer windows take longer buckets
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


def _label(frame: pd.DataFrame, name: str) -> pd.Series:
    if name in frame.columns:
        return frame[name].fillna("").astype(str)
    return pd.Series("", index=frame.index, dtype=object)


# --- coverage, verdicts, reasons, schedulability ------------------------------------------------


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
            named = _label(hits, label)
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
        edge on a cell's first step after a skipped bucket is seen from the cell before)."""
        step = pd.Timedelta(seconds=self.step)
        spans = [(c.instances, c.start, min(self.end, c.end + step) if overlap else c.end)
                 for c in cells]
        return self.api.sharded_ranges(query, spans, per_instance or self.per_instance, terms,
                                       self.step, desc, label)


def read_coverage(reader: Reader) -> pd.DataFrame:
    """Presence intervals (instance, uuid, start, end) of every GPU's gpuslo_gpu_usable."""
    w, step = window_ms(reader.step), f"{reader.step}s"
    now = lambda m: f"count_over_time(gpuslo_gpu_usable{{{m}}}[{w}])"  # noqa: E731
    before = lambda m: f"count_over_time(gpuslo_gpu_usable{{{m}}}[{w}] offset {step})"  # noqa: E731
    at_start = reader.api.sharded_instant(now, reader.instances, reader.per_instance, 2,
                                          reader.start + AFTER, "coverage at start")
    cells = reader.locate(
        lambda m, window, steps: ("count by (instance) (count_over_time("
                                  f"gpuslo_gpu_usable{{{m}}}[{window}]) == {steps})"),
        "coverage gaps", expect=reader.gpus_of, recorded="coverage")
    begins = reader.read(lambda m: f"{now(m)} unless {before(m)}", 2, "coverage begins", cells,
                         overlap=True)
    ends = reader.read(lambda m: f"{before(m)} unless {now(m)}", 2, "coverage ends", cells,
                       overlap=True)
    at_start = at_start.assign(time=reader.start)
    edges = pd.concat([
        pd.DataFrame({"instance": _label(f, "instance"), "uuid": _label(f, "uuid"),
                      "time": f["time"], "edge": edge})
        for f, edge in ((at_start, 1), (begins, 1), (ends, -1))
    ], ignore_index=True)
    edges = edges.sort_values(["instance", "uuid", "time", "edge"], kind="stable")
    edges = edges.drop_duplicates(["instance", "uuid", "time", "edge"]).reset_index(drop=True)
    opens = edges[edges["edge"] == 1].reset_index(drop=True)
    closes = edges[edges["edge"] == -1]
    opens["n"] = opens.groupby(["instance", "uuid"]).cumcount()
    closes = closes.assign(n=closes.groupby(["instance", "uuid"]).cumcount())
    spans = opens.merge(closes[["instance", "uuid", "n", "time"]], how="left",
                        on=["instance", "uuid", "n"], suffixes=("", "_end"))
    return pd.DataFrame({"instance": spans["instance"], "uuid": spans["uuid"],
                         "start": spans["time"], "end": spans["time_end"].fillna(reader.end)})


def read_non_healthy(reader: Reader) -> tuple[pd.DataFrame, dict[str, str]]:
    """Non-healthy verdict intervals (instance, uuid, verdict, reason, layer, action, start,
    end) and what the data quality should say about their reasons."""
    w = window_ms(reader.step)
    selector = 'gpuslo_gpu_verdict{verdict!="healthy",%s}'
    cells = reader.locate(
        lambda m, window, _: f"max by (instance) (max_over_time({selector % m}[{window}])) == 1",
        "locate non-healthy verdicts", per_instance=reader.per_instance * 2,
        recorded="non_healthy")
    verdicts = reader.read(lambda m: f"last_over_time({selector % m}[{w}]) == 1", 2,
                           "non-healthy verdicts", cells)
    columns = ["instance", "uuid", "verdict", "reason", "layer", "action", "start", "end"]
    if verdicts.empty:
        return pd.DataFrame(columns=columns), {}
    problems = reader.read(lambda m: f"last_over_time(gpuslo_gpu_problem{{{m}}}[{w}]) == 1",
                           2, "problems", cells)
    v = pd.DataFrame({k: _label(verdicts, k) for k in ("instance", "uuid", "verdict")})
    v["time"] = verdicts["time"]
    p = pd.DataFrame({k: _label(problems, k) for k in ("instance", "uuid", "reason", "layer",
                                                        "action")})
    p["time"] = problems["time"] if len(problems) else pd.Series(dtype="datetime64[ns, UTC]")
    p = p[p["reason"].isin(names.REASONS)].assign(rank=lambda f: f["reason"].map(_REASON_RANK))
    p = p.sort_values("rank", kind="stable").drop_duplicates(["instance", "uuid", "time"])
    joined = v.merge(p.drop(columns="rank"), on=["instance", "uuid", "time"], how="left")
    joined[["reason", "layer", "action"]] = joined[["reason", "layer", "action"]].fillna("")
    joined, quality = _fallback_reasons(reader, joined, cells)
    return samples_to_intervals(joined, columns[:-2], reader.step), quality


def _fallback_reasons(reader: Reader, joined: pd.DataFrame,
                      cells: list[Cell]) -> tuple[pd.DataFrame, dict]:
    """Unknown samples without a gpuslo_gpu_problem: the reason of a check error counter that
    grew on the instance within the step, else `stale_data` (read in the cells of `cells` that
    hold such samples)."""
    bare = (joined["verdict"] == names.VERDICT_UNKNOWN) & (joined["reason"] == "")
    if not bare.any():
        return joined, {}
    needed = joined.loc[bare, ["instance", "time"]]
    bare_cells = []
    for cell in cells:
        inside = needed[(needed["time"] >= cell.start) & (needed["time"] < cell.end)]
        if len(inside):
            bare_cells.append(Cell(tuple(sorted(inside["instance"].unique())), cell.start,
                                   cell.end))
    w, step = window_ms(reader.step), f"{reader.step}s"
    errors = "gpuslo_check_errors_total{%s}"
    grew = reader.read(
        lambda m: (f"max by (instance, reason) ((last_over_time({errors % m}[{w}])"
                   f" - last_over_time({errors % m}[1h] offset {step})) > 0"
                   f" or (last_over_time({errors % m}[{w}])"
                   f" unless last_over_time({errors % m}[1h] offset {step})))"),
        3, "check errors", bare_cells, per_instance=reader.per_instance * 2)
    found = pd.DataFrame({"instance": _label(grew, "instance"), "time": grew["time"],
                          "fallback": _label(grew, "reason")})
    found = found[found["fallback"].isin(names.REASONS)].drop_duplicates(["instance", "time"])
    merged = joined.merge(found, on=["instance", "time"], how="left")
    from_errors = bare & merged["fallback"].notna()
    merged.loc[bare, "reason"] = merged.loc[bare, "fallback"].fillna("stale_data")
    merged.loc[bare, "layer"] = names.LAYER_OBSERVABILITY
    hours = reader.step / 3600
    note = (f"{bare.sum() * hours:.2f} GPU-hours of unknown verdicts had no gpuslo_gpu_problem "
            f"series: {from_errors.sum() * hours:.2f} took their reason from the check error "
            f"counters, the rest is stale_data (no check error grew)")
    return merged.drop(columns="fallback"), {"problem_reasons": note}


def read_schedulability(reader: Reader, nodes: list[str]) -> tuple[pd.DataFrame, dict]:
    """`cordoned` intervals (node, start, end, state, reason) of the GPU nodes from
    kube-state-metrics, and a data-quality note when it has none for them."""
    have = set(reader.api.label_values("node", "kube_node_spec_unschedulable", reader.start,
                                       reader.end))
    mine = sorted(set(nodes) & have)
    if not mine:
        return pd.DataFrame(columns=["node", "start", "end", "state", "reason"]), {
            "schedulability": "no kube_node_spec_unschedulable series for the GPU nodes in the "
                              "window (kube-state-metrics not scraped?): every healthy GPU "
                              "counts as schedulable"}
    w, selector = window_ms(reader.step), "kube_node_spec_unschedulable{%s}"
    cells = reader.locate(
        lambda m, window, _: f"max by (node) (max_over_time({selector % m}[{window}])) == 1",
        "locate cordons", instances=mine, per_instance=1, label="node")
    flags = reader.read(lambda m: f"last_over_time({selector % m}[{w}]) == 1", 1,
                        "schedulability", cells, per_instance=1, label="node")
    frame = pd.DataFrame({"node": _label(flags, "node"), "time": flags["time"]})
    spans = samples_to_intervals(frame.drop_duplicates(), ["node"], reader.step)
    spans = spans.assign(state="cordoned", reason="kube_node_spec_unschedulable")
    missing = len(set(nodes) - have)
    note = ({"schedulability": f"{missing} GPU node(s) have no kube_node_spec_unschedulable "
                               "series: counted as schedulable"} if missing else {})
    return spans, note


def read_allocations(reader: Reader) -> pd.DataFrame:
    """Allocation intervals (job, node, uuid, start, end) from the exporters'
    `gpuslo_gpu_allocation` info series, only its samples at 1, read where located (instances
    without allocations in a bucket are skipped): the job is
    `<namespace>:<pod>:<container>` for a Kubernetes workload (kubelet pod-resources) — the id
    the exporter's `--job-log` gives the container's goodput counters, so the two join —, else
    the `hpc_job` (the HPC job-mapping dir). Several workloads on one GPU at one step
    (time-slicing: the exporter maps every replica to the physical GPU) → the first job name
    holds it, so a GPU has one holder at a time, as the accounting requires."""
    w, selector = window_ms(reader.step), "gpuslo_gpu_allocation{%s}"
    cells = reader.locate(
        lambda m, window, _: f"max by (instance) (max_over_time({selector % m}[{window}])) == 1",
        "locate allocations", per_instance=reader.per_instance * 2)
    found = reader.read(lambda m: f"last_over_time({selector % m}[{w}]) == 1", 1, "allocations",
                        cells, per_instance=reader.per_instance * 2)
    if found.empty:
        return pd.DataFrame(columns=["job", "node", "uuid", "start", "end"])
    pod = _label(found, "pod")
    container = _label(found, "namespace") + ":" + pod + ":" + _label(found, "container")
    container = container.str.replace(r"[^A-Za-z0-9._:@+=-]", "_", regex=True).str[:128]
    job = container.where(pod != "", _label(found, "hpc_job"))
    frame = pd.DataFrame({"job": job, "node": _label(found, "instance").map(
        lambda i: reader.node_of.get(i) or i), "uuid": _label(found, "uuid"),
        "time": found["time"]})
    frame = frame[(frame["job"] != "") & (frame["uuid"] != "")]
    frame = frame.sort_values(["node", "uuid", "time", "job"], kind="stable")
    frame = frame.drop_duplicates(["node", "uuid", "time"])
    return samples_to_intervals(frame, ["job", "node", "uuid"], reader.step)


def read_missing(reader: Reader, inventory: pd.DataFrame) -> pd.DataFrame:
    """Verdict rows `unhealthy`/`gpu_missing` for the placeholder GPUs of nodes whose
    gpu_inventory check says `fail` (sparse: only those samples are fetched)."""
    unseen = inventory[inventory["uuid"].str.startswith(f"{UNSEEN_PREFIX}:")]
    instances = sorted(i for i, n in reader.node_of.items() if n in set(unseen["node"]))
    if unseen.empty or not instances:
        return pd.DataFrame()
    w = window_ms(reader.step)
    selector = 'gpuslo_check_status{check="gpu_inventory",status="fail",%s}'
    cells = reader.locate(
        lambda m, window, _: f"max by (instance) (max_over_time({selector % m}[{window}])) == 1",
        "locate gpu_inventory fails", instances=instances, per_instance=1)
    fails = reader.read(
        lambda m: f"max by (instance) (last_over_time({selector % m}[{w}])) == 1",
        1, "gpu_inventory fails", cells, per_instance=1)
    if fails.empty:
        return pd.DataFrame()
    fails = fails.assign(node=_label(fails, "instance").map(lambda i: reader.node_of.get(i) or i))
    spans = samples_to_intervals(fails[["node", "time"]], ["node"], reader.step)
    rows = spans.merge(unseen[["node", "uuid"]], on="node", how="inner")
    return rows.assign(verdict=names.VERDICT_UNHEALTHY, reason="gpu_missing",
                       layer=names.LAYER_NODE, action=names.ACTION_REBOOT_NODE)


def read_slurm(reader: Reader) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Slurm node states (gpuslo_slurm_node_state, not up) as (verdicts, schedulability)."""
    instances = reader.api.label_values("instance", "gpuslo_slurm_node_state", reader.start,
                                        reader.end)
    if not instances:
        return node_state_frames(pd.DataFrame())
    w, selector = window_ms(reader.step), 'gpuslo_slurm_node_state{state!="up",%s}'
    cells = reader.locate(
        lambda m, window, _: f"max by (instance) (max_over_time({selector % m}[{window}])) == 1",
        "locate slurm node states", instances=instances, per_instance=8)
    raw = reader.read(lambda m: f"last_over_time({selector % m}[{w}]) == 1", 1,
                      "slurm node states", cells, per_instance=8)
    labels = ("instance", "state", "reason_layer", "reason")
    samples = pd.DataFrame({k: _label(raw, k) for k in labels})
    samples["node"] = samples["instance"].map(lambda i: reader.node_of.get(i, i))
    samples = samples.assign(time=raw["time"])
    keys = ["node", "state", "reason_layer", "reason"]
    return node_state_frames(samples_to_intervals(samples, keys, reader.step))


def _per_instance(api: QueryApi, metric: str, start, end) -> tuple[list[str], int]:
    """(instances with `metric` in [start, end), the most series one of them has): from the
    series index, no samples, for the sample budget of a sparse read of `metric`."""
    found = api.series(metric, start, end)
    counts = pd.Series([s.get("instance", "") for s in found], dtype=object).value_counts()
    return sorted(counts.index), int(counts.max()) if len(counts) else 1


def read_degradations(reader: Reader) -> pd.DataFrame:
    """Warn-level degradation intervals (node, uuid, start, end, reason) of the `degradations`
    frame: `gpuslo_node_degradation` at 1 (reasons outside names.DEGRADATION_REASONS dropped),
    node-wide (uuid "") unless the series names a GPU."""
    columns = ["node", "uuid", "start", "end", "reason"]
    metric = "gpuslo_node_degradation"
    instances, per_instance = _per_instance(reader.api, metric, reader.start, reader.end)
    if not instances:
        return pd.DataFrame(columns=columns)
    w = window_ms(reader.step)
    cells = reader.locate(
        lambda m, window, _: f"max by (instance) (max_over_time({metric}{{{m}}}[{window}])) == 1",
        "locate degradations", instances=instances, per_instance=per_instance)
    raw = reader.read(lambda m: f"last_over_time({metric}{{{m}}}[{w}]) == 1", 1,
                      "degradations", cells, per_instance=per_instance)
    samples = pd.DataFrame({k: _label(raw, k) for k in ("instance", "uuid", "reason")})
    samples = samples.assign(node=samples["instance"].map(lambda i: reader.node_of.get(i) or i),
                             time=raw["time"] if len(raw) else pd.Series(dtype=object))
    samples = samples[samples["reason"].isin(names.DEGRADATION_REASONS)]
    spans = samples_to_intervals(samples[["node", "uuid", "reason", "time"]].drop_duplicates(),
                                 ["node", "uuid", "reason"], reader.step)
    return spans[columns]


def read_slowdowns(reader: Reader) -> pd.DataFrame:
    """Slowdown episodes of the `slowdowns` frame (job, node, start, end, gpu_seconds): the
    steps over which a job's `gpuslo_job_gpu_seconds_total{category="slowdown"}` grew on an
    instance, consecutive steps merged; an increase seen at t stands for (t − step, t]. What the
    journals' episodes would say, to the step (the counter moves when the calculator confirms a
    slow interval), so the engine can match them with the degradations of the job's nodes."""
    columns = ["job", "node", "start", "end", "gpu_seconds"]
    slow = f'category="{names.CATEGORY_SLOWDOWN}"'
    x = f"gpuslo_job_gpu_seconds_total{{{slow},%s}}"
    instances, per_instance = _per_instance(reader.api, f"gpuslo_job_gpu_seconds_total{{{slow}}}",
                                            reader.start, reader.end)
    if not instances:
        return pd.DataFrame(columns=columns)
    w, step = window_ms(reader.step), f"{reader.step}s"

    def grew_in(m: str, steps: int) -> str:  # the bucket's samples and the one before it
        span = window_ms((steps + 1) * reader.step)
        return (f"max by (instance) (max_over_time({x % m}[{span}])"
                f" - min_over_time({x % m}[{span}])) > 0")

    cells = reader.locate(lambda m, _, steps: grew_in(m, steps), "locate slowdowns",
                          instances=instances, per_instance=per_instance)
    grew = reader.read(
        lambda m: (f"(last_over_time({x % m}[{w}]) - last_over_time({x % m}[{w}] offset {step}))"
                   " > 0"),
        2, "slowdown counters", cells, per_instance=per_instance)
    if grew.empty:
        return pd.DataFrame(columns=columns)
    samples = pd.DataFrame({k: _label(grew, k) for k in ("instance", "job")})
    samples = samples.assign(
        node=samples["instance"].map(lambda i: reader.node_of.get(i) or i),
        time=grew["time"] - pd.Timedelta(seconds=reader.step), gpu_seconds=grew["value"])
    spans = samples_to_intervals(samples[["job", "node", "time", "gpu_seconds"]],
                                 ["job", "node"], reader.step, total="gpu_seconds")
    return spans[columns]


# --- job goodput and the recorded SLIs ---------------------------------------------------------


def read_job_seconds(reader: Reader) -> pd.DataFrame:
    """Per (job, node, category): the counter's increase in the window, GPU-seconds."""
    api, start, end = reader.api, reader.start, reader.end
    instances = api.label_values("instance", "gpuslo_job_gpu_seconds_total", start, end)
    columns = ["job", "node", "category", "gpu_seconds"]
    if not instances:
        return pd.DataFrame(columns=columns)
    per_instance = max(len(api.series(f'gpuslo_job_gpu_seconds_total{{instance="{instances[0]}"}}',
                                      start, end)), 1) * 2
    points = int((end - start).total_seconds() // reader.step) + 1
    x = "gpuslo_job_gpu_seconds_total{%s}"
    span = window_ms((end - start).total_seconds())
    last = api.sharded_instant(lambda m: f"last_over_time({x % m}[{span}])", instances,
                               per_instance, points, end - pd.Timedelta(milliseconds=1),
                               "job counters at end")
    first = api.sharded_instant(lambda m: f"last_over_time({x % m}[{START_HOLD}])", instances,
                                per_instance, points, start, "job counters at start")
    keys = ["instance", "job", "category"]
    ends = pd.DataFrame({k: _label(last, k) for k in keys}).assign(v=last["value"])
    starts = pd.DataFrame({k: _label(first, k) for k in keys}).assign(v0=first["value"])
    both = ends.merge(starts, on=keys, how="left")
    return pd.DataFrame({"job": both["job"], "node": both["instance"].map(
        lambda i: reader.node_of.get(i, i)), "category": both["category"],
        "gpu_seconds": both["v"] - both["v0"].fillna(0.0)})
