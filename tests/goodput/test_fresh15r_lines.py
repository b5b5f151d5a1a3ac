"""Lines the fresh15 first-contact batch showed misread, each on the case's real lines with a
negative: a checkpoint load that names step 0 before any progress (Megatron-LM fine-tuning from
released GPT-2 weights, R07; a load of a later iteration stays a resume), and an unnamed
evaluation bar drawn now and then between an unnamed training bar's steps, with an opening
draw untimed in the bar's own unit (TRL DPO, R08; a bar in every gap of an epochs bar stays the
steps).
"""

from __future__ import annotations

from gpuslo.goodput.logs import load_profiles
from gpuslo.goodput.logs.assemble import assemble
from gpuslo.goodput.logs.bars import _UNTIMED, now_and_then
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


# -- iiicellled/Clean-Code-Qwen dpo.log (TRL DPOTrainer, tqdm bars with \r), fresh15 R08 ---------
def _bar(n: int, total: int, elapsed: str, rate: str) -> str:
    pct = 100 * n // total
    return f"{pct:3d}%|█         | {n}/{total} [{elapsed}<00:10, {rate}]"


def _dpo() -> list[str]:
    lines = ["Formatting DPO pairs with chat template:   0%|          | 0/1282 [00:00<?, "
             "? examples/s]Formatting DPO pairs with chat template: 100%|██████████| 1282/1282 "
             "[00:00<00:00, 1429.28 examples/s]",
             "  0%|          | 0/12 [00:00<?, ?it/s]"]
    for n in range(1, 13):
        lines.append("\r" + _bar(n, 12, f"{n * 28 // 60:02d}:{n * 28 % 60:02d}", "28.40s/it"))
        if n in (5, 10, 12):  # an evaluation bar after steps 5 and 10, and after the end
            lines += ["  0%|          | 0/4 [00:00<?, ?it/s]\x1b[A"] + [
                "\r" + _bar(k, 4, f"00:0{k}", "1.20it/s") + "\x1b[A" for k in range(1, 5)]
    return lines


def test_an_evaluation_bar_drawn_now_and_then_between_steps_is_not_the_steps() -> None:
    doc = read(_dpo())
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (1, 12)
    assert doc["restarts"] == []


def test_a_bar_run_in_every_gap_of_an_epochs_bar_is_still_the_steps() -> None:
    # negative: an unnamed per-epoch bar `n/5` under an unnamed epochs bar `e/3` that fills
    # every gap of it (and draws more) is the training's steps
    draws = {("bar", 3): [(0, 0), (7, 1), (14, 2), (21, 3)],
             ("bar", 5): [(s, n) for e in range(3) for s, n in
                          zip(range(1 + 7 * e, 7 + 7 * e), range(6), strict=True)]}
    assert not now_and_then(draws, "bar", 5)
    # the same inner bar in only two of many gaps is an evaluation's
    outer = [(10 * k, k) for k in range(12)]
    inner = [(51 + k, k) for k in range(5)] + [(101 + k, k) for k in range(5)]
    assert now_and_then({("bar", 12): outer, ("bar", 5): inner}, "bar", 5)


def test_an_unnamed_unit_bar_drawn_untimed_at_0_is_its_creation() -> None:
    # `? examples/s` (tqdm's unknown rate in the bar's unit) at 0 is no step 0; a drawn rate is
    doc = read(["Formatting DPO pairs with chat template:   0%|          | 0/1282 [00:00<?, "
                "? examples/s]"] + _dpo()[1:])
    assert doc["steps"]["first"] == 1
    assert opening_draw_text("  0%|          | 0/1282 [00:00<?, ? examples/s]")
    assert not opening_draw_text("  0%|          | 0/1282 [00:01<00:09, 850.00 examples/s]")


def opening_draw_text(text: str) -> bool:
    """Whether the rate on a bar's draw says no iteration was timed yet (`bars._UNTIMED`)."""
    return bool(_UNTIMED.search(text))
