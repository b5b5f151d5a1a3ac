"""One port judgement (gpuslo.exporter.policy.ports) for `inspect` and the `network_links`
check: the same ports, read from ibstat by inspect and from a sysfs tree by the check, get the
same verdict; devices outside the expected set are inventory, and `Disabled` is not a cable
fault, while the expected devices still fail closed."""

from __future__ import annotations

import os
from pathlib import Path

import pytest
from conftest import CORPUS

from gpuslo.exporter.checks.network_links import LinkExpectation, evaluate_network_links
from gpuslo.exporter.evidence.fabric.sysfs import read_infiniband_sysfs
from gpuslo.exporter.evidence.fabric.tools import parse_ibstat
from gpuslo.exporter.inspect.kinds import inspect_text
from gpuslo.exporter.inspect.options import InspectOptions
from gpuslo.verdict import node_verdict, verdict_from_findings

CASES = CORPUS / "cases"
# IBA PortState / PortPhysicalState numbers as sysfs prints them.
STATE = {"Down": 1, "Initializing": 2, "Armed": 3, "Active": 4}
PHYSICAL = {"Sleep": 1, "Polling": 2, "Disabled": 3, "LinkUp": 5, "LinkErrorRecovery": 6}
DISABLED_CA = """CA 'mlx5_2'
        CA type: MT4125
        Number of ports: 1
        Port 1:
                State: Down
                Physical state: Disabled
                Rate: 10
                Base lid: 0
                SM lid: 0
                Link layer: Ethernet
"""


def ibstat(case: str) -> str:
    (path,) = CASES.glob(f"{case}_*.txt")
    return path.read_text()


def sysfs_tree(root: Path, text: str) -> Path:
    """A sysfs tree holding the ports an ibstat output shows, in sysfs's own spelling."""
    for port in parse_ibstat(text).ports:
        directory = root / "class" / "infiniband" / port.device / "ports" / str(port.port)
        directory.mkdir(parents=True)
        state = f"{STATE[port.state]}: {port.state.upper()}"
        physical = f"{PHYSICAL[port.physical_state]}: {port.physical_state}"
        files = {
            "state": state,
            "phys_state": physical,
            "rate": f"{port.rate_gbps:g} Gb/sec",
            "link_layer": port.link_layer or "InfiniBand",
        }
        for name, value in files.items():
            (directory / name).write_text(value + "\n")
        driver = root / "class" / "infiniband" / port.device / "device"
        driver.mkdir(exist_ok=True)
        if not (driver / "driver").exists():
            os.symlink("../../../../bus/pci/drivers/mlx5_core", driver / "driver")
    (root / "class" / "net").mkdir(parents=True, exist_ok=True)
    return root


TEXTS = {
    "006-down-linkup": ibstat("006"),
    "007-down-polling": ibstat("007"),
    "055-healthy": ibstat("055"),
    "055-and-a-disabled-port": ibstat("055") + DISABLED_CA,
}


@pytest.mark.parametrize("expected", [None, 2, 3, 4])
@pytest.mark.parametrize("name", sorted(TEXTS))
def test_the_check_and_inspect_agree_on_the_same_ports(tmp_path, name, expected):
    text = TEXTS[name]
    ports = read_infiniband_sysfs(sysfs_tree(tmp_path / "sys", text))
    check = node_verdict(evaluate_network_links(ports, LinkExpectation(expected)))
    findings = inspect_text(text, name, InspectOptions(expect_network_devices=expected))
    assert check == verdict_from_findings(findings)


def test_a_port_outside_the_expected_set_is_inventory_not_a_fault():
    text = TEXTS["055-and-a-disabled-port"]
    findings = inspect_text(text, "p", InspectOptions(expect_network_devices=("mlx5_0", "mlx5_1")))
    assert verdict_from_findings(findings) == "healthy"
    (extra,) = [f for f in findings if f.device == "mlx5_2"]
    expected = ("port_not_expected", "ok", "Disabled")
    assert (extra.signal, extra.class_, extra.physical_state) == expected


def test_an_expected_disabled_port_fails_but_not_as_a_cable_fault():
    text = TEXTS["055-and-a-disabled-port"]
    names = ("mlx5_0", "mlx5_1", "mlx5_2")
    findings = inspect_text(text, "p", InspectOptions(expect_network_devices=names))
    (down,) = [f for f in findings if f.signal == "port_down"]
    assert (down.device, down.class_, down.action) == ("mlx5_2", "fatal", "none")
    assert verdict_from_findings(findings) == "unhealthy"


def test_down_with_the_physical_link_up_waits_for_the_subnet_manager_not_the_cable():
    def port_down(case: str):
        findings = inspect_text(ibstat(case), case, InspectOptions())
        (down,) = [f for f in findings if f.signal == "port_down"]
        return down

    assert (port_down("006").class_, port_down("006").action) == ("fatal", "none")
    assert port_down("007").action == "check_cabling"


def test_expected_devices_still_fail_closed():
    options = InspectOptions(expect_network_devices=("mlx5_0", "mlx5_9"))
    findings = inspect_text(ibstat("055"), "p", options)
    missing = [f for f in findings if f.signal == "network_devices_missing"]
    assert [(f.device, f.class_) for f in missing] == [("mlx5_9", "fatal")]
