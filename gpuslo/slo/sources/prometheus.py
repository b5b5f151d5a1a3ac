"""SLO frames from a Prometheus-compatible HTTP API (Prometheus, Thanos Query, Mimir,
VictoriaMetrics), every request under the server's sample limits (`gpuslo.slo.sources.query_api`).

`load_prometheus(url, start, end, ...) -> Frames` reads, for [start, end):

- the GPUs: label sets of `gpuslo_gpu_info` and `gpuslo_node_info` from `/api/v1/series` (the
  index, no samples), sharded by `instance` — and what should exist, never only what answered
  (DESIGN.md §6): per node the provisioned count (`gpuslo.slo.sources.provisioned`: the recorded
  `gpuslo:node_gpus_provisioned:max`, kube-state-metrics' GPU capacity, the exporters'
  `gpuslo_gpu_expected`), with one placeholder row per GPU provisioned but never listed (its time
  is `no_data`, or `unhealthy`/`gpu_missing` while its node's gpu_inventory check says `fail`).
  `provisioned(gpus, coverage, start, end)` decides when each is provisioned (one pure
  function: from the first time its node or the GPU answered in the window, else the start);
- the step: the spacing of the raw samples of one GPU (`--step` overrides it), so each sample
  at t stands for [t, t + step);
- coverage: when each GPU's `gpuslo_gpu_usable` has a sample, as begin and end edges
  (`count_over_time` over one step, so the server's lookback delta plays no part);
- non-healthy time only: `gpuslo_gpu_verdict{verdict!="healthy"}` and `gpuslo_gpu_problem` at 1
  (reason, layer, action); unknown time without a problem series takes its reason from the check
  error counters that grew then (`gpuslo_check_errors_total{reason}`), else `stale_data` (the
  check stopped), and the data quality says how much;
- schedulability: `kube_node_spec_unschedulable` at 1 (kube-state-metrics) for the GPU nodes,
  as `cordoned` platform time (without it the data quality says so), and Slurm node states
  (`gpuslo_slurm_node_state{state!="up"}`, `gpuslo.slo.sources.slurm.node_state_frames`: other
  people's drains as schedulability, gpuslo's own as node-wide verdicts);
- allocations: `gpuslo_gpu_allocation` at 1 (which workload held each GPU: job
  `<namespace>:<pod>:<container>`, as `--job-log` names it, or the `hpc_job`), for the
  per-job attribution (`gpuslo.slo.job_losses`);
- job goodput: each `gpuslo_job_gpu_seconds_total` series' last value in the window minus its
  last value in the day before (a job first seen in the window counts whole) — the increase of
  the counter, no extrapolation; per job and node;
- the crawl: warn-level degradations (`gpuslo_node_degradation` at 1) and the slowdown episodes
  (the steps over which `gpuslo_job_gpu_seconds_total{category="slowdown"}` grew), so a job's
  slowdown is attributed to the node layer when a degradation was active on one of its nodes,
  as the engine does with journals;
- serving replicas, their readiness, idle time and latency counts, from the serving rules'
  recorded series and kube-state-metrics (`gpuslo.slo.sources.serving`);
- the recorded SLIs where the rules recorded them (usable GPU ratio, job goodput by category
  from `gpuslo:job_gpu_seconds:increase1m`), for the data quality's cross-check.

Healthy time is the covered rest. The GPUs and when they are provisioned are read here; the
sparse reads live in `gpuslo.slo.sources.sparse`, each located first (an instant query per
bucket of the window names the instances with anything to read; coverage gaps and non-healthy
verdicts from the recording rules' per-instance locate series where they ran,
`gpuslo.slo.sources.located`) and then read per step only there. Range queries are split so that
series × steps × terms stays under `max_samples`; every query is retried on 5xx and timeouts.
Errors: InputError naming the URL and the query.
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import requests

from gpuslo import names
from gpuslo.errors import InputError
from gpuslo.slo.frames import Frames, make_frame
from gpuslo.slo.sources.job_tiles import with_job_nodes
from gpuslo.slo.sources.listed import first_listed
from gpuslo.slo.sources.located import recorded_cells
from gpuslo.slo.sources.provisioned import provisioned_counts, with_unseen
from gpuslo.slo.sources.query_api import (
    DEFAULT_MAX_SAMPLES,
    DEFAULT_RETRIES,
    DEFAULT_TIMEOUT_S,
    QueryApi,
    alternation,
    groups,
)
from gpuslo.slo.sources.recorded import read_recorded
from gpuslo.slo.sources.serving import read_serving
from gpuslo.slo.sources.sparse import (
    read_allocations,
    read_coverage,
    read_degradations,
    read_job_seconds,
    read_missing,
    read_non_healthy,
    read_schedulability,
    read_slowdowns,
    read_slurm,
)
from gpuslo.slo.sources.sparse_reader import Reader, samples_to_intervals, window_ms

__all__ = ["load_prometheus", "provisioned", "read_gpus", "samples_to_intervals"]
SERIES_PER_CALL = 2_000  # label sets per /api/v1/series call (VictoriaMetrics -search.maxSeries)


# --- the GPUs and which are provisioned ---------------------------------------------------------


def read_gpus(api: QueryApi, start: pd.Timestamp,
              end: pd.Timestamp) -> tuple[pd.DataFrame, dict[str, str]]:
    """(one row per (instance, uuid) seen in [start, end): instance, node (gpuslo_node_info's
    `node`, else the instance), uuid, gpu, model, family; instance → node of every exporter that
    answered) — from the series index only."""
    instances = sorted(set(api.label_values("instance", "gpuslo_gpu_info", start, end))
                       | set(api.label_values("instance", "gpuslo_node_info", start, end)))
    rows, nodes, shard, a = [], {}, 1, 0
    while a < len(instances):
        group = groups(instances[a:], shard)[0]
        matcher = f'{{instance=~"{alternation(group)}"}}'
        found = api.series(f"gpuslo_gpu_info{matcher}", start, end)
        rows += found
        nodes.update({s.get("instance", ""): s.get("node", "")
                      for s in api.series(f"gpuslo_node_info{matcher}", start, end)})
        a += len(group)
        shard = max(1, SERIES_PER_CALL * len(group) // max(len(found), 1))
    gpus = _gpu_rows(rows)
    gpus.insert(1, "node", gpus["instance"].map(lambda i: nodes.get(i) or i))
    return gpus, {i: n or i for i, n in nodes.items()}


def _gpu_rows(rows: list[dict]) -> pd.DataFrame:
    columns = ["instance", "uuid", "gpu", "model", "family"]
    gpus = pd.DataFrame([{k: s.get(k, "") for k in columns} for s in rows], columns=columns)
    return gpus.drop_duplicates(["instance", "uuid"], keep="last").reset_index(drop=True)


def provisioned(gpus: pd.DataFrame, coverage: pd.DataFrame, start: pd.Timestamp,
                end: pd.Timestamp, listed: pd.Series | None = None) -> pd.DataFrame:
    """The inventory frame's rows (node, uuid, gpu, model, family, provisioned_start,
    provisioned_end) for `gpus` (every GPU seen in the window plus the placeholders of
    `provisioned.with_unseen`; columns instance, node, uuid, ...), the coverage of the GPUs
    seen and `listed` (node → the first time in the window the inventory listed it,
    `listed.first_listed`): each is provisioned from the earliest of the first time it or any
    GPU of its node answered and the first time the inventory listed its node — a node that
    joins mid-window is not charged as no data before it existed, unless the inventory expected
    it — else from the window start; to the end of the window asked for (the API answered for
    all of it: a fleet blind throughout is a window of no_data). Times at any resolution. Pure;
    the one place that decides which GPUs count as provisioned."""
    node_of = dict(zip(gpus["instance"], gpus["node"], strict=True))
    seen = pd.DataFrame({"instance": coverage.get("instance", pd.Series(dtype=object)),
                         "uuid": coverage.get("uuid", pd.Series(dtype=object)),
                         "start": _utc_ns(coverage.get("start", pd.Series(dtype=object)))})
    first_gpu = seen.groupby(["instance", "uuid"])["start"].min()
    first_node = seen.assign(node=seen["instance"].map(node_of)).groupby("node")["start"].min()
    if listed is not None and len(listed):
        first_node = pd.concat([first_node, _utc_ns(listed)]).groupby(level=0).min()
    key = pd.MultiIndex.from_frame(gpus[["instance", "uuid"]])
    gpu = _utc_ns(pd.Series(first_gpu.reindex(key).to_numpy(), index=gpus.index))
    node = _utc_ns(gpus["node"].map(first_node))
    since = pd.concat([gpu, node], axis=1).min(axis=1)
    return gpus.assign(provisioned_start=since.fillna(start).clip(lower=start),
                       provisioned_end=end).drop(columns="instance")


def _utc_ns(times: pd.Series) -> pd.Series:
    """`times` (any resolution, aware, naive = UTC, or empty/NaT) as datetime64[ns, UTC]."""
    times = pd.to_datetime(times, utc=True)
    if not isinstance(times.dtype, pd.DatetimeTZDtype):
        times = times.dt.tz_localize("UTC")
    return times.astype("datetime64[ns, UTC]")


def detect_step(api: QueryApi, selector: str, start: pd.Timestamp, end: pd.Timestamp) -> int:
    """Seconds between the raw samples of `selector` (one series: a GPU's gpuslo_gpu_usable,
    else a node's gpuslo_node_info; the median spacing in an hour of data), at the window's
    end, middle or start; 60 when none is found."""
    span = end - start
    look = min(span, pd.Timedelta(hours=1))
    window = window_ms(look.total_seconds() + 0.001)
    for at in (end, start + span / 2, start + look):
        found = api.instant(f"{selector}[{window}]", at - pd.Timedelta(milliseconds=1),
                            kind="matrix")
        for series in found:
            times = np.array([float(t) for t, _ in series.get("values", [])])
            if len(times) > 2:
                return max(1, int(round(float(np.median(np.diff(times))))))
    return 60


def load_prometheus(
    url: str,
    start: pd.Timestamp,
    end: pd.Timestamp,
    step_s: int | None = None,
    session: requests.Session | None = None,
    progress: bool | None = None,
    timeout_s: float = DEFAULT_TIMEOUT_S,
    max_samples: int = DEFAULT_MAX_SAMPLES,
    retries: int = DEFAULT_RETRIES,
    api: QueryApi | None = None,
    locate: bool = True,
) -> Frames:
    """Frames for [start, end) from the API at `url` (see the module docstring): inventory,
    verdicts, schedulability, allocations, `job_gpu_seconds`, degradations and slowdowns;
    `recorded` holds the rules' SLIs and `cannot_fill` what could not be read. `locate=False`
    reads every GPU at every step instead of locating the cells first
    (`gpuslo.slo.sources.sparse`: the same frames, slower). Raises InputError."""
    api = api or QueryApi(url, session, timeout_s, retries, max_samples, progress)
    seen, node_of = read_gpus(api, start, end)
    window = window_ms((end - start).total_seconds())
    inventory = with_unseen(seen, provisioned_counts(api, end - pd.Timedelta(milliseconds=1),
                                                     window, node_of))
    if inventory.empty:
        raise InputError(url, f"nothing provisioned between {start} and {end}: no "
                              "gpuslo_gpu_info, gpuslo_gpu_expected, kube_node_status_capacity or "
                              "gpuslo:node_gpus_provisioned:max")
    node_of |= dict(zip(seen["instance"], seen["node"], strict=True))
    probe = (f'gpuslo_gpu_usable{{instance="{seen["instance"].iloc[0]}"}}' if len(seen) else
             f'gpuslo_node_info{{instance="{min(node_of)}"}}' if node_of else "gpuslo_node_info")
    step = step_s or detect_step(api, probe, start, end)
    reader = Reader(api, seen, node_of, start, end, step, locate)
    if locate:
        reader.recorded = recorded_cells(reader)
    coverage = read_coverage(reader)
    inventory = provisioned(inventory, coverage, start, end, first_listed(reader))
    bad, quality = read_non_healthy(reader)
    sched, note = read_schedulability(reader, sorted(inventory["node"].unique()))
    quality.update(note)
    slurm_verdicts, slurm_sched = read_slurm(reader)
    verdicts = pd.concat(
        [coverage.assign(verdict=names.VERDICT_HEALTHY, reason="", layer="", action=""), bad],
        ignore_index=True)
    verdicts["node"] = verdicts["instance"].map(lambda i: node_of.get(i, i))
    verdicts = pd.concat([verdicts.drop(columns="instance"), read_missing(reader, inventory),
                          slurm_verdicts], ignore_index=True)
    jobs = read_job_seconds(reader)
    slowdowns = read_slowdowns(reader) if len(jobs) else None
    if slowdowns is not None:
        jobs = with_job_nodes(reader, jobs, slowdowns)
    allocations = read_allocations(reader)
    if allocations.empty:
        quality["allocations"] = ("no gpuslo_gpu_allocation series in the window (exporters "
                                  "without --pod-resources-kubelet-socket or "
                                  "--hpc-job-mapping-dir): no job held a GPU")
        if not jobs.empty:  # the job counters are there: say why they are not interruptions
            quality["interruptions"] = (
                "no gpuslo_gpu_allocation series in the window: job interruptions are counted "
                "per allocated GPU-day, and no job's GPU-time is allocated")
    if jobs.empty:
        quality["goodput"] = ("no gpuslo_job_gpu_seconds_total series in the window; job "
                              "goodput comes from --journals")
    serving, note = read_serving(api, start, end, step, node_of)
    quality.update(note)
    return Frames(
        **{name: make_frame(name, rows, url) for name, rows in serving.items()},
        inventory=make_frame("inventory", inventory, url),
        verdicts=make_frame("verdicts", verdicts, url),
        schedulability=make_frame("schedulability", pd.concat([sched, slurm_sched],
                                                              ignore_index=True), url),
        allocations=make_frame("allocations", allocations, url),
        job_gpu_seconds=make_frame("job_gpu_seconds", jobs, url),
        degradations=make_frame("degradations", read_degradations(reader), url),
        slowdowns=make_frame("slowdowns", slowdowns, url),
        cannot_fill=quality,
        recorded=read_recorded(api, start, end, step),
        source=f"{url} (step {step} s)",
    )
