"""An in-epoch counter seen within ONE epoch is read as printed; its job-wide count is built only
where the log needs or proves it (issue 23; gpuslo/goodput/logs/epochs.py). Real lines of the
first-contact cases, each with a negative beside it."""

from __future__ import annotations

from gpuslo.goodput.logs.epochs import named_steps, printed_scale
from gpuslo.goodput.logs.reader import parse_lines
from tests.goodput.test_log_classes import PROFILES, read, steps

MMDET2 = [  # dev B03 (mmdet 2.x, Colab): epoch 2 of a 267-iteration epoch
    "2023-02-12 11:49:11,173 - mmdet - INFO - Epoch [2][100/267]\tlr: 6.417e-06, eta: 12:32:37, "
    "time: 0.836, data_time: 0.005, memory: 5608, det_loss: 1334603.5056, off_loss: 0.2475",
    "2023-02-12 11:49:52,996 - mmdet - INFO - Epoch [2][150/267]\tlr: 6.937e-06, eta: 12:34:49, "
    "time: 0.836, data_time: 0.006, memory: 5608, det_loss: 1973109.4505, off_loss: 0.3420",
    "2023-02-12 11:50:34,861 - mmdet - INFO - Epoch [2][200/267]\tlr: 7.458e-06, eta: 12:36:28, "
    "time: 0.837, data_time: 0.006, memory: 5608, det_loss: 1596720.5911, off_loss: 0.1624",
    "2023-02-12 11:51:16,618 - mmdet - INFO - Epoch [2][250/267]\tlr: 7.813e-06, eta: 12:37:28, "
    "time: 0.835, data_time: 0.006, memory: 5608, det_loss: 1708596.8641, off_loss: 0.1886",
]

PADDLECLAS = [  # fresh3 E13: PaddleClas counts epochs from 1, its iters from 0
    f"[2024/07/31 20:24:{s}] ppcls INFO: [Train][Epoch 24/120][Iter: {n}/304]lr(PiecewiseDecay): "
    f"0.00100000, top1: 1.00000, CELoss: 0.01757, loss: 0.01757, batch_cost: {c}s, reader_cost: "
    f"0.12493, ips: 26.10981 samples/s, eta: 5:01:10"
    for s, n, c in (("32", 0, "0.61280"), ("38", 10, "0.62808"), ("44", 20, "0.62088"))]

MMENGINE_RESUMED = [  # fresh C16 (MMEngine 0.7, mmdetection3d): auto-resumed at epoch 81
    "05/25 13:45:52 - mmengine - INFO - Auto resumed from the latest checkpoint "
    "/home/user/code/mmdetection3d/work_dirs/3dssd_megvii-3d-car/epoch_81.pth.",
    "05/25 13:45:52 - mmengine - INFO - Load checkpoint from "
    "/home/user/code/mmdetection3d/work_dirs/3dssd_megvii-3d-car/epoch_81.pth",
    "05/25 13:45:52 - mmengine - INFO - resumed epoch: 81, iter: 6966",
    "05/25 13:46:44 - mmengine - INFO - Exp name: 3dssd_megvii-3d-car_20230525_134521",
    "05/25 13:46:54 - mmengine - INFO - Epoch(train)  [82][50/86]  lr: 2.0000e-05  eta: 2:53:33  "
    "time: 1.2303  data_time: 0.6377  memory: 18906  grad_norm: 71.2818  loss: 24.2896",
]


def test_an_in_epoch_counter_within_one_epoch_is_read_as_printed() -> None:
    assert steps(read(MMDET2)) == (100, 250)  # not 1 × 267 + n: the epoch base is a guess
    assert steps(read(PADDLECLAS)) == (0, 20)  # not 23 × 304 + n (E13: from 1, not 0)


def test_records_that_cross_an_epoch_still_give_the_job_wide_count() -> None:
    # negative: hand-varied next epoch of B03's run; the counter resets, so the step is
    # (epoch - 1) × 267 + n on both sides of the boundary
    crossed = MMDET2 + [MMDET2[0].replace("Epoch [2][100/267]", "Epoch [3][50/267]")
                        .replace("11:49:11", "11:53:30")]
    assert steps(read(crossed)) == (267 + 100, 2 * 267 + 50)


def test_a_restore_naming_epoch_and_iter_keeps_the_job_wide_count() -> None:
    # MMEngine's `resumed epoch: 81, iter: 6966` is on the job-wide scale (81 × 86): the
    # progress lines up with it, 81 × 86 + 50
    doc = read(MMENGINE_RESUMED)
    assert steps(doc) == (7016, 7016)
    assert named_steps(parse_lines(MMENGINE_RESUMED, PROFILES).observations) == [(6966, True)]


def test_a_restore_naming_only_its_file_leaves_the_printed_counter() -> None:
    # negative: without the `resumed epoch: …, iter: …` line nothing names a job-wide step
    lines = [line for line in MMENGINE_RESUMED if "resumed epoch" not in line]
    assert steps(read(lines)) == (50, 50)


def test_the_scale_rule() -> None:
    one = [(2, 267)] * 3
    assert printed_scale(one, [])
    assert printed_scale(one, [(200, False)])  # a step within N: on the counter's own scale
    assert not printed_scale(one, [(600, False)])  # above N: job-wide
    assert not printed_scale(one, [(100, True)])  # beside its epoch: job-wide
    assert not printed_scale([(2, 267), (3, 267)], [])  # two epochs
    assert not printed_scale([], [])  # no per-epoch counter: nothing to decide
