"""The NVML GPU checks, run by the real runner against the fake NVML answering from the recorded
H200 (gpuslo/data/nvml_replay), healthy and with one fault per GPU; the probe's and the node
config's pure rules."""

from __future__ import annotations

import copy
import json

import pytest
from conftest import REPO
from hypothesis import given
from hypothesis import strategies as st

from gpuslo.errors import ConfigError
from gpuslo.exporter.checks.base import CheckContext
from gpuslo.exporter.checks.gpu_memory import GpuMemoryCheck
from gpuslo.exporter.checks.nvlink import NvlinkCheck
from gpuslo.exporter.checks.pcie import PcieCheck
from gpuslo.exporter.checks.registry import load_checks
from gpuslo.exporter.checks.thermal import ThermalCheck
from gpuslo.exporter.evidence.gpu_status import GpuStatus
from gpuslo.exporter.evidence.nvml import NvmlNode
from gpuslo.exporter.node_config import parse_node_config
from gpuslo.exporter.policy.gpu import evaluate_gpu
from gpuslo.exporter.runner import Runner
from gpuslo.verdict import node_verdict

FAKE_NVML = REPO / "gpuslo" / "data" / "nvml_replay"
NODE = json.loads((FAKE_NVML / "h200x8.json").read_text())
GPU_CHECKS = ["gpu_inventory", "gpu_memory", "thermal", "nvlink", "pcie"]


def run_checks(tmp_path, monkeypatch, node=None, names=GPU_CHECKS, **context):
    monkeypatch.setenv("GPUSLO_NVML_PATH", str(FAKE_NVML))
    if node is not None:
        path = tmp_path / "node.json"
        path.write_text(json.dumps(node))
        monkeypatch.setenv("GPUSLO_FAKE_NVML", str(path))
    context.setdefault("state_dir", tmp_path / "state")
    runner = Runner(load_checks(names), CheckContext(timeout_s=5.0, **context))
    try:
        return runner.cycle()
    finally:
        runner.close()


def by_gpu(snapshot, check):
    return {r.gpu: r for r in snapshot.results if r.check == check and r.gpu}


def test_recorded_h200_node_is_healthy(tmp_path, monkeypatch):
    snapshot = run_checks(tmp_path, monkeypatch)
    assert node_verdict(snapshot.results) == "healthy"
    assert len(snapshot.gpus) == 8 and snapshot.gpus[0].model == "NVIDIA H200"
    assert snapshot.gpus[0].family == "hopper" and snapshot.driver_version == "580.159.04"
    assert snapshot.cuda_version == "13.0"
    nvlink = by_gpu(snapshot, "nvlink")["0"]  # the recorded H200 has no NVLink: said, not hidden
    assert nvlink.applicable is False and "no NVLink" in nvlink.message
    assert all(r.duration_s > 0 for r in snapshot.results)


def degraded_node():
    node = copy.deepcopy(NODE)
    gpus = node["gpus"]
    gpus[0]["ecc_uncorr_vol"] = 2
    gpus[1]["nvmlDeviceGetRemappedRows"] = [0, 1, 1, 0]
    gpus[2]["fields"]["NVML_FI_DEV_GET_GPU_RECOVERY_ACTION"] = 4
    gpus[3]["nvmlDeviceGetCurrentClocksEventReasons"] = 0x41
    gpus[4]["temp_gpu"] = 90
    gpus[5]["nvmlDeviceGetCurrPcieLinkWidth"] = 8
    gpus[6]["nvlink"] = [{"link": n, "state": 0 if n == 3 else 1} for n in range(18)]
    gpus[7]["nvlink"] = [{"link": n, "state": 1, "errors": {"0": 5}} for n in range(18)]
    return node


def test_one_fault_per_gpu(tmp_path, monkeypatch):
    snapshot = run_checks(tmp_path, monkeypatch, degraded_node())
    memory, thermal = by_gpu(snapshot, "gpu_memory"), by_gpu(snapshot, "thermal")
    pcie, nvlink = by_gpu(snapshot, "pcie"), by_gpu(snapshot, "nvlink")
    assert (memory["0"].status, memory["0"].reason, memory["0"].action) == (
        "fail",
        "ecc_uncorrectable",
        "reset_gpu",
    )
    assert (memory["1"].reason, memory["1"].action) == ("row_remap_pending", "drain_and_reset")
    assert (memory["2"].reason, memory["2"].action) == ("recovery_action", "drain_and_reset")
    assert (thermal["3"].status, thermal["3"].reason) == ("fail", "thermal_slowdown")
    assert (thermal["4"].status, thermal["4"].reason) == ("warn", "thermal_slowdown")
    assert "90 C" in thermal["4"].message and "89 C" in thermal["4"].message
    assert (pcie["5"].status, pcie["5"].reason) == ("warn", "pcie_degraded")
    assert (nvlink["6"].status, nvlink["6"].reason) == ("fail", "nvlink_down")
    assert "3" in nvlink["6"].message
    assert (nvlink["7"].status, nvlink["7"].applicable) == ("ok", True)
    healthy = [memory["7"], thermal["7"], pcie["7"]]
    assert [r.status for r in healthy] == ["ok"] * 3
    assert node_verdict(snapshot.results) == "unhealthy"


def test_nvlink_error_counters_rising_warn(tmp_path, monkeypatch):
    node = degraded_node()
    run_checks(tmp_path, monkeypatch, node, names=["nvlink"])  # baseline: 5 replays per link
    node["gpus"][7]["nvlink"][2]["errors"] = {"0": 9}
    snapshot = run_checks(tmp_path, monkeypatch, node, names=["nvlink"])
    result = by_gpu(snapshot, "nvlink")["7"]
    assert (result.status, result.reason) == ("warn", "nvlink_errors")
    assert "link 2 dl_replay +4" in result.message


def test_inventory_remembers_the_first_healthy_count(tmp_path, monkeypatch):
    first = run_checks(tmp_path, monkeypatch, names=["gpu_inventory"])
    assert [r.status for r in first.results if r.scope == "node"] == ["ok"]
    assert json.loads((tmp_path / "state" / "gpu_inventory.json").read_text()) == {
        "expected_gpus": 8
    }
    node = copy.deepcopy(NODE)
    node["gpus"] = node["gpus"][:7]  # a GPU fell off the bus
    later = run_checks(tmp_path, monkeypatch, node, names=["gpu_inventory"])
    (count,) = [r for r in later.results if r.scope == "node"]
    assert (count.status, count.reason, count.action) == ("fail", "gpu_missing", "reboot_node")
    assert "7 GPUs seen, 8 expected" in count.message


def test_no_expected_count_says_it_is_not_configured_and_what_to_do(tmp_path, monkeypatch):
    """A newcomer's partial node (half the GPUs unreadable, no count configured) read
    `gpu_missing ... 8 GPUs seen, no expected count yet`: it now says the count is not
    configured, why this run cannot learn it, and the flag or config key that sets it."""
    monkeypatch.setenv("GPUSLO_FAKE_NVML_MODE", "partial")
    snapshot = run_checks(tmp_path, monkeypatch, names=["gpu_inventory"])
    (count,) = [r for r in snapshot.results if r.scope == "node"]
    assert (count.status, count.reason) == ("fail", "gpu_missing")
    assert count.message == (
        "8 GPUs seen; the expected GPU count is not configured (not learned while 4 of them "
        "cannot be read): set --expect-gpus N or expect_gpus: N in the node config (--config)")
    assert not (tmp_path / "state" / "gpu_inventory.json").exists()


@pytest.mark.parametrize(
    "content",
    ["{not json", '{"expected_gpus": "eight"}', '{"expected_gpus": 0}', "[8]", b"\xff\xfe\x00"],
    ids=["not-json", "text-count", "zero", "list", "binary"],
)
def test_a_corrupt_inventory_state_is_unknown_and_never_relearned(tmp_path, monkeypatch, content):
    """Regression (issue 10): a broken gpu_inventory.json was read as "no count yet", so a node
    that had lost a GPU re-learned the lower count as expected and turned healthy."""
    state = tmp_path / "state"
    state.mkdir()
    path = state / "gpu_inventory.json"
    path.write_bytes(content if isinstance(content, bytes) else content.encode())
    node = copy.deepcopy(NODE)
    node["gpus"] = node["gpus"][:7]
    snapshot = run_checks(tmp_path, monkeypatch, node, names=["gpu_inventory"])
    (count,) = [r for r in snapshot.results if r.scope == "node"]
    assert (count.status, count.reason) == ("unknown", "parse_error")
    assert str(path) in count.message
    assert path.read_bytes() == (content if isinstance(content, bytes) else content.encode())
    assert len(snapshot.gpus) == 7  # the inventory is still reported
    assert node_verdict(snapshot.results) == "unknown"


def test_an_unreadable_inventory_state_is_unknown(tmp_path, monkeypatch):
    (tmp_path / "state" / "gpu_inventory.json").mkdir(parents=True)  # a directory, not a file
    snapshot = run_checks(tmp_path, monkeypatch, names=["gpu_inventory"])
    (count,) = [r for r in snapshot.results if r.scope == "node"]
    assert (count.status, count.reason) == ("unknown", "tool_error")
    assert "gpu_inventory.json" in count.message


def test_a_corrupt_nvlink_baseline_is_unknown_not_reset(tmp_path, monkeypatch):
    """Regression (issue 10): a broken baseline was silently reset, hiding rising counters."""
    state = tmp_path / "state"
    state.mkdir()
    (state / "nvlink_errors.json").write_text('{"GPU-x": [1, 2]')
    snapshot = run_checks(tmp_path, monkeypatch, degraded_node(), names=["nvlink"])
    results = [r for r in snapshot.results if r.check == "nvlink"]
    assert results and all(r.status == "unknown" for r in results)
    assert "nvlink_errors.json" in results[0].message
    assert (state / "nvlink_errors.json").read_text() == '{"GPU-x": [1, 2]'


def test_inventory_flag_wins(tmp_path, monkeypatch):
    snapshot = run_checks(tmp_path, monkeypatch, names=["gpu_inventory"], expect_gpus=9)
    (count,) = [r for r in snapshot.results if r.scope == "node"]
    assert (count.status, count.reason) == ("fail", "gpu_missing")
    assert not (tmp_path / "state" / "gpu_inventory.json").exists()


def test_probe_not_requested_or_not_runnable(tmp_path, monkeypatch):
    idle = run_checks(tmp_path, monkeypatch, names=["gpu_probe"])
    assert (idle.results[0].status, idle.results[0].applicable) == ("ok", False)
    # no PyTorch here (CI has none): asked for, the probe cannot run → unknown, never ok
    monkeypatch.setenv("PYTHONNOUSERSITE", "1")
    blocker = tmp_path / "no-torch"
    blocker.mkdir()
    (blocker / "torch.py").write_text("raise ImportError('torch hidden by the test')\n")
    monkeypatch.syspath_prepend(str(blocker))
    asked = run_checks(tmp_path, monkeypatch, names=["gpu_probe"], active=True)
    assert (asked.results[0].status, asked.results[0].reason) == ("unknown", "dependency_missing")


CONFIG = """
node: gpu-node-17
instance_type: p5.48xlarge
expect_gpus: 8
expect_network_devices: {efa: 32}
dcgm_url: http://127.0.0.1:9400/metrics
check_timeout_s: 10
checks:
  xid: {interval_s: 10, timeout_s: 5}
"""


def test_node_config_reads_every_field():
    config = parse_node_config(CONFIG, "node.yaml")
    assert config.expect_gpus == 8 and config.expect_network_devices == {"efa": 32}
    assert config.checks == {"xid": {"interval_s": 10.0, "timeout_s": 5.0}}


@pytest.mark.parametrize(
    ("text", "words"),
    [
        ("expect_gpus: -1", "expect_gpus"),
        ("expect_gpu: 8", "expect_gpu: unknown field"),
        ("check_timeout_s: 0", "check_timeout_s"),
        ("checks: {xdi: {interval_s: 5}}", "checks.xdi: unknown check"),
        ("checks: {xid: {interval_s: fast}}", "checks.xid.interval_s"),
        ("expect_network_devices: {roce: 2}", "expect_network_devices.roce"),
        ("[1, 2", "not valid YAML"),
        ("- a list", "mapping"),
    ],
)
def test_node_config_errors_name_the_field(text, words):
    with pytest.raises(ConfigError, match="node.yaml") as error:
        parse_node_config(text, "node.yaml")
    assert words in str(error.value)


# --- invariants of the per-GPU rules (pure evaluate), over any status a source could report -----

counts = st.none() | st.integers(min_value=0, max_value=10**6)
flags = st.none() | st.booleans()
statuses = st.builds(
    GpuStatus,
    index=st.just("0"),
    uuid=st.just("GPU-x"),
    model=st.just("NVIDIA H200"),
    ecc_dbe_volatile=counts,
    ecc_dbe_aggregate=counts,
    ecc_sbe_volatile=counts,
    remapped_rows_pending=flags,
    remapped_rows_failure=flags,
    recovery_action=st.none() | st.sampled_from(["None", "GPU_Reset", "Drain_And_Reset", "Weird"]),
    hw_thermal_slowdown=flags,
    hw_slowdown=flags,
    temperature_c=st.none() | st.integers(0, 120),
    slowdown_temperature_c=st.none() | st.integers(0, 120),
    pcie_width_current=st.none() | st.sampled_from([1, 4, 8, 16]),
    pcie_width_max=st.none() | st.just(16),
    nvlink_states=st.none() | st.dictionaries(st.integers(0, 17), st.booleans(), max_size=18),
    accessible=st.just(True),
)
NO_NODE = NvmlNode("", "", 1, (), {})
CHECKS = {
    "gpu_memory": GpuMemoryCheck(),
    "thermal": ThermalCheck(),
    "nvlink": NvlinkCheck(),
    "pcie": PcieCheck(),
}
SIGNALS = {
    "gpu_memory": {
        "ecc_uncorrectable",
        "row_remap_pending",
        "row_remap_failure",
        "recovery_action",
    },
    "thermal": {"thermal_slowdown"},
    "nvlink": {"nvlink_inactive"},
    "pcie": {"pcie_degraded"},
}


@given(statuses)
def test_a_fatal_problem_is_never_ok(status):
    context = CheckContext()
    fatal = {p.signal for p in evaluate_gpu(status) if p.class_ == "fatal"}
    for name, check in CHECKS.items():
        check._baseline, check._seen = {}, {}
        result = check.evaluate(status, NO_NODE, context)
        assert result.check == name and result.scope == "GPU-x"
        if fatal & SIGNALS[name]:
            assert result.status == "fail", (name, result)
        if result.status == "ok" and result.applicable:
            assert not fatal & SIGNALS[name]


def test_one_failing_call_makes_the_gpu_unreadable_not_ok(tmp_path, monkeypatch):
    node = copy.deepcopy(NODE)
    node["gpus"][2]["ecc_uncorr_vol"] = "ERR:NVMLError_Unknown:Unknown Error"
    snapshot = run_checks(tmp_path, monkeypatch, node, names=["gpu_inventory", "gpu_memory"])
    inventory, memory = by_gpu(snapshot, "gpu_inventory"), by_gpu(snapshot, "gpu_memory")
    assert (inventory["2"].status, inventory["2"].reason) == ("fail", "gpu_inaccessible")
    assert "nvmlDeviceGetTotalEccErrors" in inventory["2"].message
    assert (memory["2"].status, memory["2"].reason) == ("unknown", "tool_error")
    assert memory["3"].status == "ok"


def test_sw_power_cap_and_sw_thermal_are_the_workloads_own_unless_the_node_config_opts_in(
    tmp_path, monkeypatch
):
    # Issue 24 (NVML clocks event reasons): SW power cap under full load is normal, so by itself
    # it is no degradation (ok); a node config naming it in degradation_status opts in.
    node = copy.deepcopy(NODE)
    node["gpus"][1]["nvmlDeviceGetCurrentClocksEventReasons"] = 0x04  # SW power cap
    node["gpus"][2]["nvmlDeviceGetCurrentClocksEventReasons"] = 0x20  # SW thermal slowdown
    node["gpus"][3]["nvmlDeviceGetCurrentClocksEventReasons"] = 0x01  # GPU idle: nothing
    snapshot = run_checks(tmp_path, monkeypatch, node, names=["thermal"])
    thermal = by_gpu(snapshot, "thermal")
    assert (thermal["1"].status, thermal["1"].reason) == ("ok", "")
    assert "SW power capping active: the workload's own" in thermal["1"].message
    assert (thermal["2"].status, thermal["2"].reason) == ("ok", "")
    assert thermal["3"].status == "ok"
    assert node_verdict(snapshot.results) == "healthy"
    strict = {"degradation_status": {"clocks_sw_power_cap": "fail", "clocks_sw_thermal": "warn"}}
    snapshot = run_checks(tmp_path, monkeypatch, node, names=["thermal"], config=strict)
    thermal = by_gpu(snapshot, "thermal")
    assert (thermal["1"].status, thermal["1"].reason) == ("fail", "clocks_sw_power_cap")
    assert (thermal["2"].status, thermal["2"].reason) == ("warn", "clocks_sw_thermal")


def test_hw_slowdown_and_hw_power_brake_fail_the_thermal_check(tmp_path, monkeypatch):
    # NVML: HW slowdown 0x08 and HW power brake 0x80 (the V100 at 382 MHz of dev case 128).
    node = copy.deepcopy(NODE)
    node["gpus"][1]["nvmlDeviceGetCurrentClocksEventReasons"] = 0x08
    node["gpus"][2]["nvmlDeviceGetCurrentClocksEventReasons"] = 0x88
    snapshot = run_checks(tmp_path, monkeypatch, node, names=["thermal"])
    thermal = by_gpu(snapshot, "thermal")
    assert (thermal["1"].status, thermal["1"].reason) == ("fail", "hw_slowdown")
    assert thermal["2"].status == "fail"
    assert thermal["2"].reason in ("hw_slowdown", "hw_power_brake")
    assert thermal["0"].status == "ok"


def test_node_config_degradation_status_and_port_error_threshold():
    config = parse_node_config(
        "degradation_status: {clocks_sw_power_cap: fail}\nport_error_threshold: 10", "node.yaml"
    )
    assert config.degradation_status == {"clocks_sw_power_cap": "fail"}
    assert config.port_error_threshold == 10
    with pytest.raises(ConfigError, match="degradation_status.xid_fatal"):
        parse_node_config("degradation_status: {xid_fatal: warn}", "node.yaml")
    with pytest.raises(ConfigError, match="port_error_threshold"):
        parse_node_config("port_error_threshold: 0", "node.yaml")
