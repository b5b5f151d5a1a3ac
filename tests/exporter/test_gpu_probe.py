"""The active probe on CPU: the NVML replay says who uses each GPU (gpuslo/data/nvml_replay, modes
busy / busy_after / exclusive), the probe replay answers with the recorded H200 measurements
(gpuslo/data/probe_replay/h200.json: 779 TFLOPS and 4.13 TB/s idle, 316 TFLOPS beside a
training job), and the real runner runs the check in its child process."""

from __future__ import annotations

import json
import time

import pytest
from conftest import REPO

from gpuslo.errors import ConfigError
from gpuslo.exporter.checks.base import CheckContext
from gpuslo.exporter.checks.gpu_probe import thresholds
from gpuslo.exporter.checks.registry import load_checks
from gpuslo.exporter.evidence.gpu_activity import GpuActivity
from gpuslo.exporter.evidence.probe import ProbeMeasurement
from gpuslo.exporter.evidence.probe.parallel import Outcome, measure_all, probe_deadline_s
from gpuslo.exporter.policy.probe import Busy, busy_before, judge_probe, probe_pids
from gpuslo.exporter.policy.speeds import load_speed_policy, merge, policy_from_mapping
from gpuslo.exporter.runner import Runner

NVML_REPLAY = REPO / "gpuslo" / "data" / "nvml_replay"
PROBE_REPLAY = REPO / "gpuslo" / "data" / "probe_replay" / "h200.json"


def probe(tmp_path, monkeypatch, nvml_mode="ok", replay=None, timeout_s=10.0, **env):
    """One runner cycle of gpu_probe on the 8-GPU replayed H200 node; (snapshot, seconds)."""
    monkeypatch.setenv("GPUSLO_NVML_PATH", str(NVML_REPLAY))
    monkeypatch.setenv("GPUSLO_FAKE_NVML_MODE", nvml_mode)
    path = PROBE_REPLAY
    if replay is not None:
        path = tmp_path / "replay.json"
        path.write_text(json.dumps({**json.loads(PROBE_REPLAY.read_text()), **replay}))
    monkeypatch.setenv("GPUSLO_PROBE_REPLAY", str(path))
    for key, value in env.items():
        monkeypatch.setenv(key, value)
    context = CheckContext(timeout_s=timeout_s, active=True, state_dir=tmp_path / "state")
    runner = Runner(load_checks(["gpu_probe"]), context)
    started = time.monotonic()
    try:
        return runner.cycle(), time.monotonic() - started
    finally:
        runner.close()


def by_gpu(snapshot):
    return {r.gpu: r for r in snapshot.results}


def test_idle_h200_node_passes_at_recorded_speed(tmp_path, monkeypatch):
    snapshot, _ = probe(tmp_path, monkeypatch)
    results = by_gpu(snapshot)
    assert sorted(results) == [str(i) for i in range(8)]
    assert {r.status for r in results.values()} == {"ok"}
    assert "bf16 779 TFLOPS, copy 4.13 TB/s" in results["0"].message
    # 0.7 x the low end of the measured range: 0.7 x 779 = 545.3, 0.7 x 4.13 = 2.891
    assert "at least 545 TFLOPS, 2.89 TB/s: H200, 0.7 x measured" in results["0"].message


def test_busy_gpus_are_never_failed_on_speed(tmp_path, monkeypatch):
    """A training job on every GPU (NVML lists its process, 97 % utilisation) and the probe would
    have measured 316 TFLOPS beside it (issue 26): correctness only, speed not judged."""
    snapshot, _ = probe(tmp_path, monkeypatch, "busy", GPUSLO_PROBE_REPLAY_MODE="loaded")
    results = by_gpu(snapshot)
    assert {r.status for r in results.values()} == {"ok"}
    for result in results.values():
        assert result.message.startswith("busy: speed not judged (pid 424242 on the GPU)")
        assert "64 MiB memory pattern" in result.message  # the small allocation


def test_speed_not_judged_is_counted_across_runs(tmp_path, monkeypatch):
    """Two probe runs beside a job on GPUs 2 and 5: 2 each, kept in the state dir (the
    exporter's gpuslo_gpu_probe_speed_not_judged_total); the idle GPUs are not counted."""
    for _ in range(2):
        snapshot, _ = probe(tmp_path, monkeypatch, "busy", GPUSLO_FAKE_NVML_BUSY="2,5")
    uuid = {r.gpu: r.scope for r in snapshot.results}
    assert snapshot.probe_speed_not_judged == {(uuid["2"], "busy"): 2, (uuid["5"], "busy"): 2}
    saved = json.loads((tmp_path / "state" / "probe_not_judged.json").read_text())
    assert saved == sorted([[uuid["2"], "busy", 2], [uuid["5"], "busy", 2]])


def test_job_starting_during_the_probe_makes_speed_not_judged(tmp_path, monkeypatch):
    snapshot, _ = probe(tmp_path, monkeypatch, "busy_after", GPUSLO_PROBE_REPLAY_MODE="loaded",
                        GPUSLO_FAKE_NVML_BUSY="2")
    results = by_gpu(snapshot)
    assert results["2"].status == "ok"
    assert "pid 424242 started on the GPU during the probe" in results["2"].message
    assert "measured bf16 316 TFLOPS beside it" in results["2"].message
    # the other GPUs had nothing beside the probe: the same 316 TFLOPS is a slow GPU there
    assert (results["3"].status, results["3"].reason) == ("fail", "probe_failed")
    assert "bf16 316 TFLOPS below 545" in results["3"].message


def test_exclusive_process_gpu_in_use_is_busy_not_failed(tmp_path, monkeypatch):
    snapshot, _ = probe(tmp_path, monkeypatch, "exclusive", GPUSLO_FAKE_NVML_BUSY="1")
    results = by_gpu(snapshot)
    assert results["1"].status == "ok" and results["1"].message == (
        "busy: speed not judged (exclusive-process GPU held by pid 424242); not probed")
    assert results["0"].message.startswith("correct; bf16 779 TFLOPS")


def test_context_refused_is_busy_and_a_cuda_error_is_unknown(tmp_path, monkeypatch):
    snapshot, _ = probe(tmp_path, monkeypatch, GPUSLO_PROBE_REPLAY_MODE="no_context",
                        GPUSLO_PROBE_REPLAY_GPUS="4")
    result = by_gpu(snapshot)["4"]
    assert result.status == "ok" and result.message.startswith(
        "busy: speed not judged (no CUDA context: CUDA error: all CUDA-capable devices are busy")
    snapshot, _ = probe(tmp_path, monkeypatch, GPUSLO_PROBE_REPLAY_MODE="error",
                        GPUSLO_PROBE_REPLAY_GPUS="4")
    result = by_gpu(snapshot)["4"]
    assert (result.status, result.reason) == ("unknown", "tool_error")
    assert "illegal memory access" in result.message


def test_wrong_results_fail_even_beside_a_job(tmp_path, monkeypatch):
    replay = {"gpus": {"5": {"busy": {"pattern_ok": False}}}}
    snapshot, _ = probe(tmp_path, monkeypatch, "busy", replay)
    result = by_gpu(snapshot)["5"]
    assert (result.status, result.reason, result.action) == (
        "fail", "probe_failed", "drain_and_reset")
    assert result.message.startswith("memory pattern over 64 MiB did not read back; busy:")


def test_eight_gpus_in_parallel_finish_inside_the_check_deadline(tmp_path, monkeypatch):
    """Each GPU takes 1.5 s: one after another 12 s, past the 10 s deadline; in parallel about
    1.5 s (spawning the child, reading NVML twice and judging add the rest)."""
    replay = {"idle": {**json.loads(PROBE_REPLAY.read_text())["idle"], "seconds": 1.5}}
    snapshot, seconds = probe(tmp_path, monkeypatch, replay=replay, timeout_s=10.0)
    assert {r.status for r in snapshot.results} == {"ok"} and len(snapshot.results) == 8
    assert seconds < 5.0, seconds


def test_a_hung_gpu_is_unknown_alone_within_the_probe_deadline(tmp_path, monkeypatch):
    """Check deadline 3 s: the probe's own is min(5 + 0.5 x 8, 0.8 x 3) = 2.4 s; GPU 3 never
    answers and reads check_timeout; the other seven answer; the cycle ends before 3 s."""
    snapshot, seconds = probe(tmp_path, monkeypatch, timeout_s=3.0,
                              GPUSLO_PROBE_REPLAY_MODE="hang", GPUSLO_PROBE_REPLAY_GPUS="3")
    results = by_gpu(snapshot)
    assert (results["3"].status, results["3"].reason) == ("unknown", "check_timeout")
    assert "deadline of 2.4 s" in results["3"].message
    assert {results[str(i)].status for i in range(8) if i != 3} == {"ok"}
    assert seconds < 3.0, seconds


def test_probe_deadline_scales_with_gpus_and_stays_inside_the_check():
    assert probe_deadline_s(1, 60) == 5.5
    assert probe_deadline_s(8, 60) == 9.0
    assert probe_deadline_s(16, 60) == 13.0
    assert probe_deadline_s(8, 10) == 8.0  # 0.8 of the check's deadline at most
    assert probe_deadline_s(8, 60, base_s=2, per_gpu_s=1) == 10.0


def test_measure_all_runs_every_gpu_at_once():
    gpus = [GpuActivity(str(i), f"GPU-{i}", "NVIDIA H200", (), 0.0) for i in range(8)]

    def measure(gpu, full):
        time.sleep(0.3)
        return ProbeMeasurement(gpu.index, full, 1e-6, True, 1 << 30, 790.0, 4.2, 0.3)

    started = time.monotonic()
    outcomes = measure_all(measure, [(g, True) for g in gpus], deadline_s=5.0)
    assert time.monotonic() - started < 1.2  # 8 x 0.3 s = 2.4 s one after another
    assert all(o.measurement is not None for o in outcomes.values())


# --- per-SKU thresholds ---------------------------------------------------------------------


@pytest.mark.parametrize(
    ("model", "sku", "bf16", "copy"),
    [
        ("NVIDIA H200", "H200", 0.7 * 779.0, 0.7 * 4.13),  # measured here
        ("NVIDIA H200 NVL", "H200 NVL", 0.5 * 835.5, 0.5 * 4.8),
        ("NVIDIA H100 80GB HBM3", "H100 SXM", 0.5 * 989.4, 0.5 * 3.35),
        ("NVIDIA H100 PCIe", "H100 PCIe", 0.5 * 756.5, 0.5 * 2.0),
        ("NVIDIA H100 NVL", "H100 NVL", 0.5 * 835.5, 0.5 * 3.9),
        ("NVIDIA A100-SXM4-80GB", "A100 80GB SXM", 0.5 * 312.0, 0.5 * 2.039),
        ("NVIDIA A100-SXM4-40GB", "A100 40GB", 0.5 * 312.0, 0.5 * 1.555),
        ("NVIDIA A100 80GB PCIe", "A100 80GB PCIe", 0.5 * 312.0, 0.5 * 1.935),
        ("NVIDIA B200", "B200", 0.5 * 2250.0, 0.5 * 7.7),
        ("NVIDIA GB200", "GB200", 0.5 * 2500.0, 0.5 * 8.0),
        ("NVIDIA L40S", "L40S", 0.5 * 362.05, 0.5 * 0.864),
        ("NVIDIA L4", "L4", 0.5 * 121.0, 0.5 * 0.3),
        ("NVIDIA A10", "A10", 0.5 * 125.0, 0.5 * 0.6),
    ],
)
def test_speed_thresholds_per_sku(model, sku, bf16, copy):
    limits = load_speed_policy().thresholds_for(model)
    assert limits is not None and limits.sku == sku
    assert limits.min_bf16_tflops == pytest.approx(bf16)
    assert limits.min_copy_tbps == pytest.approx(copy)


@pytest.mark.parametrize("model", ["NVIDIA L40", "Tesla T4", "NVIDIA A100X", "NVIDIA A10G"])
def test_models_without_a_sku_are_not_judged_on_speed(model):
    policy = load_speed_policy()
    if model == "NVIDIA A100X":  # an A100 variant: the A100 row's pattern finds it
        assert policy.thresholds_for(model).sku == "A100 40GB"
        return
    assert policy.thresholds_for(model) is None
    gpu = GpuActivity("0", "GPU-x", model, (), 0.0)
    m = ProbeMeasurement("0", True, 1e-6, True, 1 << 30, 10.0, 0.1)
    result = judge_probe(gpu, Outcome("0", m), Busy(), None, 8.0)
    assert result.status == "ok" and "no speed known for this model: not judged" in result.message


def test_operator_overlay_and_node_config_override_the_table(tmp_path):
    overlay = tmp_path / "speeds.yaml"
    overlay.write_text(
        "fail_below: {measured: 0.8}\n"
        "skus:\n"
        "  - name: H200\n    match: 'H200'\n    peak: {bf16_tflops: 989.4, memory_tbps: 4.8}\n"
        "    measured: {bf16_tflops: [800.0, 810.0], copy_tbps: [4.3, 4.4]}\n"
        "  - name: RTX 6000 Ada\n    match: 'RTX 6000 Ada'\n"
        "    peak: {bf16_tflops: 364.2, memory_tbps: 0.96}\n"
    )
    policy = load_speed_policy(str(overlay))
    h200 = policy.thresholds_for("NVIDIA H200")
    assert (h200.min_bf16_tflops, h200.min_copy_tbps) == pytest.approx((640.0, 3.44))
    assert policy.thresholds_for("NVIDIA RTX 6000 Ada Generation").sku == "RTX 6000 Ada"
    assert policy.thresholds_for("NVIDIA H100 PCIe").sku == "H100 PCIe"  # packaged rows kept
    configured = thresholds(policy, "NVIDIA H200", {"min_tflops": 700.0})
    assert (configured.min_bf16_tflops, configured.min_copy_tbps) == pytest.approx((700.0, 3.44))
    assert configured.basis == "configured"


def test_a_bad_overlay_names_every_bad_field(tmp_path):
    bad = merge({"fail_below": {"measured": 0.7, "peak": 0.5}, "busy": {
        "utilization_at_least": 0.05}, "skus": []},
        {"fail_below": {"peak": 2}, "skus": [{"name": "X", "match": "(", "peak": {}}],
         "colour": "red"})
    with pytest.raises(ConfigError) as error:
        policy_from_mapping(bad, "speeds.yaml")
    text = str(error.value)
    for words in ("colour: unknown field", "fail_below:", "skus[0].match: not a regular",
                  "skus[0].peak:"):
        assert words in text, text
    missing = tmp_path / "missing.yaml"
    with pytest.raises(ConfigError, match="missing.yaml: cannot read probe speeds"):
        load_speed_policy(str(missing))


# --- who uses the GPU -------------------------------------------------------------------------


def gpu(processes=(), utilization=0.0, **kwargs):
    return GpuActivity("0", "GPU-x", "NVIDIA H200", processes, utilization, **kwargs)


@pytest.mark.parametrize(
    ("activity", "why", "skip"),
    [
        (gpu(), "", False),
        (gpu((4242,)), "busy", False),
        (gpu((), 0.97), "busy", False),
        (gpu((), 0.04), "", False),  # below the table's 0.05
        (gpu((77,)), "", False),  # the probe's own process
        (gpu((4242,), exclusive=True), "no_context", True),
        (gpu((), prohibited=True), "no_context", True),
        (gpu(None, None), "activity_unknown", False),
    ],
)
def test_busy_before(activity, why, skip):
    busy = busy_before(activity, 0.05, own_pid=77)
    assert (busy.why, busy.skip) == (why, skip)


def test_the_probe_finds_its_own_pid_inside_a_container():
    """NVML reports host PIDs: inside a container the probe's os.getpid() (77) is not listed; the
    one PID new on every probed GPU (9001) is the probe's own. Two new PIDs: nobody is."""
    before = {i: gpu((4242,)) for i in ("0", "1")}
    after = {i: gpu((4242, 9001)) for i in ("0", "1")}
    assert probe_pids(before, after, ["0", "1"], own_pid=77) == {9001}
    after["1"] = gpu((4242, 9001, 9002))
    assert probe_pids(before, after, ["0", "1"], own_pid=77) == {9001}
    after = {i: gpu((9001, 9002)) for i in ("0", "1")}
    assert probe_pids(before, after, ["0", "1"], own_pid=77) == set()
    assert probe_pids(before, {"0": gpu((77, 9002))}, ["0"], own_pid=77) == {77}
