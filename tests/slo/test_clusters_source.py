"""Many clusters in one report, without servers: scoping a query to a cluster, the fleet as the
union of the clusters' frames (same node names in both), and the per-cluster table. The same on
real Prometheus and VictoriaMetrics: tests/alerts/test_multi_cluster_real.py."""

from __future__ import annotations

import pandas as pd
import pytest

from gpuslo.slo.engine import compute_week
from gpuslo.slo.frames import Frames, make_frame
from gpuslo.slo.report.build import report_of
from gpuslo.slo.report.clusters import cluster_rows
from gpuslo.slo.report.markdown import render_markdown
from gpuslo.slo.simulate import faults
from gpuslo.slo.simulate.fleet import simulate
from gpuslo.slo.sources.clusters import union
from gpuslo.slo.sources.provisioned import with_unseen
from gpuslo.slo.sources.scope import scoped
from gpuslo.slo_spec import SloSpec

A = {"cluster": "a"}


@pytest.mark.parametrize("query, want", [
    ('gpuslo_gpu_info{instance=~"a|b"}', 'gpuslo_gpu_info{cluster="a",instance=~"a|b"}'),
    ("gpuslo_node_info", 'gpuslo_node_info{cluster="a"}'),
    ("gpuslo_x{ }", 'gpuslo_x{cluster="a" }'),
    ("sum_over_time(gpuslo:gpu_usable:count[999ms] offset 1s) / 2",
     'sum_over_time(gpuslo:gpu_usable:count{cluster="a"}[999ms] offset 1s) / 2'),
    ('max by (node) (kube_node_status_capacity{resource="nvidia_com_gpu"})',
     'max by (node) (kube_node_status_capacity{cluster="a",resource="nvidia_com_gpu"})'),
    # names inside strings, label names and functions are left alone
    ('gpuslo_job_step{job="gpuslo_x", instance=~"kube_1|x\\\\"y"}',
     'gpuslo_job_step{cluster="a",job="gpuslo_x", instance=~"kube_1|x\\\\"y"}'),
    ("count by (instance) (up)", "count by (instance) (up)"),
])
def test_scoping_adds_the_cluster_to_every_gpuslo_selector(query, want):
    assert scoped(query, A) == want
    assert scoped(query, {}) == query


def test_a_cluster_name_is_escaped_as_a_promql_string():
    assert scoped("gpuslo_node_info", {"cluster": 'eu"1\\'}) == \
        'gpuslo_node_info{cluster="eu\\"1\\\\"}'


START = pd.Timestamp("2026-01-05", tz="UTC")
END = START + pd.Timedelta(days=1)


def _cluster(nodes: int, gpus: int, seed: int) -> Frames:
    """A simulated day with the same node names as the other cluster, and one provisioned node
    never seen (its placeholder uuids carry the node's name: `unseen:<node>:0`)."""
    sim = simulate(faults.Fleet(nodes, gpus, 1.0, 400), seed=seed, start=START)
    frames = dict(sim.frames)
    counts = pd.Series({"node-9999": 2}, dtype="int64")
    inventory = with_unseen(frames["inventory"].assign(instance=""), counts)
    frames["inventory"] = make_frame("inventory", inventory.drop(columns="instance").assign(
        provisioned_start=START, provisioned_end=None), "test")
    return Frames(**frames, source=f"cluster {seed}")


@pytest.fixture(scope="module")
def clusters() -> dict[str, Frames]:
    return {"a": _cluster(3, 4, 14), "b": _cluster(2, 8, 8)}


def test_the_fleet_is_the_union_of_the_clusters_whatever_their_node_names(clusters):
    assert set(clusters["a"].inventory["node"]) & set(clusters["b"].inventory["node"])
    fleet = union(clusters, "global")
    assert fleet.inventory["node"].str.match(r"^[ab]/").all()
    assert fleet.inventory[["node", "uuid"]].duplicated().sum() == 0
    assert set(fleet.inventory["uuid"]) >= {"unseen:a/node-9999:0", "unseen:b/node-9999:1"}
    alone = {name: compute_week(f, START, END, SloSpec()) for name, f in clusters.items()}
    both = compute_week(fleet, START, END, SloSpec())
    assert both.gpus == 12 + 2 + 16 + 2
    assert both.provisioned_gpu_hours == pytest.approx(
        sum(r.provisioned_gpu_hours for r in alone.values()))
    assert both.usable_gpu_hours == pytest.approx(sum(r.usable_gpu_hours for r in alone.values()))
    weights = {name: r.provisioned_gpu_hours for name, r in alone.items()}
    weighted = sum(weights[n] * alone[n].usable_ratio for n in alone) / sum(weights.values())
    assert both.usable_ratio == pytest.approx(weighted, abs=1e-9)
    assert alone["a"].usable_ratio != pytest.approx(alone["b"].usable_ratio, abs=0.01)
    for layer, hours in both.unusable_gpu_hours_by_layer.items():
        assert hours == pytest.approx(sum(r.unusable_gpu_hours_by_layer[layer]
                                          for r in alone.values()), abs=1e-9), layer


def test_the_report_gets_a_clusters_section_only_with_clusters(clusters):
    fleet = union(clusters, "global")
    doc = compute_week(fleet, START, END, SloSpec()).to_json_dict()
    plain = render_markdown(report_of(doc, None, None, None))
    assert "## Clusters" not in plain
    results = {n: compute_week(f, START, END, SloSpec()).to_json_dict()
               for n, f in clusters.items()}
    doc["clusters"] = cluster_rows(results)
    assert [row["cluster"] for row in doc["clusters"]] == ["a", "b"]
    assert doc["clusters"][0]["usable_ratio"] == results["a"]["usable_ratio"]
    text = render_markdown(report_of(doc, None, None, None))
    section = text.split("## Clusters", 1)[1].split("\n## ", 1)[0]
    rows = [line for line in section.splitlines() if line.startswith("| ")]
    assert [row.split(" | ")[0] for row in rows] == ["| cluster", "| a", "| b", "| fleet"]
    assert f"{results['b']['usable_ratio']:.4f}" in rows[2]
    assert f"{doc['usable_ratio']:.4f}" in rows[3]
