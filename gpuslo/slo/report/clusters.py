"""The report's per-cluster table, for a global store holding several clusters
(`gpuslo.slo.sources.clusters`): one row per cluster, each figure the one the engine gives on
that cluster's frames alone — what `gpuslo report --prometheus` gives against that cluster's
own Prometheus — beside the fleet's.

`cluster_rows(results)` takes cluster → `WeeklyResult.to_json_dict()` and keeps `KEYS` (already
rounded by the engine); `clusters_section(doc)` renders them. A report from one cluster's
Prometheus has no `clusters` key and no such section, as before.
"""

from __future__ import annotations

from gpuslo import names
from gpuslo.slo.report.model import Section, Table, hours, ratio

KEYS = ("gpus", "nodes", "provisioned_gpu_hours", "usable_gpu_hours", "usable_ratio",
        "unusable_gpu_hours_by_layer", "goodput_ratio", "job_gpu_hours",
        "job_productive_gpu_hours", "interruptions")


def cluster_rows(results: dict[str, dict]) -> list[dict]:
    """One row per cluster (sorted by name): `cluster`, the KEYS of its engine result, and its
    blind ratio (data_quality.blind_ratio: no data or unknown verdicts over provisioned)."""
    rows = []
    for name, doc in sorted(results.items()):
        row = {"cluster": name, **{key: doc.get(key) for key in KEYS}}
        row["blind_ratio"] = (doc.get("data_quality") or {}).get("blind_ratio")
        rows.append(row)
    return rows


def clusters_section(doc: dict) -> Section:
    """The 'Clusters' section: the fleet's usable ratio as the GPU-time-weighted mean of the
    clusters', then one row per cluster and the fleet's total."""
    rows = doc.get("clusters") or []
    layers = [layer for layer in names.LAYERS
              if any((r.get("unusable_gpu_hours_by_layer") or {}).get(layer) for r in rows)]
    columns = ("cluster", "GPUs", "provisioned GPU-h", "usable GPU-h", "usable ratio",
               *(f"unusable {layer} GPU-h" for layer in layers), "blind ratio", "goodput ratio")

    def line(name: str, r: dict) -> tuple[str, ...]:
        by = r.get("unusable_gpu_hours_by_layer") or {}
        return (name, f"{r.get('gpus') or 0:,}", hours(r.get("provisioned_gpu_hours")),
                hours(r.get("usable_gpu_hours")), ratio(r.get("usable_ratio")),
                *(hours(by.get(layer)) for layer in layers),
                ratio(r.get("blind_ratio")), ratio(r.get("goodput_ratio")))

    fleet = {**doc, "blind_ratio": (doc.get("data_quality") or {}).get("blind_ratio")}
    lines = (f"{len(rows)} clusters read from one global store, each on its own series "
             "(cluster label): the fleet's usable ratio is usable over provisioned GPU-hours of "
             "all of them, so a cluster weighs by its GPU-hours.",)
    table = Table(columns, tuple(line(r["cluster"], r) for r in rows) + (line("fleet", fleet),))
    return Section("clusters", "Clusters", lines, (table,))
