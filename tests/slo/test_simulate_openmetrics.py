"""The simulator's OpenMetrics text: parsed by prometheus_client and loaded by the real promtool."""

from __future__ import annotations

import subprocess

import numpy as np
import pandas as pd
from prometheus_client.openmetrics.parser import text_string_to_metric_families

from gpuslo.slo.simulate import faults as sf
from gpuslo.slo.simulate import fleet as sim_mod
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


def test_openmetrics_parses_and_usable_matches_the_verdicts():
    sim = _small()
    text = openmetrics_text(sim, 300)
    assert text.endswith("# EOF\n")
    families = {f.name: f for f in text_string_to_metric_families(text)}
    assert set(families) == {"gpuslo_gpu_info", "gpuslo_gpu_usable", "gpuslo_gpu_verdict",
                             "gpuslo_job_gpu_seconds", "gpuslo_node_info", "gpuslo_gpu_expected"}
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
