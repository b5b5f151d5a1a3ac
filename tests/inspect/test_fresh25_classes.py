"""Classes from the node-evidence batch fresh25 (tests/data/first_contact/
corpus_fresh25_2026-12-08.txt), each on the case's real lines with a negative.

2705 (a blog's ibstat capture, two ConnectX-3 HCAs, tests/data/corpus/SOURCES.md "fresh25"): the
author wrote notes after each `CA '<name>'` header (`CA 'mlx4_0' ——————>>>>额外说明:…`, and
`CA 'mlx4_1''` with a stray quote), so no header was read and the four ports ran together as one
unnamed port. The header is the quoted name at the line's start; what follows a space or a dash
is a reader's note.
"""

from __future__ import annotations

from gpuslo.exporter.evidence.fabric.tools import looks_like_ibstat, parse_ibstat

CASE_2705 = "\n".join([
    "[root@rac2 ~]# ibstat",
    "CA 'mlx4_0' ——————————————>>>>额外说明:这是第一个HCA卡(并且是双port,所以下面有port1和prot2)",
    "CA type: MT4099",
    "Number of ports: 2",
    "Port 1:",
    "State: Active",
    "Physical state: LinkUp",
    "Rate: 56",
    "Port 2:",
    "State: Down",
    "Physical state: Polling",
    "Rate: 10",
    "CA 'mlx4_1'' ——————————————>>>>额外说明:这是第二个HCA卡(并且是双port,所以下面有port1和prot2)",
    "CA type: MT4099",
    "Number of ports: 2",
    "Port 1:",
    "State: Active",
    "Physical state: LinkUp",
    "Rate: 56",
    "Port 2:",
    "State: Down",
    "Physical state: Polling",
    "Rate: 10",
])


def test_a_note_after_the_ca_header_keeps_each_port_on_its_device():
    report = parse_ibstat(CASE_2705)
    assert looks_like_ibstat(CASE_2705)
    assert report.devices == ("mlx4_0", "mlx4_1")
    assert [(p.device, p.port, p.state, p.physical_state) for p in report.ports] == [
        ("mlx4_0", 1, "Active", "LinkUp"), ("mlx4_0", 2, "Down", "Polling"),
        ("mlx4_1", 1, "Active", "LinkUp"), ("mlx4_1", 2, "Down", "Polling")]


def test_a_line_that_only_mentions_a_ca_is_no_header():
    # negative: ibstat's own failure quotes the CA inside a sentence, and a name glued to more
    # text after its quote is not a header either
    for line in ("ibpanic: [1234] main: stat of IB device 'mlx4_0' failed: can't open CA 'mlx4_0'",
                 "CA 'mlx4_0'x"):
        text = "\n".join([line, "Port 1:", "State: Active", "Physical state: LinkUp"])
        assert "mlx4_0" not in parse_ibstat(text).devices
