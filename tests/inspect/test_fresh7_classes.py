"""One test per class of evidence the seventh fresh first-contact batch (tests/data/corpus/fresh7,
scored 20/21 on 2026-12-06 at 3bc6787, tests/data/first_contact/corpus_fresh7_2026-12-06.txt)
found misread: the real excerpt (the case file itself), a hand-varied variant that is not the
case's text, and a negative that must not be read the same way."""

from __future__ import annotations

from gpuslo.exporter.evidence.log_lines import claimed
from gpuslo.exporter.inspect.kernel_log import inspect_kernel_log_file
from gpuslo.exporter.inspect.options import InspectOptions
from gpuslo.verdict import verdict_from_findings
from tests.inspect.corpus_classes import CORPUS, fatal, inspect, of

BOOT = next((CORPUS / "fresh7" / "cases").glob("919_*"))

# --- (a) a kernel log's mlx5 port never up while another port is up: a spare, not a lost path ---

UP = "[  12.000001] mlx5_core 0000:1b:00.0 bootnet: Link up\n"
IDLE = "[  11.000001] mlx5_core 0000:9d:00.1 enp157s0f1np1: Link down\n"
LOST = ("[  10.000001] mlx5_core 0000:9d:00.1 enp157s0f1np1: Link up\n"
        "[ 900.000001] mlx5_core 0000:9d:00.1 enp157s0f1np1: Link down\n")


def test_a_boot_log_with_idle_ethernet_ports_beside_the_up_boot_nic_is_healthy():
    findings = inspect_kernel_log_file(str(BOOT), InspectOptions())
    assert verdict_from_findings(findings) == "healthy"
    downs = of(findings, "port_down")
    assert {f.device for f in downs} == {"enp157s0f1np1", "enp157s0f0np0", "enp27s0f1np1"}
    assert {f.class_ for f in downs} == {"warn"} and not fatal(findings)


def test_a_port_never_up_beside_an_up_port_is_warn_in_any_order():
    for text in (IDLE + UP, UP + IDLE):
        findings, verdict = inspect(text, "kernel-log")
        assert verdict == "healthy" and [f.class_ for f in of(findings, "port_down")] == ["warn"]


def test_a_port_that_went_down_an_expected_port_or_a_node_with_no_port_up_stays_fatal():
    for text, options in (
        (LOST + UP, {}),  # it was up: a lost path
        (IDLE, {}),  # no port of the node is up
        (IDLE + UP, {"expect_network_devices": ("enp157s0f1np1",)}),
        (IDLE + UP, {"expect_network_devices": 2}),
    ):
        findings, verdict = inspect(text, "kernel-log", **options)
        assert verdict == "unhealthy", (text, options)
        assert [f.class_ for f in of(findings, "port_down")] == ["fatal"]


# --- (b) the PCI core's BAR assignment at enumeration is not a device error of its own ---

BAR = "kern  :info  : 2025-01-17T15:36:18,126427+00:00 pci 0000:17:02.0: BAR 14: failed to assign "


def test_pci_core_bar_assignment_lines_are_claimed_not_unrecognised_errors():
    findings = inspect_kernel_log_file(str(BOOT), InspectOptions())
    assert not of(findings, "unrecognised_message")
    assert claimed(BAR + "[mem size 0x00100000]")
    assert claimed("[ 0.51] pci 0000:c1:00.0: BAR 6: no space for [mem size 0x00100000 pref]")


def test_other_pci_lines_with_an_error_word_still_reach_the_fallback():
    assert not claimed("[ 5.1] pci 0000:17:00.0: BAR 1: error updating (0x12 != 0x0)")
    assert not claimed("[ 5.1] pcieport 0000:00:03.0: AER: Uncorrected (Fatal) error received")
