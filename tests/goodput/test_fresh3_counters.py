"""Step-counter classes the third fresh batch (fresh3, issue 23) showed missing, each read on real
lines of the case that showed it (tests/data/training_logs/fresh3, sources in SOURCES_e.md),
with a negative beside it: a similar line that must not be read that way."""

from __future__ import annotations

from tests.goodput.test_log_classes import read, steps


def _median(doc: dict) -> float | None:
    return (doc.get("step_time_s") or {}).get("median")


# -- a counter opening the record in brackets: `[n] name=value, …` ------------------------------
CLU = ("I1002 21:48:33.767817 139917864867392 logging_writer.py:35] [1500] steps_per_second="
       "1.773510, train_accuracy=0.4083007872104645, train_learning_rate=1.4866665601730347, "
       "train_loss=2.9806673526763916")  # E09, google/flax#3364


def test_a_bracketed_counter_opening_the_record_is_the_step() -> None:
    # E09: clu's LoggingWriter prints `[step] name=value, …`; three hosts print one record
    lines = [CLU, CLU.replace("767817", "767883"), CLU.replace("767817", "766485"),
             "I1002 21:49:07.393768 140411760846848 train.py:415] eval epoch: 4, loss: 1.8427, "
             "accuracy: 60.84",
             "I1002 21:49:07.394260 139917864867392 logging_writer.py:35] [1560] eval_accuracy="
             "0.6083984375, eval_loss=1.8427281379699707"]
    doc = read(lines)
    assert steps(doc) == (1500, 1560)
    assert abs(_median(doc) - 1 / 1.77351) < 0.03  # within the checker's 5 %


def test_a_padded_bracketed_counter_before_a_rate_is_the_step() -> None:
    # E20 (mahb97/Wake2vec logbook): `[ 510] 9.4s/step (avg last 10)` every 10 steps
    lines = [f"[ {n}] 9.{k}s/step (avg last 10)" for n, k in ((510, 4), (520, 2), (530, 3))]
    doc = read(lines)
    assert steps(doc) == (510, 530)
    assert abs(_median(doc) - 9.3) < 0.01


def test_a_bracketed_tag_with_no_named_values_after_it_is_not_a_counter() -> None:
    # negative: `[SNAP] 550` (E20) and a bracketed number with nothing named after it
    lines = ["[SNAP] 550", "[ 560] done", "[SNAP] 600 (pending...)"]
    assert steps(read(lines)) == (None, None)


# -- `n/N:` glued to its record, and the bar of the same loop -----------------------------------
ZIPNERF = [  # E21, SuLvXiangXin/zipnerf-pytorch#78
    "2023-08-18 15:37:51: Resuming from checkpoint exp/dozer/checkpoints/001000",
    "2023-08-18 15:37:51: Loading states from exp/dozer/checkpoints/001000",
    "2023-08-18 15:37:52: All model weights loaded successfully",
    "2023-08-18 15:37:52: Begin training...",
    "2023-08-18 15:37:54: 1/25000:loss=0.05934,psnr=20.902,lr=3.14e-06 | data=0.05782,"
    "anti=2.2e-05,dist=0.00114,hash=0.00036,4660495 r/s",
    "2023-08-18 15:37:54: Reducer buckets have been rebuilt in this iteration.",
    "Training:   0%|                        | 49/25000 [00:47<6:30:51,  1.06it/s]",
]


def test_a_counter_and_total_closed_by_a_colon_and_its_bar_are_one_loop() -> None:
    doc = read(ZIPNERF)
    assert steps(doc) == (1, 49)
    assert abs(_median(doc) - 0.943) < 0.05


def test_a_numbered_checkpoint_directory_names_the_restored_step() -> None:
    # E21: zipnerf saves `checkpoints/{step:06d}` (Orbax names its step directories alike)
    doc = read(ZIPNERF)
    assert [r["resumed_from_step"] for r in doc["restarts"]] == [1000]
    assert doc["goodput"]["goodput"] is not None


def test_a_bar_of_another_total_does_not_join_a_line_family() -> None:
    # negative: an evaluation-sized bar after the records counts another loop
    lines = ZIPNERF[:-1] + ["Training:   0%|                        | 49/500 [00:47<6:30:51, "
                            " 1.06it/s]"]
    assert steps(read(lines)) == (1, 1)


# -- an unnamed count before its plural noun: `| 0045063 updates |` -----------------------------
FAIRSEQ_LUA = [  # E11, facebookresearch/fairseq-lua#60
    "| epoch 009 | 0046063 updates | words/s    7730| trainloss     3.03 | train ppl     8.14",
    "| epoch 009 | 0047063 updates | words/s    7784| trainloss     2.85 | train ppl     7.21",
    "| epoch 009 | 0048063 updates | words/s    7772| trainloss     2.82 | train ppl     7.05",
    "| epoch 009 | 0049063 updates | words/s    7921| trainloss     2.85 | train ppl     7.23",
]


def test_a_count_followed_by_its_plural_noun_is_the_step() -> None:
    assert steps(read(FAIRSEQ_LUA)) == (46063, 49063)


def test_a_count_before_epoch_updates_is_not_the_global_step() -> None:
    # `0000000 epoch updates` counts the epoch's updates: the global `NNN updates` is the step
    lines = ["| epoch 009 | 0045063 updates | 0000000 epoch updates | path "
             "trainings/fconv/state_last.th7"] + FAIRSEQ_LUA
    assert steps(read(lines)) == (45063, 49063)


def test_a_one_off_count_of_steps_is_a_setting() -> None:
    # negative: a count named once (`training for 1000 updates`) is no counter
    lines = ["| training for 0050000 updates | lr 0.25", "| model fconv, 33 layers"]
    assert steps(read(lines)) == (None, None)


# -- PaddlePaddle's `Pass` is the epoch; its `Cost` is the loss ----------------------------------
PADDLE_V2 = [  # E14, PaddlePaddle/Paddle#5473
    "Pass 0, Batch 0, Cost 2.370898, {'classification_error_evaluator': 0.890625}",
    "." * 99,
    "Pass 0, Batch 100, Cost 2.261713, {'classification_error_evaluator': 0.8359375}",
    "." * 99,
    "Pass 0, Batch 300, Cost 1.898232, {'classification_error_evaluator': 0.7265625}",
    "." * 90,
    "Pass 1, Batch 0, Cost 1.824807, {'classification_error_evaluator': 0.734375}",
    "." * 99,
    "Pass 1, Batch 100, Cost 1.737753, {'classification_error_evaluator': 0.7265625}",
]


def test_a_pass_is_an_epoch_so_batch_0_is_no_restart() -> None:
    doc = read(PADDLE_V2)
    assert doc["restarts"] == []
    assert (doc["steps"]["epoch_first"], doc["steps"]["epoch_last"]) == (0, 1)


def test_a_bare_cost_is_a_loss_not_a_step_time() -> None:
    assert _median(read(PADDLE_V2)) is None


def test_a_batch_cost_is_still_a_step_time() -> None:
    # negative: PaddleClas's qualified `batch_cost: 0.61280s` (E13) is the time of a batch
    lines = [f"[2024/07/31 20:24:{s}] ppcls INFO: [Train][Epoch 24/120][Iter: {n}/304]lr("
             f"PiecewiseDecay): 0.00100000, top1: 1.00000, loss: 0.01757, batch_cost: {c}s, "
             f"reader_cost: 0.12493, ips: 26.10981 samples/s, eta: 5:01:10"
             for s, n, c in (("32", 0, "0.61280"), ("38", 10, "0.62808"), ("44", 20, "0.62088"))]
    assert abs(_median(read(lines)) - 0.62088) < 0.001


# -- an epoch marker printed by a process that prints no step line ------------------------------
COSMOS = [  # E26, nvidia-cosmos/cosmos-reason1#19
    "[cosmos] 2025-06-13 11:28:14,628 - cosmos - INFO - [Controller] Epoch 150 finished.",
    "[rank0]:[cosmos] 2025-06-13 11:28:14,630 - cosmos - INFO - [Rollout] Receive prompt end, "
    "preparing exiting for 1be40e25-5245-49ff-86b7-0380a504452c.",
    "[rank0]:[cosmos] 2025-06-13 11:29:05,978 - cosmos - INFO - Step: 826/4725, Loss: -0.01001, "
    "Learning rate: 2.00000e-06, Iteration time: 80.240s, Completion length: 426, Reward: 1.5",
]


def test_another_processes_epoch_marker_does_not_make_the_counter_per_epoch() -> None:
    doc = read(COSMOS)
    assert steps(doc) == (826, 826)
    assert doc["steps"]["epoch_first"] is None


def test_the_same_processes_epoch_marker_still_does() -> None:
    # negative: the same marker printed by the rank that prints the steps gives the epoch
    # (within its one epoch the counter reads as printed: epochs.py); `Epoch 150 finished.`
    # closes its epoch, so the step after it is epoch 151's (epochs.closing_markers, fresh23
    # AA17's `Epoch 6 complete.`)
    doc = read([COSMOS[0].replace("[cosmos]", "[rank0]:[cosmos]", 1)] + COSMOS[1:])
    assert steps(doc) == (826, 826)
    assert doc["steps"]["epoch_first"] == 151


# -- TPUEstimator: infeed/outfeed lines, the hook's `(T sec)` window, `global_step/sec` ----------
T5 = [  # E19, google-research/text-to-text-transfer-transformer#43
    "I0109 04:30:54.350781 140357595617024 tpu_estimator.py:279] Outfeed finished for "
    "iteration (1, 11675)",
    "I0109 04:31:06.791346 140361433953664 basic_session_run_hooks.py:260] loss = 0.20800781, "
    "step = 1023436 (3473.152 sec)",
    "I0109 04:31:06.793378 140361433953664 tpu_estimator.py:2307] global_step/sec: 3.37388",
    "I0109 04:31:06.794843 140361433953664 tpu_estimator.py:2308] examples/sec: 431.857",
]


def test_the_outfeed_loop_is_not_the_training_step() -> None:
    assert steps(read(T5)) == (1023436, 1023436)


def test_the_hooks_seconds_are_a_window_and_global_step_per_sec_the_step_time() -> None:
    assert abs(_median(read(T5)) - 1 / 3.37388) < 0.001


def test_one_rate_of_samples_is_no_step_time() -> None:
    # negative: `examples/sec` alone is throughput; a window over unknown steps gives nothing
    assert _median(read([T5[1], T5[3]])) is None
