"""Line classes the fresh20 first-contact batch showed misread (7/20 at first contact,
tests/data/first_contact/training_logs_fresh20_2026-12-07.txt), each on the case's real lines
(tests/data/training_logs/fresh20, SOURCES_x.md) with a negative beside it: a similar line that
must not be read that way."""

from __future__ import annotations

from gpuslo.goodput.logs import load_profiles
from gpuslo.goodput.logs.assemble import assemble
from gpuslo.goodput.logs.reader import parse_lines
from gpuslo.goodput.logs.wording import Wording

PROFILES = load_profiles()
WORDING = Wording(PROFILES)


def read(lines: list[str]) -> dict:
    parsed = parse_lines(lines, PROFILES)
    return assemble(parsed, job="t", gpus=1, checkpoint_step=PROFILES.checkpoint_step).document


def kinds(text: str, kind: str) -> list[str]:
    return [str(rule.phase) for rule, _, _ in WORDING.match(text) if rule.kind == kind]


# -- BYOL_v1 2022 (fresh20 X19): `==> Saving <file>.pt...` after each epoch record, then Killed --
X19_HEAD = [
    "wandb: Tracking run with wandb version 0.13.1",
    "wandb: Syncing run [Training][batch:256][input:128][2022-08-28 00:08:54]",
    "Files already downloaded and verified",
]


def x19_epoch(e: int, minute: int) -> str:
    return (f"[epoch:{e}/1200] [loss:0.0{e}29] [lr:0.00{9 - e % 9}303] "
            f"[Time:[2022-08-28 00:{minute:02d}:31]] [total time:0:02:27]")


def x19(saves: int) -> list[str]:
    lines = list(X19_HEAD)
    for e in range(1, 11):
        lines.append(x19_epoch(e, 9 + 2 * e))
        if e <= saves:
            lines.append(f"==> Saving ./result/supcon/cifar10/resnet50/{e}.pt...")
    return lines + ["Killed"]


def test_a_save_whose_object_is_a_weights_file_path_is_a_save() -> None:
    assert kinds("==> Saving ./result/supcon/cifar10/resnet50/1.pt...", "save") == ["start"]
    assert kinds("Saving /ckpt/model_best.pth", "save") == ["start"]


def test_a_saved_file_that_is_no_weights_file_is_no_save() -> None:
    # negative: the same verb on a results file, a backup of a weights file, or a load
    assert kinds("==> Saving ./result/supcon/cifar10/resnet50/1.csv...", "save") == []
    assert kinds("==> Saving ./result/1.pt.bak", "save") == []
    assert kinds("==> Loading ./result/supcon/cifar10/resnet50/1.pt...", "save") == []


def test_epoch_records_are_the_steps_beside_a_run_name_printed_once() -> None:
    doc = read(x19(saves=5))
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (1, 10)
    assert len(doc["checkpoint_saves"]) == 5
    assert doc["interruptions"] and doc["restarts"] == []


def test_a_counter_printed_once_with_its_n_stays_the_steps() -> None:
    # negative: a step printed once as `n/N` (a bar's or a record's one line) still counts
    # steps beside the epoch records; so does a bare counter where no epoch line recurs
    lines = x19(saves=0)
    lines[1] = "iter 300/2000 loss 0.51"
    assert read(lines)["steps"]["first"] == 300
    lines = [*X19_HEAD, x19_epoch(1, 11), "Killed"]
    assert read(lines)["steps"]["first"] == 256


# -- kaggle-siim train.py 2020 (fresh20 X14): four launches that each load and start -------------
X14_CKPT = "runs/u_res34/fold_0/checkpoint/0.8499755650313933_best_metric.pth"


def x14_epoch(e: int) -> list[str]:
    return [f"Epoch: {e} | Train_loss: 0.4{e} | Val loss: 0.58{e} | val dice: 0.84{e} @ "
            "(0.6, 3000, 0.4)", "Best Loss: 0.5770367383956909 | Best Dice: 0.8499755650313933"]


def x14_launch() -> list[str]:
    return ["*" * 30, "Logging arguments!!", "*" * 30, "batch_size: 4",
            f"initial_ckpt: {X14_CKPT}", "num_epochs: 50", "*" * 30,
            f"Resume training from {X14_CKPT} @ 41", "Start Training...!!"]


def test_resume_training_from_a_weights_file_is_a_restore() -> None:
    assert kinds(f"Resume training from {X14_CKPT} @ 41", "restore") == ["start"]
    assert kinds("Restore from ./ckpt/last.pth", "restore") == ["start"]


def test_resume_training_from_a_setting_is_no_restore() -> None:
    # negative: a resume from a schedule's point or a pretrained file is no restore of the run
    assert kinds("Resume training from epoch 5 schedule", "restore") == []
    assert kinds("Resume training from pretrained/imagenet_r34.pth", "restore") == []


def test_each_launch_that_loads_and_starts_again_is_a_restart() -> None:
    lines = [x for e in range(40, 50) for x in x14_epoch(e)]
    lines += x14_launch() * 4 + x14_epoch(42)
    doc = read(lines)
    assert len(doc["restarts"]) == 4
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (40, 42)


def test_a_start_line_printed_again_with_no_load_between_is_no_relaunch() -> None:
    # negative: the same start printed twice by two loggers, and one launch's load before its
    # start and a load line after it, are one launch each
    lines = [x for e in range(40, 50) for x in x14_epoch(e)]
    lines += x14_launch() + ["Start Training...!!"] + x14_epoch(42)
    assert len(read(lines)["restarts"]) == 1
    lines = [x for e in range(40, 50) for x in x14_epoch(e)]
    lines += x14_launch() + [f"Resume training from {X14_CKPT} @ 41"] + x14_epoch(42)
    assert len(read(lines)["restarts"]) == 1


# -- FGDCC 2024 under srun (fresh20 X10): a second launch after epoch 75's records ---------------
def x10_record(itr: int) -> list[str]:
    return [f"INFO:root:[75,  {itr}/ 2562] - train_losses - Parent Class: 1.669 - Children class: "
            "0.086 -Autoencoder Loss (total): 89.389 - Reconstruction/K-Means Loss: [0.062 / "
            "89.327] - [wd: 4.00e-01] [lr: 2.50e-06] [mem: 6.50e+04] (1230.5 ms)",
            f"INFO:root:[75,  {itr}] grad_stats: [3.29e-01 1.04e-01] (0.00e+00, 9.23e+00)"]


X10_RELAUNCH = ["INFO:root:called-params configs/in1k_vith14_ep300_FGDCC.yaml",
                "INFO:root:loaded params...", "INFO:root:Running... (rank: 0/1)",
                "INFO:root:Initialized (rank/world-size) 0/1",
                "INFO:root:loaded pretrained encoder from epoch 66 with msg: <All keys matched "
                "successfully>", "INFO:root:M - Step...",
                "slurmstepd: error: *** STEP 2556.0 ON hgx CANCELLED AT 2024-07-07T23:27:27 ***"]


def test_a_process_group_set_up_naming_the_rank_is_a_process_starting() -> None:
    assert kinds("Initialized (rank/world-size) 0/1", "init") == [""]
    assert kinds("| distributed init (rank 0): env://, gpu 0", "init") == [""]
    lines = [x for itr in range(2400, 2575, 25) for x in x10_record(itr)] + X10_RELAUNCH
    doc = read(lines)
    assert len(doc["restarts"]) == 1 and doc["interruptions"]
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (2400, 2550)


def test_a_line_naming_a_rank_mid_run_is_no_start() -> None:
    # negative: a rank named in a record or an event is no process set-up
    assert kinds("rank 0 initialized its data loader", "init") == []
    assert kinds("Initialized optimizer for rank 0", "init") == []
    lines = [x for itr in range(2400, 2575, 25) for x in x10_record(itr)]
    lines.insert(6, "INFO:root:Running... (rank: 0/1)")
    assert read(lines)["restarts"] == []


# -- YOLOX 0.1.x with loguru (fresh20 X02): two `Save weights to` records per epoch ---------------
X02_PREFIX = "2021-09-03 20:46:{} | INFO     | yolox."
X02_SAVE = "core.trainer:save_ckpt:318 - Save weights to ./YOLOX_outputs\\yolox_voc_s"


def x02_epoch(epoch: int, base: float, evaluate: bool = True) -> list[str]:
    def at(dt: float) -> str:
        return X02_PREFIX.format(f"{base + dt:06.3f}")
    lines = [at(0.0) + f"core.trainer:before_epoch:188 - ---> start train epoch{epoch}"]
    lines += [at(0.7 + k) + f"core.trainer:after_iter:246 - epoch: {epoch}/300, iter: {it}/47, "
              "mem: 1756Mb, iter_time: 0.101s, data_time: 0.000s, total_loss: 2.0, lr: 7.813e-06, "
              "size: 512, ETA: 0:00:55" for k, it in enumerate((10, 20, 30, 40))]
    lines.append(at(4.8) + X02_SAVE)
    if evaluate:
        lines += [at(7.1) + "evaluators.voc_evaluator:evaluate_prediction:160 - Evaluate in main "
                  "process...", at(7.13) + "core.trainer:evaluate_and_save_model:309 - ",
                  "Average forward time: 15.62 ms, Average NMS time: 0.00 ms", ""]
    lines.append(at(7.13 if evaluate else 4.8) + X02_SAVE)
    return lines


def test_a_save_line_printed_again_after_an_evaluation_is_another_save() -> None:
    lines = x02_epoch(288, 0.0) + x02_epoch(289, 10.0) + [
        X02_PREFIX.format("19.500") + "core.trainer:before_epoch:188 - ---> start train epoch290"]
    assert len(read(lines)["checkpoint_saves"]) == 4


def test_a_save_line_printed_again_in_the_same_instant_is_one_save() -> None:
    # negative: the line printed twice at once (two handlers, every rank) is one save
    lines = x02_epoch(288, 0.0, evaluate=False) + x02_epoch(289, 10.0, evaluate=False) + [
        X02_PREFIX.format("19.500") + "core.trainer:before_epoch:188 - ---> start train epoch290"]
    assert len(read(lines)["checkpoint_saves"]) == 2


# -- YOLOX (fresh20 X09): epoch 2's first record is faster than epoch 1's warm-up --------------
X09_TIMES = {(1, 10): ("51.976", 0.487), (1, 20): ("53.882", 0.191), (1, 30): ("56.428", 0.252),
             (1, 40): ("58.584", 0.216), (2, 10): ("62.443", 0.084)}


def x09(times: dict) -> list[str]:
    lines = []
    for (epoch, it), (second, took) in times.items():
        if it == 10:
            lines.append(f"2021-09-03 20:17:{float(second) - 0.9:06.3f} | INFO     | yolox.core."
                         f"trainer:before_epoch:188 - ---> start train epoch{epoch}")
        lines.append(f"2021-09-03 20:17:{second} | INFO     | yolox.core.trainer:after_iter:246 - "
                     f"epoch: {epoch}/300, iter: {it}/47, mem: 1491Mb, iter_time: {took:.3f}s, "
                     "data_time: 0.002s, total_loss: 4.7, lr: 1.132e-04, size: 512, ETA: 0:57:12")
    return lines


def test_an_epoch_opener_a_whole_print_interval_in_keeps_its_faster_time() -> None:
    doc = read(x09(X09_TIMES))
    assert doc["step_time_s"]["median"] == 0.216 and doc["step_time_s"]["count"] == 5


def test_an_epoch_opener_at_the_epochs_first_batch_is_no_step_time_when_fast() -> None:
    # negative: the same records printed from batch 0 (a mean over the interval taken after one
    # batch) keep the fast opener out
    times = {(e, it - 10): v for (e, it), v in X09_TIMES.items()}
    doc = read(x09(times))
    assert doc["step_time_s"]["count"] == 4
