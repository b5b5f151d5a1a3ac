"""newcomer8 F1: a training log's Xid interruption takes its layer from the Xid policy, the same
table `inspect` and the exporter read (gpuslo/data/xid_policy.yaml): Xid 13 (NVIDIA's catalogue:
graphics engine exception, immediate action RESTART_APP, class `application`) is the workload's
fault, not the node's. Real lines: leptonai/gpud PR #46 (tests/data/newcomer8/inputs, SOURCES.md).
"""

from __future__ import annotations

from pathlib import Path

from gpuslo.exporter.policy.xid import packaged_policy
from gpuslo.verdict import layer_of_class
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


# -- F8: the same dmesg capture read as a training job's 32 min of initialization ----------------
def notes_of(doc: dict) -> list[str]:
    return [n for n in doc.get("notes") or [] if "booked as initialization" in n]


def test_newcomer8_f8_a_log_with_no_step_says_it_may_not_be_a_training_log() -> None:
    (note,) = notes_of(read(lines("gpud46_xid13_109.dmesg")))
    assert "no step line follows" in note and "gpuslo inspect" in note


def test_a_start_gap_before_steps_keeps_its_plain_note() -> None:  # negative
    steps = [f"2024-08-30 11:{m:02d}:00 | step {s} | loss 1.0" for m, s in ((43, 1), (44, 2),
                                                                            (45, 3))]
    (note,) = notes_of(read(["2024-08-30 11:11:22 loading dataset shards", *steps]))
    assert "no step line follows" not in note


# -- F11: torchtitan's metrics line names the framework (pytorch/torchtitan #1287) -------------
def test_newcomer8_f11_torchtitans_metrics_line_names_it() -> None:
    from gpuslo.goodput.logs import analyse_log, load_profiles

    doc = analyse_log(INPUTS / "torchtitan1287_async_ckpt.log", load_profiles(), gpus=8).document
    assert (doc["framework"], doc["framework_detected"]) == ("torchtitan", True)
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (440, 480)  # read as before


def test_a_plain_step_loss_line_names_no_framework() -> None:  # negative: no memory/tps fields
    doc = read(["2024-08-30 11:43:00 step: 440  loss:  5.2553", "2024-08-30 11:43:01 step: 441  "
                "loss:  5.2001"])
    assert doc["framework"] is None
