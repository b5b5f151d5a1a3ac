"""Lines of the fresh19 first-contact batch (fixer W1), each with a negative that must not be read
that way: an iteration counter glued after a samples bracket `[n/N (p%)]` (W13)."""

from __future__ import annotations

from gpuslo.goodput.logs.notprogress import NOT_PROGRESS_HEAD
from tests.goodput.batch_lines import case as batch_case
from tests.goodput.batch_lines import read


def case(name: str) -> list[str]:
    return batch_case("fresh19", name)


# -- CosFace_pytorch: `[51200/490871 (10%)]100`, samples then the iteration (fresh19 W13) ----------
def test_the_iteration_glued_after_a_samples_bracket_is_the_step() -> None:
    # the bracket counts samples (512 a batch), the integer after `]` the iterations; the
    # `Elapsed time: 198.7967s(100 iters)` is the window's, 1.92 s an iteration
    doc = read(case("W13"))
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (100, 900)
    assert 1.90 <= doc["step_time_s"]["median"] <= 1.93


def _mnist(glued: bool) -> list[str]:
    out = []
    for k in range(1, 8):
        n = 640 * k
        tail = str(10 * k) if glued else ""
        out.append(f"2019-09-19 14:{10 + k}:00 Train Epoch: 1 [{n}/60000 ({100 * n / 60000:.0f}%)]"
                   f"{tail}\tLoss: 0.{300 - k}")
    return out


def test_a_samples_bracket_alone_keeps_its_own_counter() -> None:
    # negative: the PyTorch MNIST example's bracket with nothing glued after it is read as before
    assert read(_mnist(glued=False))["steps"]["last"] == 4480
    assert read(_mnist(glued=True))["steps"]["last"] == 70


# -- Lightning's bar (smoothing=0): `5/28 [00:02<00:12,  1.91it/s]` (fresh19 W06) ---------------
def test_a_bar_rate_inside_its_short_whole_second_clock_is_the_mean() -> None:
    # 5 steps at 1.91 it/s is 2.6 s, inside the truncated `00:02`: the rate, 0.524 s, is finer
    # than 2 / 5 = 0.4
    assert read(case("W06"))["step_time_s"]["median"] == 0.52356


def _bar(elapsed: str, rate: str) -> list[str]:
    return [f"Epoch 0:  18%|██████▉      | 5/28 [{elapsed}<00:12, {rate}it/s, v_num=1, loss=3.6]"]


def test_a_bar_rate_outside_its_clock_leaves_the_mean() -> None:
    # negative: 5 steps at 4.00 it/s is 1.25 s, not inside `00:02`: an EMA of other steps, the
    # bar's mean since it began (2 / 5) stays
    assert read(_bar("00:02", "4.00"))["step_time_s"]["median"] == 0.4
    assert read(_bar("00:02", "1.91"))["step_time_s"]["median"] == 0.52356


# -- Lightning's validation bar, its head overwritten: `index created!aLoader 0: : 2342it` (W12) -
def test_a_loader_bar_with_its_index_is_an_evaluation_not_a_restart() -> None:
    # the training bar `Epoch 0: : 144434it` is the step; `…aLoader 0: : 2342it [03:33, …]` is
    # `Validation DataLoader 0` overprinted: no restart from 2342
    doc = read(case("W12"))
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (248, 144434)
    assert doc["restarts"] == []
    assert 0.2135 <= doc["step_time_s"]["median"] <= 0.2145


def _bars(label: str, start: int) -> list[str]:
    return [f"{label}: : {start + n}it [{m:02d}:{s:02d},  4.02it/s, loss=1.{n % 7}]"
            for n, (m, s) in ((250, (1, 2)), (500, (2, 4)), (750, (3, 6)), (1000, (4, 8)))]


def test_a_loader_word_without_an_index_stays_progress() -> None:
    # negative: `loader` with no index after it (a `train_loader` name, a `dataloader` word) says
    # nothing; with its index, the bar is an evaluation's and leaves the training bar's steps
    assert NOT_PROGRESS_HEAD.search("train_loader: : \x01it") is None
    assert NOT_PROGRESS_HEAD.search("Epoch \x01 dataloader workers") is None
    assert NOT_PROGRESS_HEAD.search("Validation DataLoader \x01: : ") is not None
    lines = _bars("Epoch 0", 0) + _bars("Validation DataLoader 0", -240)
    assert read(lines)["steps"]["last"] == 1000
    assert read(lines)["restarts"] == []


# -- a CSV file, Lightning's CSVLogger metrics.csv: a header then rows of numbers (W04) ------------
def test_a_csv_header_names_the_cells_of_its_rows() -> None:
    # `epoch,lr,train_loss,…,step`, then `0.0,0.0005…,415951.59375,…,8239`: the step column
    doc = read(case("W04"))
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (8239, 65919)
    assert doc["step_time_s"]["median"] is None  # no clock in the file


def test_comma_lists_that_are_no_table_stay_text() -> None:
    # negative: a header of two names is no table; a row whose cells are not numbers is no row;
    # an empty cell (Lightning writes one per metric not logged at that step) is left out
    two = ["step,loss"] + [f"{100 * k},{1.0 / k:.3f}" for k in range(1, 6)]
    assert read(two)["steps"]["last"] is None
    words = ["epoch,lr,step"] + [f"a{k},b,c" for k in range(1, 6)]
    assert read(words)["steps"]["last"] is None
    gaps = ["epoch,lr,val_loss,step"] + [f"0,0.1,,{100 * k}" for k in range(1, 6)]
    assert read(gaps)["steps"]["last"] == 500
