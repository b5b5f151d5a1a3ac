"""A checkpoint load that names step 0 before any progress, read on the fresh15 first-contact
batch's real lines (Megatron-LM fine-tuning from released GPT-2 weights, R07), with a negative:
a load of a later iteration before progress stays a restart that proves its commit.
"""

from __future__ import annotations

from gpuslo.goodput.logs import load_profiles
from gpuslo.goodput.logs.assemble import assemble
from gpuslo.goodput.logs.reader import parse_lines

PROFILES = load_profiles()


def read(lines: list[str]) -> dict:
    parsed = parse_lines(lines, PROFILES)
    return assemble(parsed, job="t", gpus=8, checkpoint_step=PROFILES.checkpoint_step).document


def _iteration(n: int, ms: float) -> str:
    return (f" iteration {n:8d}/  500000 | consumed samples: {32 * n:12d} | elapsed time per "
            f"iteration (ms): {ms} | learning rate: 4.687E-08 | global batch size:    32 | "
            "lm loss: 3.010825E+00 | loss scale: 1.0 | grad norm: 2.948 | "
            "number of skipped iterations:   0 | number of nan iterations:   0 |")


# -- KungYork/Megatron-LM finetune.log (2023-08-16), fresh15 R07 -------------------------------
def _megatron(load: list[str], first: int) -> list[str]:
    return (["[after megatron is initialized] datetime: 2023-08-16 11:59:47 ",
             "building GPT model ..."] + load
            + ["(min, max) time across ranks (ms):",
               "    load-checkpoint ................................: (1364.17, 1365.23)",
               "[after model, optimizer, and learning rate scheduler are built] datetime: "
               "2023-08-16 11:59:56 ",
               "[before the start of training step] datetime: 2023-08-16 11:59:58 "]
            + [_iteration(first + k, ms) for k, ms in
               enumerate((6779.2, 1408.2, 1401.4, 1235.0, 1187.4, 931.9))])


RELEASE = [" loading release checkpoint from /home/gpt2_dataset/ckpt",
           "could not find arguments in the checkpoint ...",
           " checkpoint version 0",
           " succesfully fixed query-key-values ordering for checkpoint version 0",
           "  successfully loaded checkpoint from /home/gpt2_dataset/ckpt at iteration 0"]


def test_a_load_of_step_0_before_progress_is_no_restart_and_no_commit() -> None:
    doc = read(_megatron(RELEASE, 1))
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (1, 6)
    assert doc["restarts"] == []
    # released weights prove no step of this job: goodput unknown, never 0.0
    assert doc["goodput"]["status"] == "unknown" and doc["goodput"]["goodput"] is None


def test_a_load_of_a_later_iteration_before_progress_is_still_a_resume() -> None:
    # negative: the same lines loading this job's iteration 5000 go on from 5001
    load = [" loading checkpoint from /ckpt/gpt2 at iteration 5000",
            "  successfully loaded checkpoint from /ckpt/gpt2 at iteration 5000"]
    doc = read(_megatron(load, 5001))
    assert [r["resumed_from_step"] for r in doc["restarts"]] == [5000]
