"""Serving replicas from a Prometheus-compatible API (issue 29): the frames replicas,
replica_states, replica_idle and replica_latency of `gpuslo.slo.frames`, read from what the
serving rules record (`gpuslo rules --slo` with a `serving:` section, `gpuslo-serving.rules.yml`)
and kube-state-metrics — no engine metric is re-derived here.

`read_serving(api, start, end, step_s, node_of) -> (frames, quality)`, each sample at t standing
for [t, t + step):

- replicas: `gpuslo:serving_replica_gpus:allocated` (GPUs of a pod that holds GPUs and runs an
  engine), per (namespace, pod) → replica named as its allocation's job,
  `<namespace>:<pod>:<container>` (so the engine keeps it out of the training jobs), its node
  from the instance of its `gpuslo_gpu_allocation` series (`node_of`), engine from the metric
  family it publishes;
- states: `kube_pod_status_ready{condition="true"}` at 1 → `ready`, at 0 → `loading` before the
  pod's first ready sample, `not_ready` after it; `kube_pod_deletion_timestamp` present →
  `draining`; no readiness sample → no state (the accounting's `other`, observability);
- idle: `gpuslo:serving_replica_gpus:idle` present (ready, no request running or waiting);
- latency: `gpuslo:serving_{ttft,itl}_{good,total}:rate5m` × step summed per replica and UTC
  hour (a Riemann sum of the recorded rates), at the bound the rules recorded
  (`gpuslo:serving_objective_seconds{sli}`); a replica with a total but no good series (no
  bucket at the objective) gets its total with an empty `le`.

Without the recorded allocated series (a training-only fleet, or no serving rules) there is no
replica and no note; `quality` says when the replicas have no kube-state-metrics readiness. Range
queries are cut in time so no query passes the server's points limit; replicas are few beside
GPUs, so queries are not sharded by pod. Raises InputError (the API's).
"""

from __future__ import annotations

import pandas as pd

from gpuslo.slo.sources.query_api import MAX_POINTS, QueryApi, concat, tidy
from gpuslo.slo.sources.sparse_reader import label_column, samples_to_intervals

BY = "namespace, pod"
ALLOCATED = "gpuslo:serving_replica_gpus:allocated"
ENGINES = (("vllm", "vllm:num_requests_running"), ("sglang", "sglang:num_running_reqs"),
           ("triton", "nv_inference_request_success"), ("tgi", "tgi_queue_size"))


def _range(api: QueryApi, query: str, start: pd.Timestamp, end: pd.Timestamp,
           step_s: int) -> pd.DataFrame:
    """`query` at every step in [start, end), cut into pieces of at most MAX_POINTS steps."""
    parts, t = [], start
    while t < end:
        last = min(t + pd.Timedelta(seconds=step_s * (MAX_POINTS - 1)),
                   end - pd.Timedelta(milliseconds=1))
        parts.append(api.range(query, t, last, step_s))
        t = last + pd.Timedelta(seconds=step_s)
    out = concat(parts)
    if len(out):
        out["replica"] = label_column(out, "namespace") + "/" + label_column(out, "pod")
    return out


def read_serving(api: QueryApi, start: pd.Timestamp, end: pd.Timestamp, step_s: int,
                 node_of: dict[str, str]) -> tuple[dict[str, pd.DataFrame], dict[str, str]]:
    """The serving frames (as records, for `frames.make_frame`) and quality notes."""
    alloc = _range(api, f"max by ({BY}) ({ALLOCATED})", start, end, step_s)
    if alloc.empty:  # a training-only fleet, or no serving rules: no serving section
        return {}, {}
    replicas = _replicas(api, alloc, start, end, step_s, node_of)
    ready = _range(api, f'max by ({BY}) (kube_pod_status_ready{{condition="true"}}) '
                        f"and on ({BY}) {ALLOCATED}", start, end, step_s)
    deleting = _range(api, f"max by ({BY}) (kube_pod_deletion_timestamp) and on ({BY}) "
                           f"{ALLOCATED}", start, end, step_s)
    idle = _range(api, "gpuslo:serving_replica_gpus:idle", start, end, step_s)
    quality = {} if len(ready) else {
        "serving_states": "no kube_pod_status_ready series for the serving pods: their time is "
                          "`other` (kube-state-metrics is not scraped)"}
    frames = {
        "replicas": replicas,
        "replica_states": _states(ready, deleting, step_s),
        "replica_idle": _intervals(idle, step_s),
        "replica_latency": _latency(api, start, end, step_s),
    }
    named = _job_names(api, start, end)
    return {name: frame.assign(replica=frame["replica"].map(lambda r: named.get(r, r)))
            for name, frame in frames.items()}, quality


def _job_names(api: QueryApi, start: pd.Timestamp, end: pd.Timestamp) -> dict[str, str]:
    """`<namespace>/<pod>` → the pod's job name in the allocations frame,
    `<namespace>:<pod>:<container>` (`sparse.read_allocations`: the first container holding
    GPUs), so a replica and its allocation are one workload."""
    span = f"{int((end - start).total_seconds())}s"
    found = tidy(api.instant(f"group by (namespace, pod, container) (last_over_time("
                             f"gpuslo_gpu_allocation[{span}]))",
                             end - pd.Timedelta(milliseconds=1)), "value")
    if found.empty:
        return {}
    job = (label_column(found, "namespace") + ":" + label_column(found, "pod") + ":"
           + label_column(found, "container")).str.replace(r"[^A-Za-z0-9._:@+=-]", "_",
                                                     regex=True).str[:128]
    keys = label_column(found, "namespace") + "/" + label_column(found, "pod")
    return dict(sorted(zip(keys, job, strict=True), reverse=True))


def _intervals(samples: pd.DataFrame, step_s: int, keys=("replica",)) -> pd.DataFrame:
    if samples.empty:
        return pd.DataFrame(columns=[*keys, "start", "end"])
    return samples_to_intervals(samples[[*keys, "time"]], list(keys), step_s)


def _replicas(api, alloc, start, end, step_s, node_of) -> pd.DataFrame:
    alloc = alloc.assign(gpus=alloc["value"].round().astype("int64"))
    rows = samples_to_intervals(alloc[["replica", "gpus", "time"]], ["replica", "gpus"], step_s)
    at = end - pd.Timedelta(milliseconds=1)
    span = f"{int((end - start).total_seconds())}s"
    where = tidy(api.instant(f"group by ({BY}, instance) (last_over_time("
                             f"gpuslo_gpu_allocation[{span}]))", at), "value")
    node = {}
    if len(where):
        keys = label_column(where, "namespace") + "/" + label_column(where, "pod")
        node = dict(zip(keys, label_column(where, "instance").map(lambda i: node_of.get(i, i)),
                        strict=True))
    engine = {}
    for name, family in ENGINES:
        found = tidy(api.instant(f"group by ({BY}) (last_over_time({family}[{span}]))", at),
                     "value")
        if not len(found):
            continue
        for key in label_column(found, "namespace") + "/" + label_column(found, "pod"):
            engine.setdefault(key, name)
    return rows.assign(node=rows["replica"].map(node).fillna("unknown"),
                       engine=rows["replica"].map(engine).fillna(""))


def _states(ready: pd.DataFrame, deleting: pd.DataFrame, step_s: int) -> pd.DataFrame:
    """States per sample (module docstring), merged into intervals."""
    if ready.empty:
        return pd.DataFrame(columns=["replica", "start", "end", "state"])
    s = ready[["replica", "time", "value"]].sort_values(["replica", "time"], kind="stable")
    first_ready = s[s["value"] >= 1].groupby("replica")["time"].min()
    before = s["time"] < s["replica"].map(first_ready).fillna(s["time"].max()
                                                              + pd.Timedelta(seconds=1))
    state = pd.Series("not_ready", index=s.index).mask(before, "loading").mask(
        s["value"] >= 1, "ready")
    if len(deleting):
        gone = set(zip(deleting["replica"], deleting["time"], strict=True))
        draining = [(r, t) in gone for r, t in zip(s["replica"], s["time"], strict=True)]
        state = state.mask(pd.Series(draining, index=s.index), "draining")
    s = s.assign(state=state)
    return samples_to_intervals(s[["replica", "state", "time"]], ["replica", "state"], step_s)


def _latency(api: QueryApi, start, end, step_s) -> pd.DataFrame:
    """Recorded good and total rates × step, per replica, sli and UTC hour, at the recorded
    objective (rows of `replica_latency`)."""
    bound = tidy(api.instant("gpuslo:serving_objective_seconds", end - pd.Timedelta(
        milliseconds=1)), "value")
    objective = (dict(zip(label_column(bound, "sli"), bound["value"], strict=True))
                 if len(bound) else {})
    parts = []
    for sli, le in sorted(objective.items()):
        counts = {}
        for kind in ("good", "total"):
            found = _range(api, f"gpuslo:serving_{sli}_{kind}:rate5m", start, end, step_s)
            if found.empty:
                continue
            found = found.assign(hour=found["time"].dt.floor("h"), n=found["value"] * step_s)
            counts[kind] = found.groupby(["replica", "hour"])["n"].sum()
        if "total" not in counts:
            continue
        both = pd.DataFrame(counts).dropna(subset=["total"]).reset_index()
        good = both["good"] if "good" in both else pd.Series(float("nan"), index=both.index)
        parts.append(pd.DataFrame({  # no good series: no bucket at the objective, total only
            "replica": both["replica"], "start": both["hour"].clip(lower=start),
            "end": (both["hour"] + pd.Timedelta(hours=1)).clip(upper=end), "sli": sli,
            "le": good.notna().map({True: float(le), False: float("nan")}).astype(float),
            "good": good.fillna(0.0), "total": both["total"]}))
    if not parts:
        return pd.DataFrame(columns=["replica", "start", "end", "sli", "le", "good", "total"])
    return pd.concat(parts, ignore_index=True)
