"""Line kinds the fresh14 first-contact batch showed misread (events and step times), each read
on the case's real lines and on a negative beside it: save-path notices printed before a run
from scratch (pygcn, Q01), a save named as `Saving <name>_model..` and a per-epoch cumulative
timer on a line of its own (ASGL-SNN, Q02), MXNet's Speedometer range with a lower end that
stays 0 (Q03), a save named as the call `save_model!!` (Q04), and a cumulative time among
memory readings, printed again by a phase's closing summary (a PINN trainer, Q09).
"""

from __future__ import annotations

from gpuslo.goodput.logs import load_profiles
from gpuslo.goodput.logs.aside import sawtooth
from gpuslo.goodput.logs.assemble import assemble
from gpuslo.goodput.logs.reader import parse_lines

PROFILES = load_profiles()


def read(lines: list[str]) -> dict:
    parsed = parse_lines(lines, PROFILES)
    return assemble(parsed, job="t", gpus=1, checkpoint_step=PROFILES.checkpoint_step).document


def median_s(doc: dict) -> float | None:
    return (doc.get("step_time_s") or {}).get("median")


# -- pygcn's start-up notices (Miao-er/gcn_graph_classification log/train.log, fresh14 Q01) -----
_NOTICES = ["[2022-06-26 21:43:39,071]trained model saved at :../train_model/model.pt",
            "[2022-06-26 21:43:39,073]best model saved at :../best_model/model.pt",
            "[2022-06-26 21:43:39,073]Epoch: 0001"]
_ITERS = [f"[2022-06-26 21:{m}]iter:{k:04d} loss_train: 1.{k} acc_train: 0.5{k} time: 0.16{k}s"
          for m, k in (("43:42,483", 20), ("43:45,687", 40), ("43:48,886", 60),
                       ("43:52,109", 80), ("43:55,323", 100))]


def test_save_path_notices_before_a_run_from_scratch_are_no_saves() -> None:
    doc = read(_NOTICES[:2] + _NOTICES + _ITERS)  # two launches' notices, then iter 20 .. 100
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (20, 100)
    assert doc["checkpoint_saves"] == []
    assert doc["goodput"]["goodput"] is None  # no commit evidence: unknown, never 0.0


def test_the_same_words_after_progress_are_a_save() -> None:
    # negative: said after steps ran, the line may have written trained work: a save
    lines = _NOTICES[2:] + _ITERS[:3] + ["[2022-06-26 21:43:49,000]trained model saved at "
                                          ":../train_model/model.pt"] + _ITERS[3:]
    assert len(read(lines)["checkpoint_saves"]) == 1


# -- ASGL-SNN's main.py (Windere/ASGL-SNN log/train.log, fresh14 Q02) ----------------------------
def _asgl(epochs: int) -> list[str]:
    lines = []
    for e in range(epochs):
        for k, (at, took) in enumerate((("09:54:38,969", 15.8177), ("09:54:53,420", 30.2686),
                                         ("09:55:07,967", 44.8154))):
            stamp = f"2023-03-19 {at[:3]}{int(at[3:5]) + 2 * e:02d}{at[5:]}"
            lines += [f"{stamp} - INFO: ", f"Epoch [{e}/300], Step [{100 * (k + 1)}/390], "
                      "Loss: 0.03681", f"{stamp} - INFO: Time elasped: {took + 0.01 * e}"]
        end = f"2023-03-19 09:{55 + 2 * e:02d}:26,480"
        lines += [f"{end} - INFO: Epoch {e}: train loss 0.03664, train acc 0.00996, test acc 0.01",
                  f"{end} - INFO: Saving custom_model..  with acc 0.010300000198185444 in the "
                  f"epoch {e}"]
    return lines


def test_a_timer_that_starts_again_each_epoch_is_a_clock_not_a_step_time() -> None:
    doc = read(_asgl(3))
    median = median_s(doc)
    # 14.45 s and 14.55 s between the records of one epoch over 100 steps each (not 30.27 s)
    assert median is not None and abs(median - 0.145) < 0.003


def test_a_step_time_on_its_own_line_that_wanders_stays_a_step_time() -> None:
    # negative: a per-step time set apart that goes up and down around its values is each
    # record's own (no climb by multiples, no fall back to where it began)
    lines = []
    for k, took in enumerate((0.15, 0.31, 0.16, 0.30, 0.15, 0.32)):
        lines += [f"Epoch [1/300], Step [{100 * (k + 1)}/900], Loss: 0.03", f"Time taken: {took}"]
    median = median_s(read(lines))
    assert median is not None and 0.15 <= median <= 0.31
    assert not sawtooth([0.15, 0.31, 0.16, 0.30, 0.15, 0.32])
    assert sawtooth([15.82, 30.27, 44.82, 15.84, 30.52, 45.25])


def test_a_save_of_a_named_model_is_a_save() -> None:
    saves = read(_asgl(3))["checkpoint_saves"]
    assert len(saves) == 3


# -- MXNet Module.fit's Speedometer, auto_reset off (ZhouKai90/SSH-keypoint, fresh14 Q03) --------
_SPEED = [f"2018-10-11 09:{t} INFO - Epoch[5] Batch [0-{b}]\tSpeed: {s} samples/sec\t"
          f"M0_RPNAcc=0.99{b}\tM0_RPNL1BboxLoss=0.0{b}"
          for t, b, s in (("16:49,200", 20, "25.77"), ("17:01,656", 40, "25.69"),
                          ("17:14,135", 60, "25.64"), ("17:26,730", 80, "25.41"),
                          ("17:39,347", 100, "25.36"), ("17:51,968", 120, "25.36"))]


def test_a_range_whose_lower_end_stays_counts_at_its_upper_end() -> None:
    doc = read(_SPEED)
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (20, 120)
    median = median_s(doc)  # stamps 12.46 .. 12.62 s apart over 20 batches each
    assert median is not None and abs(median - 0.6255) < 0.01


def test_a_range_that_does_not_move_is_no_counter() -> None:
    # negative: the same `[0-20]` on every line counts nothing
    lines = [ln.replace(f"[0-{b}]", "[0-20]") for ln, b in zip(_SPEED, range(20, 140, 20),
                                                                strict=True)]
    assert read(lines)["steps"]["last"] != 120


# -- a loguru Faster R-CNN trainer (KevinZH3/Faster-R-CNN-for-VOC2007-, fresh14 Q04) -------------
_LOG = "2024-05-26 {} - INFO - task2_train_fasterrcnn.py - {} - "
_FRCNN = []
for _e, (_start, _end, _next) in enumerate((("16:04:46", "16:25:29", "16:25:35"),
                                           ("16:25:35", "16:46:10", "16:46:17"),
                                           ("16:46:17", "17:06:42", "17:06:48")), start=1):
    _FRCNN += [_LOG.format(_start, 65), f"EPOCH {_e} of 30", _LOG.format(_end, 128),
               f"EPOCH loss: 0.5{_e}", _LOG.format(_end, 130) + "save_model!!"]
_FRCNN += [_LOG.format("17:06:48", 65), "EPOCH 4 of 30"]


def test_a_save_named_as_its_call_is_a_save() -> None:
    doc = read(_FRCNN)
    assert len(doc["checkpoint_saves"]) == 3
    assert doc["goodput"]["goodput"] is not None  # saves followed by training: commit evidence


def test_a_save_call_named_in_settings_or_a_sentence_is_no_save() -> None:
    # negative: a config key, and a sentence naming the call, save nothing
    lines = [ln.replace("save_model!!", "save_model: True") for ln in _FRCNN]
    assert read(lines)["checkpoint_saves"] == []
    lines = [ln.replace("save_model!!", "call save_model when done") for ln in _FRCNN]
    assert read(lines)["checkpoint_saves"] == []


# -- a PINN trainer, Adam then L-BFGS (Ashecy/pinn-code output/log.txt, fresh14 Q09) -------------
_BAR = "-" * 47
_MEM = ("Memory Usage -> CPU: 946.27 MB, GPU Allocated: 19.18 MB, GPU Reserved: 326.00 MB, "
        "Elapsed Time: {} seconds")


def _pinn(final: str) -> list[str]:
    lines = ["Using device: cuda", "Number of total random points: 10100"]
    for k, at in enumerate(("29.49", "60.12", "103.62", "146.65", "192.46"), start=1):
        lines += [f"{_BAR}Iteration: {1000 * k}{_BAR}",
                  f"Loss: 2.6e-02 Loss_u: 4.9e-03 Loss_v: 1.1e-02 L2: 1.0{k}e+00",
                  _MEM.format(at)]
        if k == 2:
            lines += ["=" * 49 + "Adam Final" + "=" * 49, _MEM.format(final),
                      "Adam Optimization Phase: 2000 iterations completed"]
    return lines


def test_a_cumulative_time_among_memory_readings_times_the_iterations() -> None:
    doc = read(_pinn("60.12"))
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (1000, 5000)
    # 30.63, 43.03 and 45.81 s over 1000 iterations each; the window holding the phase summary
    # (2000 to 3000) is kept out of the statistics as a window with other work in it
    median = median_s(doc)
    assert median is not None and abs(median - 43.03 / 1000) < 1e-6


def test_a_phase_summary_repeating_the_clock_shifts_no_time() -> None:
    # the summary's 60.12 is the clock iteration 2000 already holds; a later clock (61.0 s, a
    # step's work after it) would be the next record's, so the two differ
    repeated, later = median_s(read(_pinn("60.12"))), median_s(read(_pinn("61.0")))
    assert repeated is not None and later is not None and repeated != later


def test_a_timing_line_of_many_values_besides_sizes_is_not_read() -> None:
    # negative: four values that are not sizes make a metrics line, not a timing line
    lines = [ln.replace("CPU: 946.27 MB", "Acc: 0.946").replace("GPU Allocated: 19.18 MB",
                                                              "F1: 0.19")
             .replace("GPU Reserved: 326.00 MB", "IoU: 0.32") for ln in _pinn("60.12")]
    assert median_s(read(lines)) is None
