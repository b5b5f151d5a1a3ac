"""Classes of input the fresh4 first-contact batch of issue 23 showed unread, each read on lines in
the shape of the real ones (other numbers, other names), with a negative beside it: a similar
line that must not be read that way."""

from __future__ import annotations

from gpuslo.goodput.logs.columns import AlignedTable
from gpuslo.goodput.logs.summary import in_tables
from tests.goodput.test_log_classes import read, steps


def median_s(doc: dict) -> float | None:
    return (doc.get("step_time_s") or {}).get("median")


# -- a counter printed first, right-aligned, values named after them (tinygrad's MLPerf loop) ----
def test_a_right_aligned_leading_counter_is_the_step() -> None:
    times = [61.2, 70.4, 5.10, 3.21, 3.25, 3.22, 3.24, 3.23]
    lines = [f"{n:>5} {t:.2f} s run, 10.{n}250 loss, 0.00000000000{n} LR, 812.11 GB used, "
             f" {90000 + n:.2f} GFLOPS" for n, t in enumerate(times, start=1)]
    doc = read(lines)
    assert steps(doc) == (1, 8)
    assert median_s(doc) == 3.245


def test_a_leading_number_that_does_not_rise_is_not_a_step() -> None:
    # negative: the same shape with a count that repeats (a size, a batch of one shape)
    lines = [f"  512 {3.2 + k / 10:.2f} s run, 1.{k}250 loss, 0.001 LR" for k in range(5)]
    assert steps(read(lines)) == (None, None)


# -- model-summary tables: layer rows with parameter counts are no steps ------------------------
PL_SUMMARY = [
    "  | Name      | Type           | Params",
    "---------------------------------------------",
    "0 | encoder   | ResNetEncoder  | 21.3 M",
    "1 | decoder   | UNetDecoder    | 3.2 M ",
    "2 | head      | SegmentHead    | 2.1 K ",
    "3 | criterion | DiceLoss       | 0     ",
    "---------------------------------------------",
    "24.5 M    Trainable params",
    "0         Non-trainable params",
    "24.5 M    Total params",
    "98.012    Total estimated model params size (MB)",
]


def test_a_lightning_model_summary_is_not_progress() -> None:
    doc = read(PL_SUMMARY + ["Restored all states from the checkpoint file at /ckpt/last.ckpt"])
    assert steps(doc) == (None, None)
    assert len(doc["restarts"]) == 1


def test_a_keras_model_summary_table_is_found_and_the_lines_after_it_are_not() -> None:
    lines = ["Model: \"sequential\"",
             "_________________________________________________________________",
             "Layer (type)                 Output Shape              Param #   ",
             "=================================================================",
             "conv2d (Conv2D)              (None, 26, 26, 32)        320       ",
             "dense (Dense)                (None, 10)                1290      ",
             "=================================================================",
             "Total params: 1,610",
             "Trainable params: 1,610",
             "Non-trainable params: 0",
             "_________________________________________________________________",
             "Epoch 1/5"]
    assert in_tables(lines) == set(range(2, 11))
    # negative: a table of scores with no parameter column is not a model summary
    assert in_tables(["Name  Type  Score", "a  b  1", "Total params: 3"]) == set()


# -- Keras's time per counted unit: `829us/sample` (the counter counts samples) -----------------
def test_a_keras_per_sample_time_gives_the_clock_of_a_sample_counter() -> None:
    lines = []
    for e, us in zip(range(12, 17), (712, 745, 698, 730, 741), strict=True):
        lines += [f"Epoch {e}/300", f"640/650 [============================>.] - ETA: 0s - "
                  f"loss: 0.3{e}", f"650/650 [==============================] - 0s {us}us/sample"
                  f" - loss: 0.3{e} - val_loss: 0.4{e}"]
        if e in (13, 16):
            lines.append(f"Epoch 000{e}: val_loss improved from 0.5 to 0.4{e}, saving model to "
                         "out/best.hdf5")
    doc = read(lines)
    assert median_s(doc) == 730e-6
    assert doc["goodput"]["goodput"] is not None


def test_a_samples_per_second_throughput_is_not_a_time_per_sample() -> None:
    # negative: a rate of samples is throughput; the counter's time is not given by it
    lines = [f"650/650 [==============================] - 0s - loss: 0.3{e} - {900 + e} samples/s"
             for e in range(5)]
    assert median_s(read(lines)) is None


# -- a time that barely rises is a smoothed step time, not a clock (Detectron's json_stats) ------
def test_a_time_rising_by_microseconds_is_the_smoothed_step_time() -> None:
    lines = [f'json_stats: {{"eta": "2:10:{50 - k:02d}", "iter": {4000 + 20 * k}, "loss": '
             f'"1.{k}3", "lr": "0.010000", "time": "{0.511210 + k * 0.000004:.6f}"}}'
             for k in range(6)]
    assert abs(median_s(read(lines)) - 0.51122) < 1e-5


def test_a_time_rising_by_seconds_stays_a_clock() -> None:
    # negative: a cumulative time rising by the steps' own time gives the steps' time by deltas
    lines = [f"iter {100 * k} | loss 1.{k} | time {30.0 * k + 12.5:.1f}" for k in range(1, 7)]
    assert median_s(read(lines)) == 0.3


# -- of two clocks, the one named for training (fairseq's `train_wall` beside `wall`) -----------
def test_the_training_clock_is_read_over_the_wall_clock() -> None:
    lines = []
    for k in range(4):
        lines.append(f"| epoch {k + 5:03d} | loss 3.{k} | ups 0 | num_updates {500 * (k + 1)} | "
                     f"wall {1300 * k + 90} | train_wall {1000 * k + 80}")
        lines.append(f"| epoch {k + 5:03d} | valid on 'valid' subset | loss 4.{k} | num_updates "
                     f"{500 * (k + 1)}")
    assert median_s(read(lines)) == 2.0


# -- a drawn bar's time left over its steps left (Keras's ETA) -----------------------------------
def test_a_keras_bar_with_only_an_eta_gives_its_pace() -> None:
    etas = [20, 19, 19, 18, 17]
    lines = [f" {n}/250 [=======================>......] - ETA: {e}s - loss: 1.{n}"
             for n, e in zip(range(200, 205), etas, strict=True)]
    doc = read(lines)
    assert steps(doc) == (200, 204)
    assert abs(median_s(doc) - 19 / 49) < 1e-6  # ETA / steps left: 20/50, 19/49, 19/48, …


def test_an_eta_on_a_line_that_draws_no_bar_gives_no_step_time() -> None:
    # negative: MMCV's eta covers every epoch left, not this epoch's steps
    lines = [f"Epoch [3][{n}/900]\tlr: 1.0e-02, eta: 1 day, 2:{n // 20:02d}:00, loss: 1.2"
             for n in range(100, 200, 20)]
    assert median_s(read(lines)) is None


# -- timing lines set apart: a step's time on a line of its own ----------------------------------
def test_a_block_duration_after_the_iteration_is_its_time() -> None:
    lines = []
    for k, took in enumerate((52.5, 49.0, 50.5, 50.0)):
        lines += [f"Iteration: \t {k}", f"NumTrajs: \t {150 + k}", f"MeanRew: \t -1{k}.5",
                  f"Elapsed time\t {took} seconds", "-----------------"]
    lines.append("Iteration: \t 4")
    doc = read(lines)
    assert steps(doc) == (0, 4)
    assert median_s(doc) == 50.25


def test_a_cumulative_time_under_each_step_line_gives_the_step_time() -> None:
    lines = []
    for k, at in enumerate((100.0, 131.0, 160.0, 190.5)):
        lines += [f"Epoch [2/30], Step [{40 + 10 * k}/500], Loss: 0.3{k}, Gen Loss: 5.{k}",
                  f"Time elasped: {at}"]
    assert median_s(read(lines)) == 3.05  # 31, 29 and 30.5 s over 10 steps


def test_a_named_step_time_in_a_block_is_the_time_of_its_step() -> None:
    lines = ["   | > loss_gen: 2.10000  (2.20000)", "   | > step_time: 0.81200  (0.80100)",
             "   | > loader_time: 0.01000  (0.01200)", " ",
             "  --> STEP: 12/300 -- GLOBAL_STEP: 90012", "   | > loss_gen: 2.30000  (2.21000)"]
    doc = read(lines)
    assert steps(doc) == (90012, 90012)
    assert median_s(doc) == 0.812


def test_a_near_constant_time_on_lines_with_no_counter_is_each_lines_own() -> None:
    # Keras verbose=2 (fresh C28's shape): the epoch's ` - 312s - loss` under each epoch line;
    # the epochs are the steps, each 312 or 313 s, not a clock standing still
    lines = []
    for e, took in zip(range(20, 26), (312, 312, 313, 312, 312, 313), strict=True):
        lines += [f"Epoch {e}/500", f" - {took}s - loss: 1.{e} - val_loss: 1.{e + 3}"]
    doc = read(lines)
    assert median_s(doc) == 312.0 and doc["step_time_s"]["count"] == 6


def test_an_epoch_time_on_its_own_line_is_not_a_step_time() -> None:
    # negative: the epoch's duration set apart is not the time of the step printed above it
    lines = []
    for e in range(3):
        lines += [f"Step [{100 * (e + 1)}], Loss: 0.{e}", f"Epoch time: {300 + e}.5"]
    assert median_s(read(lines)) is None


# -- a table whose header names columns in words, cells cut by position (rich) -------------------
RICH = ["Step (% Done)       Train Iter (time)    ETA (time)           Train Rays / Sec"
        "                           trainer.py:604",
        "-------------------------------------------------------------------------------"
        "----                      trainer.py:554"]


def test_rows_under_a_header_of_words_are_named_by_position() -> None:
    lines = []
    for step, ms, eta in ((1200, "52.310", "1 m, 2 s"), (1300, "50.905", "58 s, 10.250 ms"),
                          (1410, "51.442", "52 s, 3.700 ms")):
        row = f"{step} ({step / 50:.2f}%)"
        lines += RICH + [f"{row:<20}{ms + ' ms':<21}{eta:<21}12.40 M{'':<36}trainer.py:566"]
    doc = read(lines)
    assert steps(doc) == (1200, 1410)
    assert median_s(doc) == 0.051442


def test_cells_off_the_headers_columns_are_not_its_row() -> None:
    # negative: numbers not at the columns' starts (another table, right-aligned) are not named,
    # and the header is forgotten, so the lines after it are not read by it either
    table = AlignedTable()
    assert table.name(RICH[0]) is None and table.name(RICH[1]) is None
    assert table.name("     4090      43.140 ms      39 s      14.86 M") is None
    assert table.header is None
    assert table.name("4090 (81.78%)       43.140 ms            39 s") is None
