"""A trainer's own step line glued after an in-epoch tqdm bar, a bare `Saving..` and the next
run's restore that proves it (fresh7 J12, Seed-VC), read on the case's real lines and on a
negative beside each rule.
"""

from __future__ import annotations

from gpuslo.goodput.logs import load_profiles
from gpuslo.goodput.logs.assemble import assemble
from gpuslo.goodput.logs.reader import parse_lines

PROFILES = load_profiles()
BAR = " {p}%|{g}{s}| {n}/123 [{e}<48:57, 31.25s/it]"


def read(lines: list[str]) -> dict:
    parsed = parse_lines(lines, PROFILES)
    return assemble(parsed, job="t", gpus=1, checkpoint_step=PROFILES.checkpoint_step).document


def bar(n: int, elapsed: str) -> str:
    return BAR.format(p=n * 100 // 123, g="█" * (n // 2), s=" " * (62 - n // 2), n=n, e=elapsed)


SEED_VC = [
    "poch 7, step 880, loss: 0.5617808432252893",
    bar(29, "12:45") + "epoch 7, step 890, loss: 0.5611585189524538",
    bar(38, "17:46") + "Saving..",
    bar(39, "18:55") + "epoch 7, step 900, loss: 0.561418957352642",
    " 33%|████████████████████████████████████████████████████████████████▍",
    "",
    "Loading weights from nvidia/bigvgan_v2_44khz_128band_512x",
    "Removing weight norm...",
    "cfm loaded",
    "length_regulator loaded",
    r"Loaded checkpoint from ./runs\test\DiT_epoch_00007_step_00900.pth",
]


def test_the_trainers_line_glued_to_the_bar_numbers_its_steps() -> None:
    # real lines (Plachtaa/seed-vc#195): 890 = 29 + 861, 900 = 39 + 861; the first line's
    # `poch` (cut by the reporter) is the same template
    doc = read(SEED_VC)
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (880, 900)
    assert abs(doc["step_time_s"]["median"] - 301 / 9) < 1e-3  # 12:45 -> 17:46 over 29 -> 38


def test_a_glued_line_whose_counter_does_not_follow_the_bar_is_another_loop() -> None:
    # negative: the glued lines count something else (not n + one offset): the bar's steps stand
    lines = list(SEED_VC)
    lines[3] = bar(39, "18:55") + "epoch 7, step 950, loss: 0.561418957352642"
    doc = read(lines)
    assert doc["steps"]["last"] < 123


def test_saving_dots_then_a_later_restore_of_that_step_is_a_save_at_it() -> None:
    # real lines: `Saving..` between steps 899 and 900; the next run loads ..._step_00900.pth
    doc = read(SEED_VC)
    assert [s["step"] for s in doc["checkpoint_saves"]] == [900]
    assert [r["resumed_from_step"] for r in doc["restarts"]] == [900]
    assert doc["goodput"]["goodput"] is not None


def test_saving_dots_with_no_restore_is_a_save_at_the_last_step() -> None:
    # negative: no later restore names a step: the save keeps the last step printed
    doc = read(SEED_VC[:5])
    assert [s["step"] for s in doc["checkpoint_saves"]] == [899]


def test_saving_words_are_not_the_bare_saving_dots() -> None:
    # negative: `Saving.. predictions` names what is saved: no checkpoint
    lines = [line.replace("Saving..", "Saving predictions..") for line in SEED_VC[:5]]
    assert read(lines)["checkpoint_saves"] == []
