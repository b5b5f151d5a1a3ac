"""Line kinds the fresh8 first-contact batch showed missing, each read on the case's real lines
and on a negative beside it: a per-batch duration written `s/b : 1.131` (K04, K05), a restore
worded `loading model from checkpoint: <path>` (K10) and a count named only `n` opening the
record, with a save whose file name carries the step (K14).
"""

from __future__ import annotations

from gpuslo.goodput.logs import load_profiles
from gpuslo.goodput.logs.assemble import assemble
from gpuslo.goodput.logs.reader import parse_lines

PROFILES = load_profiles()


def read(lines: list[str]) -> dict:
    parsed = parse_lines(lines, PROFILES)
    return assemble(parsed, job="t", gpus=1, checkpoint_step=PROFILES.checkpoint_step).document


# -- HiFi-GAN's train.py stdout (`s/b` = time.time() - start_b of the printed batch) -----------
HIFIGAN = "Steps : {n}, Gen Loss Total : 77.188, Mel-Spec. Error : 1.468, {unit} : {s}"
SECONDS = ["1.160", "1.161", "1.159", "1.162", "1.175"]  # MockingBird#871 (fresh8 K05)


def hifigan(unit: str = "s/b") -> list[str]:
    return [HIFIGAN.format(n=1380 + 5 * i, unit=unit, s=s) for i, s in enumerate(SECONDS)]


def test_seconds_per_batch_written_s_slash_b_is_the_step_time() -> None:
    doc = read(hifigan())
    assert doc["steps"]["first"] == 1380 and doc["steps"]["last"] == 1400
    assert doc["step_time_s"]["median"] == 1.161


def test_other_seconds_per_step_spellings_are_step_times() -> None:
    for unit in ("sec/batch", "s/batch", "sec/it", "s/step", "s/iters", "sec/steps"):
        assert read(hifigan(unit))["step_time_s"]["median"] == 1.161, unit


def test_ms_per_step_is_scaled_to_seconds() -> None:
    assert read(hifigan("ms/step"))["step_time_s"]["median"] == 0.001161


def test_bytes_per_second_is_no_step_time() -> None:
    # negative: `b/s` is a throughput (bytes a second), not seconds per batch
    assert read(hifigan("b/s"))["step_time_s"]["median"] is None


# -- improved-diffusion's TrainLoop (openai/improved-diffusion#36, fresh8 K10) -----------------
DIFFUSION = ["loading model from checkpoint: MAINMOD_70K/ema_0.9999_070000.pt...",
             "------------------------", "| grad_norm | 0.0342   |", "| loss      | 0.000191 |",
             "| samples   | 1        |", "| step      | 0        |", "------------------------",
             "saving model 0...", "saving model 0.9999..."]


def test_loading_model_from_checkpoint_path_is_a_restore() -> None:
    doc = read(DIFFUSION)
    assert len(doc["restarts"]) == 1
    # the file name's 70K/070000 is not the step the counter resumed at (it printed step 0)
    assert [s["step"] for s in doc["checkpoint_saves"]] == [0]


def test_loading_model_from_pretrained_is_no_restore() -> None:
    # negative: weights loaded from a pretrained file (a fine-tune's start) restore no run
    lines = ["loading model from pretrained: models/base/imagenet.pt...", *DIFFUSION[1:]]
    assert read(lines)["restarts"] == []


# -- SafeLife's PPO (PartnershipOnAI/safelife#23, fresh8 K14) -----------------------------------
SAFELIFE = ["INFO     Saving checkpoint: '/content/safelife/colab-mppo1/checkpoint-320.data'",
            "INFO     n=960: loss=0.304, entropy=2.175, val=-0.237, adv=-0.335",
            "INFO     n=1920: loss=1.68, entropy=2.086, val=-0.676, adv=0.335",
            "CRITICAL Keyboard Interrupt. Ending early."]


def test_a_count_named_n_opening_the_record_is_the_step() -> None:
    doc = read(SAFELIFE)
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (960, 1920)
    assert [s["step"] for s in doc["checkpoint_saves"]] == [320]


def test_an_n_among_named_values_is_no_step() -> None:
    # negative: `n=` after other named values (a sample count in a metrics line) is no counter
    lines = [line.replace("INFO     n=", "INFO     loss=0.3, n=") for line in SAFELIFE]
    assert read(lines)["steps"]["first"] is None
