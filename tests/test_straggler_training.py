"""A straggler in a real (tiny) distributed training job: two "nodes" as two processes, a
linear model trained on CPU with PyTorch's gloo all-reduce on loopback, so the ranks move in lock
step. Node 1 is slowed on purpose: for its last 20 steps it sleeps inside its compute section.
The job runs twice, each test on both:

- `recorder` (tests/straggler_worker.py): a plain PyTorch loop, 40 steady steps then 20 with
  0.2 s of sleep, 5 steps per logged interval; each rank records its steps
  with the Recorder (`step_time_s` from its own clock, `compute_s` from its section timing,
  without the wait in the all-reduce);
- `lightning` (tests/lightning_straggler_worker.py): PyTorch Lightning's `ddp` strategy over
  `num_nodes=2`, 100 steady steps then 20 with 0.5 s of sleep inside `training_step`, 10 steps
  per logged interval, and nothing but `GoodputCallback` writing the journals: its per-rank
  section timing gives `compute_s`, the step time comes from the progress time.

Expected, by hand: the gang's step time rises by the delay on *both* nodes (node 0 waits in the
all-reduce), so each node's journal holds 20 steps × delay × 1 GPU of slowdown (plain: 4
GPU-seconds, Lightning: 10), the job twice that; node 1 gets the lower performance score.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pandas as pd
import pytest
from conftest import require_module

from gpuslo.slo import crawl
from gpuslo.slo.engine import compute_week
from gpuslo.slo.sources.journals import load_journals
from gpuslo.slo_spec import SloSpec

pytest.importorskip("torch")  # .ci/run installs the CPU wheel
HERE = Path(__file__).resolve().parent
REPO = HERE.parent
# worker, and its slow steps and injected delay (seconds) as in the worker; Lightning's steps
# carry more per-step overhead that a loaded machine makes noisy, so its delay is larger.
WORKERS = {"recorder": (HERE / "straggler_worker.py", 20, 0.2),
           "lightning": (HERE / "lightning_straggler_worker.py", 20, 0.5)}


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module", params=sorted(WORKERS))
def journals(request, tmp_path_factory):
    if request.param == "lightning":
        require_module("lightning.pytorch", "lightning")
    root = tmp_path_factory.mktemp(f"straggler-{request.param}")
    port = str(_free_port())
    env = {**os.environ, "PYTHONPATH": str(REPO), "OMP_NUM_THREADS": "1"}
    worker, slow_steps, delay_s = WORKERS[request.param]
    workers = [subprocess.Popen([sys.executable, str(worker), str(rank), port, str(root)],
                                env=env, stderr=subprocess.PIPE, text=True) for rank in range(2)]
    errors = [worker.communicate(timeout=120)[1] for worker in workers]
    assert [w.returncode for w in workers] == [0, 0], errors
    return load_journals(root), slow_steps, delay_s


def _span(frames):
    times = frames.job_events["time"]
    return times.min(), times.max() + pd.Timedelta(seconds=1)


def test_the_slow_node_gets_the_lower_score(journals):
    journals, _, _ = journals
    scores = crawl.node_scores(journals.job_events, *_span(journals))
    by_node = dict(zip(scores["node"], scores["score"], strict=True))
    # 0.2 s of sleep against compute of about a millisecond: node 1 scores far below node 0
    # (whose own worst interval is only timing noise of the tiny model)
    assert by_node["node-1"] < 0.1 < by_node["node-0"]
    assert scores["node"].iloc[0] == "node-1"  # the slowest node is named first


def test_slowdown_gpu_seconds_match_the_injected_delay_within_10_percent(journals):
    journals, slow_steps, delay_s = journals
    result = compute_week(journals, *_span(journals), SloSpec())
    injected = 2 * slow_steps * delay_s  # both nodes wait, 1 GPU each
    measured = float(result.jobs.loc["tiny-llm", "slowdown"])
    assert measured == pytest.approx(injected, rel=0.10)
    (row,) = result.to_json_dict()["crawl"]["rows"]
    assert row["job"] == "tiny-llm" and row["slowest_node"] == "node-1"
