"""Line kinds the fresh13 first-contact batch showed misread, each read on the case's real lines
and on a negative beside it: a time of day printed as a named field among a per-epoch line's
durations (Applio, P18) and a save whose subject is a bracketed tag before `saved` (a
hand-written LLM loop, P15).
"""

from __future__ import annotations

from gpuslo.goodput.logs import load_profiles
from gpuslo.goodput.logs.assemble import assemble
from gpuslo.goodput.logs.reader import parse_lines

PROFILES = load_profiles()


def read(lines: list[str]) -> dict:
    parsed = parse_lines(lines, PROFILES)
    return assemble(parsed, job="t", gpus=1, checkpoint_step=PROFILES.checkpoint_step).document


# -- Applio (RVC) per-epoch lines (IAHispano/Applio#431, fresh13 P18) ---------------------------
_RUN = "C:\\Users\\Aitor\\Downloads\\IA_Applio\\Applio\\logs\\Prueba1"
_OVER = " | Number of epochs remaining for overtraining: 10"
APPLIO = [
    f"{_RUN} | epoch=1 | step=40 | time=12:46:47 | training_speed=0:00:27",
    f"Saved model '{_RUN}_1e_40s_best_epoch.pth' (epoch 1 and step 40)",
    f"{_RUN} | epoch=2 | step=80 | time=12:47:14 | training_speed=0:00:22"
    " | lowest_value=27.87265396118164 (epoch 2 and step 69)" + _OVER,
    f"Saved model '{_RUN}_2e_80s_best_epoch.pth' (epoch 2 and step 80)",
    f"{_RUN} | epoch=3 | step=120 | time=12:47:41 | training_speed=0:00:21"
    " | lowest_value=25.2319278717041 (epoch 3 and step 116)" + _OVER,
    f"Saved model '{_RUN}_3e_120s_best_epoch.pth' (epoch 3 and step 120)",
]


def test_a_time_of_day_field_is_no_step_time_and_the_duration_beside_it_is_a_window() -> None:
    doc = read(APPLIO)
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (40, 120)
    median = doc["step_time_s"]["median"]
    # training_speed 22 s and 21 s over 40 steps each (its time since the record before),
    # never 46,034 s (12:47:14 read as a duration)
    assert median is not None and abs(median - (22 / 40 + 21 / 40) / 2) < 1e-6
    assert doc["span_s"] < 3600


def test_a_step_time_that_stays_put_is_still_a_step_time() -> None:
    # negative: a duration of an hour or more that does not climb on every record is a time,
    # read as it is printed (a slow step of a huge job, 1:02:03 then 1:02:00)
    lines = [f"epoch=1 | step={s} | time={t}" for s, t in
             ((1, "1:02:03"), (2, "1:02:00"), (3, "1:02:05"), (4, "1:01:59"))]
    median = read(lines)["step_time_s"]["median"]
    assert median is not None and median > 3600


# -- a hand-written Qwen3-style pre-training loop (Pratic2001/Qwen3-Non-MOE train.out, P15) ----
QWEN = [
    "step   47840 | loss 14.4484 | lr 1.79e-04 | grad 0.733 | 37.2k tok/s | mfu 37.41%",
    "step   47850 | loss 14.0481 | lr 1.79e-04 | grad 0.753 | 37.2k tok/s | mfu 37.40%",
    "[Checkpoint] saved ./checkpoints/ckpt_step0047850.pt",
    "[Checkpoint] pruned checkpoints/ckpt_step0047400.pt",
    "step   47860 | loss 14.1817 | lr 1.79e-04 | grad 0.733 | 32.0k tok/s | mfu 32.19%",
    "step   47870 | loss 13.9838 | lr 1.79e-04 | grad 0.734 | 37.2k tok/s | mfu 37.43%",
]


def test_a_bracketed_checkpoint_tag_before_saved_is_a_save() -> None:
    saves = read(QWEN)["checkpoint_saves"]
    assert [s["step"] for s in saves] == [47850]


def test_a_bracketed_tag_before_another_verb_is_no_save() -> None:
    # negative: the prune of an older file names a checkpoint and a step but writes nothing
    lines = [ln for ln in QWEN if "saved" not in ln]
    assert read(lines)["checkpoint_saves"] == []


# -- a throughput with the items a step printed in the run's settings (P12, P15) ---------------
MXNET = ["INFO:root:start with arguments Namespace(batch_size=32, disp_batches=20, gpus='0', "
         "kv_store='device', num_epochs=10)"] + [
    f"INFO:root:Epoch[0] Batch [{b}]\tSpeed: {s} samples/sec\taccuracy=0.{560 + b}"
    for b, s in ((20, "142.33"), (40, "143.53"), (60, "142.71"), (80, "139.26"), (100, "142.41"))]


def test_samples_per_second_over_the_printed_batch_size_is_the_step_time() -> None:
    median = read(MXNET)["step_time_s"]["median"]
    # 32 samples over 139.26 .. 143.53 samples/s: 0.223 .. 0.230 s a step, about 0.2247
    assert median is not None and abs(median - 32 / 142.4) < 1e-3


def test_samples_per_second_without_a_known_batch_is_no_step_time() -> None:
    # negatives: no batch size printed; a batch that may be a micro-batch (accumulation)
    assert read(MXNET[1:])["step_time_s"]["median"] is None
    accumulated = [MXNET[0].replace("gpus='0'", "grad_accum_steps=4")] + MXNET[1:]
    assert read(accumulated)["step_time_s"]["median"] is None


QWEN_SETTINGS = ["Tokens / optimizer step : 32,768", "Effective batch size    : 32",
                 "Max steps               : 100,000", "Checkpoint every        : 150 steps"]


def test_tokens_per_second_over_the_printed_tokens_a_step_is_the_step_time() -> None:
    median = read(QWEN_SETTINGS + QWEN)["step_time_s"]["median"]
    assert median is not None and abs(median - 32768 / 37200) < 1e-3


def test_tokens_per_second_beside_samples_a_step_only_is_no_step_time() -> None:
    # negative: the batch in sequences says nothing of tokens per second
    assert read(QWEN_SETTINGS[1:] + QWEN)["step_time_s"]["median"] is None
