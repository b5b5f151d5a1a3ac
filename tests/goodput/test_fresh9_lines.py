"""Line kinds the fresh9 first-contact batch showed missing, each read on the case's real lines
and on a negative beside it (tests/data/training_logs/fresh9, issue 23).
"""

from __future__ import annotations

from gpuslo.goodput.logs import load_profiles
from gpuslo.goodput.logs.assemble import assemble
from gpuslo.goodput.logs.reader import parse_lines
from gpuslo.goodput.logs.tokens import values

PROFILES = load_profiles()


def read(lines: list[str]) -> dict:
    parsed = parse_lines(lines, PROFILES)
    return assemble(parsed, job="t", gpus=1, checkpoint_step=PROFILES.checkpoint_step).document


def span(doc: dict) -> tuple:
    return doc["steps"]["first"], doc["steps"]["last"]


# -- an undefined time glued to its unit (modded-nanogpt, KellerJordan/modded-nanogpt PR#65, L06) -
NANOGPT = ["step:0/1480 val_loss:7.7109 train_time:0ms step_avg:nanms",
           "step:125/1480 val_loss:4.3719 train_time:29736ms step_avg:258.57ms",
           "step:250/1480 val_loss:3.9992 train_time:62563ms step_avg:260.68ms",
           "step:375/1480 val_loss:3.8241 train_time:96107ms step_avg:263.31ms",
           "step:500/1480 val_loss:3.7067 train_time:130164ms step_avg:265.64ms",
           "step:625/1480 val_loss:3.6328 train_time:164680ms step_avg:267.77ms"]


def test_nan_glued_to_its_unit_is_a_missing_value_of_the_same_line_kind() -> None:
    # `step_avg:nanms` (0 ms / 0 timed steps) keeps the step-0 line in the template of the
    # others, so its lone `train_time:0ms` is not taken for a per-step time
    assert [(v.text, v.number, v.unit) for v in values("step_avg:nanms")] == [("nanms", None,
                                                                                "ms")]
    doc = read(NANOGPT)
    assert span(doc) == (0, 625)
    assert abs(doc["step_time_s"]["median"] - 0.268) < 0.005


def test_a_word_starting_with_nan_is_no_value() -> None:
    # negative: `nans`, `nanoseconds`, `infos` are words, not an undefined number and its unit
    for text in ("skipped 3 batches with nans", "timer in nanoseconds", "infos: 2"):
        assert all(v.text not in ("nans", "nanoseconds", "infos") for v in values(text)), text
