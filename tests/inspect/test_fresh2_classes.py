"""One test per class of evidence the second fresh first-contact batch (tests/data/corpus/fresh2,
scored 24/30 on 2026-12-05) found misread: the real excerpt (the case file itself), a hand-varied
variant that is not the case's text, and a negative that must raise no false alarm."""

from __future__ import annotations

from pathlib import Path

from gpuslo.exporter.inspect.kinds import inspect_text
from gpuslo.exporter.inspect.options import InspectOptions
from gpuslo.verdict import verdict_from_findings

CASES = Path(__file__).resolve().parent.parent / "data" / "corpus" / "fresh2" / "cases"


def case(number: int) -> str:
    (path,) = CASES.glob(f"{number}_*")
    return path.read_text()


def inspect(text: str, **options):
    findings = inspect_text(text, "f", InspectOptions(**options))
    return findings, verdict_from_findings(findings)


def signals(findings) -> set[str]:
    return {f.signal for f in findings}


# --- (a) dcgm-exporter's own death: source_unavailable; benign start-up notes stay healthy ---

def test_exporter_fatal_and_abort_are_source_unavailable():
    for number in (306, 307):
        findings, verdict = inspect(case(number))
        assert "source_unavailable" in signals(findings), number
        assert verdict == "unknown"
        assert not [f for f in findings if f.class_ == "fatal"]


EXPORTER_PANIC = """\
time="2024-03-02T10:00:01Z" level=info msg="Starting dcgm-exporter"
time="2024-03-02T10:00:02Z" level=info msg="DCGM successfully initialized!"
panic: runtime error: invalid memory address or nil pointer dereference
[signal SIGSEGV: segmentation violation code=0x1 addr=0x0 pc=0x8a1b2c]

goroutine 1 [running]:
main.main()
"""

EXPORTER_PANIC_LEVEL = """\
time="2024-03-02T10:00:01Z" level=info msg="Starting dcgm-exporter"
time="2024-03-02T10:00:05Z" level=panic msg="Failed to start webserver: bind: address in use"
"""


def test_exporter_panic_variants_are_source_unavailable():
    for text in (EXPORTER_PANIC, EXPORTER_PANIC_LEVEL):
        findings, verdict = inspect(text)
        assert "source_unavailable" in signals(findings)
        assert verdict == "unknown"


def test_exporter_clean_start_with_no_switches_is_healthy():
    findings, verdict = inspect(case(329))
    assert verdict == "healthy"
    assert "source_unavailable" not in signals(findings)
    variant = """\
time="2024-05-01T08:00:00Z" level=info msg="Starting dcgm-exporter"
time="2024-05-01T08:00:01Z" level=info msg="DCGM successfully initialized!"
time="2024-05-01T08:00:01Z" level=warning msg="no switches to monitor"
time="2024-05-01T08:00:02Z" level=info msg="Starting webserver"
"""
    findings, verdict = inspect(variant)
    assert verdict == "healthy"
    assert signals(findings) == {"log_read"}


def test_exporter_error_line_is_not_a_clean_start():
    text = """\
time="2024-05-01T08:00:00Z" level=info msg="Starting dcgm-exporter"
time="2024-05-01T08:00:01Z" level=info msg="DCGM successfully initialized!"
time="2024-05-01T08:00:09Z" level=error msg="Failed to collect metrics; err: timeout"
"""
    findings, verdict = inspect(text)
    assert verdict == "unknown"
    assert "source_unavailable" not in signals(findings)


# --- (b) an NVSwitch SXid in fabric manager's `on NodeId N` form keeps its PCI and port ---

def _sxids(findings, code):
    return [f for f in findings if f.sxid == code]


def test_fm_sxid_on_node_id_reads_pci_and_port():
    findings, verdict = inspect(case(311))
    (sxid,) = _sxids(findings, 22013)
    assert (sxid.pci, sxid.extra.get("port")) == ("00000000:08:00.0", 60)
    assert sxid.class_ != "fatal"
    assert verdict == "healthy"
    variant = (
        "[Mar 04 2026 10:11:12] [ERROR] [tid 4242] detected NVSwitch fatal error 12028 on "
        "NodeId 2 on NVSwitch pci bus id 00000000:c5:00.0 physical id 7 port 11\n"
    )
    findings, _ = inspect(variant)
    (sxid,) = _sxids(findings, 12028)
    assert (sxid.pci, sxid.extra.get("port")) == ("00000000:C5:00.0", 11)


def test_fm_sxid_without_location_raises_no_false_port():
    text = (
        "[Mar 04 2026 10:11:12] [ERROR] [tid 4242] detected NVSwitch non-fatal error 12028 "
        "on NodeId 0\n"
    )
    findings, _ = inspect(text)
    (sxid,) = _sxids(findings, 12028)
    assert sxid.pci is None and "port" not in (sxid.extra or {})
    assert sxid.class_ != "fatal"


# --- (c) an IB port down on a multi-port adapter with another port active, nothing expected ---

def _port_downs(findings):
    return [f for f in findings if f.signal == "port_down"]


def test_spare_port_of_dual_port_hca_is_not_fatal():
    # ibv_devinfo without -v shows PORT_DOWN but no physical state: a switched-off spare and a
    # link with no partner read the same, so unknown (fail closed), never fatal (fresh12 1409
    # made a Polling port no spare: `policy.port_spares`).
    findings, verdict = inspect(case(322))
    assert verdict == "unknown"
    assert [(f.class_, f.reason) for f in _port_downs(findings)] == [("unknown", "no_data")]
    variant = """\
CA 'mlx5_2'
\tCA type: MT4123
\tNumber of ports: 2
\tPort 1:
\t\tState: Down
\t\tPhysical state: Disabled
\t\tRate: 10
\t\tLink layer: InfiniBand
\tPort 2:
\t\tState: Active
\t\tPhysical state: LinkUp
\t\tRate: 200
\t\tLink layer: InfiniBand
"""
    # Disabled: no lost link, but one of two ports is no minority (fresh24 2611): unknown.
    findings, verdict = inspect(variant)
    assert verdict == "unknown"
    assert [f.class_ for f in _port_downs(findings)] == ["unknown"]
    # The same port enabled and Polling (no link partner) is a lost link, not a spare.
    findings, verdict = inspect(variant.replace("Disabled", "Polling"))
    assert verdict == "unhealthy"
    assert [f.class_ for f in _port_downs(findings)] == ["fatal"]


def test_down_port_stays_fatal_when_no_sibling_is_active_or_devices_expected():
    both_down = case(322).replace("PORT_ACTIVE (4)", "PORT_DOWN (1)")
    findings, verdict = inspect(both_down)
    assert verdict == "unhealthy"
    findings, verdict = inspect(case(322), expect_network_devices=1)
    assert verdict == "unhealthy"
