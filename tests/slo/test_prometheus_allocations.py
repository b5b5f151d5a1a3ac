"""The Prometheus source reads which workload held each GPU (`gpuslo_gpu_allocation`, only its
samples at 1, under the sample budget) into the allocations frame, so `report --prometheus`
lists the jobs most hit: a real Prometheus over a backfilled simulated day whose exposition
gets the allocation info series the exporters publish (job = the hpc_job, and a Kubernetes pod's
container `ai:shared:c` sharing one GPU with a Slurm job by time-slicing)."""

from __future__ import annotations

import contextlib

import numpy as np
import pandas as pd
import pytest
from conftest import backfill, require_binary, running_prometheus

from gpuslo.slo.engine import compute_week
from gpuslo.slo.frames import Frames
from gpuslo.slo.report.build import report_of
from gpuslo.slo.report.markdown import render_markdown
from gpuslo.slo.simulate import faults
from gpuslo.slo.simulate.fleet import simulate
from gpuslo.slo.simulate.openmetrics import openmetrics_text
from gpuslo.slo.sources.prometheus import load_prometheus
from gpuslo.slo_spec import SloSpec

START = pd.Timestamp("2026-11-23", tz="UTC")
STEP_S = 60


def allocation_family(allocations: pd.DataFrame, inventory: pd.DataFrame) -> str:
    """`gpuslo_gpu_allocation{instance, gpu, uuid, namespace, pod, container, hpc_job} 1` every
    step while a row of `allocations` holds the GPU (Slurm jobs: hpc_job = the job), plus the
    container `ai:shared:c` time-sliced on the first allocated GPU for the second half of that
    allocation (at 0, not held, in the first half)."""
    gpu_of = dict(zip(inventory["uuid"], inventory["gpu"], strict=True))
    out = ["# TYPE gpuslo_gpu_allocation gauge\n"]

    def series(labels: str, times: np.ndarray, value: str = "1") -> None:
        out.extend(f"gpuslo_gpu_allocation{{{labels}}} {value} {t}\n" for t in times)

    base = int(START.timestamp())
    for row in allocations.itertuples(index=False):
        a = int(np.ceil((row.start.timestamp() - base) / STEP_S)) * STEP_S + base
        times = np.arange(a, int(row.end.timestamp()), STEP_S)
        series(f'instance="{row.node}",gpu="{gpu_of[row.uuid]}",uuid="{row.uuid}",'
               f'namespace="",pod="",container="",hpc_job="{row.job}"', times)
    first = allocations.iloc[0]
    times = np.arange(int(first.start.timestamp()) // STEP_S * STEP_S + STEP_S,
                      int(first.end.timestamp()), STEP_S)
    labels = (f'instance="{first.node}",gpu="{gpu_of[first.uuid]}",uuid="{first.uuid}",'
              'namespace="ai",pod="shared",container="c",hpc_job=""')
    series(labels, times[: len(times) // 2], "0")
    series(labels, times[len(times) // 2:])
    return "".join(out)


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    promtool, prometheus = require_binary("promtool"), require_binary("prometheus")
    root = tmp_path_factory.mktemp("prom-alloc")
    fleet = faults.Fleet(nodes=3, gpus_per_node=4, days=1, interruptions_per_1000_gpu_days=400)
    sim = simulate(fleet, seed=5, start=START)
    text = openmetrics_text(sim, STEP_S).removesuffix("# EOF\n")
    text += allocation_family(sim.frames["allocations"], sim.frames["inventory"]) + "# EOF\n"
    (root / "fleet.om").write_text(text)
    (root / "prometheus.yml").write_text("global: {}\n")
    backfill(promtool, root / "fleet.om", root / "tsdb", "--max-block-duration=24h")
    flags = ("--storage.tsdb.retention.time=100y", "--query.max-samples=20000")
    with contextlib.ExitStack() as stack:
        url = stack.enter_context(running_prometheus(prometheus, root / "prometheus.yml",
                                                     root / "tsdb", *flags))
        yield sim, url


def test_allocations_from_prometheus_give_the_jobs_most_hit(served):
    sim, url = served
    frames = load_prometheus(url, sim.start, sim.end, progress=False, max_samples=15_000)
    assert "allocations" not in frames.cannot_fill
    alloc = frames.allocations
    pod = "ai:shared:c"  # two holders at one step: the first job name ("ai:…" < "job-…") holds
    assert set(alloc["job"]) == set(sim.frames["allocations"]["job"]) | {pod}
    got = compute_week(frames, sim.start, sim.end, SloSpec())
    first = sim.frames["allocations"].iloc[0]
    shared = compute_week(Frames(**{**sim.frames, "allocations": alloc[alloc["job"] == pod]}),
                          sim.start, sim.end, SloSpec()).jobs_hit.set_index("job")
    half = (first.end - first.start).total_seconds() / 3600 / 2
    assert shared.loc[pod, "held_gpu_hours"] == pytest.approx(half, abs=0.1)
    want = compute_week(Frames(**sim.frames), sim.start, sim.end, SloSpec())
    hit = got.jobs_hit.set_index("job")
    expected = want.jobs_hit.set_index("job")
    expected.loc[first.job, "held_gpu_hours"] -= shared.loc[pod, "held_gpu_hours"]
    expected.loc[first.job, "unusable_gpu_hours"] -= shared.loc[pod, "unusable_gpu_hours"]
    assert set(hit.index) == set(expected.index) | {pod} and len(hit)
    assert (expected["unusable_gpu_hours"] > 0).any()
    for job, row in expected.iterrows():
        # allocation edges move to the 60 s grid: at most a step per edge per GPU
        assert hit.loc[job, "held_gpu_hours"] == pytest.approx(row["held_gpu_hours"], abs=0.2)
        assert hit.loc[job, "unusable_gpu_hours"] == pytest.approx(
            row["unusable_gpu_hours"], rel=0.05, abs=0.2), job
    doc = got.to_json_dict()
    assert doc["jobs_hit"] and doc["jobs_hit"][0]["lost_gpu_hours"] > 0
    text = render_markdown(report_of(doc, None, None))  # what `report --prometheus` writes
    section = text.split("## Jobs most hit")[1].split("\n## ")[0]
    assert f"| {doc['jobs_hit'][0]['job']} |" in section


def test_a_prometheus_without_allocations_says_so(served):
    sim, url = served
    first = sim.frames["allocations"]["start"].min()
    assert first > sim.start + pd.Timedelta(minutes=5)
    frames = load_prometheus(url, sim.start, first - pd.Timedelta(minutes=2), progress=False)
    assert frames.allocations.empty
    assert "no gpuslo_gpu_allocation" in frames.cannot_fill["allocations"]


def test_located_allocations_equal_reading_every_gpu(served):
    sim, url = served
    located, everything = (load_prometheus(url, sim.start, sim.end, progress=False,
                                           max_samples=15_000, locate=flag).allocations
                           for flag in (True, False))
    pd.testing.assert_frame_equal(located, everything)
    assert len(located)
