"""The collector on the fixture node: golden exposition, statesets, staleness, bounded jobs.

The fixture node is /work/shared/fixtures/h200 (one H200, driver 580.159.04, CUDA 13.0) with
Xid counts shaped like corpus case 032 (Xid 43 application, Xid 31 application, Xid 94 contained)
plus one fatal Xid 79, all moved to the fixture GPU's bus id, and a job journal written by a
Recorder with a frozen clock.

Regenerate the golden file (after checking the diff is intended):
    GPUSLO_REGENERATE=1 python -m pytest -q tests/exporter/test_collector_node.py
"""

from __future__ import annotations

import csv
import os
import subprocess
from pathlib import Path

import pytest
from conftest import FIXTURES
from prometheus_client import CollectorRegistry, generate_latest
from prometheus_client.parser import text_string_to_metric_families

from gpuslo import names
from gpuslo.exporter.collector import GpusloCollector, build_families
from gpuslo.exporter.jobs.journals import JournalTailer
from gpuslo.exporter.jobs.log_reading import LogJobGoodput
from gpuslo.exporter.snapshot import (
    AllocationSourceState,
    GpuAllocation,
    GpuInfo,
    GpuValidation,
    Heartbeat,
    NodeSnapshot,
    ValidationState,
)
from gpuslo.goodput import Recorder
from gpuslo.verdict import CheckResult

NOW = 1_764_460_800.0  # 2025-11-30T00:00:00Z, the frozen clock
GOLDEN = Path(__file__).resolve().parent.parent / "golden" / "exposition" / "fixture_node.prom"


def fixture_gpus() -> tuple[GpuInfo, ...]:
    """The GPUs of the h200 fixture's nvidia-smi --query-gpu CSV."""
    with open(FIXTURES / "h200" / "nvidia-smi-query-gpu.csv") as f:
        rows = list(csv.DictReader(f, skipinitialspace=True))
    return tuple(GpuInfo(r["index"], r["uuid"], r["pci.bus_id"], r["name"], "hopper") for r in rows)


def fixture_snapshot(now: float = NOW) -> NodeSnapshot:
    """One cycle on the fixture node: GPU 0 has a fatal Xid 79, dcgm-exporter is not reachable,
    the thermal check last ran 10 minutes ago (stale at 3 × 30 s), and mlx5_0's port error
    counters are rising (a warn-level degradation: usable, exported as gpuslo_node_degradation)."""
    gpu = fixture_gpus()[0]

    def res(
        check: str,
        scope: str,
        status: str,
        reason: str = "",
        action: str = "none",
        at: float = now - 1,
    ) -> CheckResult:
        return CheckResult(
            check=check,
            scope=scope,
            status=status,
            reason=reason,
            action=action,
            message=f"{check} {status}",
            observed_at=at,
            duration_s=0.25,
        )

    results = (
        res("gpu_inventory", "node", "ok"),
        res("xid", gpu.uuid, "fail", "fallen_off_bus", "reboot_node"),
        res("dcgm", "node", "unknown", "dependency_missing"),
        res("thermal", gpu.uuid, "ok", at=now - 600),
        res("port_errors", "mlx5_0", "warn", "network_port_errors", "check_cabling"),
    )
    beats = (
        Heartbeat("gpu_inventory", 30.0, now - 1, now - 1, 0.25, 20),
        Heartbeat("xid", 30.0, now - 1, now - 1, 0.25, 20),
        Heartbeat("dcgm", 30.0, now - 1, now - 600, 0.25, 20, {"dependency_missing": 3}),
        Heartbeat("thermal", 30.0, now - 600, now - 600, 0.25, 1),
        Heartbeat("port_errors", 30.0, now - 1, now - 1, 0.25, 20),
    )
    pci = gpu.pci_bus_id
    return NodeSnapshot(
        node="h200-fixture",
        driver_version="580.159.04",
        cuda_version="13.0",
        gpus=(gpu,),
        results=results,
        heartbeats=beats,
        xid_events={
            (pci, "43", "application"): 1,
            (pci, "31", "application"): 1,
            (pci, "94", "contained"): 1,
            (pci, "79", "fatal"): 1,
        },
        sxid_events={("0", "22013", "warn"): 2},
        kernel_log_records_lost=0,
        unrecognised_messages={"xid": 0},
        network_devices={"efa": 31},
        network_devices_expected={"efa": 32},
        gpus_expected=1,
        taken_at=now - 1,
        probe_speed_not_judged={(gpu.uuid, "busy"): 4},
        # the return-to-service gate holds GPU 0 for its Xid 79; it passed two gates before and
        # failed one; this node has the probe but no DCGM
        validation=ValidationState(
            gpus=(GpuValidation(gpu.uuid, gpu.index, "held", 0, now - 600),),
            gates_total={(gpu.uuid, "passed"): 2, (gpu.uuid, "failed"): 1},
            validators={"probe": "available", "dcgm_diag": "unavailable"},
            gate_unavailable=False,
            hold_down_cycles=3,
        ),
    )


def write_job(journal_dir: Path, job: str, start: float = NOW - 10_000) -> None:
    """Issue 4's worked example on 1 GPU, ending with the restart: 60 s steps from `start`,
    checkpoint at 80, failure after 100, restart 600 s later from step 80, 5 more steps (each
    42.5 s of compute on this node: the straggler gauge)."""
    clock = [start]
    rec = Recorder(journal_dir, job, node="h200-fixture", clock=lambda: clock[0], coalesce_s=300)
    rec.job_start(1)
    for n in range(1, 101):
        clock[0] += 60
        rec.step(n)
        if n == 80:
            rec.checkpoint(80)
    rec.job_end("failed")
    clock[0] += 600
    rec = Recorder(journal_dir, job, node="h200-fixture", clock=lambda: clock[0])
    rec.restart(80)
    for n in range(81, 86):
        clock[0] += 60
        rec.step(n, compute_s=42.5)
    rec.close()


# What PlatformSampler adds on a Slurm node: drained by gpuslo.
PLATFORM = [("gpuslo_slurm_node_state", ("drained", "node", "xid_fatal"), 1.0),
            ("gpuslo_journal_errors_total", ("parse_error",), 0.0)]  # the Exporter: every reason
# What the allocation sources add: one Slurm job and one pod on GPU 0 (the two sources feed one
# list), the kubelet read fine, the job-mapping directory too.
_UUID0 = "GPU-4c1d2e3f-0a1b-2c3d-4e5f-60718293a4b5"
ALLOCATIONS = (
    [GpuAllocation("0", _UUID0, hpc_job="4242"),
     GpuAllocation("0", _UUID0, "ml", "train-llm-7-worker-0", "trainer")],
    [AllocationSourceState("kubelet", "ok"), AllocationSourceState("hpc_job_mapping", "ok")],
)


def exposition(snapshot: NodeSnapshot | None, jobs: list, now: float = NOW) -> str:
    registry = CollectorRegistry(auto_describe=False)
    registry.register(GpusloCollector(lambda: snapshot, lambda: jobs, lambda: now, version="0.1.0",
                                      extra=lambda: PLATFORM,
                                      allocations=lambda: ALLOCATIONS))  # fmt: skip
    return generate_latest(registry).decode()


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    out = {}
    for family in text_string_to_metric_families(text):
        for s in family.samples:
            out[(s.name, tuple(sorted(s.labels.items())))] = s.value
    return out


@pytest.fixture
def jobs(tmp_path: Path) -> list:
    write_job(tmp_path, "train-llm-7")
    tailer = JournalTailer(tmp_path)
    tailer.poll()
    # a job log that shows 200 steps and no commit evidence: progress, goodput unknown
    silent = LogJobGoodput(job="slurm-1", gpus=8, last_step=200, last_progress_t=NOW - 30,
                           last_event_t=NOW - 30, status="running",
                           goodput_unknown="no_commit_evidence")
    return [*tailer.jobs(20), ("slurm-1", silent)]


def test_golden_exposition(jobs: list) -> None:
    text = exposition(fixture_snapshot(), jobs)
    if os.environ.get("GPUSLO_REGENERATE"):
        GOLDEN.parent.mkdir(parents=True, exist_ok=True)
        GOLDEN.write_text(text)
    assert text == GOLDEN.read_text()


def test_every_metric_has_help_and_a_sample(jobs: list) -> None:
    families = {
        f.name: f for f in text_string_to_metric_families(exposition(fixture_snapshot(), jobs))
    }
    for name, (kind, _labels, help_text) in names.METRICS.items():
        base = name.removesuffix("_total") if kind == "counter" else name
        assert families[base].documentation == help_text
        assert families[base].type == kind
        assert families[base].samples, name


def test_values_of_the_fixture_node(jobs: list) -> None:
    s = samples(exposition(fixture_snapshot(), jobs))
    gpu = (("gpu", "0"), ("uuid", "GPU-4c1d2e3f-0a1b-2c3d-4e5f-60718293a4b5"))
    assert s[("gpuslo_gpu_usable", gpu)] == 0
    assert s[("gpuslo_gpu_verdict", (*gpu, ("verdict", "unhealthy")))] == 1
    assert s[("gpuslo_node_verdict", (("verdict", "unhealthy"),))] == 1
    assert s[("gpuslo_check_status", (("check", "thermal"), ("status", "unknown")))] == 1  # stale
    assert s[("gpuslo_check_status", (("check", "xid"), ("status", "fail")))] == 1
    job = ("job", "train-llm-7")
    assert s[("gpuslo_job_gpu_seconds_total", (("category", "wasted_progress"), job))] == 1200
    assert s[("gpuslo_job_gpu_seconds_total", (("category", "recovery"), job))] == 600
    assert s[("gpuslo_job_gpu_seconds_total", (("category", "productive"), job))] == 4800
    assert s[("gpuslo_job_step", (job,))] == 80
    assert s[("gpuslo_job_interruptions_total", (job, ("layer", "training")))] == 1


def test_statesets_are_one_hot(jobs: list) -> None:
    s = samples(exposition(fixture_snapshot(), jobs))
    for metric, state in (
        ("gpuslo_gpu_verdict", "verdict"),
        ("gpuslo_node_verdict", "verdict"),
        ("gpuslo_check_status", "status"),
    ):
        groups: dict[tuple, float] = {}
        for (name, labels), value in s.items():
            if name == metric:
                key = tuple(kv for kv in labels if kv[0] != state)
                groups[key] = groups.get(key, 0) + value
        assert groups and all(total == 1 for total in groups.values()), metric


def test_results_go_stale_at_scrape_time() -> None:
    """A healthy snapshot scraped 91 s later (> 3 × 30 s) is unknown, not its last value."""
    gpu = fixture_gpus()[0]
    healthy = NodeSnapshot(
        node="n",
        gpus=(gpu,),
        results=(CheckResult(check="gpu_inventory", scope="node", status="ok", observed_at=NOW),),
        heartbeats=(Heartbeat("gpu_inventory", 30.0, NOW, NOW, 0.1, 1),),
    )
    fresh = samples(exposition(healthy, [], now=NOW + 5))
    stale = samples(exposition(healthy, [], now=NOW + 91))
    assert fresh[("gpuslo_node_usable", ())] == 1
    assert stale[("gpuslo_node_usable", ())] == 0
    assert stale[("gpuslo_node_verdict", (("verdict", "unknown"),))] == 1
    problem = (
        ("action", "none"),
        ("check", "gpu_inventory"),
        ("gpu", "0"),
        ("layer", "observability"),
        ("reason", "stale_data"),
        ("uuid", gpu.uuid),
    )
    assert stale[("gpuslo_gpu_problem", problem)] == 1


def test_before_the_first_cycle_the_node_is_unknown() -> None:
    s = samples(exposition(None, []))
    assert s[("gpuslo_node_usable", ())] == 0
    assert s[("gpuslo_node_verdict", (("verdict", "unknown"),))] == 1


def test_job_labels_are_bounded_most_recent_first(tmp_path: Path) -> None:
    for i in range(5):
        write_job(tmp_path, f"job-{i}", start=NOW - 100_000 + i * 1000)
    tailer = JournalTailer(tmp_path)
    tailer.poll()
    assert [job for job, _ in tailer.jobs(2)] == ["job-4", "job-3"]
    exposed = {
        dict(k[1])["job"] for k in samples(exposition(None, tailer.jobs(2))) if "job" in dict(k[1])
    }
    assert exposed == {"job-4", "job-3"}


def test_promtool_finds_nothing_to_say(promtool: str, jobs: list) -> None:
    text = exposition(fixture_snapshot(), jobs)
    done = subprocess.run(
        [promtool, "check", "metrics"], input=text, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0 and done.stdout == "" and done.stderr == "", done


def test_families_come_out_sorted_and_complete() -> None:
    built = [f.name for f in build_families(fixture_snapshot(), [], NOW)]
    expected = sorted(
        n.removesuffix("_total") if names.METRICS[n][0] == "counter" else n for n in names.METRICS
    )
    assert sorted(built) == expected


REAL_H200 = GOLDEN.parent / "h200_real_once.prom"


def test_the_real_h200_exposition_is_healthy_for_each_gpu() -> None:
    """`gpuslo exporter --once --state-dir /tmp/gstate` (second run, source tree on PYTHONPATH,
    so the version reads 0.0.0+unknown) on a real one-GPU H200 node, driver 580.159.04, kept as
    recorded: every GPU in the inventory is healthy and usable, every check ok."""
    s = samples(REAL_H200.read_text())
    uuids = [dict(k[1])["uuid"] for k in s if k[0] == "gpuslo_gpu_info"]
    assert uuids
    for uuid in uuids:
        gpu = next(
            dict(k[1])["gpu"] for k in s if k[0] == "gpuslo_gpu_info" and dict(k[1])["uuid"] == uuid
        )
        assert s[("gpuslo_gpu_usable", (("gpu", gpu), ("uuid", uuid)))] == 1
        assert (
            s[("gpuslo_gpu_verdict", (("gpu", gpu), ("uuid", uuid), ("verdict", "healthy")))] == 1
        )
    assert s[("gpuslo_node_usable", ())] == 1
    statuses = {
        dict(k[1])["check"]
        for k, v in s.items()
        if k[0] == "gpuslo_check_status" and dict(k[1])["status"] == "ok" and v == 1
    }
    assert statuses == {dict(k[1])["check"] for k in s if k[0] == "gpuslo_check_runs_total"}
    assert not [k for k in s if k[0] == "gpuslo_gpu_problem"]


def test_the_real_h200_exposition_passes_promtool(promtool: str) -> None:
    done = subprocess.run(
        [promtool, "check", "metrics"],
        input=REAL_H200.read_text(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert done.returncode == 0 and done.stdout == done.stderr == "", done


def test_a_kernel_log_event_by_bus_id_reaches_its_gpu() -> None:
    """The xid check scopes an event `pci:<bus id>` when the log has no UUID map; the GPU at that
    bus id must not stay usable."""
    gpu = fixture_gpus()[0]
    snap = NodeSnapshot(
        node="n",
        gpus=(gpu,),
        results=(
            CheckResult(check="gpu_inventory", scope="node", status="ok", observed_at=NOW),
            CheckResult(
                check="xid",
                scope=f"pci:{gpu.pci_bus_id.upper()}",
                status="fail",
                reason="xid_fatal",
                action="reset_gpu",
                observed_at=NOW,
            ),
        ),
        heartbeats=(Heartbeat("gpu_inventory", 30.0, NOW, NOW), Heartbeat("xid", 30.0, NOW, NOW)),
    )
    s = samples(exposition(snap, []))
    assert s[("gpuslo_gpu_usable", (("gpu", "0"), ("uuid", gpu.uuid)))] == 0
    assert (
        s[("gpuslo_gpu_verdict", (("gpu", "0"), ("uuid", gpu.uuid), ("verdict", "unhealthy")))] == 1
    )


def test_degradations_are_exported_by_scope_while_fresh_and_warn() -> None:
    """A GPU's SW power capping (gpu, uuid), the node's link flap (all empty) and a device's
    port errors (device) are series at 1; a fail with a degradation reason is a problem
    instead, a stale warn is unknown, and a warn without a degradation reason is not one."""
    snap = fixture_snapshot()
    gpu = snap.gpus[0]
    extra = (
        CheckResult("thermal", gpu.uuid, "warn", "clocks_sw_power_cap", observed_at=NOW - 1),
        CheckResult("port_errors", "node", "warn", "network_link_flap", observed_at=NOW - 1),
        CheckResult("port_errors", "mlx5_1", "fail", "network_port_errors", observed_at=NOW - 1),
        CheckResult("port_errors", "mlx5_2", "warn", "network_port_errors",
                    observed_at=NOW - 600),
        CheckResult("pcie", gpu.uuid, "warn", "pcie_aer_uncorrectable", observed_at=NOW - 1),
    )
    snap = NodeSnapshot(**{**snap.__dict__, "results": snap.results + extra,
                           "heartbeats": snap.heartbeats})
    registry = CollectorRegistry()
    registry.register(GpusloCollector(lambda: snap, list, lambda: NOW))
    found = sorted(tuple(dict(k)[label] for label in ("gpu", "uuid", "device", "reason"))
                   for (name, k), _ in samples(generate_latest(registry).decode()).items()
                   if name == "gpuslo_node_degradation")
    assert found == [("", "", "", "network_link_flap"), ("", "", "mlx5_0", "network_port_errors"),
                     (gpu.index, gpu.uuid, "", "clocks_sw_power_cap")]
