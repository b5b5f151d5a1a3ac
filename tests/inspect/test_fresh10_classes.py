"""One test per class of evidence the tenth fresh first-contact batch (tests/data/corpus/fresh10,
scored 21/22 on 2026-12-06 at 14d7ab5, tests/data/first_contact/corpus_fresh10_2026-12-06.txt)
found misread: the real excerpt (the case file itself), a variant, and negatives that must not be
read the same way.

1214: an `ibstat` after `ibportstate ... disable`: port 1 Down/Disabled still holding the LID the
subnet manager gave it (`Base lid: 38`, `SM lid: 13`) beside an Active port 2. The spare-port rule
(a disabled port beside an active one is an unused spare) read it as a spare; a port that holds an
assigned LID was on the fabric and went down: not a spare."""

from __future__ import annotations

from gpuslo.exporter.evidence.fabric.ports import Port
from gpuslo.exporter.evidence.fabric.tools import parse_ibstat, parse_ibstatus
from tests.inspect.corpus_classes import corpus_case, inspect, of

DISABLED_ON_FABRIC = corpus_case("fresh10", 1214)


def _down(findings):
    return [f for f in of(findings, "port_down") if f.device == "mlx4_0"]


def test_a_down_port_holding_its_assigned_lid_is_a_lost_path_not_a_spare():
    findings, verdict = inspect(DISABLED_ON_FABRIC, "ibstat")
    assert verdict == "unhealthy"
    assert [f.class_ for f in _down(findings)] == ["fatal"]
    assert "spare" not in _down(findings)[0].message


def test_the_same_port_never_given_a_lid_is_no_lost_path():
    # Negatives: an uncabled/never-configured port reads LID 0, or 0xFFFF (the permissive LID;
    # fresh8 case 1019's mlx5_1); neither is a lost path beside the active port. One of the
    # node's two ports down is no minority, so no spare either (fresh24 2611): unknown, not fatal.
    for lid in ("0", "65535"):
        spare = DISABLED_ON_FABRIC.replace("\t\tBase lid: 38\n", f"\t\tBase lid: {lid}\n")
        spare = spare.replace("\t\tSM lid: 13\n", "\t\tSM lid: 0\n")
        findings, verdict = inspect(spare, "ibstat")
        assert verdict == "unknown", lid
        assert [f.class_ for f in _down(findings)] == ["unknown"], lid
        assert "LID" not in _down(findings)[0].message, lid


def test_an_ethernet_port_has_no_lid_to_hold():
    roce = Port(device="mlx5_2", port=1, state="Down", physical_state="Disabled",
                link_layer="Ethernet", base_lid=38)
    assert not roce.fabric_assigned
    assert Port(device="mlx5_0", port=1, link_layer="InfiniBand", base_lid=38).fabric_assigned
    assert not Port(device="mlx5_0", port=1, link_layer="InfiniBand").fabric_assigned


def test_the_lid_is_read_from_ibstat_and_ibstatus_spellings():
    ports = parse_ibstat(DISABLED_ON_FABRIC).ports
    assert [(p.port, p.base_lid) for p in ports] == [(1, 38), (2, None)]  # port 2 is cut
    status = (
        "Infiniband device 'mlx5_0' port 1 status:\n"
        "\tdefault gid:\t fe80:0000:0000:0000:0c42:a103:0074:8bd6\n"
        "\tbase lid:\t 0x26\n"
        "\tsm lid:\t\t 0xd\n"
        "\tstate:\t\t 1: DOWN\n"
        "\tphys state:\t 3: Disabled\n"
        "\trate:\t\t 10 Gb/sec (4X SDR)\n"
        "\tlink_layer:\t InfiniBand\n"
    )
    assert [p.base_lid for p in parse_ibstatus(status)] == [0x26]
