"""Slurm node states → the exporter's series → the SLO engine and report; the job-completion log
→ job interruptions; all against the real slurmctld of tests/slurm_cluster.py.

Timeline (one GPU, 8 minutes, a sample a minute; the states are the real node's, the sampling
clock is the test's): minute 0 up; gpuslo drains it for a fallen-off-the-bus Xid (minutes 1-3);
healthy again, gpuslo resumes it (minute 4); an administrator drains it (minutes 5-6); resumed
(minute 7). Lost: 3 GPU-minutes to the node layer (fallen_off_bus), 2 to the platform.
"""

from __future__ import annotations

import subprocess

import pandas as pd
import pytest
from prometheus_client.exposition import generate_latest
from prometheus_client.parser import text_string_to_metric_families
from slurm_cluster import HEALTHY, XID79, wait_for

from gpuslo.cli import main
from gpuslo.exporter.collector import build_families
from gpuslo.exporter.slurm.state import PlatformSampler
from gpuslo.slo.attribution import find_interruptions
from gpuslo.slo.engine import compute_week
from gpuslo.slo.frames import Frames, make_frame
from gpuslo.slo.sources.prometheus import samples_to_intervals
from gpuslo.slo.sources.slurm import load_jobcomp, node_state_frames
from gpuslo.slo_spec import SloSpec

pytestmark = pytest.mark.slurm
T0 = pd.Timestamp("2026-01-05T00:00:00Z")


class _Registry:
    def __init__(self, families):
        self.families = families

    def collect(self):
        return self.families


def scrape(sampler: PlatformSampler, minute: int) -> list[dict]:
    """One exporter exposition (text format) at T0 + minute, parsed back into samples."""
    sampler.sample()
    now = (T0 + pd.Timedelta(minutes=minute)).timestamp()
    text = generate_latest(_Registry(build_families(None, [], now, extra=sampler.samples())))
    rows = []
    for family in text_string_to_metric_families(text.decode()):
        for sample in family.samples:
            if sample.name == "gpuslo_slurm_node_state" and sample.value == 1:
                rows.append({**sample.labels, "time": now})
    return rows


def test_drained_time_is_lost_to_the_node_layer_with_gpuslos_reason(cluster, tmp_path, capsys):
    sampler = PlatformSampler(cluster.node, scontrol=cluster.scontrol)
    bad, good = tmp_path / "bad.log", tmp_path / "good.log"
    bad.write_text(XID79)
    good.write_text(HEALTHY)

    def check(log, state):
        main(["check", "--format", "slurm", "--drain", "--check", "xid", "--kernel-log", str(log),
              "--state-dir", str(tmp_path / state), "--node", cluster.node])
        capsys.readouterr()

    rows = scrape(sampler, 0)
    check(bad, "s1")
    rows += [r for m in (1, 2, 3) for r in scrape(sampler, m)]
    check(good, "s2")
    rows += scrape(sampler, 4)
    cluster.scontrol_run("update", f"nodename={cluster.node}", "state=drain", "reason=rack work")
    rows += [r for m in (5, 6) for r in scrape(sampler, m)]
    cluster.scontrol_run("update", f"nodename={cluster.node}", "state=resume")
    rows += scrape(sampler, 7)

    samples = pd.DataFrame(rows).assign(node=cluster.node)
    samples["time"] = pd.to_datetime(samples["time"], unit="s", utc=True)
    assert list(samples["state"]) == ["up", "drained", "drained", "drained", "up", "drained",
                                      "drained", "up"]  # fmt: skip
    assert set(samples.loc[1:3, "reason"]) == {"fallen_off_bus"}
    assert set(samples.loc[5:6, "reason"]) == {"slurm_drain"}
    keys = ["node", "state", "reason_layer", "reason"]
    not_up = samples[samples["state"] != "up"]
    verdicts, schedulability = node_state_frames(samples_to_intervals(not_up, keys, 60))
    end = T0 + pd.Timedelta(minutes=8)
    healthy = {"node": cluster.node, "uuid": "GPU-0", "start": T0, "end": end, "verdict": "healthy"}
    frames = Frames(
        inventory=make_frame("inventory", [{"node": cluster.node, "uuid": "GPU-0", "gpu": "0",
                                            "provisioned_start": T0}]),  # fmt: skip
        verdicts=pd.concat([make_frame("verdicts", [healthy]), verdicts], ignore_index=True),
        schedulability=schedulability,
    )
    result = compute_week(frames, T0, end, SloSpec())
    assert result.lost_gpu_hours_by_layer["node"] == pytest.approx(3 / 60)
    assert result.lost_gpu_hours_by_layer["platform"] == pytest.approx(2 / 60)
    assert result.lost_gpu_hours_by_reason["fallen_off_bus"] == pytest.approx(3 / 60)
    assert result.usable_gpu_hours == pytest.approx(3 / 60)


def test_job_completion_log_gives_interruptions_by_layer(cluster, tmp_path):
    """A job that runs to its end, one that hits its time limit, and one on a node that fails
    (`scontrol update state=down` under a running job: NODE_FAIL)."""
    def submit(*args: str) -> str:
        out = subprocess.run(["sbatch", "--parsable", "-o", "/dev/null", "-D", str(tmp_path),
                              *args], env=cluster.env, capture_output=True, text=True,
                             timeout=15, check=True).stdout  # fmt: skip
        return out.strip().split(";")[0]

    done = submit("--wrap", "true")
    wait_for(lambda: f"JobId={done} " in _log(cluster), 60)
    failing = submit("--no-requeue", "--wrap", "sleep 60")
    wait_for(lambda: "State=ALLOCATED" in cluster.show() or "State=MIXED" in cluster.show(), 60)
    cluster.scontrol_run("update", f"nodename={cluster.node}", "state=down", "reason=psu failed")
    wait_for(lambda: f"JobId={failing} " in _log(cluster), 60)
    cluster.resume()
    wait_for(lambda: "State=IDLE " in cluster.show(), 60)
    events = load_jobcomp(cluster.jobcomp)
    ends = events[events["event"] == "job_end"].set_index("job")
    assert (ends.loc[done, "status"], ends.loc[done, "layer"]) == ("completed", "")
    assert (ends.loc[failing, "status"], ends.loc[failing, "layer"]) == ("failed", "node")
    window = (events["time"].min(), events["time"].max() + pd.Timedelta(seconds=1))
    found = find_interruptions(events, *window)
    assert list(found["job"]) == [failing] and list(found["declared_layer"]) == ["node"]


def _log(cluster) -> str:
    return cluster.jobcomp.read_text() if cluster.jobcomp.exists() else ""
