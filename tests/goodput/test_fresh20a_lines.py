"""Lines of the fresh20 first-contact batch (fixer A), each with a negative that must not be read
that way: a time left that no word names as one (X20)."""

from __future__ import annotations

from tests.goodput.batch_lines import case as batch_case
from tests.goodput.batch_lines import read


def case(name: str) -> list[str]:
    return batch_case("fresh20", name)


# -- CIRKD: `Iters: 19860/20000 || … || Estimated Time: 0:02:01`, 0:00:00 at N (fresh20 X20) -------
def test_a_duration_counting_down_to_n_is_time_left_not_the_window() -> None:
    # `Estimated Time` falls with the steps left and reads 0:00:00 at 20000/20000: the time
    # left; the step time is the stamps' (median 0.8106 s an iteration), not 121 s / 10
    doc = read(case("X20"))
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (19860, 20000)
    assert 0.80 <= doc["step_time_s"]["median"] <= 0.82


def _cirkd(took: list[int]) -> list[str]:
    out = []
    for k, secs in enumerate(took):
        n = 19860 + 10 * k
        out.append(f"2023-10-03 03:{10 + 2 * k:02d}:00,000 INFO: Iters: {n}/20000 || Lr: 0.0002 "
                   f"|| Loss: 7.1 || Cost Time: 4:{10 + 2 * k:02d}:00 || Estimated Time: "
                   f"0:00:{secs:02d}")
    return out


def test_a_shrinking_window_time_far_from_its_n_stays_a_time() -> None:
    # negative: a duration that shrinks a little each line (a warm-up's 59, 58, 57 s) while the
    # steps left barely move does not fall with them: it is no time left, and stays the window's
    # (5.8 s an iteration, not the 12 s of the records two minutes apart)
    assert 5.6 <= read(_cirkd([59, 58, 57, 58, 57, 56]))["step_time_s"]["median"] <= 6.0


# -- GaitSet: a bare `0:05:05.583864` every 1000 iterations, records every 100 (fresh20 X08) ------
def test_a_bare_duration_printed_once_per_many_records_times_their_steps() -> None:
    # the duration is `datetime.now() - _time1` over the 1000 iterations since the last one: 0.3056
    # s an iteration, given to each record it covers, not 305.6 s a record
    doc = read(case("X08"))
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (78000, 80000)
    assert 0.303 <= doc["step_time_s"]["median"] <= 0.308
    assert 630 <= doc["span_s"] <= 650  # 21 records of 100 iterations


def _gait(every: int) -> list[str]:
    out = []
    for k in range(30):
        if k % every == 0:
            out.append(f"0:00:0{every % 10}.{5 + k % 2}00000")
        out.append(f"iter {1000 + k}:, hard_loss_metric=0.17{k:02d}, lr=0.000100")
    return out


def test_a_bare_duration_after_each_record_stays_its_step_time() -> None:
    # negative: printed before every record (one step each), the duration is that step's own
    assert read(_gait(1))["step_time_s"]["median"] == 1.55
    # printed once per 5 records of one step: the 5 steps' time, 5.5 or 5.6 s / 5
    assert 1.1 <= read(_gait(5))["step_time_s"]["median"] <= 1.12


# -- StarGAN-VC: `Time Elapsed for This Epoch: 00:02:46` after each 146th iteration (fresh20 X12) -
def test_an_epoch_time_on_its_own_line_times_the_epochs_steps_and_a_save_window_none() -> None:
    # 166 s over the 146 iterations between two such lines: 1.137 s; the next epoch's 187 s held
    # the test block and `save model: ./out/…/model` and is no step time; the save line (a
    # path) no longer swallows the epoch time under it
    doc = read(case("X12"))
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (1442, 1618)
    assert 1.13 <= doc["step_time_s"]["median"] <= 1.14
    assert [s["step"] for s in doc["checkpoint_saves"]] == [1605]
    # the held epoch stays on the clock; the 13 iterations after the save, which no epoch line
    # times, run at the last clean epoch's pace and are uncommitted: goodput below 1
    assert 14 <= doc["goodput"]["uncommitted_gpu_s"] <= 15.5
    assert 0.8 <= doc["goodput"]["goodput"] < 0.95


def _stargan(save: bool) -> list[str]:
    out = []
    for epoch in range(3):
        for k in range(10):
            out.append(f"Iteration: {epoch * 10 + k + 1:07d}, Generator Loss : 0.8{k}")
        if save and epoch == 1:
            out += ["============save model============", "save model: ./out/2_2019/model"]
        out.append(f"Time Elapsed for This Epoch: 00:00:{20 + 10 * epoch}")
    return out


def test_epoch_times_without_other_work_all_time_their_steps() -> None:
    # negative: with no save inside, every epoch's time counts (2, 3 and 4 s an iteration); with
    # the save, the second epoch's is left out
    assert read(_stargan(save=False))["step_time_s"]["median"] == 3.0
    assert read(_stargan(save=True))["step_time_s"]["median"] == 3.0
    assert read(_stargan(save=True))["step_time_s"]["count"] < read(
        _stargan(save=False))["step_time_s"]["count"]


def test_a_path_inside_a_block_of_metrics_still_joins_it() -> None:
    # negative of the path rule: only a block's first line naming a file stands alone; a path
    # among indented metrics is one of them
    lines = ["Result for run_1:", "  loss: 0.5", "  logdir: /tmp/run_1/ckpt", "  step: 3",
             "Result for run_1:", "  loss: 0.4", "  logdir: /tmp/run_1/ckpt", "  step: 4"]
    assert (read(lines)["steps"]["first"], read(lines)["steps"]["last"]) == (3, 4)


# -- Neural-Spectral-Codec: `Epoch 1/50 | Loss: … | Time: 13635.27s` after `Batch 2910/2911` (X04)
def test_an_epoch_summary_time_over_the_per_epoch_counters_n() -> None:
    # the epoch's 13635.27 s over its 2911 batches: 4.684 s a batch, an epoch's mean
    doc = read(case("X04"))
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (2800, 2910)
    assert 4.68 <= doc["step_time_s"]["median"] <= 4.69


def test_an_epoch_summary_after_a_counter_with_no_n_gives_no_step_time() -> None:
    # negative: `Batch 2800` with no N and one summary: the epoch's steps are not known, so no
    # step time is made up
    lines = [f"Epoch 1 | Batch {n} | Loss: 0.1" for n in range(2800, 2920, 10)]
    lines += ["Epoch 1/50 | Loss: 0.9787 | Time: 13635.27s", "Saved checkpoint: ckpt/best.pth"]
    assert read(lines)["step_time_s"]["median"] is None


# -- STTN: a \r-drawn tqdm bar to `20000/20000`, then `20001it [12:17:02,  3.35s/it]` (X06) ----
def test_a_bar_past_its_total_counts_on_and_a_late_seen_bar_is_timed_by_spans() -> None:
    # past its total tqdm draws `20001it [elapsed, rate]`, redrawn at that n while its clock
    # runs: the step 20001, after the save (which the bar going on shows returned); the bar was
    # begun 11.5 h before the excerpt, so its whole-second clock over 20 s spans times the
    # excerpt's steps (2.0-2.1 s), not the mean since it began (2.21 s) nor one stall (91 s)
    doc = read(case("X06"))
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (18767, 20001)
    assert 1.98 <= doc["step_time_s"]["median"] <= 2.12
    assert [s["step"] for s in doc["checkpoint_saves"]] == [20000]


def _tqdm(start: int) -> list[str]:
    out = []
    for n in range(1, 101):
        e = start + (n // 5 if n <= 50 else 10 + 3 * (n - 50) // 5)
        out.append(f"d: -0.001;gen: -0.008:  {n}%|#####| {n}/100 [{e // 3600:02d}:"
                   f"{e % 3600 // 60:02d}:{e % 60:02d}<00:10,  2.00s/it]")
    return out


def test_a_bar_seen_from_its_start_keeps_its_mean_since_it_began() -> None:
    # negative: the same dense bar drawn from 1/100 at 00:00 is read by its mean since it began
    # (40 s / 100 at the end), as before; first seen at step 31 of a bar begun 11 h earlier, by
    # its spans (0.6 s a step late on)
    assert read(_tqdm(0))["step_time_s"]["median"] == 0.4
    assert 0.55 <= read(_tqdm(40000)[30:])["step_time_s"]["median"] <= 0.65


def test_a_count_with_no_total_whose_clock_stands_is_no_counter() -> None:
    # negative: `120it [00:05, …]` printed three times with the same clock, lines apart, is no
    # bar being redrawn: no step is read from it
    lines = []
    for k in range(3):
        lines += ["cache: : 120it [00:05,  24.00it/s]", f"loading shard {k}"]
    assert read(lines)["steps"]["last"] is None


# -- Ray Tune: `| DQN_shogi_96499_00000 | RUNNING | 10.0.0.177:612604 |    317 | 395.588 | …` (X18)
def test_a_bordered_trial_table_row_with_words_gives_its_named_numbers() -> None:
    # the trial table's `iter` column (317, 321, 325) is the step, its `total time (s)` the
    # trial's clock: (406.391 - 395.588) / 8 = 1.350 s an iteration; its borders, drawn to the
    # table's width, are no terminal wrap; the clock's 395.588 s on the first row are the trial's
    # time before the log, not accounted
    doc = read(case("X18"))
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (317, 325)
    assert 1.34 <= doc["step_time_s"]["median"] <= 1.36
    assert doc["span_s"] is None or doc["span_s"] < 20


_RULE = "+" + "-" * 30 + "+" + "-" * 12 + "+" + "-" * 12 + "+" + "-" * 12 + "+"


def _table(rows: list[list[str]]) -> list[str]:
    out = []
    for row in rows:
        out += ["== Status ==", _RULE, "| " + " | ".join(
            f"{c:>{w}}" for c, w in zip(["Trial name", "iter", "total time (s)", "ts"],
                                        [28, 10, 14, 10], strict=True)) + " |", _RULE,
                "| " + " | ".join(f"{c:>{w}}" for c, w in zip(row, [28, 10, 14, 10],
                                                             strict=True)) + " |", _RULE, ""]
    return out


def test_a_bordered_row_of_mostly_words_is_no_record() -> None:
    # negative: numbers in most cells make the row a record; a row of words with one or two
    # numbers (a model summary's `| conv1 | Conv2d | 1728 |`) does not
    rows = [["PPO_cartpole_00000", str(10 + k), f"{20.5 + 2 * k:.3f}", str(4000 * k)]
            for k in range(4)]
    assert (read(_table(rows))["steps"]["first"], read(_table(rows))["steps"]["last"]) == (10, 13)
    words = [["PPO_cartpole_00000", "RUNNING", "host", str(10 + k)] for k in range(4)]
    assert read(_table(words))["steps"]["last"] is None


def test_a_date_or_a_clock_since_the_start_on_its_own_line_is_no_window() -> None:
    # negatives: gpustat's `host Sun Oct 16 09:35:18 2022 470.01` between records 150 apart is
    # a date, not 150 steps' time; LightGBM's `2.43 seconds elapsed` a clock since the start
    lines = []
    for k in range(6):
        if k % 2 == 0:
            lines.append(f"c2613.crane.hcc.unl.edu Sun Oct 16 09:3{k}:18 2022 470.01")
        lines.append(f"epoch: 22/120, acc_iter={5963 + 75 * k}, loss=1.{k}, lr=0.003")
    assert read(lines)["step_time_s"]["median"] is None
    lines = []
    for k in range(6):
        if k % 2 == 0:
            lines.append(f"Time elapsed: {100 + 30 * k}.5 s")
        lines.append(f"iter {1000 + 50 * k}: loss=1.{k}")
    assert read(lines)["step_time_s"]["median"] == 0.6  # its rise, 60 s over 100 iterations
