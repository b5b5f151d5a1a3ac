"""Event kinds the fresh24 first-contact batch showed missing, each read on the case's real lines
(tests/data/training_logs/fresh24/cases, sources in ../SOURCES_ab.md) and on a near miss beside
it: slurmstepd's cancel line with the node name glued to it (AB05), torch.distributed.launch's
`Main process received SIGTERM, exiting` (AB07), a start-up first printed after an earlier
launch's stop (AB10, AB20), epoch markers above the first epoch record that fall to it (AB13)
and NLP_Trans's `[Epoch N] Module saved!` / `Best Module in [Epoch N] saved!` (AB18).
"""

from __future__ import annotations

from pathlib import Path

from tests.goodput.test_fresh10_lines import read

CASES = Path(__file__).resolve().parents[1] / "data" / "training_logs" / "fresh24" / "cases"


def case(prefix: str, first: int = 1, last: int | None = None) -> list[str]:
    """Lines first..last (1-based, inclusive) of the fresh24 case file `prefix`, as committed."""
    path = next(CASES.glob(f"{prefix}_*"))
    with path.open(encoding="utf-8", newline="") as f:
        return f.read().splitlines()[first - 1:last]


def causes(doc: dict) -> list[str]:
    return [i["cause"] for i in doc.get("interruptions") or []]


def saves(doc: dict) -> list[object]:
    return [s.get("step") for s in doc.get("checkpoint_saves") or []]


# -- IDCycleGAN's SLURM train.out (And1210/IDCycleGAN, fresh24 AB05) -----------------------------
CANCEL = ("slurmstepd-sasquatch: error: *** JOB 11863 ON sasquatch CANCELLED AT "
          "2022-05-22T12:41:13 ***")


def test_a_slurm_cancel_with_the_node_name_glued_to_slurmstepd_is_a_stop() -> None:
    lines = case("AB05", 112, 126)  # epochs 44-46, their saves, then the cancel line
    assert lines[-1] == CANCEL
    doc = read(lines)
    assert causes(doc) == ["cancelled"]


def test_the_glued_node_name_keeps_the_cancel_reason() -> None:
    doc = read(case("AB05", 112, 125) + [CANCEL[:-4] + " DUE TO TIME LIMIT ***"])
    assert causes(doc) == ["time_limit"]


def test_the_epochs_and_saves_without_the_cancel_line_are_no_stop() -> None:
    # negative: `Saving latest model at the end of epoch 46`, `End of epoch 46 / 100 …` go on
    assert causes(read(case("AB05", 112, 125))) == []


# -- MMHuman3D on MMCV 1.5.3 under torch.distributed.launch (yuchen-ji/mmhuman3d, AB07) ---------
def test_the_launcher_receiving_sigterm_is_a_stop_after_the_last_iteration() -> None:
    lines = case("AB07")  # ... Epoch [3][1300/2439], the banner, `Killing subprocess 151127` ..
    assert lines[-1] == "Main process received SIGTERM, exiting"
    doc = read(lines)
    assert causes(doc) == ["exit_signal"]
    assert doc["interruptions"][0]["after_step"] == 1300


def test_a_line_naming_a_signal_to_handle_is_no_stop() -> None:
    # negative: Lightning's start-up `Set SLURM handle signals.` and a handler's set-up line
    doc = read(case("AB07", 1, 10) + ["Set SLURM handle signals.",
                                      "INFO - SIGTERM handler installed: save and requeue"]
               + case("AB07", 11, 27))
    assert causes(doc) == []


# -- a GPT-2 Chinese trainer's train.log (bruceZhang995/gpt2-chinese-from-Tangyudi, AB10) --------
def test_a_start_up_first_printed_after_an_oom_storm_is_a_relaunch() -> None:
    # nine `WARNING: ran out of memory`, 3 h later `using device:cuda:0` .. `start training`,
    # 13 min later the same block again and batches 10-230: launches two and three
    doc = read(case("AB10"))
    assert [r["line"] for r in doc["restarts"]] == [10, 57]
    assert causes(doc)[0] == "cuda_oom"


def test_the_first_start_up_with_no_stop_above_it_is_the_logs_own_launch() -> None:
    # negative: the same log from its first start-up line on: one relaunch
    doc = read(case("AB10", 10))
    assert len(doc["restarts"]) == 1


# -- a TRL GRPO script's nohup.out (LIU-Hao-2002/GRPO_project, AB20) -----------------------------
def test_a_start_up_first_printed_after_a_crash_traceback_is_a_relaunch() -> None:
    # an IndentationError traceback, DeepSpeed's `Setting ds_accelerator to cuda`, a ValueError
    # traceback, the DeepSpeed line again: three launches
    doc = read(case("AB20"))
    assert len(doc["restarts"]) == 2
    assert causes(doc)[0] == "python_exception"


def test_a_start_up_with_only_its_own_crash_above_the_next_is_one_relaunch() -> None:
    # negative: from the second launch's first line on
    assert len(read(case("AB20", 8))["restarts"]) == 1


# -- Dino_augseg's train_log.txt (Dang-Tu-lang/Dino_augseg, AB13) --------------------------------
def test_epoch_markers_above_the_first_epoch_record_that_fall_are_a_run() -> None:
    # `Epoch 1/100 | LR …`, `Epoch 2/100 | …` (no duration), `Epoch 1/100 [38.7s] | …`,
    # `Epoch 2/100 [34.3s]`, then `Epoch 1/100 [138.0s]` .. `Epoch 16/100`: three runs
    doc = read(case("AB13"))
    assert len(doc["restarts"]) == 2


def test_an_epoch_marker_at_the_first_records_epoch_is_no_fall() -> None:
    # negative: the marker of epoch 1 above the third run's `Epoch 1/100 [138.0s]`
    assert read(case("AB13", 1, 1) + case("AB13", 5))["restarts"] == []


# -- NLP_Trans on PyTorch DDP (Ma-787639046/NLP_Trans output/train.log, AB18) --------------------
def test_a_module_saved_after_each_epoch_is_a_save() -> None:
    lines = case("AB18", 1, 24)  # epochs 1 and 2, each `[Epoch N] Module saved!` then
    assert lines[13].endswith("[Epoch 1] Module saved!")  # `Best Module in [Epoch N] saved!`
    assert lines[14].endswith("Best Module in [Epoch 1] saved!")
    assert saves(read(lines)) == [1, 2]  # one save point an epoch: both files at its end


def test_evaluation_output_saved_at_a_folder_is_no_save() -> None:
    # negative: `dev dataset evaluation finished, saved at ./output/temp/dev_rank_0`
    lines = [x for x in case("AB18", 1, 24) if "Module" not in x]
    assert saves(read(lines)) == []
