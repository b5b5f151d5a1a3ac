"""One badput allocation: the exporter's job counters (its journal tailer, the calculator's
fold) and the SLO engine (the calculator's batch form over the same events) give the same
GPU-seconds in every goodput category, on the simulator's journals of a week with interruptions
and restarts."""

from __future__ import annotations

import pandas as pd
import pytest

from gpuslo import cli, names
from gpuslo.exporter.jobs.journals import JournalTailer
from gpuslo.slo import attribution
from gpuslo.slo.simulate.files import read_simulation


def test_every_category_agrees_between_the_exporters_counters_and_the_engine(tmp_path):
    assert cli.main(["simulate", "--nodes", "8", "--days", "7", "--seed", "4", "--fault-rate",
                     "100", "--out", str(tmp_path / "sim")]) == 0
    frames, start, end = read_simulation(tmp_path / "sim")
    engine = attribution.job_goodput(frames["job_events"], start, end).set_index(["job", "node"])
    counters = {}
    for node_dir in sorted((tmp_path / "sim" / "journals").iterdir()):
        tailer = JournalTailer(node_dir)
        tailer.poll()
        counters.update({(job, node_dir.name): g for job, g in tailer.jobs(1000)})
    assert len(counters) >= 8
    interrupted = 0
    for key, goodput in counters.items():
        for category in names.JOB_CATEGORIES:
            assert goodput.gpu_seconds[category] == pytest.approx(
                engine.loc[key, category], abs=1e-6), (key, category)
        interrupted += goodput.gpu_seconds["recovery"] > 0
    assert interrupted  # the journals hold restarts, so recovery and wasted progress are tested
    assert pd.Series({k: g.gpu_seconds["wasted_progress"] for k, g in counters.items()}).sum() > 0
