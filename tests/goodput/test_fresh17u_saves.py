"""Checkpoint saves the fresh17 first-contact batch showed misread, each on the case's real lines
with a negative: a save whose object is a weights file named only by its path (MUSE's `* Saving
the mapping to …/best_mapping.pth ...`, U01); a save of several models in the plural (`Save
models (cv)`, U03); a tokenizer written into the checkpoints folder, which is no model checkpoint
(`Tokenizer saved to checkpoints/tokenizer.json`, U20).
"""

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


def save_phases(text: str) -> list[str]:
    return [str(rule.phase) for rule, _, _ in WORDING.match(text) if rule.kind == "save"]


# -- MUSE supervised.py, Trainer.save_best, fresh17 U01 ----------------------------------------
MUSE_HEAD = "INFO - 07/09/19 03:02:"
EXP = ("/mount/arbeitsdaten31/studenten1/R-Project/fl/SCD/semanticChangeWordEmbedding/MUSE/MUSE"
       "/dumped")
MUSE_SAVE = f"* Saving the mapping to {EXP}/debug/czijjvdf28/best_mapping.pth ..."


def muse_iteration(n: int, second: int, save: bool) -> list[str]:
    stamp = f"{MUSE_HEAD}{second:02d} - 0:00:{second - 36:02d} - "
    lines = [stamp + f"Starting iteration {n}...",
             stamp + "Building the train dictionary ...",
             stamp + f'__log__:{{"n_iter": {n}, "precision_at_1-nn": 6.493506493506493, '
                     f'"mean_cosine-nn-S2T-10000": 0.9848228693008423}}']
    if save:
        lines += [stamp + '* Best value for "precision_at_1-csls_knn_10": 7.79221',
                  stamp + MUSE_SAVE]
    return lines + [stamp + f"End of iteration {n}."]


def test_a_save_to_a_weights_file_is_a_save_whatever_the_thing_is_called() -> None:
    assert save_phases(MUSE_SAVE) == ["start"]
    lines = [line for n in range(4) for line in muse_iteration(n, 39 + 9 * n, n == 0)]
    doc = read(lines)
    assert [s["step"] for s in doc["checkpoint_saves"]] == [0]


def test_a_save_to_a_file_that_is_no_checkpoint_is_none() -> None:
    # negative: the same words, the mapping written as a vocabulary or a table, not weights
    assert save_phases("* Saving the mapping to out/debug/word2id.json ...") == []
    assert save_phases("Saving predictions to out/preds.csv") == []
    assert save_phases("Saving the mapping to out/best_mapping.pth.bak.txt") == []
    # where the words name a checkpoint the general rule alone reads the line: so-vits-svc's
    # `iteration` is its epoch, the file names the step (fresh15 R18)
    vits = "Saving model and optimizer state at iteration 121 to ./logs\\32k\\G_6000.pth"
    assert save_phases(vits) == ["start"]


# -- RaifHack 2021 train.py, fresh17 U03 --------------------------------------------------------
def test_a_save_of_models_in_the_plural_is_a_save() -> None:
    assert save_phases("Save models (cv)") == ["start"]
    assert save_phases("Saving models to ./out") == ["start"]


def test_results_saved_in_the_same_wording_are_none() -> None:
    # negative: predict.py's `Save results (cv)` writes predictions, not a model
    assert save_phases("Save results (cv)") == []
    assert save_phases("Load model") == []


# -- gpt-from-zero pretrain.log (loguru), fresh17 U20 -------------------------------------------
LOGURU = "2026-02-03 13:{}.{:03d} | INFO     | __main__:train:{} - "
GPT = [
    LOGURU.format("24:25", 753, 106) + "Tokenizer saved to checkpoints/tokenizer.json",
    LOGURU.format("24:33", 252, 133) + "Starting training...",
] + [LOGURU.format(f"24:{36 + 4 * i}", 100 + i, 160) +
     f"Step {100 * (i + 1)}, Loss: {6.2713 - 0.1 * i:.4f}" for i in range(5)] + [
    LOGURU.format("25:24", 740, 190) + "Epoch 1 completed. Average loss: 5.8121",
    LOGURU.format("25:24", 852, 197) + "Checkpoint saved: checkpoints/model_epoch1.pt",
] + [LOGURU.format(f"25:{28 + 4 * i}", 100 + i, 160) +
     f"Step {100 * (i + 6)}, Loss: {5.7 - 0.1 * i:.4f}" for i in range(3)]


def test_a_tokenizer_written_into_the_checkpoints_folder_is_no_save() -> None:
    assert save_phases(GPT[0].split(" - ", 1)[1]) == []
    assert save_phases("Vocab saved to checkpoints/vocab.txt") == []
    doc = read(GPT)
    assert [s["line"] for s in doc["checkpoint_saves"]] == [9]


def test_a_model_saved_into_the_checkpoints_folder_is_still_a_save() -> None:
    # negative: the words name the thing saved as a model or a checkpoint
    assert save_phases("Checkpoint saved: checkpoints/model_epoch1.pt") == ["end"]
    assert save_phases("Saved to checkpoints/model_epoch1.pt") == ["end"]
    assert save_phases("Model saved to checkpoints/best.pt") == ["end"]
