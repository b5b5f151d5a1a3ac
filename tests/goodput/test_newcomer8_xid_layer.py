"""newcomer8 F1: a training log's Xid interruption takes its layer from the Xid policy, the same
table `inspect` and the exporter read (gpuslo/data/xid_policy.yaml): Xid 13 (NVIDIA's catalogue:
graphics engine exception, immediate action RESTART_APP, class `application`) is the workload's
fault, not the node's. Real lines: leptonai/gpud PR #46 (tests/data/newcomer8/inputs, SOURCES.md).
"""

from __future__ import annotations

from pathlib import Path

from gpuslo.exporter.policy.classify import layer_of_class
from gpuslo.exporter.policy.xid import packaged_policy
from tests.goodput.test_fresh10_lines import read

INPUTS = Path(__file__).resolve().parents[1] / "data" / "newcomer8" / "inputs"


def lines(name: str) -> list[str]:
    return (INPUTS / name).read_text(encoding="utf-8").splitlines()


def layers(doc: dict) -> list[tuple[str, str]]:
    return [(i["cause"], i["layer"]) for i in doc.get("interruptions") or []]


def test_newcomer8_f1_xid13_is_the_workloads_fault_as_inspect_says() -> None:
    doc = read(lines("gpud46_xid13_109.dmesg"))
    assert layers(doc) == [("xid", "training")]
    # one policy: the layer is the one inspect's class for Xid 13 gives
    assert layer_of_class(packaged_policy().xid_rule(13, None).class_) == "training"


def test_a_contained_ecc_xid_stays_on_the_node() -> None:  # negative: class contained
    doc = read(lines("gpud1174_xid94_contained.kmsg"))
    assert layers(doc) == [("xid", "node")]


def test_a_fatal_xid_after_an_application_one_makes_the_stop_the_nodes() -> None:
    xid13 = lines("gpud46_xid13_109.dmesg")[1]
    xid79 = ("[Fri Aug 30 11:43:10 2024] NVRM: Xid (PCI:0000:cb:00): 79, pid='<unknown>', "
             "name=<unknown>, GPU has fallen off the bus.")
    assert [layer for _, layer in layers(read([xid13, xid79]))] == ["node"]


def test_an_xid_code_the_policy_does_not_list_is_the_nodes() -> None:  # unknown_code: fatal
    line = "[Fri Aug 30 11:43:09 2024] NVRM: Xid (PCI:0000:cb:00): 999, pid=1, name=python3"
    assert layers(read([line])) == [("xid", "node")]
