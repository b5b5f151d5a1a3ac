"""Lines newcomer evaluation #4 (/work/wt/newcomer4_findings.md) showed misread, each on the
newcomer's real line shapes with a negative beside it: a paste's indentation must not change what
a line means (#8)."""

from __future__ import annotations

import pytest

from gpuslo.goodput.logs import load_profiles
from gpuslo.goodput.logs.assemble import assemble
from gpuslo.goodput.logs.normalise import Normaliser
from gpuslo.goodput.logs.reader import parse_lines

PROFILES = load_profiles()


def read(lines: list[str]) -> dict:
    parsed = parse_lines(lines, PROFILES)
    return assemble(parsed, job="t", gpus=8, checkpoint_step=PROFILES.checkpoint_step).document


# t06: Caffe's MNIST run as pasted, indented 9 spaces, in a markdown file (find_string id
# 27691349631), lines cut at their end where long
CAFFE = [
    "I0321 17:37:29.109046 14186 solver.cpp:258]     Train net output #0: loss = 0.0189934 "
    "(* 1 = 0.0189934 loss)",
    "I0321 17:37:29.109053 14186 sgd_solver.cpp:112] Iteration 4800, lr = 0.00745253",
    "I0321 17:37:29.796532 14186 solver.cpp:239] Iteration 4900 (145.463 iter/s, "
    "0.687461s/100 iters), loss = 0.00938809",
    "I0321 17:37:29.796571 14186 solver.cpp:258]     Train net output #0: loss = 0.00938809 "
    "(* 1 = 0.00938809 loss)",
    "I0321 17:37:29.796578 14186 sgd_solver.cpp:112] Iteration 4900, lr = 0.00741498",
    "I0321 17:37:30.475172 14186 solver.cpp:464] Snapshotting to binary proto file "
    "examples/mnist/lenet/lenet_solver_iter_5000.caffemodel",
    "I0321 17:37:30.489665 14186 sgd_solver.cpp:284] Snapshotting solver state to binary proto "
    "file examples/mnist/lenet/lenet_solver_iter_5000.solverstate",
    "I0321 17:37:30.492760 14186 solver.cpp:347] Iteration 5000, Testing net (#0)",
    "I0321 17:37:30.697100 14194 data_layer.cpp:73] Restarting data prefetching from start.",
    "I0321 17:37:30.704600 14186 solver.cpp:414]     Test net output #0: accuracy = 0.9898",
]


def _facts(doc: dict) -> tuple:
    return (doc["steps"]["first"], doc["steps"]["last"], doc["step_time_s"]["median"],
            doc["span_s"], [(s["step"], s["seconds"]) for s in doc["checkpoint_saves"]],
            doc["goodput"]["goodput"])


@pytest.mark.parametrize("lead", [" " * 9, "\t", "> ", ">     ", "- "])
def test_a_paste_lead_on_every_line_changes_nothing(lead: str) -> None:
    plain = read(CAFFE)
    assert plain["checkpoint_saves"][0]["step"] == 5000 and plain["span_s"] == pytest.approx(1.596)
    assert _facts(read([lead + line for line in CAFFE])) == _facts(plain)


def test_the_learnt_lead_is_the_common_one_and_keeps_deeper_indentation() -> None:
    norm = Normaliser(PROFILES)
    norm.learn_indent(["    Epoch 1", "      loss: 2.0", "    Epoch 2", "      loss: 1.9", ""])
    assert norm.indent == "    "
    cut = norm.strip  # (text, rank, prefixed)
    assert cut("      loss: 1.9")[0] == "  loss: 1.9"  # the metrics' own indentation stays
    # then a launcher's prefix, as on the line unindented
    assert cut("    [rank3]: step 5") == cut("[rank3]: step 5")[:2] + (True,)
    assert cut("    [rank3]: step 5")[1] == "3"


def test_indentation_on_some_lines_only_is_no_paste_lead() -> None:
    """Negative: a log whose continuation lines alone are indented (a metrics block under a
    header, a wrapped message) keeps them as they are."""
    norm = Normaliser(PROFILES)
    norm.learn_indent(["Epoch 1", "    loss: 2.0", "    acc: 0.5", "Epoch 2", "    loss: 1.9",
                       "    acc: 0.6"])
    assert norm.indent == ""
    cut = norm.strip
    assert cut("    loss: 1.9")[0] == "    loss: 1.9"
