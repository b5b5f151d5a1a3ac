"""RDMA ports read from the sysfs fixture trees (tests/fixtures/sysfs, built by make_fixtures.py
from the port strings of corpus cases 006 and 041), and the `network_links` check over them."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from gpuslo.errors import InputError, ToolError
from gpuslo.exporter.checks.base import CheckContext
from gpuslo.exporter.checks.network_links import (
    LinkExpectation,
    NetworkLinksCheck,
    evaluate_network_links,
)
from gpuslo.exporter.evidence.fabric.sysfs import (
    NotSysfs,
    expected_efa_devices,
    read_infiniband_sysfs,
)
from gpuslo.verdict import node_verdict

SYSFS = Path(__file__).resolve().parent.parent / "fixtures" / "sysfs"


def run_check(tree: str, tmp_path: Path, **context) -> list:
    ctx = CheckContext(
        sysfs=SYSFS / tree, state_dir=tmp_path, clock=lambda: 1_700_000_000.0, **context
    )
    return NetworkLinksCheck().run(ctx).results


def by_scope(results) -> dict:
    return {r.scope: r for r in results}


def test_infiniband_tree_reads_state_physical_state_rate_driver_and_carrier():
    ports = read_infiniband_sysfs(SYSFS / "infiniband-port-down")
    assert [(p.device, p.state, p.physical_state) for p in ports] == [
        ("mlx5_0", "Active", "LinkUp"),
        ("mlx5_1", "Down", "LinkUp"),
        ("mlx5_2", "Active", "LinkUp"),
        ("mlx5_3", "Active", "LinkUp"),
    ]
    assert {p.driver for p in ports} == {"mlx5_core"} and {p.rate_gbps for p in ports} == {100.0}
    assert [p.carrier for p in ports] == [True, False, True, True]


def test_no_rdma_tree_has_no_ports():
    assert read_infiniband_sysfs(SYSFS / "no-rdma") == []
    # A root that does not exist is not "no RDMA devices here": nothing can be said (fail closed).
    with pytest.raises(NotSysfs, match="does-not-exist"):
        read_infiniband_sysfs(SYSFS / "does-not-exist")


def test_infiniband_healthy_with_expected_count(tmp_path):
    results = run_check("infiniband-healthy", tmp_path, expect_network_devices={"infiniband": 4})
    assert node_verdict(results) == "healthy"
    assert all(r.observed_at == 1_700_000_000.0 and r.source.startswith("sysfs ") for r in results)


def test_infiniband_one_port_down_fails_that_device(tmp_path):
    results = by_scope(
        run_check("infiniband-port-down", tmp_path, expect_network_devices={"infiniband": 4})
    )
    bad = results["mlx5_1"]
    # Down with its physical link up: the subnet manager has not activated it, not a cable
    # fault (shared/corpus case 006), so no cabling action.
    assert (bad.status, bad.reason, bad.action, bad.layer) == (
        "fail",
        "network_port_down",
        "none",
        "node",
    )
    assert results["mlx5_0"].status == "ok"
    assert node_verdict(results.values()) == "unhealthy"


def test_infiniband_below_the_configured_rate_is_degraded(tmp_path):
    results = run_check(
        "infiniband-healthy", tmp_path, config={"network": {"infiniband_rate_gbps": 200}}
    )
    assert {r.reason for r in results} == {"network_port_degraded"}


def test_infiniband_fewer_devices_than_expected(tmp_path):
    results = by_scope(
        run_check("infiniband-healthy", tmp_path, expect_network_devices={"infiniband": 8})
    )
    assert (results["node"].status, results["node"].reason) == ("fail", "network_devices_missing")


def test_efa_healthy_for_the_instance_type(tmp_path):
    results = run_check("efa-healthy", tmp_path, instance_type="p5.48xlarge")
    assert node_verdict(results) == "healthy"
    assert "32 of 32 EFA" in by_scope(results)["node"].message


def test_device_counts_are_facts_for_the_snapshot(tmp_path):
    ctx = CheckContext(
        sysfs=SYSFS / "efa-degraded", state_dir=tmp_path, instance_type="p5.48xlarge"
    )
    facts = NetworkLinksCheck().run(ctx).facts
    assert facts.network_devices == {"efa": 31, "infiniband": 0}
    assert facts.network_devices_expected == {"efa": 32}


def test_efa_one_device_missing_fails(tmp_path):
    node = by_scope(run_check("efa-degraded", tmp_path, instance_type="p5.48xlarge"))["node"]
    assert (node.status, node.reason, node.message) == (
        "fail",
        "network_devices_missing",
        "31 of 32 EFA devices present",
    )


def test_efa_configured_count_wins_over_the_instance_type(tmp_path):
    results = run_check(
        "efa-degraded", tmp_path, instance_type="p5.48xlarge", expect_network_devices={"efa": 31}
    )
    assert node_verdict(results) == "healthy"


def test_efa_unknown_instance_type_and_no_count_is_unknown_not_ok(tmp_path):
    results = run_check("efa-healthy", tmp_path, instance_type="m7i.large")
    assert node_verdict(results) == "unknown"
    assert by_scope(results)["node"].reason == "no_data"


def test_efa_expected_but_absent_fails(tmp_path):
    results = run_check("no-rdma", tmp_path, instance_type="p5en.48xlarge")
    assert (results[0].status, results[0].message) == ("fail", "0 of 16 EFA devices present")


def test_no_rdma_and_none_expected_is_explicitly_not_applicable(tmp_path):
    (result,) = run_check("no-rdma", tmp_path)
    assert (result.status, result.applicable) == ("ok", False)
    assert "not applicable" in result.message


def test_efa_netdev_without_carrier_fails(tmp_path):
    ports = read_infiniband_sysfs(SYSFS / "efa-healthy")
    cut = [p if p.netdev != "eth1" else type(p)(**{**p.__dict__, "carrier": False}) for p in ports]
    results = by_scope(evaluate_network_links(cut, LinkExpectation(efa_devices=32)))
    assert (results["rdmap1s0"].status, results["rdmap1s0"].reason) == ("fail", "network_port_down")


def test_unreadable_port_state_is_unknown(tmp_path):
    tree = tmp_path / "sys"
    port = tree / "class" / "infiniband" / "mlx5_0" / "ports" / "1"
    port.mkdir(parents=True)
    (port / "phys_state").write_text("5: LinkUp\n")
    results = evaluate_network_links(read_infiniband_sysfs(tree), LinkExpectation())
    assert (results[0].status, results[0].reason) == ("unknown", "parse_error")


def test_unreadable_sysfs_file_is_a_tool_error(tmp_path):
    tree = tmp_path / "sys"
    port = tree / "class" / "infiniband" / "mlx5_0" / "ports" / "1"
    port.mkdir(parents=True)
    (port / "state").mkdir()  # reading a directory fails with EISDIR
    with pytest.raises(InputError):
        read_infiniband_sysfs(tree)
    with pytest.raises(ToolError):
        NetworkLinksCheck().run(CheckContext(sysfs=tree, state_dir=tmp_path))


def test_expected_efa_devices_table():
    assert expected_efa_devices("p5.48xlarge") == 32
    assert expected_efa_devices("p4d.24xlarge") == 4
    assert expected_efa_devices("p6-b200.48xlarge") == 8
    assert expected_efa_devices("unknown.type") is None
    assert expected_efa_devices("unknown.type", configured=2) == 2


def test_gpuslo_check_command_on_a_fixture_tree(tmp_path):
    """End to end through the CLI and the runner's child processes: exit 1, the port named."""
    command = [
        sys.executable,
        "-m",
        "gpuslo",
        "check",
        "--check",
        "network_links",
        "--format",
        "json",
        "--path.sysfs",
        str(SYSFS / "infiniband-port-down"),
        "--state-dir",
        str(tmp_path),
    ]
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    assert done.returncode == 1, done.stderr
    report = json.loads(done.stdout)
    failed = [r for r in report["results"] if r["status"] == "fail"]
    assert [(r["scope"], r["reason"]) for r in failed] == [("mlx5_1", "network_port_down")]


def test_a_binary_port_state_is_unreadable_not_down(tmp_path):
    """Regression (newcomer report): random bytes in ports/1/state read as a port that is down,
    with the bytes in the message; they are an unreadable state (unknown), as an empty file is."""
    tree = tmp_path / "sys"
    shutil.copytree(SYSFS / "infiniband-healthy", tree, symlinks=True)
    (state,) = sorted(tree.glob("class/infiniband/*/ports/1/state"))[:1]
    state.write_bytes(bytes(range(256))[::7])
    ctx = CheckContext(sysfs=tree, state_dir=tmp_path / "state", clock=lambda: 1.0)
    results = NetworkLinksCheck().run(ctx).results
    device = state.parents[2].name
    bad = by_scope(results)[device]
    assert (bad.status, bad.reason) == ("unknown", "parse_error")
    assert "\x00" not in bad.message and "\ufffd" not in bad.message


def test_efa_with_no_expected_count_says_how_to_set_it():
    from gpuslo.exporter.evidence.fabric.ports import Port
    from gpuslo.exporter.policy.ports import efa_findings

    port = Port(device="rdmap0s6", port=1, driver="efa")
    (found,) = [f for f in efa_findings("sysfs", [port], None) if f.signal == "efa_devices"]
    assert found.reason == "no_data" and "expected EFA device count is not configured" in \
        found.message and "--expect-network-devices efa=N" in found.message
