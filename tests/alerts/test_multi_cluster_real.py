"""Many clusters, one SLO, on real parts (issue 28): two real Prometheus servers on loopback,
each scraping its own simulated cluster (`gpuslo simulate`'s fleet served live, one simulated
minute per wall second: tests/multi_cluster.py) with `external_labels: {cluster: a|b}` and the
per-cluster rules of `gpuslo rules --split per-cluster`, both remote-writing to one real
VictoriaMetrics; vmalert evaluates the global rules (`--split global`) against it and writes
them back (replay mode over the window, after the live run).

Cluster a: 3 nodes × 4 GPUs, cluster b: 2 nodes × 8 GPUs, both with the same node names
(node-0000, ...) and faults, drains and unknown stretches at 10,000 interruptions per 1000
GPU-days; a loses GPUs during the window, b is mostly drained or failed, so the two usable
ratios differ and change during the window.

Checked: the fleet's usable ratio vmalert records (`gpuslo_fleet:gpu_usable:ratio_rate5m`)
equals the GPU-weighted mean (12 and 16 GPUs) of the two clusters' usable ratios at the same
evaluations, each read from its own Prometheus, within 1e-4; and `gpuslo report --prometheus` on
VictoriaMetrics gives, in its per-cluster table, exactly what it gives on each Prometheus
alone, and fleet figures that are their sums; the fleet SLO dashboard's cluster panels on
VictoriaMetrics give each cluster what they give on its own Prometheus.
"""

from __future__ import annotations

import contextlib
import json
import time

import pandas as pd
import pytest
import requests
import yaml
from conftest import require_binary, running_prometheus, running_victoria_metrics
from multi_cluster import ServedCluster, replay

from gpuslo.alerts import global_rules, split
from gpuslo.cli import main
from gpuslo.dashboards import generate as dashboards
from gpuslo.slo.simulate import faults
from gpuslo.slo.simulate.fleet import simulate
from gpuslo.slo_spec import SloSpec

pytestmark = pytest.mark.prometheus
CLUSTERS = {"a": (faults.Fleet(3, 4, 0.05, 10_000), 14),
            "b": (faults.Fleet(2, 8, 0.05, 10_000), 9)}
GPUS = {"a": 12, "b": 16}
# The recorded counts start about 7 s into the run here (the held first step, the first scrape
# and rule evaluation), later on a loaded host: the run is twice the window, and the window is
# the latest stretch both stores hold in full (_complete_through).
HOLD_S, LIVE_S, WINDOW_S = 3, 32, 16  # first step held, wall seconds of the run, window
SIM_START = pd.Timestamp("2026-01-05", tz="UTC")
REPLAYED = ("gpuslo-global-counts", "gpuslo-global-slo-usable_gpu")


def _prometheus_config(cluster: str, target: str, remote: str) -> dict:
    return {
        "global": {"scrape_interval": "1s", "evaluation_interval": "1s",
                   "external_labels": {"cluster": cluster}},
        "rule_files": [split.CLUSTER_RULES],
        "scrape_configs": [{"job_name": "gpuslo", "honor_labels": True,
                            "static_configs": [{"targets": [target]}]}],
        "remote_write": [{"url": f"{remote}/api/v1/write",
                          "queue_config": {"batch_send_deadline": "500ms"}}],
    }


def _query(url: str, query: str, at: float) -> list[dict]:
    body = requests.post(f"{url}/api/v1/query", data={"query": query, "time": f"{at:.3f}"},
                         timeout=30).json()
    assert body["status"] == "success", body
    return body["data"]["result"]


def _range(url: str, query: str, first: int, last: int) -> dict[int, float]:
    """Second → value of the one series `query` gives, every second from `first` to `last`."""
    body = requests.post(f"{url}/api/v1/query_range", timeout=30, data={
        "query": query, "start": first, "end": last, "step": 1}).json()
    assert body["status"] == "success" and len(body["data"]["result"]) == 1, body
    return {int(float(t)): float(v) for t, v in body["data"]["result"][0]["values"]}


def _phases_ms(url: str, at: float) -> list[int]:
    """Milliseconds past the second of the scrapes and of the rule evaluations of the
    Prometheus at `url`."""
    out = []
    for query in ('timestamp(gpuslo_gpu_usable{gpu="0"})', "timestamp(gpuslo:gpu_usable:count)"):
        found = _query(url, query, at)
        out.append(int(round(float(found[0]["value"][1]) * 1000)) % 1000)
    return out


def _complete_through(urls: dict[str, str], first: int, last: int) -> int:
    """The latest second `b` in [first, last] such that every Prometheus has both recorded
    counts at each second from `b - WINDOW_S - 1` to `b`. A loaded host can miss a 1 s scrape
    or rule evaluation (a gap, or a late first sample, in one store); a window over such a
    gap would compare a store's lookup across it with the other's, which is not what is
    checked here. Fails with the seconds each store has when no stretch is long enough."""
    seconds = None
    for url in urls.values():
        for metric in ("gpu_usable", "gpu_provisioned"):
            body = requests.post(f"{url}/api/v1/query_range", timeout=30, data={
                "query": f"gpuslo:{metric}:count", "start": first, "end": last,
                "step": 1}).json()
            found = body["data"]["result"] if body.get("status") == "success" else []
            have = {int(float(t)) for series in found for t, _ in series["values"]}
            seconds = have if seconds is None else seconds & have
    for b in range(last, first + WINDOW_S, -1):
        if all(s in seconds for s in range(b - WINDOW_S - 1, b + 1)):
            return b
    pytest.fail(f"no {WINDOW_S + 2} s stretch in [{first}, {last}] where both stores have "
                f"every second: {sorted(seconds)}")


def _window(urls: dict[str, str], now: float) -> tuple[float, float]:
    """[start, end) of WINDOW_S seconds ending a second before `now`, its edges as far (in ms
    past the second) from both Prometheus' scrape and rule times as they can be, so closed and
    half-open ranges read the same samples."""
    phases = sorted(p for url in urls.values() for p in _phases_ms(url, now))
    gaps = [((phases[(i + 1) % len(phases)] - p) % 1000 or 1000, p) for i, p in
            enumerate(phases)]
    gap, after = max(gaps)
    end_ms = (int(now) - 1) * 1000 + (after + gap // 2) % 1000
    return (end_ms - WINDOW_S * 1000) / 1000, end_ms / 1000


@pytest.fixture(scope="module")
def fleet(tmp_path_factory):
    """(Prometheus URL per cluster, VictoriaMetrics URL, [start, end) of the window)."""
    binaries = {name: require_binary(name) for name in
                ("prometheus", "victoria-metrics", "vmalert")}
    work = tmp_path_factory.mktemp("clusters")
    for name, text in split.build_split_files(SloSpec(), split.PARTS).items():
        (work / name).write_text(text)
    groups = yaml.safe_load((work / split.GLOBAL_RULES).read_text())["groups"]
    served = {name: ServedCluster(simulate(fleet, seed, SIM_START), 60, hold_s=HOLD_S).start()
              for name, (fleet, seed) in CLUSTERS.items()}
    with contextlib.ExitStack() as stack:
        vm = stack.enter_context(running_victoria_metrics(
            binaries["victoria-metrics"], work / "vm", "-search.latencyOffset=0s"))
        urls = {}
        for name, cluster in served.items():
            (work / f"{name}.yml").write_text(yaml.safe_dump(
                _prometheus_config(name, cluster.target, vm)))
            urls[name] = stack.enter_context(running_prometheus(
                binaries["prometheus"], work / f"{name}.yml", work / name))
            stack.callback(cluster.stop)
        for cluster in served.values():
            cluster.run()
        time.sleep(LIVE_S)
        now = time.time()
        start, end = _window(urls, _complete_through(urls, int(now) - LIVE_S, int(now) - 1) + 1)
        time.sleep(3)  # remote write sends within its 500 ms batch deadline
        requests.get(f"{vm}/internal/force_flush", timeout=30).raise_for_status()
        replay(binaries["vmalert"], [g for g in groups if g["name"] in REPLAYED], vm, start,
               end + 1, work)
        yield urls, vm, start, end


def test_fleet_usable_ratio_is_the_gpu_weighted_mean_of_the_clusters(fleet):
    urls, vm, start, end = fleet
    at = int(end)  # vmalert's last evaluation in the window, on a whole second
    fleet_sli = global_rules.level_sli(global_rules.FLEET, "usable_gpu", "5m")
    got = _query(vm, fleet_sli, at)
    assert len(got) == 1, got
    # vmalert's evaluations in the fleet SLI's window: the fleet count's own samples
    found = _query(vm, f"{global_rules.FLEET_PROVISIONED}[5m]", at)
    stamps = [int(float(stamp)) for stamp, _ in found[0]["values"]]
    assert stamps[0] <= start + 1 and stamps[-1] == at and len(stamps) >= WINDOW_S, stamps
    ratios, provisioned = {}, {}
    for name, url in urls.items():
        # the cluster's own counts, from its own Prometheus, at the times vmalert evaluated
        # (each the latest sample then, as the store's lookup gives it)
        usable, total = ([values[s] for s in stamps] for values in (
            _range(url, f"gpuslo:{metric}:count", stamps[0], at)
            for metric in ("gpu_usable", "gpu_provisioned")))
        provisioned[name] = set(total)
        ratios[name] = sum(usable) / sum(total)
    assert provisioned == {name: {gpus} for name, gpus in GPUS.items()}
    weighted = sum(GPUS[c] * ratios[c] for c in GPUS) / sum(GPUS.values())
    # the clusters differ enough that the plain mean of their ratios would be off by > 1e-3
    assert abs(weighted - sum(ratios.values()) / 2) > 1e-3 and max(ratios.values()) < 1
    assert float(got[0]["value"][1]) == pytest.approx(weighted, abs=1e-4), (ratios, stamps)
    by_cluster = _query(vm, global_rules.PROVISIONED, at)
    assert {s["metric"]["cluster"]: float(s["value"][1]) for s in by_cluster} == GPUS


def _report(url: str, start: float, end: float, out) -> dict:
    iso = lambda t: pd.Timestamp(round(t * 1000), unit="ms", tz="UTC").isoformat()  # noqa: E731
    assert main(["report", "--prometheus", url, "--start", iso(start), "--end", iso(end),
                 "--out", str(out), "--format", "json,md"]) == 0
    return json.loads((out / "report.json").read_text())


def test_report_on_the_global_store_matches_each_prometheus_alone(fleet, tmp_path):
    urls, vm, start, end = fleet
    alone = {name: _report(url, start, end, tmp_path / name) for name, url in urls.items()}
    both = _report(vm, start, end, tmp_path / "global")
    rows = {row["cluster"]: row for row in both["clusters"]}
    assert sorted(rows) == ["a", "b"]
    for name, doc in alone.items():
        assert "clusters" not in doc
        for key in ("gpus", "nodes", "provisioned_gpu_hours", "usable_gpu_hours", "usable_ratio",
                    "unusable_gpu_hours_by_layer", "goodput_ratio", "job_gpu_hours"):
            assert rows[name][key] == doc[key], (name, key)
        assert rows[name]["blind_ratio"] == doc["data_quality"]["blind_ratio"], name
    assert both["gpus"] == 28 and both["nodes"] == 5
    assert both["provisioned_gpu_hours"] == pytest.approx(
        sum(d["provisioned_gpu_hours"] for d in alone.values()), abs=1e-5)
    assert both["usable_gpu_hours"] == pytest.approx(
        sum(d["usable_gpu_hours"] for d in alone.values()), abs=1e-5)
    assert "## Clusters" in (tmp_path / "global" / "report.md").read_text()


def test_cluster_panels_on_the_global_store_match_each_prometheus_alone(fleet):
    """The fleet SLO dashboard's cluster panels, on VictoriaMetrics, give each cluster what the
    same expression gives on that cluster's own Prometheus (where no series has `cluster`)."""
    urls, vm, start, end = fleet
    panels = {panel["title"]: panel["targets"][0]["expr"] for panel in json.loads(
        dashboards.build_files(SloSpec())["gpuslo-fleet-slo.json"])["panels"]}
    for title in ("Usable GPU ratio by cluster in range", "Provisioned GPUs by cluster",
                  "Lost GPU-hours in range by cluster"):
        expr = panels[title]
        for variable, value in (("$__range_s", str(WINDOW_S)), ("$__range", f"{WINDOW_S}s"),
                                ("$cluster", ".*")):
            expr = expr.replace(variable, value)
        both = {s["metric"]["cluster"]: float(s["value"][1]) for s in _query(vm, expr, end)}
        assert sorted(both) == ["a", "b"], title
        for name, url in urls.items():
            alone = _query(url, expr, end)
            assert len(alone) == 1 and "cluster" not in alone[0]["metric"], title
            assert both[name] == pytest.approx(float(alone[0]["value"][1]), abs=1e-9), (
                title, name)
    assert not _query(vm, panels["Clusters silent (global rules)"].replace("$cluster", ".*"), end)
