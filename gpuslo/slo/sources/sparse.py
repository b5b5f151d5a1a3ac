"""The sparse reads of the Prometheus source (`gpuslo.slo.sources.prometheus`), each a query
split under the sample budget by `gpuslo.slo.sources.query_api`: coverage edges, non-healthy
verdicts with their problem reasons (and the check-error fallback), kube-state-metrics cordons,
missing GPUs, Slurm node states, the GPUs' workload allocations, warn-level degradations, the job
counters' increases (over the window, and step by step for `slowdown`); the recorded SLIs are
read by `gpuslo.slo.sources.recorded`.

The per-step windows and the locate-then-read of every query are
`gpuslo.slo.sources.sparse_reader`'s.
"""

from __future__ import annotations

import pandas as pd

from gpuslo import names
from gpuslo.slo.sources.job_tiles import read_tiled
from gpuslo.slo.sources.provisioned import UNSEEN_PREFIX
from gpuslo.slo.sources.query_api import QueryApi, alternation, groups
from gpuslo.slo.sources.slurm import node_state_frames
from gpuslo.slo.sources.sparse_reader import (
    AFTER,
    Cell,
    Reader,
    label_column,
    samples_to_intervals,
    window_ms,
)

START_HOLD = "1d"  # how far before the window a job counter's value is looked for
_REASON_RANK = {reason: rank for rank, reason in enumerate(names.REASONS)}
INCREASE = "gpuslo:job_gpu_seconds:increase1m"  # gpuslo.alerts.sli.JOB_SECONDS_INCREASE


# --- coverage, verdicts, reasons, schedulability ------------------------------------------------


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
        pd.DataFrame({"instance": label_column(f, "instance"), "uuid": label_column(f, "uuid"),
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
    v = pd.DataFrame({k: label_column(verdicts, k) for k in ("instance", "uuid", "verdict")})
    v["time"] = verdicts["time"]
    p = pd.DataFrame({k: label_column(problems, k) for k in ("instance", "uuid", "reason", "layer",
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
    found = pd.DataFrame({"instance": label_column(grew, "instance"), "time": grew["time"],
                          "fallback": label_column(grew, "reason")})
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
    frame = pd.DataFrame({"node": label_column(flags, "node"), "time": flags["time"]})
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
    pod = label_column(found, "pod")
    namespace, name = label_column(found, "namespace"), label_column(found, "container")
    container = namespace + ":" + pod + ":" + name
    container = container.str.replace(r"[^A-Za-z0-9._:@+=-]", "_", regex=True).str[:128]
    job = container.where(pod != "", label_column(found, "hpc_job"))
    frame = pd.DataFrame({"job": job, "node": label_column(found, "instance").map(
        lambda i: reader.node_of.get(i) or i), "uuid": label_column(found, "uuid"),
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
    instance = label_column(fails, "instance")
    fails = fails.assign(node=instance.map(lambda i: reader.node_of.get(i) or i))
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
    samples = pd.DataFrame({k: label_column(raw, k) for k in labels})
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
    samples = pd.DataFrame({k: label_column(raw, k) for k in ("instance", "uuid", "reason")})
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
    samples = pd.DataFrame({k: label_column(grew, k) for k in ("instance", "job")})
    samples = samples.assign(
        node=samples["instance"].map(lambda i: reader.node_of.get(i) or i),
        time=grew["time"] - pd.Timedelta(seconds=reader.step), gpu_seconds=grew["value"])
    spans = samples_to_intervals(samples[["job", "node", "time", "gpu_seconds"]],
                                 ["job", "node"], reader.step, total="gpu_seconds")
    return spans[columns]


# --- job goodput and the recorded SLIs ---------------------------------------------------------


def read_job_seconds(reader: Reader) -> pd.DataFrame:
    """Per (job, node, category): the counter's increase in the window, GPU-seconds — per
    (job, category) with node "" from the job tiles group where it ran
    (`gpuslo.slo.sources.job_tiles`: the same sums), else, and for the jobs the tiles would
    count a counter of twice, from every node's counters."""
    api, start, end = reader.api, reader.start, reader.end
    instances = api.label_values("instance", "gpuslo_job_gpu_seconds_total", start, end)
    columns = ["job", "node", "category", "gpu_seconds"]
    if not instances:
        return pd.DataFrame(columns=columns)
    tiled = read_tiled(reader, instances) if reader.locate_cells else None
    if tiled is None:
        return _read_raw(reader, instances, "")
    rows, twice = tiled
    if not twice:
        return rows
    raw = [_read_raw(reader, instances, f'job=~"{alternation(group)}",')
           for group in groups(twice, len(twice))]
    return pd.concat([rows, *raw], ignore_index=True)[columns]


def _read_raw(reader: Reader, instances: list[str], jobs: str) -> pd.DataFrame:
    """`read_job_seconds` from every node's counters (`jobs`: a matcher prefix, `job=~"…",`,
    or "" for all): each counter's last value before the window's end minus its last value in
    the day before the start (its whole value when it has none there)."""
    api, start, end = reader.api, reader.start, reader.end
    per_instance = max(len(api.series(f'gpuslo_job_gpu_seconds_total{{instance="{instances[0]}"}}',
                                      start, end)), 1) * 2
    points = int((end - start).total_seconds() // reader.step) + 1
    x = lambda m: "gpuslo_job_gpu_seconds_total{" + jobs + m + "}"  # noqa: E731
    span = window_ms((end - start).total_seconds())
    last = api.sharded_instant(lambda m: f"last_over_time({x(m)}[{span}])", instances,
                               per_instance, points, end - pd.Timedelta(milliseconds=1),
                               "job counters at end")
    first = api.sharded_instant(lambda m: f"last_over_time({x(m)}[{START_HOLD}])", instances,
                                per_instance, points, start, "job counters at start")
    keys = ["instance", "job", "category"]
    ends = pd.DataFrame({k: label_column(last, k) for k in keys}).assign(v=last["value"])
    starts = pd.DataFrame({k: label_column(first, k) for k in keys}).assign(v0=first["value"])
    both = ends.merge(starts, on=keys, how="left")
    return pd.DataFrame({"job": both["job"], "node": both["instance"].map(
        lambda i: reader.node_of.get(i, i)), "category": both["category"],
        "gpu_seconds": both["v"] - both["v0"].fillna(0.0)})
