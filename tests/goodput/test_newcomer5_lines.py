"""Lines newcomer evaluation #5 (/work/wt/newcomer5_findings.md) showed misread, each on the
newcomer's real lines (sources in /work/wt/newcomer5_inputs/SOURCES.md) with a negative beside
it: a counter that goes on across the epoch is job-wide already (#2)."""

from __future__ import annotations

from gpuslo.goodput.logs import load_profiles
from gpuslo.goodput.logs.assemble import assemble
from gpuslo.goodput.logs.reader import parse_lines

PROFILES = load_profiles()


def read(lines: list[str], gpus: int = 8) -> dict:
    parsed = parse_lines(lines, PROFILES)
    return assemble(parsed, job="t", gpus=gpus, checkpoint_step=PROFILES.checkpoint_step).document


def _range(doc: dict) -> tuple:
    s = doc["steps"]
    return s["first"], s["last"], s["global_last"]


# -- #2: PaddleOCR's `iter:` is its global_step: it goes on across the epoch -------------------
# PaddlePaddle/PaddleOCR#2299 (2021-03-20), the cut last line completed only to `lr:` as stored
PADDLE = [
    f"[2021/03/20 11:54:{t}] root INFO: epoch: [4/10], iter: {n}, lr: 0.000820, loss: 0.973238, "
    f"acc: 0.531250, reader_cost: 0.00007 s, batch_cost: {c} s, samples: 256, ips: 5322.24591"
    for t, n, c in [(28, 29, "0.04810"), (28, 30, "0.04601"), (47, 31, "18.44550"),
                    (47, 32, "0.04537"), (47, 33, "0.04418"), (47, 34, "0.04378")]
] + [
    "[2021/03/20 11:54:47] root INFO: save model in ./output/cls/zt2mv3/latest",
    "[2021/03/20 11:54:47] root INFO: save model in ./output/cls/zt2mv3/iter_epoch_4",
    "[2021/03/20 11:54:47] root INFO: Initialize indexs of datasets:['./train_data/ztcls/"
    "train.txt']",
    "[2021/03/20 11:56:58] root INFO: epoch: [5/10], iter: 35, lr:",
]


def test_a_counter_that_goes_on_where_the_epoch_rises_is_job_wide_as_printed() -> None:
    # epoch 4 ends at iter 34 and epoch 5 opens at 35: no reset, so 35 is the job's step 35
    # (it was 34 + 1 stride + 35 = 70, a job-wide count built a second time)
    assert _range(read(PADDLE)) == (29, 35, 35)


def test_a_counter_that_resets_at_one_epoch_rise_stays_per_epoch() -> None:
    # negative: the same shape, the counter back at 0 where epoch 6 begins: per-epoch, so the
    # count goes on across the epochs (34 + 1 + 0 ... by the usual stride), never a restart
    lines = PADDLE[:6] + [
        "[2021/03/20 11:56:58] root INFO: epoch: [5/10], iter: 35, lr: 0.000700, loss: 0.8",
        "[2021/03/20 11:57:58] root INFO: epoch: [6/10], iter: 0, lr: 0.000700, loss: 0.8",
        "[2021/03/20 11:57:59] root INFO: epoch: [6/10], iter: 1, lr: 0.000700, loss: 0.8",
    ]
    doc = read(lines)
    assert doc["steps"]["global_last"] > 35 and not doc["restarts"]
