"""One test per class of evidence the thirteenth fresh first-contact batch (tests/data/corpus/
fresh13, scored 19/20 on 2026-12-07 at 1219853, tests/data/first_contact/
corpus_fresh13_2026-12-07.txt) found misread: the real lines (the case file itself), variants
in the other forms of the class, and negatives that must not be read the same way.

- 1513 (ibstat in a container on a laptop with no HCA): the infiniband-diags tools' own fatal
  lines (libibmad `IBPANIC`: `ibpanic: [pid] function: ...`; infiniband-diags `iberror()` /
  `ibexit()`: `<prog>: iberror: [pid N] function: failed: ...` or `<prog>: iberror: failed:
  ...`) with no port read are the tool failing: `source_unavailable` (unknown), no port judged.
  An `ibwarn:` line is only a warning (`evidence.fabric.diag_errors`).
"""

from __future__ import annotations

from gpuslo.exporter.evidence.fabric.diag_errors import parse_diag_messages, tool_failed_only
from gpuslo.exporter.inspect.registry import detect_kinds
from tests.inspect.corpus_classes import corpus_case, inspect, of

NO_HCA = corpus_case("fresh13", 1513)
HEALTHY_IBSTAT = corpus_case("fresh13", 1512)
IBWARN_BESIDE_PORTS = corpus_case("fresh10", 1214)
IBERROR_DEBUG = "ibstat: iberror: [pid 4242] main: failed: can't init UMAD library\n"
IBERROR_PLAIN = "ibstat: iberror: failed: 'mlx5_3' IB device can't be found\n"


# --- 1513: ibstat's own ibpanic with no port read: the source is unavailable ------------------

def test_ibpanic_with_no_port_read_is_the_tool_failing():
    assert detect_kinds(NO_HCA)[:1] == ("ibstat",)
    findings, verdict = inspect(NO_HCA)
    assert verdict == "unknown"
    (failure,) = of(findings, "source_unavailable")
    assert (failure.kind, failure.class_, failure.layer) == ("ibstat", "unknown", "observability")
    assert "stat of IB device 'mthca0' failed" in failure.message
    assert not of(findings, "ports_active") and not of(findings, "port_active")


def test_the_iberror_forms_are_the_same_failure():
    for text in (IBERROR_DEBUG, IBERROR_PLAIN, "$ sudo ibstat\n" + IBERROR_PLAIN):
        findings, verdict = inspect(text)
        assert verdict == "unknown", text
        assert [f.kind for f in of(findings, "source_unavailable")] == ["ibstat"], text
    (message,) = parse_diag_messages(IBERROR_DEBUG)
    assert (message.form, message.tool, message.function, message.fatal) == (
        "iberror", "ibstat", "main", True)
    (plain,) = parse_diag_messages(IBERROR_PLAIN)
    assert (plain.function, plain.device, plain.fatal) == ("", "mlx5_3", True)


def test_another_tools_iberror_is_not_ibstat_failing():
    # Negative: perfquery's iberror names its own program; ibstat's reader does not claim it.
    assert not tool_failed_only("perfquery: iberror: failed: can't resolve port\n", "ibstat")


# --- negatives: a healthy ibstat, and ibwarn beside readable ports -------------------------------

def test_a_healthy_ibstat_stays_healthy():
    findings, verdict = inspect(HEALTHY_IBSTAT)
    assert verdict == "healthy"
    assert not of(findings, "source_unavailable")
    assert [f.count for f in of(findings, "ports_active")] == [1]


def test_ibwarn_beside_readable_ports_is_no_failure():
    messages = parse_diag_messages(IBWARN_BESIDE_PORTS)
    assert [m.form for m in messages] == ["ibwarn"] * 4
    assert not any(m.fatal for m in messages)
    findings, _ = inspect(IBWARN_BESIDE_PORTS)
    assert not of(findings, "source_unavailable") and not of(findings, "device_unreadable")
    assert [f.count for f in of(findings, "ports_active")] == [1]


def test_ibwarn_alone_is_not_a_tool_failure():
    # Negative: the tool's warnings with nothing else are no evidence that it failed.
    warnings = "\n".join(IBWARN_BESIDE_PORTS.splitlines()[:5]) + "\n"
    assert not tool_failed_only(warnings, "ibstat")
    findings, _ = inspect(warnings)
    assert not of(findings, "source_unavailable")


def test_an_ibpanic_beside_read_ports_keeps_the_ports():
    # Negative: a partial output (one device failed, another read) is no source failure.
    panic = "ibpanic: [99] main: stat of IB device 'mlx4_1' failed: No such device\n"
    text = HEALTHY_IBSTAT + panic
    findings, _ = inspect(text, "ibstat")
    assert not of(findings, "source_unavailable")
    assert [f.device for f in of(findings, "device_unreadable")] == ["mlx4_1"]
    assert [f.count for f in of(findings, "ports_active")] == [1]


def test_a_nameless_ibpanic_beside_read_ports_is_still_reported():
    # Negative of the source failure, and no fail-open: "can't list ports" names no device.
    text = HEALTHY_IBSTAT + "ibpanic: [99] main: can't list ports: Permission denied\n"
    findings, _ = inspect(text, "ibstat")
    assert not of(findings, "source_unavailable")
    assert [f.class_ for f in of(findings, "device_unreadable")] == ["unknown"]
