"""The Prometheus source over a global store: many clusters, one SLO (Thanos Query, Mimir or
VictoriaMetrics holding every cluster's series with the `cluster` label its Prometheus adds
on remote write).

`read_clusters(api, start, end)` names the clusters (values of `cluster` on gpuslo_node_info and
gpuslo_gpu_info in the window, from the series index); none means a single cluster's own
Prometheus, read exactly as before. `load_global(url, start, end, clusters, ...)` reads each
cluster on its own — `gpuslo.slo.sources.prometheus.load_prometheus` with every query scoped to
`cluster="<name>"` (`gpuslo.slo.sources.scope`), so a cluster's frames are those its own
Prometheus gives — and returns their union as the fleet's frames, with each cluster's frames in
`Frames.clusters`. In the union, node, job and serving replica names become `<cluster>/<name>`
(two clusters may both have a `gpu-001` or a `train` job), as do the placeholder uuids of
provisioned GPUs never seen. Series without a `cluster` label are not read; the data quality
says how many exporters that leaves out.
"""

from __future__ import annotations

import dataclasses
import re

import pandas as pd

from gpuslo.slo.frames import FRAMES, Frames, make_frame
from gpuslo.slo.sources.prometheus import load_prometheus
from gpuslo.slo.sources.provisioned import UNSEEN_PREFIX
from gpuslo.slo.sources.query_api import QueryApi
from gpuslo.slo.sources.recorded import read_recorded

LABEL = "cluster"
FLEET_USABLE = "gpuslo_fleet:gpu_usable:count"  # gpuslo.alerts.global_rules
FLEET_PROVISIONED = "gpuslo_fleet:gpu_provisioned:count"


def read_clusters(api: QueryApi, start: pd.Timestamp, end: pd.Timestamp) -> list[str]:
    """The `cluster` values of the exporters' series in [start, end], sorted; [] when the
    series carry none (one cluster's own Prometheus)."""
    found: set[str] = set()
    for metric in ("gpuslo_node_info", "gpuslo_gpu_info"):
        found |= set(api.label_values(LABEL, metric, start, end))
    return sorted(value for value in found if value)


def prefixed(frames: Frames, cluster: str) -> dict[str, pd.DataFrame]:
    """Frame name → the frame with node and job names (and placeholder uuids) prefixed by
    `<cluster>/`. Pure."""
    out = {}
    for name in FRAMES:
        frame = getattr(frames, name, None)
        if frame is None:
            continue
        frame = frame.copy()
        for column in ("node", "job", "replica"):  # a replica is named as its allocation's job
            if column in frame.columns:
                frame[column] = (cluster + "/" + frame[column].astype(str)).astype("string")
        if "uuid" in frame.columns:
            unseen = frame["uuid"].astype(str).str.startswith(f"{UNSEEN_PREFIX}:")
            frame.loc[unseen, "uuid"] = frame.loc[unseen, "uuid"].astype(str).str.replace(
                f"{UNSEEN_PREFIX}:", f"{UNSEEN_PREFIX}:{cluster}/", n=1, regex=False)
        out[name] = frame
    return out


def union(per_cluster: dict[str, Frames], source: str) -> Frames:
    """The fleet's frames: every cluster's, names prefixed (`prefixed`); the notes on what
    could not be filled joined per key as `<cluster>: <note>`."""
    parts = {name: [] for name in FRAMES}
    notes: dict[str, list[str]] = {}
    for cluster, frames in sorted(per_cluster.items()):
        for name, frame in prefixed(frames, cluster).items():
            parts[name].append(frame)
        for key, note in frames.cannot_fill.items():
            notes.setdefault(key, []).append(f"{cluster}: {note}")
    fields = {field.name for field in dataclasses.fields(Frames)}
    built = {name: make_frame(name, pd.concat(frames, ignore_index=True), source)
             for name, frames in parts.items() if frames and name in fields}
    return Frames(**built, cannot_fill={k: "; ".join(v) for k, v in sorted(notes.items())},
                  source=source)


def read_fleet_recorded(api: QueryApi, start: pd.Timestamp, end: pd.Timestamp,
                        step_s: int) -> dict:
    """The fleet's recorded SLIs for the window (`gpuslo.slo.sources.recorded`): the usable
    ratio from the global rules' fleet counts when a global ruler recorded them
    (`gpuslo rules --split global`), job goodput from the clusters' recorded increases (they add
    up)."""
    return read_recorded(api, start, end, step_s, counts=(FLEET_USABLE, FLEET_PROVISIONED))


def unlabelled_note(api: QueryApi, start: pd.Timestamp, end: pd.Timestamp) -> dict[str, str]:
    """A data-quality note when some exporters' series carry no `cluster` (left out)."""
    bare = api.label_values("instance", f'gpuslo_node_info{{{LABEL}=""}}', start, end)
    if not bare:
        return {}
    return {"clusters": f"{len(bare)} exporter(s) without a cluster label were left out (a "
                        "Prometheus without external_labels.cluster remote-writing to the "
                        "global store?)"}


def load_global(url: str, start: pd.Timestamp, end: pd.Timestamp, clusters: list[str],
                **options) -> Frames:
    """The fleet's frames from the global store at `url`, each cluster read alone (see the
    module docstring); `options` are `load_prometheus`'s (step_s, timeout_s, max_samples,
    retries, progress, locate). Raises InputError as `load_prometheus` does."""
    client = {key: options.pop(key) for key in ("timeout_s", "retries", "max_samples",
                                                "progress") if key in options}
    per_cluster = {
        cluster: load_prometheus(url, start, end, api=QueryApi(url, scope={LABEL: cluster},
                                                              **client), **options)
        for cluster in clusters
    }
    # each cluster's step, as load_prometheus names it in its source: "<url> (step 60 s)"
    steps = sorted({int(found.group(1)) for frames in per_cluster.values()
                    if (found := re.search(r"\(step (\d+) s\)$", frames.source))})
    source = (f"{url} (global store, clusters {', '.join(clusters)}; step "
              f"{', '.join(f'{s} s' for s in steps)})")
    fleet = union(per_cluster, source)
    api = QueryApi(url, **client)
    fleet.cannot_fill.update(unlabelled_note(api, start, end))
    recorded = read_fleet_recorded(api, start, end, min(steps, default=60))
    return dataclasses.replace(fleet, recorded=recorded, clusters=per_cluster)


def load_api(url: str, start: pd.Timestamp, end: pd.Timestamp, **options) -> Frames:
    """The frames of the Prometheus-compatible API at `url`: one cluster's Prometheus as
    always, or, when its series carry `cluster` (a global store), the fleet's with each
    cluster's beside them (`load_global`). `options` are `load_prometheus`'s (step_s,
    timeout_s, max_samples). Raises InputError."""
    client = {key: options[key] for key in ("timeout_s", "max_samples") if key in options}
    clusters = read_clusters(QueryApi(url, **client), start, end)
    if clusters:
        return load_global(url, start, end, clusters, **options)
    return load_prometheus(url, start, end, **options)
