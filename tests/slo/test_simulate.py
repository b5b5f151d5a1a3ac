"""`gpuslo simulate`: determinism, frame validity, coverage, journals, fault mix, CLI errors."""

from __future__ import annotations

import hashlib
import json

import numpy as np
import pandas as pd
import pytest

from gpuslo import names
from gpuslo.cli import main
from gpuslo.cli.simulate import parse_start
from gpuslo.goodput.calculator import compute_goodput
from gpuslo.goodput.journal import parse_journal
from gpuslo.slo import frames as fr
from gpuslo.slo.simulate import faults as sf
from gpuslo.slo.simulate import jobs as sj
from gpuslo.slo.simulate.files import read_simulation
from gpuslo.slo.simulate.openmetrics import per_gpu

START = pd.Timestamp("2026-11-23T00:00:00Z")


def _digest(directory) -> dict[str, str]:
    return {str(p.relative_to(directory)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(directory.rglob("*")) if p.is_file()}


def _run(out, *extra) -> int:
    return main(["simulate", "--nodes", "6", "--days", "2", "--seed", "7", "--fault-rate", "60",
                 "--out", str(out), *extra])


def test_same_seed_same_bytes_other_seed_differs(tmp_path):
    assert _run(tmp_path / "a") == 0 and _run(tmp_path / "b") == 0
    assert _digest(tmp_path / "a") == _digest(tmp_path / "b")
    main(["simulate", "--nodes", "6", "--days", "2", "--seed", "8", "--out", str(tmp_path / "c")])
    assert _digest(tmp_path / "c")["verdicts.csv.gz"] != _digest(tmp_path / "a")["verdicts.csv.gz"]


def test_frames_read_back_and_cover_every_gpu_second_at_most_once(tmp_path):
    _run(tmp_path)
    frames, start, end = read_simulation(tmp_path)
    assert (start, end) == (START, START + pd.Timedelta(days=2))
    assert len(frames["inventory"]) == 48 and frames["inventory"]["uuid"].is_unique
    assert (frames["verdicts"]["uuid"] == "").any()  # node-level events are node-wide rows
    v = per_gpu(frames["verdicts"], frames["inventory"]).sort_values(["uuid", "start"])
    assert (v["start"] >= start).all() and (v["end"] <= end).all() and (v["end"] > v["start"]).all()
    overlap = v.groupby("uuid")["start"].shift(-1) < v["end"]
    assert not overlap.any()
    covered = (v["end"] - v["start"]).dt.total_seconds().sum()
    assert covered <= 48 * 2 * 86400
    assert set(v["verdict"]) <= set(names.VERDICTS)
    bad = v[v["verdict"] != names.VERDICT_HEALTHY]
    assert (bad["layer"] == bad["reason"].map(names.REASON_LAYER)).all()
    for name, frame in frames.items():
        fr.validate(name, frame)


def test_fault_causes_map_to_known_reasons_and_follow_the_llama3_mix():
    assert sum(c[1] for c in sf.CAUSES) == 419  # Llama 3 405B Table 5: 419 unexpected
    assert all(c[2] in names.REASON_LAYER for c in sf.CAUSES)
    assert all(c[4] in names.ACTIONS for c in sf.CAUSES)
    fleet = sf.Fleet(nodes=2000, gpus_per_node=8, days=30, interruptions_per_1000_gpu_days=5)
    faults = sf.draw_faults(fleet, np.random.default_rng(0))
    expected = 5 * 16000 * 30 / 1000
    assert abs(len(faults) - expected) < 5 * np.sqrt(expected)
    share = (faults["cause"] == "Faulty GPU").mean()
    assert abs(share - 148 / 419) < 0.03


def test_disjoint_trims_overlaps_first_come_wins():
    frame = pd.DataFrame({"k": [0, 0, 0, 1], "start": [0, 50, 120, -5], "end": [100, 150, 130, 10]})
    out = sf.disjoint(frame, "k", 140)
    assert out[["k", "start", "end"]].values.tolist() == [[0, 0, 100], [0, 100, 140], [1, 0, 10]]


def test_fill_healthy_completes_each_gpu_and_leaves_no_data_uncovered():
    bad = pd.DataFrame({"gpu_index": [0, 0], "start": [10, 50], "end": [20, 60],
                        "verdict": ["unhealthy", "no_data"], "reason": ["xid_fatal", "no_data"],
                        "action": ["reset_gpu", "none"]})
    out = sf.fill_healthy(bad, gpus=2, span_s=100)
    rows = out[["gpu_index", "start", "end", "verdict"]].values.tolist()
    assert rows == [[0, 0, 10, "healthy"], [0, 10, 20, "unhealthy"], [0, 20, 50, "healthy"],
                    [0, 60, 100, "healthy"], [1, 0, 100, "healthy"]]


def test_job_timeline_checkpoint_interrupt_restart_by_hand():
    # 60 s steps, checkpoint every 4800 s after a 300 s initialisation; a node fault at
    # t=6300 (1200 s after the checkpoint committed at 5190) stops the journal.
    job = sj.Job("job-x", 0, 1, 0, 20000, True, 60, 4800)
    events = sj.job_timeline(job, 8, [(6300, None, 6300)], np.random.default_rng(0))
    kinds = [(e["t"], e["event"]) for e in events[:8]]
    assert kinds == [(0, "job_start"), (0, "phase_start"), (300, "phase_end"), (5100, "steps"),
                     (5100, "phase_start"), (5190, "phase_end"), (5190, "checkpoint"),
                     (6300, "steps")]
    restart = next(e for e in events if e["event"] == "restart")
    assert restart["from_step"] == 80 and 6300 + 600 <= restart["t"] < 6300 + 1800
    stamped = [{"v": 1, **e} for e in events]
    result = compute_goodput(stamped, until=restart["t"])
    assert result.gpu_seconds["wasted_progress"] == (6300 - 5190) * 8
    assert result.gpu_seconds["recovery"] == (restart["t"] - 6300) * 8
    assert result.gpu_seconds["productive"] == (5100 - 300) * 8
    assert events[-1] == {"t": 20000, "event": "job_end", "status": "completed"}


def test_software_fault_is_a_training_interruption_the_job_reports():
    job = sj.Job("job-y", 0, 1, 0, 10000, False, 10, 1800)
    events = sj.job_timeline(job, 8, [(4000, names.LAYER_TRAINING, 4000)], np.random.default_rng(1))
    end = next(e for e in events if e["event"] == "job_end")
    assert end == {"t": 4000, "event": "job_end", "status": "failed", "layer": "training"}
    assert compute_goodput([{"v": 1, **e} for e in events]).interruptions["training"] == 1


def test_journals_are_valid_recorder_journals_matching_job_events(tmp_path):
    _run(tmp_path)
    paths = sorted((tmp_path / "journals").rglob("*.jsonl"))
    assert paths
    frames, _, _ = read_simulation(tmp_path)
    for path in paths:
        events, problems = parse_journal(path.read_text(), str(path))
        assert problems == []
        assert events[0]["event"] == "job_start" and events[0]["node"] == path.parent.name
        rows = frames["job_events"][(frames["job_events"]["job"] == path.stem)
                                    & (frames["job_events"]["node"] == path.parent.name)]
        assert len(rows) == len(events)


def test_jobs_are_gangs_of_8_to_1024_gpus_on_whole_nodes():
    jobs = sj.place_jobs(400, 8, 7 * 86400, np.random.default_rng(3))
    sizes = [j.nodes * 8 for j in jobs]
    assert min(sizes) >= 8 and max(sizes) <= 1024
    blocks: dict[int, list[sj.Job]] = {}
    for job in jobs:
        blocks.setdefault(job.first_node, []).append(job)
    taken = sum(block[0].nodes for block in blocks.values())
    assert 0.9 * 400 <= taken <= 400
    for block in blocks.values():  # jobs on one block run one after another
        assert all(a.end <= b.start for a, b in zip(block, block[1:], strict=False))
        assert all(j.completes or j.end == 7 * 86400 for j in block)


def test_a_job_waits_for_its_node_after_a_hardware_fault():
    job = sj.Job("job-w", 0, 2, 0, 100000, False, 10, 1800)
    faults = pd.DataFrame({"node": [1], "gpu": [3], "start": [5000], "end": [20000],
                           "cause": ["Faulty GPU"], "reason": ["xid_fatal"], "scope": ["gpu"],
                           "action": ["drain_and_reset"]})
    found = sj.interruptions_for(job, faults)
    assert found == [(5000, None, 20000 + sf.VALIDATION_S)]
    events = sj.job_timeline(job, 8, found, np.random.default_rng(0))
    restart = next(e for e in events if e["event"] == "restart")
    assert restart["t"] == 20000 + sf.VALIDATION_S


@pytest.mark.parametrize("args", [["--nodes", "0"], ["--nodes", "2", "--days", "0"],
                                  ["--nodes", "2", "--start", "yesterday-ish"],
                                  ["--nodes", "2", "--metrics-step", "5"]])
def test_bad_arguments_exit_2_with_one_line(tmp_path, capsys, args):
    assert main(["simulate", *args, "--out", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith("gpuslo simulate: error:")
    assert not (tmp_path / "x").exists()


@pytest.mark.parametrize("args, flag", [
    (["--nodes", "2", "--seed", "-1"], "--seed"),
    (["--nodes", "100001"], "--nodes"),
    (["--nodes", "2", "--gpus-per-node", "65"], "--gpus-per-node"),
    (["--nodes", "2", "--days", "nan"], "--days"),
    (["--nodes", "2", "--fault-rate", "1e9"], "--fault-rate"),
    (["--nodes", "100000", "--days", "366"], "--days"),  # 292.8 M GPU-days: was 17.5 GB in 60 s
    (["--nodes", "1250", "--days", "7", "--openmetrics", "--metrics-step", "30"], "--metrics-step"),
])
def test_sizes_are_bounded_and_the_error_names_the_flag(tmp_path, capsys, args, flag):
    assert main(["simulate", *args, "--out", str(tmp_path / "x")]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and err[0].startswith(f"gpuslo simulate: error: {flag}")
    assert not (tmp_path / "x").exists()


def test_manifest_names_the_span(tmp_path):
    _run(tmp_path, "--start", "2026-01-05T00:00:00Z")
    manifest = json.loads((tmp_path / "simulation.json").read_text())
    assert manifest["start"] == "2026-01-05T00:00:00Z" and manifest["end"] == "2026-01-07T00:00:00Z"
    assert parse_start("2026-01-05") == pd.Timestamp("2026-01-05T00:00:00Z")


# --- issue 12: an interrupted or mistaken simulate never leaves a mix --------------------------
def _simulate(out, *extra):
    import subprocess
    import sys

    return subprocess.run([sys.executable, "-m", "gpuslo", "simulate", "--nodes", "2", "--days",
                           "1", "--out", str(out), *extra], capture_output=True, text=True,
                          timeout=300)


def test_a_non_empty_out_that_is_not_a_simulation_is_refused_without_force(tmp_path):
    out = tmp_path / "mine"
    out.mkdir()
    (out / "thesis.tex").write_text("years of work\n")
    done = _simulate(out)
    assert done.returncode == 2 and "--force" in done.stderr
    assert (out / "thesis.tex").exists() and not (out / "simulation.json").exists()
    assert _simulate(out, "--force").returncode == 0
    assert not (out / "thesis.tex").exists() and (out / "simulation.json").exists()


def test_a_simulation_is_replaced_whole_and_an_interrupted_one_leaves_the_old(tmp_path):
    import os
    import signal
    import subprocess
    import sys
    import time

    out = tmp_path / "sim"
    assert _simulate(out, "--seed", "1").returncode == 0
    before = sorted(p.relative_to(out) for p in out.rglob("*"))
    manifest = (out / "simulation.json").read_text()
    child = subprocess.Popen([sys.executable, "-m", "gpuslo", "simulate", "--nodes", "60",
                              "--days", "7", "--seed", "2", "--out", str(out)])
    time.sleep(2.5)  # mid-write
    os.kill(child.pid, signal.SIGKILL)
    child.wait()
    if (out / "simulation.json").read_text() == manifest:  # killed before the rename: the old one
        assert sorted(p.relative_to(out) for p in out.rglob("*")) == before
    assert all(p.name.startswith(".gpuslo-simulate") for p in tmp_path.iterdir() if p != out)
    assert _simulate(out, "--seed", "3").returncode == 0  # a simulation is replaced without --force
    assert '"seed": 3' in (out / "simulation.json").read_text()
