"""A relaunch shown by its restore of the corpus position, and best-model exports that are no
trainer-state saves (fresh15 R01, Marian v1.7.6), read on the case's real lines, with the
negatives: a corpus loaded (not restored) is no restore, and a best-model save in a log whose
saves never print the optimizer state stays a save.
"""

from __future__ import annotations

from gpuslo.goodput.logs import load_profiles
from gpuslo.goodput.logs.assemble import assemble
from gpuslo.goodput.logs.reader import parse_lines

PROFILES = load_profiles()
MODEL = "model/model_bt_encz.npz"


def read(lines: list[str]) -> dict:
    parsed = parse_lines(lines, PROFILES)
    return assemble(parsed, job="t", gpus=1, checkpoint_step=PROFILES.checkpoint_step).document


def display(stamp: str, update: int, epoch: int = 4) -> str:
    return (f"[2019-03-29 {stamp}] Ep. {epoch} : Up. {update} : Sen. 40,613,276 : Cost 2.75477481 "
            ": Time 1060.52s : 7684.08 words/s : L.r. 4.5291e-05")


def save(stamp: str) -> list[str]:
    return [f"[2019-03-29 {stamp}] Saving model weights and runtime parameters to "
            f"{MODEL}.orig.npz",
            f"[2019-03-29 {stamp}] Saving model weights and runtime parameters to {MODEL}",
            f"[2019-03-29 {stamp}] Saving Adam parameters to {MODEL}.optimizer.npz"]


def export(stamp: str, metric: str) -> str:
    return (f"[2019-03-29 {stamp}] Saving model weights and runtime parameters to "
            f"{MODEL}.best-{metric}.npz")


TOP = [export("10:52:29", "perplexity"),
       "[2019-03-29 10:52:42] [valid] Ep. 4 : Up. 140000 : perplexity : 4.4562 : new best",
       export("10:54:22", "translation"),
       "[2019-03-29 10:54:35] [valid] Ep. 4 : Up. 140000 : translation : 26.96 : new best"]
FIRST = ([display(f"{11 + k}:12:22", 140500 + 500 * k) for k in range(4)] + save("14:12:23")
         + [display(f"{15 + k}:12:22", 142500 + 500 * k) for k in range(4)] + save("18:12:23")
         + [display("19:12:22", 144500)])
END = ["[2019-03-29 22:24:32] Seen 41256827 samples",
       "[2019-03-29 22:24:32] Starting epoch 5",
       "[2019-03-29 22:24:32] Training finished",
       export("22:24:37", "ce-mean-words"),
       "[2019-03-29 22:24:50] [valid] Ep. 5 : Up. 156666 : ce-mean-words : 1.47987 : new best",
       *save("22:26:45")]
AGAIN = ["[2019-03-29 22:27:50] [marian] Marian v1.7.6 9cc5b17 2018-12-14 15:11:34 -0800",
         "[2019-03-29 22:34:39] Loading model from model/model_bt_encz.npz.orig.npz",
         "[2019-03-29 22:34:53] Loading Adam parameters from model/model_bt_encz.npz.optimizer.npz",
         "[2019-03-29 22:35:17] [data] Restoring the corpus state to epoch 5, batch 156666",
         "[2019-03-29 22:38:03] Training started",
         display("23:06:01", 157000, 5), display("23:24:49", 157500, 5)]


def test_the_corpus_state_restored_is_a_restore_of_its_batch() -> None:
    doc = read(FIRST + END + AGAIN)
    assert [(r["line"], r["resumed_from_step"]) for r in doc["restarts"]] == [
        (len(FIRST + END) + 4, 156666)]
    # the save after the last validation is the state the relaunch restored, not update 144500
    assert doc["checkpoint_saves"][-1]["step"] == 156666


def test_a_corpus_loaded_is_no_restore() -> None:
    # negative: the data pipeline reading its corpus, in a launch that is not a resume
    loading = [line.replace("Restoring the corpus state to epoch 5, batch 156666",
                            "Loading the corpus state file corp/train.bpe.yml")
               for line in AGAIN]
    assert read(FIRST + END + loading)["restarts"] == []


def test_best_model_exports_beside_saves_of_the_optimizer_state_are_no_saves() -> None:
    steps = [s["step"] for s in read(TOP + FIRST + END)["checkpoint_saves"]]
    assert steps == [142000, 144000, 144500]


def test_a_best_model_save_where_no_save_prints_the_optimizer_state_stays_one() -> None:
    # negative: without the optimizer lines, the log's saves are its best-model files
    lines = [line for line in TOP + FIRST + END if "Adam" not in line]
    assert len(read(lines)["checkpoint_saves"]) == 4
