"""Save and restore wordings the fresh7 first-contact batch showed missing, each read on the
case's real lines and on a negative beside it: a checkpoint path printed alone after the write
(J13), the input pipeline's state restored with a run's checkpoint and a save begun before any
step where the log ends (J10).
"""

from __future__ import annotations

from gpuslo.goodput.logs import load_profiles
from gpuslo.goodput.logs.assemble import assemble
from gpuslo.goodput.logs.reader import parse_lines

PROFILES = load_profiles()


def read(lines: list[str]) -> dict:
    parsed = parse_lines(lines, PROFILES)
    return assemble(parsed, job="t", gpus=1, checkpoint_step=PROFILES.checkpoint_step).document


# -- WLASL's train_i3d.py: torch.save(...) then print(path) (fresh7 J13) -----------------------
ROW = "Epoch {e} train Loc Loss: 0.0044 Cls Loss: 0.0044 Tot Loss: 0.0044 Accu :0.0010"
WLASL = ([ROW.format(e=1)] * 7 + [
    "checkpoints/nslt_2000_003036_0.001389.pt",
    "VALIDATION: test Loc Loss: 0.0043 Cls Loss: 0.0043 Tot Loss: 0.0043 Accu :0.0014",
    "Step 3036/64000",
    "----------",
] + [ROW.format(e=2)] * 8)


def test_a_checkpoint_path_alone_on_its_line_is_a_save() -> None:
    # real lines (dxli94/WLASL#74): the file name repeats the step printed after it, zero-padded
    doc = read(WLASL)
    assert [s["step"] for s in doc["checkpoint_saves"]] == [3036]


def test_a_path_right_after_saving_checkpoint_at_is_that_saves_own() -> None:
    # negative: vak's `Saving checkpoint at:` then the path on the next line, twice for one
    # save (best model's words, then the path): the path line neither ends nor parts the save
    lines = ["Step 2000 is a validation step; computing metrics on validation set",
             "Accuracy on validation set improved. Saving best-val checkpoint.",
             "Saving checkpoint at:", "/scratch/exp7/checkpoints/best-ckpt.pt",
             "Checkpoint directory is ready.",
             "Saving checkpoint at:", "/scratch/exp7/checkpoints/ckpt.pt"]
    assert len(read(lines)["checkpoint_saves"]) == 1


def test_a_data_path_alone_on_its_line_is_no_save() -> None:
    # negative: a path alone whose file is no checkpoint (a data list), the same lines around it
    lines = [line if not line.endswith(".pt") else "data/splits/nslt_2000.json" for line in WLASL]
    assert read(lines)["checkpoint_saves"] == []


def test_a_path_inside_a_sentence_is_not_read_as_the_bare_path_save() -> None:
    # negative: a path in prose (a load of weights to fine-tune from) is no save
    lines = [line if not line.endswith(".pt") else
             "using weights checkpoints/rgb_imagenet.pt for the backbone" for line in WLASL]
    assert read(lines)["checkpoint_saves"] == []


# -- T5X: a resumed run restores its dataset iterator; the save before the loop hangs (J10) -----
T5X = [
    "I1025 08:58:19.649921 139866418210816 checkpoints.py:1191] Restoring dataset iterator "
    "from 'train_ds-027-of-032'.",
    "E1025 08:58:19.650164 139866418210816 dataset_iterator.py:130] DatasetIterator.load() is "
    "deprecated. Please use restore().",
    "I1025 08:58:21.356897 139866418210816 train.py:393] Initialize/restore complete "
    "(4.48 seconds).",
    "I1025 08:58:21.359025 139866418210816 train.py:568] Saving checkpoint before the training "
    "loop starts.",
]


def test_restoring_the_dataset_iterator_is_a_restore() -> None:
    # real lines (google-research/t5x#1603)
    doc = read(T5X)
    assert len(doc["restarts"]) == 1
    assert doc["restarts"][0]["resumed_from_step"] is None


def test_loading_a_dataset_is_no_restore() -> None:
    # negative: the input pipeline built from files, not restored from a checkpoint
    lines = ["I1025 08:58:19.649921 139866418210816 input.py:10] Loading dataset from "
             "'gs://bucket/train_ds-027-of-032'."] + T5X[1:]
    assert read(lines)["restarts"] == []


# T5X train.py logs `Initialize/restore complete (N seconds).` after a restore AND after a fresh
# initialisation (utils.py: `Initializing parameters from scratch.`); only the lines before it
# say which (google-research/t5x train.py and utils.py TrainStateInitializer)
STAMP = "I1025 08:{m:02d}:{s:02d}.356897 139866418210816 "
COMPLETE = T5X[2]  # real: "train.py:393] Initialize/restore complete (4.48 seconds)."
STEPS = [STAMP.format(m=59, s=k) + f"train.py:700] Step {1010 + 10 * k}: loss=2.0"
         for k in range(20)]


def test_initialize_restore_complete_alone_is_no_restore() -> None:
    # negative: the line ends a fresh initialisation as well; alone it names no checkpoint
    for head in ([COMPLETE], [STAMP.format(m=58, s=0) + "utils.py:300] Initializing parameters "
                              "from scratch.", COMPLETE]):
        doc = read(head + STEPS)
        assert doc["restarts"] == [] and doc["steps"]["first"] == 1010, doc


def test_initialize_restore_complete_closes_a_t5x_restore_that_names_its_step() -> None:
    # the restore lines T5X's TrainStateInitializer.from_checkpoints logs (utils.py)
    head = [STAMP.format(m=58, s=0) + "utils.py:300] Restoring latest T5X checkpoint.",
            STAMP.format(m=58, s=0) + "utils.py:301] Restoring checkpoints for path(s): "
            "['gs://bucket/model/checkpoint_1000']",
            STAMP.format(m=58, s=0) + "utils.py:302] Initializing parameters from specific "
            "T5X checkpoint gs://bucket/model/checkpoint_1000",
            STAMP.format(m=58, s=12) + "train.py:393] Initialize/restore complete "
            "(12.34 seconds)."]
    doc = read(head + STEPS)
    assert [r["resumed_from_step"] for r in doc["restarts"]] == [1000]
    assert doc["goodput"]["gpu_seconds"]["checkpoint_restore"] == 12.0
    assert doc["status"] == "ok"  # the restore of 1000 is commit evidence before the steps


def test_a_pretrained_t5x_checkpoint_is_a_load_not_a_restore() -> None:
    # negative: fine-tuning from INITIAL_CHECKPOINT_PATH loads weights; no run is resumed
    head = [STAMP.format(m=58, s=0) + "utils.py:300] Restoring specific checkpoint(s): "
            "['gs://t5-data/pretrained_models/t5x/t5_1_1_xl/checkpoint_1000000']",
            STAMP.format(m=58, s=12) + "train.py:393] Initialize/restore complete "
            "(12.34 seconds)."]
    assert read(head + STEPS)["restarts"] == []


def test_a_save_begun_before_any_step_where_the_log_ends_is_not_counted() -> None:
    # real lines (J10): the reporter says it never passes this line
    doc = read(T5X)
    assert doc["checkpoint_saves"] == []
    assert any("not seen to finish" in n for n in doc["notes"])


def test_a_save_begun_after_the_steps_where_the_log_ends_is_still_a_save() -> None:
    # negative: InnerEye's `Saving latest checkpoint...` closing its epoch (fresh2 D20's shape)
    lines = [f"2021-03-19T14:41:{10 + k:02d}Z INFO     Epoch {k} training took 6.60sec, of "
             "which waiting for data took 0.45 sec total." for k in range(3)]
    doc = read(lines + ["2021-03-19T14:41:23Z INFO     Saving latest checkpoint..."])
    assert len(doc["checkpoint_saves"]) == 1
