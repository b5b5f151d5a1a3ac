"""The simulator's OpenMetrics text: parsed by prometheus_client and loaded by the real promtool."""

from __future__ import annotations

import subprocess

import numpy as np
import pandas as pd
from prometheus_client.openmetrics.parser import text_string_to_metric_families

from gpuslo.goodput.calculator import compute_goodput
from gpuslo.slo.simulate import faults as sf
from gpuslo.slo.simulate import fleet as sim_mod
from gpuslo.slo.simulate.fleet import journal_events
from gpuslo.slo.simulate.openmetrics import openmetrics_text, state_matrix

START = pd.Timestamp("2026-11-23T00:00:00Z")


def _small():
    return sim_mod.simulate(sf.Fleet(2, 2, 0.5, interruptions_per_1000_gpu_days=500), 5, START)


def test_state_matrix_samples_the_interval_covering_each_time():
    verdicts = pd.DataFrame({
        "uuid": ["a", "a", "b"],
        "start": START + pd.to_timedelta([0, 100, 50], unit="s"),
        "end": START + pd.to_timedelta([100, 200, 150], unit="s"),
        "verdict": ["healthy", "unknown", "unhealthy"],
    })
    codes = state_matrix(
        verdicts, pd.Index(["a", "b", "c"]), START, np.array([0, 60, 100, 199, 200])
    )
    assert codes.tolist() == [[1, 1, 3, 3, 0], [0, 2, 2, 0, 0], [0, 0, 0, 0, 0]]


EXPORTER_FAMILIES = {
    "gpuslo_build_info", "gpuslo_node_info", "gpuslo_gpu_expected", "gpuslo_gpu_info",
    "gpuslo_gpu_usable",
    "gpuslo_gpu_verdict", "gpuslo_gpu_problem", "gpuslo_node_usable", "gpuslo_node_verdict",
    "gpuslo_node_degradation",
    "gpuslo_kernel_log_records_lost", "gpuslo_network_devices", "gpuslo_network_devices_expected",
    "gpuslo_check_status", "gpuslo_check_last_run_timestamp_seconds",
    "gpuslo_check_last_success_timestamp_seconds", "gpuslo_check_interval_seconds",
    "gpuslo_check_duration_seconds", "gpuslo_check_runs", "gpuslo_check_errors",
    "gpuslo_job_gpu_seconds", "gpuslo_job_step", "gpuslo_job_last_progress_timestamp_seconds",
    "gpuslo_job_step_compute_seconds",
    "gpuslo_job_interruptions",
}


def test_openmetrics_parses_and_usable_matches_the_verdicts():
    sim = _small()
    text = openmetrics_text(sim, 300)
    assert text.endswith("# EOF\n")
    families = {f.name: f for f in text_string_to_metric_families(text)}
    assert set(families) == EXPORTER_FAMILIES | {"kube_node_spec_unschedulable"}
    # A GPU lists itself only while it has data (no-data stretches are scrape gaps), and its
    # node's expected count is there whenever any of its GPUs answers.
    info = {(s.labels["uuid"], float(s.timestamp)) for s in families["gpuslo_gpu_info"].samples}
    assert info == {(s.labels["uuid"], float(s.timestamp))
                    for s in families["gpuslo_gpu_usable"].samples}
    expected = families["gpuslo_gpu_expected"].samples
    assert expected and {s.value for s in expected} == {2}
    usable = families["gpuslo_gpu_usable"].samples
    verdict = {
        (s.labels["uuid"], float(s.timestamp)): s.value
        for s in families["gpuslo_gpu_verdict"].samples
        if s.labels["verdict"] == "healthy"
    }
    assert usable and all(
        verdict[(s.labels["uuid"], float(s.timestamp))] == s.value for s in usable
    )
    counters = families["gpuslo_job_gpu_seconds"].samples
    by_series: dict = {}
    for s in counters:
        by_series.setdefault(tuple(sorted(s.labels.items())), []).append(s.value)
    assert all(np.all(np.diff(v) >= 0) for v in by_series.values())  # counters never go down


def test_promtool_creates_blocks_from_the_text(tmp_path, promtool):
    path = tmp_path / "metrics.om"
    path.write_text(openmetrics_text(_small(), 300))
    done = subprocess.run([promtool, "tsdb", "create-blocks-from", "openmetrics", str(path),
                           str(tmp_path / "tsdb")], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    blocks = [p for p in (tmp_path / "tsdb").iterdir() if (p / "meta.json").exists()]
    assert blocks


def _lines(text: str):
    """(metric name, labels, value, timestamp) per sample line (a fast reader for big texts)."""
    for line in text.splitlines():
        if line.startswith("#"):
            continue
        head, value, stamp = line.rsplit(" ", 2)
        name, _, inner = head.partition("{")
        pairs = dict(p.split("=", 1) for p in inner.rstrip("}").split(",") if p)
        yield name, {k: v.strip('"') for k, v in pairs.items()}, float(value), int(stamp)


def _samples(text: str, family: str) -> dict[tuple, list]:
    out: dict = {}
    for name, labels, value, stamp in _lines(text):
        if name == family:
            out.setdefault(tuple(sorted(labels.items())), []).append((value, stamp))
    return out


def test_no_exporter_sample_in_a_no_data_stretch_and_problems_carry_reasons():
    """A no-data stretch (the exporter not scraped) has no sample of any exporter family;
    kube-state-metrics is scraped apart and keeps its samples; every non-healthy sample has a
    gpuslo_gpu_problem with the simulated reason."""
    sim = sim_mod.simulate(sf.Fleet(3, 2, 2.0, interruptions_per_1000_gpu_days=800), 19, START)
    text = openmetrics_text(sim, 60)
    stamps: dict = {}
    for name, labels, _, stamp in _lines(text):
        node = labels["node"] if name.startswith("kube_") else labels["instance"]
        stamps.setdefault((name, node), set()).add(stamp)
    grid = set(range(int(START.timestamp()), int(sim.end.timestamp()), 60))
    info = {node: stamps[("gpuslo_gpu_info", node)] for node in ("node-0000", "node-0001",
                                                                    "node-0002")}
    assert any(len(seen) < len(grid) for seen in info.values())  # the seed has a no-data gap
    sparse = ("gpuslo_gpu_problem", "gpuslo_check_errors_total", "gpuslo_job_")
    for (family, node), seen in stamps.items():
        if family == "kube_node_spec_unschedulable":
            assert seen == grid
        elif not family.startswith(sparse):
            assert seen == info[node], family
        else:
            assert seen <= info[node], family
    verdicts = _samples(text, "gpuslo_gpu_verdict")
    bad = {(dict(key)["uuid"], stamp) for key, series in verdicts.items()
           for value, stamp in series if dict(key)["verdict"] != "healthy" and value == 1}
    problems = {(dict(key)["uuid"], stamp): dict(key)["reason"]
                for key, series in _samples(text, "gpuslo_gpu_problem").items()
                for _, stamp in series}
    assert bad and bad == set(problems)
    assert "stale_data" in set(problems.values())


def test_counters_equal_the_fold_of_each_journal_at_every_sample():
    sim = _small()
    text = openmetrics_text(sim, 300)
    events = sim.frames["job_events"]
    series_seen = _samples(text, "gpuslo_job_gpu_seconds_total")
    assert series_seen
    for key, series in series_seen.items():
        labels = dict(key)
        mine = events[(events["job"] == labels["job"]) & (events["node"] == labels["instance"])]
        journal = journal_events(mine.assign(
            t=(mine["time"] - START).dt.total_seconds().astype(int)))
        for value, stamp in series[:: max(len(series) // 7, 1)]:
            fold = compute_goodput(journal, until=stamp - START.timestamp())
            assert value == round(fold.gpu_seconds[labels["category"]]), (labels, stamp)


def test_injected_degradations_are_series_at_1_while_they_last():
    """The simulator's degraded links and capped clocks (its `degradations` frame) are
    `gpuslo_node_degradation` samples at exactly the grid times inside each row, node-wide,
    labelled with the check that reports the reason."""
    step = 600
    sim = sim_mod.simulate(sf.Fleet(6, 8, 7.0), 7, START)
    rows = sim.frames["degradations"]
    assert len(rows)  # the week has caused stragglers: not a comparison of nothing
    wanted = ("gpuslo_node_degradation", "gpuslo_node_usable")
    text = "".join(line for line in openmetrics_text(sim, step).splitlines(keepends=True)
                   if line.startswith(wanted) or line.startswith(tuple(
                       f"# {kind} {name}" for name in wanted for kind in ("TYPE", "HELP"))))
    families = {f.name: f for f in text_string_to_metric_families(text + "# EOF\n")}
    got = {(s.labels["instance"], s.labels["reason"], s.labels["check"], int(float(s.timestamp)))
           for s in families["gpuslo_node_degradation"].samples}
    assert {s.value for s in families["gpuslo_node_degradation"].samples} == {1}
    assert all(s.labels["uuid"] == s.labels["gpu"] == s.labels["device"] == ""
               for s in families["gpuslo_node_degradation"].samples)
    present = {(s.labels["instance"], int(float(s.timestamp)))
               for s in families["gpuslo_node_usable"].samples}
    base, span = int(START.timestamp()), int((sim.end - sim.start).total_seconds())
    check = {"network_port_errors": "port_errors", "network_link_flap": "port_errors",
             "clocks_sw_power_cap": "thermal"}
    expected = {(r.node, r.reason, check[r.reason], base + t)
                for r in rows.itertuples() for t in range(0, span, step)
                if r.start <= START + pd.Timedelta(seconds=t) < r.end
                and (r.node, base + t) in present}
    assert got == expected
