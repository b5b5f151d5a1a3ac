"""Fabric evidence: the corpus cases of kinds ibstat/ibstatus/fi-info through `inspect_text`, the
parsers on real-shaped variants, and hypothesis on every parser."""

from __future__ import annotations

import contextlib

import pytest
import yaml
from conftest import CORPUS
from hypothesis import given, settings
from hypothesis import strategies as st

from gpuslo.errors import ParseError
from gpuslo.exporter.evidence.fabric import tools as fabric_tools
from gpuslo.exporter.inspect import fabric
from gpuslo.exporter.inspect.kinds import inspect_text
from gpuslo.exporter.inspect.options import InspectOptions
from gpuslo.verdict import verdict_from_findings

FABRIC_KINDS = ("ibstat", "ibstatus", "fi-info", "ibdev2netdev")
CASES = [
    e for e in yaml.safe_load((CORPUS / "expected.yaml").read_text()) if e["kind"] in FABRIC_KINDS
]


def options_of(entry: dict) -> InspectOptions:
    """InspectOptions as tools/check_corpus.py passes them on the command line."""
    opts = entry.get("options") or {}
    network = opts.get("expect_network_devices")
    return InspectOptions(
        expect_network_devices=tuple(network) if isinstance(network, list) else network,
        expect_efa_devices=opts.get("expect_efa_devices"),
    )


def same(key, want, got) -> bool:
    """check_corpus.py's comparison for the keys fabric findings use."""
    if got is None:
        return False
    if key in ("state", "physical_state"):
        return str(want).lower() == str(got).lower()
    if isinstance(want, int | float) and not isinstance(want, bool):
        return float(want) == float(got)
    return str(want) == str(got)


def matches(entry: dict, finding: dict) -> bool:
    return all(same(key, value, finding.get(key)) for key, value in entry.items())


def test_the_corpus_has_fabric_cases():
    assert {e["kind"] for e in CASES} >= {"ibstat", "ibstatus", "fi-info"}


@pytest.mark.parametrize("entry", CASES, ids=[e["case"] for e in CASES])
def test_corpus_case(entry):
    text = (CORPUS / "cases" / entry["case"]).read_text()
    findings = inspect_text(text, entry["case"], options_of(entry))  # kind detected
    assert findings[0].kind == entry["kind"]
    dicts = [f.to_dict() for f in findings]
    want = entry["verdict"] if isinstance(entry["verdict"], list) else [entry["verdict"]]
    assert verdict_from_findings(findings) in want
    for wanted in entry.get("find") or []:
        assert any(matches(wanted, d) for d in dicts), (wanted, dicts)
    for banned in entry.get("not") or []:
        assert not any(matches(banned, d) for d in dicts), (banned, dicts)


def test_ibstat_state_down_physical_linkup_is_a_fatal_port_down():
    report = fabric_tools.parse_ibstat(
        (CORPUS / "cases" / "006_ibstat-state-down-physical-linkup.txt").read_text()
    )
    (port,) = report.ports
    assert (port.device, port.port, port.state, port.physical_state) == (
        "mlx5_7",
        1,
        "Down",
        "LinkUp",
    )
    assert port.rate_gbps == 200.0 and not port.usable


def test_ibstat_partial_output_names_the_device_the_tool_could_not_stat():
    text = (CORPUS / "cases" / "008_ibstat-partial-output-ibpanic.txt").read_text()
    report = fabric_tools.parse_ibstat(text)
    assert report.devices == ("mlx5_7",) and report.unreadable == ("mlx5_8",)


def test_ibstat_missing_expected_device_without_a_panic_is_fatal():
    text = (CORPUS / "cases" / "008_ibstat-partial-output-ibpanic.txt").read_text()
    text = "\n".join(line for line in text.splitlines() if not line.startswith("ibpanic"))
    findings = fabric.inspect_ibstat(
        text, InspectOptions(expect_network_devices=("mlx5_7", "mlx5_8")), "x"
    )
    missing = [f for f in findings if f.signal == "network_devices_missing"]
    assert [(f.device, f.class_) for f in missing] == [("mlx5_8", "fatal")]
    assert verdict_from_findings(findings) == "unhealthy"


def test_ibstatus_counts_devices_against_the_expected_count():
    text = (CORPUS / "cases" / "041_ibstatus-sysfs-strings-4x-edr-all-active.txt").read_text()
    ports = fabric_tools.parse_ibstatus(text)
    assert [p.device for p in ports] == ["mlx5_0", "mlx5_1", "mlx5_2", "mlx5_3"]
    assert all(
        p.state == "Active" and p.physical_state == "LinkUp" and p.rate_gbps == 100 for p in ports
    )
    short = fabric.inspect_ibstatus(text, InspectOptions(expect_network_devices=8), "x")
    assert verdict_from_findings(short) == "unhealthy"
    assert any(f.signal == "network_devices_missing" and f.count == 4 for f in short)


def test_ibstatus_polling_port_is_down():
    text = (
        "Infiniband device 'mlx5_3' port 1 status:\n\tstate:\t\t 1: DOWN\n"
        "\tphys state:\t 2: Polling\n\trate:\t\t 10 Gb/sec (4X SDR)\n"
    )
    # no port is active, so no "ports active" inventory: the down port is the whole answer
    # (fresh6 709/728: an inventory of 0 active ports read as an ok finding)
    (finding,) = fabric.inspect_ibstatus(text, InspectOptions(), "x")
    assert (finding.signal, finding.state, finding.physical_state, finding.class_) == (
        "port_down",
        "Down",
        "Polling",
        "fatal",
    )


def test_fi_info_counts_rdm_domains_of_the_efa_provider_only():
    text = (CORPUS / "cases" / "009_fi-info-efa-healthy.txt").read_text()
    assert fabric_tools.parse_fi_info(text) == ("efa_0",)
    # a layered provider's rdm endpoint and dgrm domains do not count
    assert fabric_tools.parse_fi_info("provider: efa;ofi_rxd\n    domain: efa_1-rdm\n") == ()
    assert fabric_tools.parse_fi_info("provider: efa\n    domain: efa_1-dgrm\n") == ()


def test_fi_info_fewer_efa_devices_than_expected_is_fatal():
    text = (CORPUS / "cases" / "009_fi-info-efa-healthy.txt").read_text()
    findings = fabric.inspect_fi_info(text, InspectOptions(expect_efa_devices=32), "x")
    assert verdict_from_findings(findings) == "unhealthy"


def test_fi_info_error_with_nothing_expected_is_unknown_not_healthy():
    text = "fi_getinfo: -61 (No data available)\n"
    assert fabric_tools.looks_like_fi_info(text)
    findings = fabric.inspect_fi_info(text, InspectOptions(), "x")
    assert verdict_from_findings(findings) == "unknown"


def test_ibdev2netdev_down_is_the_netdev_not_the_link():
    text = "mlx5_0 port 1 ==> ib0 (Up)\nmlx5_1 port 1 ==> ib1 (Down)\n"
    assert fabric_tools.looks_like_ibdev2netdev(text)
    findings = fabric.inspect_ibdev2netdev(text, InspectOptions(expect_network_devices=2), "x")
    assert not any(f.signal == "port_down" for f in findings)
    assert [f.class_ for f in findings] == ["ok", "warn"]
    assert verdict_from_findings(findings) == "healthy"
    missing = fabric.inspect_ibdev2netdev(text, InspectOptions(expect_network_devices=4), "x")
    assert verdict_from_findings(missing) == "unhealthy"


def test_detectors_do_not_claim_each_others_output():
    for entry in CASES:
        text = (CORPUS / "cases" / entry["case"]).read_text()
        claimed = [
            k
            for k in ("ibstat", "ibstatus", "fi_info", "ibdev2netdev")
            if getattr(fabric_tools, f"looks_like_{k}")(text)
        ]
        assert claimed == [entry["kind"].replace("-", "_")]


PARSERS = (
    lambda t: fabric_tools.parse_ibstat(t),
    fabric_tools.parse_ibstatus,
    fabric_tools.parse_fi_info,
    fabric_tools.parse_ibdev2netdev,
    lambda t: fabric.inspect_ibstat(t, InspectOptions(expect_network_devices=2), "x"),
    lambda t: fabric.inspect_ibstatus(t, InspectOptions(), "x"),
    lambda t: fabric.inspect_fi_info(t, InspectOptions(), "x"),
    lambda t: fabric.inspect_ibdev2netdev(t, InspectOptions(), "x"),
)
SEEDS = [(CORPUS / "cases" / e["case"]).read_text() for e in CASES]


@settings(max_examples=150, deadline=None)
@given(
    seed=st.sampled_from(SEEDS),
    cut=st.integers(min_value=0, max_value=2000),
    noise=st.text(max_size=200),
    raw=st.binary(max_size=300),
)
def test_every_parser_returns_or_raises_parse_error(seed, cut, noise, raw):
    for text in (seed[:cut] + noise, raw.decode("utf-8", errors="replace"), noise + seed):
        for parse in PARSERS:
            with contextlib.suppress(ParseError):
                parse(text)


def test_active_port_slower_than_its_peers_is_degraded_but_usable():
    text = (CORPUS / "cases" / "041_ibstatus-sysfs-strings-4x-edr-all-active.txt").read_text()
    text = text.replace("100 Gb/sec (4X EDR)", "25 Gb/sec (1X EDR)", 1)
    findings = fabric.inspect_ibstatus(text, InspectOptions(expect_network_devices=4), "x")
    degraded = [f for f in findings if f.signal == "port_degraded"]
    assert [(f.device, f.class_) for f in degraded] == [("mlx5_0", "warn")]
    assert verdict_from_findings(findings) == "healthy"


def test_port_shown_without_a_state_is_unknown_not_down():
    text = "CA 'mlx5_0'\n\tPort 1:\n\t\tRate: 400\n"
    findings = fabric.inspect_ibstat(text, InspectOptions(), "x")
    assert findings[0].signal == "device_unreadable" and findings[0].class_ == "unknown"
    assert verdict_from_findings(findings) == "unknown"


def test_single_port_ibstat_without_a_ca_header():
    text = (
        "State: Down\nPhysical state: Polling\nRate: 10\nBase lid: 65535\nLMC: 0\nSM lid: 0\n"
        "Capability mask: 0xa651e848\nPort GUID: 0x0000000000000000\nLink layer: InfiniBand\n"
    )
    findings = inspect_text(text, "ibstat-port", InspectOptions())
    assert findings[0].kind == "ibstat"
    assert (findings[0].signal, findings[0].physical_state, findings[0].class_) == (
        "port_down",
        "Polling",
        "fatal",
    )
