"""Save classes the fresh2 and fresh4 first-contact batches showed read wrong (issue 23), each from
the case's real line and with a negative beside it: a line of the same family that must not be
read that way. Classes: a save path cut by a space; a save whose start and end lines carry the
same stamp (0 s); "new best model -> <file>"; a save with no step before any step line; a save
naming its step before the first progress line (the first step seen).
"""

from __future__ import annotations

import pytest

from gpuslo.goodput.logs import load_profiles
from gpuslo.goodput.logs.assemble import assemble
from gpuslo.goodput.logs.reader import parse_lines

PROFILES = load_profiles()


def read(lines: list[str], gpus: int | None = 1) -> dict:
    parsed = parse_lines(lines, PROFILES)
    return assemble(parsed, job="t", gpus=gpus, checkpoint_step=PROFILES.checkpoint_step).document


def _saves(doc: dict) -> list[int | None]:
    return [s["step"] for s in doc["checkpoint_saves"]]


# -- a save path with a space: the step is in the piece after it (fresh2 D14, accelerate) ------
_D14 = "C:/Users/User_name/Documents/LORA/W Output"
_BAR = ("Steps:  52%|#####     | 448/864 [09:57<15:29,  2.23s/it, loss=0.253, lr=0.0001]")


def _accelerate(folder: str) -> list[str]:
    return [
        "10/20/2023 15:48:52 - INFO - accelerate.checkpointing - Random states saved in "
        f"{folder}\\checkpoint-416\\random_states_0.pkl",
        f"10/20/2023 15:48:52 - INFO - __main__ - Saved state to {folder}\\checkpoint-416",
        _BAR,
        "10/20/2023 15:49:55 - INFO - accelerate.accelerator - Saving current state to "
        f"{folder}\\checkpoint-448",
        f"Model weights saved in {folder}\\checkpoint-448\\pytorch_lora_weights.safetensors",
        "10/20/2023 15:49:55 - INFO - accelerate.checkpointing - Optimizer state saved in "
        f"{folder}\\checkpoint-448\\optimizer.bin",
    ]


@pytest.mark.parametrize("folder", [_D14, "/data/my runs/lora", "'/data/run 7/lora'"])
def test_a_save_path_cut_by_a_space_names_its_step(folder: str) -> None:
    doc = read(_accelerate(folder))
    assert _saves(doc) == [416, 448]


def test_a_piece_without_a_separator_is_not_the_save_path() -> None:
    # negative: a step-like word after the path that is no path piece names no step
    doc = read([_BAR, "INFO - Saved state to /data/my runs/final (next save at checkpoint-900)"])
    assert _saves(doc) == [448]  # the last printed step, not 900


def test_a_save_started_and_ended_in_the_same_second_took_0_s() -> None:
    doc = read(_accelerate(_D14))
    assert [s["seconds"] for s in doc["checkpoint_saves"]] == [None, 0.0]


def test_a_save_with_one_stamped_line_has_no_length() -> None:
    # negative: only the start line is stamped (the part line has no stamp): no length to give
    doc = read([_BAR, "10/20/2023 15:49:55 - INFO - accelerate.accelerator - Saving current "
                "state to /out/checkpoint-448",
                "Model weights saved in /out/checkpoint-448/pytorch_lora_weights.safetensors"])
    assert [s["seconds"] for s in doc["checkpoint_saves"]] == [None]


# -- a new best model written to its file (fresh2 D27) -------------------------------------------
def _batches(epoch: int) -> list[str]:
    return [f"[19:01:{20 + n}] 2026-07-30 19:01:{20 + n} | INFO | [Epoch {epoch}] Batch "
            f"{n * 10}/126 | loss=0.04" for n in range(1, 8)]


@pytest.mark.parametrize("line", [
    # the case's own line (D27)
    "[19:01:19] 2026-07-30 19:01:19 | INFO | [Save] New best model -> C:\\Users\\user\\AppData"
    "\\Local\\com.bot.mmorpg.ai\\trained_models\\genshin_impact\\efficientnet_simple_best.pth "
    "(val_loss=0.0313)",
    # hand-varied: "to", a quoted POSIX path
    "[19:01:19] 2026-07-30 19:01:19 | INFO | new best checkpoint written to 'out/best.ckpt'",
])
def test_a_new_best_model_file_is_a_save(line: str) -> None:
    doc = read([line, "EPOCH 4/10"] + _batches(4))
    assert _saves(doc) == [3 * 126]  # the end of epoch 3: 1-based epochs
    assert doc["goodput"]["goodput"] is not None


@pytest.mark.parametrize("line", [
    "[19:01:19] 2026-07-30 19:01:19 | INFO | New best model! val_loss=0.0313",   # a metric
    "[19:01:19] 2026-07-30 19:01:19 | INFO | new best model at epoch 3: acc 0.91",  # no file
    "[19:01:19] 2026-07-30 19:01:19 | INFO | Loading best model from out/best.pth",  # a load
])
def test_best_model_words_without_a_written_file_are_no_save(line: str) -> None:
    doc = read([line, "EPOCH 4/10"] + _batches(4))
    assert doc["checkpoint_saves"] == []


# -- a save with no step before any step line (fresh2 D26, InsightFace on MXNet) ----------------
_D26_STEPS = ["INFO:root:Epoch[0] Batch [115980-116000]\tSpeed: 3.24 samples/sec\tacc=0.001563",
              "INFO:root:Epoch[0] Batch [116000-116020]\tSpeed: 58.07 samples/sec\tacc=0.004687"]


def test_a_save_before_the_first_step_line_commits_the_state_it_began_from() -> None:
    doc = read(["saving 58",
                'INFO:root:Saved checkpoint to "./models/r50-arcface-emore/model-0058.params"',
                "[116000]Accuracy-Highest: 0.79100"] + _D26_STEPS)
    assert _saves(doc) == [115999]   # 58 is the save's index, not a step
    assert doc["goodput"]["goodput"] is not None


def test_a_save_before_the_first_step_line_keeps_the_step_it_names() -> None:
    # negative: a save that names its own step is not moved to the step before the first line
    doc = read(["INFO:root:Saved checkpoint to ./models/r50/checkpoint-115000"] + _D26_STEPS)
    assert _saves(doc) == [115000]


def test_a_results_file_before_the_first_step_line_is_no_commit() -> None:
    # negative: writing results is not a save: no commit, goodput stays unknown
    doc = read(['INFO:root:Saving results to "./models/r50/preds.json"'] + _D26_STEPS)
    assert doc["checkpoint_saves"] == []
    assert doc["goodput"]["goodput"] is None


# -- a save naming its step before the first progress line is the first step seen (F16) --------
def _fairseq(epoch: int, updates: int, wall: int) -> str:
    return (f"| epoch {epoch:03d} | loss 3.453 | nll_loss 1.648 | ppl 3.13 | wps 27413 | ups 0 | "
            f"num_updates {updates} | lr 0.000991607 | wall {wall} | train_wall {wall - 5565}")


def test_a_save_before_the_first_summary_is_the_first_step_seen() -> None:
    doc = read(["| saved checkpoint ckpts/ende/checkpoint17.pt (epoch 17 @ 3842 updates) "
                "(writing took 258.8501696586609 seconds)",
                _fairseq(18, 4068, 46375), _fairseq(19, 4294, 48950)])
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (3842, 4294)


def test_a_restore_before_the_first_summary_is_not_a_step_seen() -> None:
    # negative: a load names the step the run resumes from, not one this log ran
    doc = read(["| loaded checkpoint ckpts/ende/checkpoint17.pt (epoch 17 @ 3842 updates)",
                _fairseq(18, 4068, 46375), _fairseq(19, 4294, 48950)])
    assert doc["steps"]["first"] == 4068


def test_a_restore_path_cut_by_a_space_names_its_step() -> None:
    # hand-varied accelerate load_state into a folder with a space (the same class as D14's save)
    doc = read(["INFO - accelerate.accelerator - Loading states from /data/my runs/checkpoint-416",
                "Steps:  50%|#####     | 420/864 [00:10<15:29,  2.23s/it, loss=0.253]"])
    assert [r["resumed_from_step"] for r in doc["restarts"]] == [416]


def test_a_save_named_only_by_its_path_is_not_the_first_step_seen() -> None:
    # negative (D14): checkpoint-416 is a directory's name, not a step the log printed
    doc = read(_accelerate(_D14))
    assert (doc["steps"]["first"], doc["steps"]["last"]) == (448, 448)
