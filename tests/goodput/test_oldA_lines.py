"""Line kinds the older first-contact halves (dev to fresh10, issue 23) showed missing, each read
on a case's real lines and on a negative beside it: ESPnet2's reporter lines (dev B25,
espnet/espnet#2675, espnet2/train/trainer.py): a count noun glued after its integer names it
(`1epoch`, `6376-6750batch`), a per-window mean that rounding moves by one printed digit is no
clock, the duration that covers the sum of a line's other timed parts is the whole step, and
`The best model has been updated` ends a save; WeNet's `Batch {epoch}/{batch_idx}`, whose first
number holds while the second rises, is epoch and counter, no `n/N` (fresh C23); a time per
step printed as the mean since the epoch began is undone into each window's (fresh C14).
"""

from __future__ import annotations

from gpuslo.goodput.logs import load_profiles
from gpuslo.goodput.logs.assemble import assemble
from gpuslo.goodput.logs.heldpair import held_pair
from gpuslo.goodput.logs.partsum import sum_of_parts
from gpuslo.goodput.logs.reader import parse_lines
from gpuslo.goodput.logs.reading import Role
from gpuslo.goodput.logs.templates import Field
from gpuslo.goodput.logs.tokens import values

PROFILES = load_profiles()


def read(lines: list[str]) -> dict:
    parsed = parse_lines(lines, PROFILES)
    return assemble(parsed, job="t", gpus=1, checkpoint_step=PROFILES.checkpoint_step).document


# -- ESPnet2 LM training (espnet/espnet#2675, 2020-11-11; dev B25), verbatim ---------------------
_P = "[PC] 2020-11-11 16:30:"
_PARTS = ("iter_time=0.001, forward_time=0.005, loss={loss}, backward_time=0.005, "
          "optim_step_time={optim}, lr_0=0.100, train_time={train}")
ESPNET2 = [
    _P + "04,578 (trainer:486) INFO: 1epoch:train:6376-6750batch: "
    + _PARTS.format(loss="2.386", optim="1.949e-04", train="0.013"),
    _P + "09,675 (trainer:486) INFO: 1epoch:train:6751-7125batch: "
    + _PARTS.format(loss="2.367", optim="1.953e-04", train="0.013"),
    _P + "14,840 (trainer:486) INFO: 1epoch:train:7126-7500batch: "
    + _PARTS.format(loss="2.339", optim="1.963e-04", train="0.014"),
    _P + "18,406 (trainer:243) INFO: 1epoch results: [train] iter_time=0.001, forward_time=0.005, "
    "loss=2.853, backward_time=0.005, optim_step_time=1.974e-04, lr_0=0.100, train_time=0.013, "
    "time=1 minute and 42.6 seconds, total_count=7507, [valid] loss=2.387, time=3 seconds, "
    "total_count=240, [att_plot] time=0.28 seconds, total_count=0",
    _P + "18,969 (trainer:286) INFO: The best model has been updated: valid.loss",
    _P + "18,969 (trainer:184) INFO: 2/20epoch started. Estimated time to finish: 33 minutes and "
    "42.59 seconds",
    _P + "24,312 (trainer:486) INFO: 2epoch:train:1-375batch: "
    + _PARTS.format(loss="2.313", optim="2.000e-04", train="0.014"),
]


def test_a_count_noun_glued_after_its_integer_names_it() -> None:
    found = values("1epoch:train:6376-6750batch: iter_time=0.001")
    assert [(v.number, v.key) for v in found[:3]] == [(1, "epoch"), (6376, "train"),
                                                      (6750, "batch")]


def test_a_fraction_or_another_noun_glued_after_a_number_names_nothing() -> None:
    # negative: `0.5epoch` is no count, `256tokens` no count noun: the words before name them
    found = values("warmup 0.5epoch, seq 256tokens")
    assert [v.key for v in found] == ["warmup", "seq"]


def test_espnet2_windows_are_read_as_steps_with_their_train_time() -> None:
    doc = read(ESPNET2)
    assert doc["steps"]["first"] == 6750
    assert (doc["steps"]["epoch_first"], doc["steps"]["epoch_last"]) == (1, 2)
    assert abs(doc["step_time_s"]["median"] - 0.0135) < 1e-9


def test_a_window_time_below_the_sum_of_its_parts_is_not_the_whole() -> None:
    # negative: a `train_time` under the sum of the other parts (0.0112 s) times no whole step;
    # the duration named per step (`iter_time`) stays the step time
    lines = [line.replace("train_time=0.01", "train_time=0.00") for line in ESPNET2]
    assert read(lines)["step_time_s"]["median"] == 0.001


def test_a_value_rounding_moves_by_one_digit_is_no_clock() -> None:
    steady = Field(0, "num", "train_time", "", "", [0.013, 0.013, 0.014, 0.014], integer=False)
    assert steady.one_digit_apart()


def test_a_clock_that_rises_on_every_record_stays_a_clock() -> None:
    # negative: a time rising on every record, or over more than one printed digit, is cumulative
    rising = Field(0, "num", "t", "", "", [0.013, 0.014, 0.015, 0.016], integer=False)
    wide = Field(0, "num", "t", "", "", [0.013, 0.013, 0.015, 0.015], integer=False)
    assert not rising.one_digit_apart() and not wide.one_digit_apart()


def test_a_clock_printed_whole_stays_a_clock() -> None:
    # negative: tianshou's epoch bars (fresh7 J05) print their elapsed whole, `00:05`, `00:04`
    whole = Field(0, "num", "", "", "", [5.0, 4.0, 5.0, 5.0], integer=True)
    assert not whole.one_digit_apart()


# -- scepter (modelscope/scepter#48, 2024-10-06; holdout A30), verbatim --------------------------
SCEPTER = [
    "scepter [INFO] 2024-10-06 20:19:51,817 [File: log.py Function: _print_iter_log at line 71]  "
    f"Stage [train] iter: [10/500], data_time: {data}({data}), time: {time}({time}), loss: "
    "0.0978(0.0978), nvidia-smi: 9885.4000(9885.4000), pg0_lr: 0.000100, scale: 65536.000000, "
    f"[35secs 2.00%(29mins {left}secs)]"
    for data, time, left in (("1.0402", "1.4696", 15), ("1.0282", "1.4694", 16),
                             ("1.0281", "1.4692", 17))]


def test_a_duration_not_named_as_a_time_is_no_whole_of_the_parts() -> None:
    # negative: the bar's time left (`29mins 15secs`) covers every part, but is no named time
    assert read(SCEPTER)["step_time_s"]["median"] == 1.4696


def test_sum_of_parts_needs_three_parts_besides_the_whole() -> None:
    # negative: a step time and its data wait alone are two readings, not parts and a whole
    fields = [Field(0, "num", "time", "", "", [0.5, 0.5], integer=False),
              Field(1, "num", "data", "", "", [0.1, 0.1], integer=False)]
    roles = {0: Role("step_s"), 1: Role("step_s")}
    assert sum_of_parts(fields, roles) is None


def test_the_best_model_updated_ends_a_save() -> None:
    saves = read(ESPNET2)["checkpoint_saves"]
    assert len(saves) == 1 and saves[0]["line"] == 5


def test_a_model_updated_with_no_best_is_no_save() -> None:
    # negative: a weight update of a target network is no file written
    lines = [ESPNET2[i] for i in (0, 1, 2)] + [
        _P + "18,969 (trainer:286) INFO: The target model has been updated: step 7500",
        ESPNET2[6]]
    assert read(lines)["checkpoint_saves"] == []


# -- WeNet, DDP with 4 ranks (wenet-e2e/wenet#941, 2023-01-30; fresh C23), verbatim -------------
WENET = [
    "2023-01-30 18:47:07,107 DEBUG TRAIN Batch 4/203700 loss 12.646465 loss_att 10.921429 "
    "loss_ctc 16.671551 lr 0.00032621 rank 0",
    "2023-01-30 18:47:16,614 DEBUG TRAIN Batch 4/203700 loss 16.885244 loss_att 13.554604 "
    "loss_ctc 24.656742 lr 0.00032621 rank 1",
    "2023-01-30 18:47:22,712 DEBUG TRAIN Batch 4/203700 loss 19.729301 loss_att 16.203592 "
    "loss_ctc 27.955961 lr 0.00032621 rank 2",
    "2023-01-30 18:49:20,301 DEBUG TRAIN Batch 4/203800 loss 23.600426 loss_att 18.615641 "
    "loss_ctc 35.231586 lr 0.00032619 rank 2",
    "2023-01-30 18:49:20,315 DEBUG TRAIN Batch 4/203800 loss 18.340179 loss_att 15.005867 "
    "loss_ctc 26.120243 lr 0.00032619 rank 1",
    "2023-01-30 18:49:20,438 DEBUG TRAIN Batch 4/203800 loss 25.618004 loss_att 20.509174 "
    "loss_ctc 37.538609 lr 0.00032619 rank 0",
    "2023-01-30 18:49:55,773 DEBUG CV Batch 4/0 loss 28.517015 loss_att 24.142754 loss_ctc "
    "38.723625 history loss 27.957858 rank 2",
]


def test_a_pair_whose_first_number_holds_while_the_second_rises_is_epoch_and_counter() -> None:
    doc = read(WENET)
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (203700, 203800)
    assert doc["steps"]["epoch_first"] == 4 and doc["restarts"] == []
    assert abs(doc["step_time_s"]["median"] - 1.33194) < 1e-6


def test_an_n_of_n_whose_n_moves_stays_n_of_n() -> None:
    # negative: `Batch 40/965` … with N fixed is n/N, and two loops' opening draws `0/500`,
    # `0/1000` (n never 1 or more) are no epoch/counter pair
    lines = [f"2023-01-30 18:4{i}:07,107 DEBUG TRAIN Batch {10 * (i + 1)}/965 loss 1.{i}"
             for i in range(4)]
    doc = read(lines)
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (10, 40)
    assert held_pair(parse_fields(["Batch 0/500 loss 1.0", "Batch 0/1000 loss 0.9",
                                   "Batch 0/1500 loss 0.8"])) is None


def parse_fields(texts: list[str]) -> list[Field]:
    """The fields of one template over `texts` (the same template each)."""
    found = [values(t) for t in texts]
    return [Field(i, v.kind, v.key, v.unit, v.after, [row[i].number for row in found],
                  integer=all(row[i].integer for row in found)) for i, v in enumerate(found[0])]


# -- ClearerVoice-Studio (modelscope/ClearerVoice-Studio#4, 2024; fresh C14), verbatim ----------
_C14_MEANS = ["2.057", "1.407", "1.191", "1.082", "1.018", "0.975", "0.945", "0.922", "0.905",
              "0.890", "0.879", "0.874", "0.867", "0.860", "0.864", "0.862"]


_C14_LOSSES = ["1.6780", "1.7014", "1.6985", "1.6433", "1.6186", "1.6943", "1.5612", "1.7628",
               "1.7153", "1.6693", "1.6259", "1.7636", "1.7642", "1.7487", "1.5222", "1.5497"]


def clearervoice(means: list[str]) -> list[str]:
    """The case's lines (its `s/batch` figures replaced only where a test says so)."""
    pairs = enumerate(zip(means, _C14_LOSSES, strict=False))
    return [f"Train Epoch: 0/100 Step: {10 * (i + 1)}/965 | {m}s/batch | lr 5.0000e-04 || "
            f"Mask_Loss {loss}" for i, (m, loss) in pairs]


def test_a_mean_since_the_epoch_began_is_undone_into_each_windows_time() -> None:
    doc = read(clearervoice(_C14_MEANS))
    assert abs(doc["step_time_s"]["median"] - 0.765) < 1e-6


def test_a_warm_up_printed_window_by_window_is_kept_as_printed() -> None:
    # negative: times falling fast then settling (each window's own: 1.0, 0.6, 0.4, 0.5, … when
    # undone, a dip and a climb) stay the printed figures
    means = ["2.000", "1.500", "1.200", "1.000", "0.900", "0.850", "0.820", "0.800", "0.790",
             "0.790"]
    assert read(clearervoice(means))["step_time_s"]["median"] == 0.875


# -- getmusic's trainer (microsoft/muzic#126, 2023-05; fresh C15), verbatim -----------------------
GETMUSIC = [
    'train: train: Epoch 35/50 iter 5/9 || | loss: 1.5818 || lr_lr: 3.4137e-05 || data_time: '
    '0.0s | fbward_time: 0.6s | iter_time: 0.6s | iter_avg_time: 0.6s | epoch_time: 03s | '
    'spend_time: 03m:04s | left_time: 01m:14s',
    'time2 is 1685112173.1206985',
    'time2 is 1685112178.1657178',
    'train: train: Epoch 37/50 iter 7/9 || | loss: 1.0043 || lr_lr: 3.6077e-05 || data_time: '
    '0.0s | fbward_time: 0.6s | iter_time: 0.6s | iter_avg_time: 0.6s | epoch_time: 04s | '
    'spend_time: 03m:16s | left_time: 01m:02s',
    'time2 is 1685112183.224697',
    'time2 is 1685112188.282699',
    'time2 is 1685112193.3316987',
    'train: train: Epoch 40/50 iter 0/9 || | loss: 2.4089 || lr_lr: 3.8017e-05 || data_time: '
    '0.0s | fbward_time: 0.6s | iter_time: 0.6s | iter_avg_time: 0.6s | epoch_time: 00s | '
    'spend_time: 03m:27s | left_time: 51s',
    'time2 is 1685112198.3916988',
    'time2 is 1685112203.4246979',
    'train: train: Epoch 42/50 iter 2/9 || | loss: 0.9107 || lr_lr: 3.9957e-05 || data_time: '
    '0.0s | fbward_time: 0.6s | iter_time: 0.6s | iter_avg_time: 0.6s | epoch_time: 01s | '
    'spend_time: 03m:38s | left_time: 39s',
    'time2 is 1685112208.4466984',
    'time2 is 1685112213.481707',
    'train: train: Epoch 44/50 iter 4/9 || | loss: 0.1852 || lr_lr: 4.1897e-05 || data_time: '
    '0.0s | fbward_time: 0.6s | iter_time: 0.6s | iter_avg_time: 0.6s | epoch_time: 02s | '
    'spend_time: 03m:49s | left_time: 28s',
    'time2 is 1685112218.518698',
    'time2 is 1685112223.5316982',
]


def test_a_time_named_after_the_epoch_is_no_whole_of_the_steps_parts() -> None:
    # negative: `epoch_time: 03s` covers `data_time`, `fbward_time` and `iter_time` but times
    # the epoch so far; the step time stays the line's `iter_time` (0.6 s)
    assert read(GETMUSIC)["step_time_s"]["median"] == 0.6
