"""Event kinds the fresh22 first-contact batch showed missing, each read on the case's real lines
(tests/data/training_logs/fresh22/cases) and on a near miss beside it: an early-stopping patience
counter that is no step (Z02), MMEngine's best-checkpoint save after its periodic one (Z11), a
load of published hub weights that is no restore (Z11), a MAE-family `Resume checkpoint <file>`
(Z14), a file written into a step-named checkpoint folder and a list of things saved that names
the model (Z08), a save closed by the next `Saving <metrics>` banner (Z13), and a save begun in
a log with no step that the run's failure follows (Z10).
"""

from __future__ import annotations

from pathlib import Path

from tests.goodput.test_fresh10_lines import read

CASES = Path(__file__).resolve().parents[1] / "data" / "training_logs" / "fresh22" / "cases"


def case(prefix: str, first: int, last: int) -> list[str]:
    """Lines first..last (1-based, inclusive) of the fresh22 case file `prefix`, as committed."""
    path = next(CASES.glob(f"{prefix}_*"))
    with path.open(encoding="utf-8", newline="") as f:
        return f.read().splitlines()[first - 1:last]


def saves(doc: dict) -> list[tuple[object, object]]:
    return [(s.get("step"), s.get("seconds")) for s in doc.get("checkpoint_saves") or []]


# -- SpeedTransformer's finetune.log (fresh22 Z02): `-> No improvement (k/7)` -------------------
def test_an_early_stopping_patience_counter_is_no_step() -> None:
    doc = read(case("Z02", 1, 30))  # epochs 35-42: patience 1, 2, 3, then 1 again after a best
    assert doc["restarts"] == []
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (35, 42)  # `[Epoch N/60]` counts
    assert [s for s, _ in saves(doc)] == [38, 39, 41]  # `-> Best fine-tuned model saved.`


def test_a_counter_in_the_same_shape_without_patience_words_is_read() -> None:
    # negative: `(n/N)` after other words is still a counter
    doc = read([f"2025-10-07 07:15:{10 + i:02d},000 - INFO -   -> Step ({i}/7) done"
                for i in range(1, 6)])
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (1, 5)


# -- MMPretrain on MMEngine 0.7.4 (fresh22 Z11) --------------------------------------------------
def test_the_best_checkpoint_after_the_periodic_save_is_a_save_of_its_own() -> None:
    # `Saving checkpoint at 10 epochs`, validation, then `The best checkpoint … is saved to …`
    doc = read(case("Z11", 36, 42))
    assert saves(doc) == [(1370, None), (1370, None)]


def test_checkpoints_that_will_be_saved_are_no_save() -> None:
    # negative: MMEngine's start-up `Checkpoints will be saved to <dir>.` is an intention
    doc = read(["2023/06/06 22:00:01 - mmengine - INFO - Checkpoints will be saved to "
                "/root/work_dirs/x."] + case("Z11", 36, 36))
    assert saves(doc) == []


def test_a_load_of_published_hub_weights_is_no_restore() -> None:
    # `Load checkpoint from …_in1k_20230104-80513adc.pth`: torch.hub's `<name>-<sha256>` file
    doc = read(case("Z11", 1, 8))
    assert doc["restarts"] == []
    assert saves(doc) == [(137, None)]  # the epoch-1 best checkpoint


def test_a_load_of_the_runs_own_checkpoint_is_still_a_restore() -> None:
    # negative: a step- or epoch-named file of the run's work dir carries no hash
    doc = read(["2023/06/06 21:59:14 - mmengine - INFO - Load checkpoint from "
                "work_dirs/convnext/epoch_10.pth"] + case("Z11", 5, 8))
    assert len(doc["restarts"]) == 1


# -- IML-ViT's MAE-style main_train.py on Windows (fresh22 Z14, CRLF) ---------------------------
def test_a_mae_resume_checkpoint_line_is_a_restore() -> None:
    doc = read(case("Z14", 1, 12))
    assert len(doc["restarts"]) == 1
    assert doc["steps"]["first"] == 0


def test_a_resume_checkpoint_with_no_file_is_none() -> None:
    # negative: an empty `--resume` printed
    doc = read(["Resume checkpoint: ", "Start training for 10 epochs"] + case("Z14", 6, 12))
    assert doc["restarts"] == []


# -- ChemMiniQ3's HF Trainer run with custom callbacks (fresh22 Z08, CRLF) ----------------------
def test_a_file_saved_into_a_step_named_checkpoint_folder_ends_that_save() -> None:
    # `…| 140/140 [08:39<00:00,  4.08s/it]✅ Tokenizer vocab saved to: ./chemq3minipret\
    # checkpoint-140\vocab.json`, the same at 700, and the final `Enhanced model, tokenizer,
    # and config saved!`
    doc = read(case("Z08", 39, 93))
    assert saves(doc) == [(140, None), (700, None), (700, None)]


def test_a_tokenizer_saved_into_a_folder_without_a_step_is_no_save() -> None:
    # negative: gpt-from-zero's tokenizer written before training
    doc = read(["Tokenizer saved to checkpoints/tokenizer.json"]
               + [f"step {i} loss 0.5" for i in range(1, 5)])
    assert saves(doc) == []


def test_a_list_saved_names_a_checkpoint_only_with_the_model() -> None:
    steps = [f"step {i} loss 0.5" for i in range(1, 5)]
    assert saves(read(steps + ["✅ Enhanced model, tokenizer, and config saved!"])) == [(4, None)]
    # negative: no model or checkpoint in the list
    assert saves(read(steps + ["✅ Enhanced tokenizer and config saved!"])) == []


# -- Simple-Trl-Training's dpo_train.py with loguru (fresh22 Z13) -------------------------------
def test_the_next_saving_banner_closes_the_model_save() -> None:
    # `Saving Model` 19:50:40.234, save_model(...), `Saving Metrics` 19:50:40.459
    doc = read(case("Z13", 71, 94))
    assert saves(doc) == [(175, 0.225)]


def test_a_saving_banner_after_other_lines_gives_no_duration() -> None:
    # negative: another line between the two: the save's end is not shown
    lines = case("Z13", 71, 83) + [
        "2024-03-27 19:50:40.300 | INFO     | __main__:run:102 - model written"] + case(
        "Z13", 84, 84)
    assert saves(read(lines)) == [(175, None)]


# -- PixelLink on TF-Slim's Supervisor (fresh22 Z10) --------------------------------------------
def test_a_save_begun_with_no_step_before_the_runs_failure_is_none() -> None:
    # `Saving checkpoint to path /models/model.ckpt` at session start, `global_step/sec: 0`,
    # `Finished training! Saving model to disk.`, then the InvalidArgumentError traceback
    doc = read(case("Z10", 1, 110))
    assert saves(doc) == []
    assert len(doc["interruptions"]) == 1


def test_the_same_save_after_training_steps_is_a_save() -> None:
    # negative: steps printed before the failure: the saver thread's save is counted as before
    lines = case("Z10", 1, 21) + [
        "INFO:tensorflow:global step 1: loss = 0.5 (1.2 sec/step)",
        "INFO:tensorflow:global step 2: loss = 0.4 (1.2 sec/step)"] + case("Z10", 77, 110)
    assert saves(read(lines)) == [(2, None)]


def test_hf_per_file_lines_in_a_checkpoint_folder_are_no_save_alone() -> None:
    # negative: an excerpt opening with the tail of HF's save (fresh15 R05's first lines):
    # `tokenizer config file saved in …/checkpoint-1900/…`, parts of the Trainer's announced save
    lines = ["[INFO|2024-11-27 09:14:57] tokenization_utils_base.py:2646 >> tokenizer config file "
             "saved in saves/lora/train/checkpoint-1900/tokenizer_config.json"] + [
        f"step {i} loss 0.5" for i in range(1901, 1905)]
    assert saves(read(lines)) == []


def test_a_save_whose_path_says_best_ends_with_its_finished_line() -> None:
    # negative for the best checkpoint apart: fairseq's `Preparing to save checkpoint for epoch 3
    # @ 1437 updates`, `Saving checkpoint to checkpoints/checkpoint_best.pt`, `Finished saving …`
    # and `Saved checkpoint … (writing took 2.43 seconds)` are one save (fresh15 R02)
    head = "[2022-04-08 19:3{}][fairseq.{}][INFO] - "
    lines = [head.format("0:09,781", "trainer") + '{"epoch": 3, "update": 2.923, "loss": "4.684"}',
             head.format("1:59,995", "checkpoint_utils")
             + "Preparing to save checkpoint for epoch 3 @ 1437 updates",
             head.format("1:59,996", "trainer")
             + "Saving checkpoint to checkpoints/checkpoint_best.pt",
             head.format("2:01,648", "trainer")
             + "Finished saving checkpoint to checkpoints/checkpoint_best.pt",
             head.format("2:02,430", "checkpoint_utils") + "Saved checkpoint checkpoints/"
             "checkpoint_best.pt (epoch 3 @ 1437 updates, score 4.416) (writing took "
             "2.4345672614872456 seconds)"]
    assert len(read(lines)["checkpoint_saves"]) == 1
