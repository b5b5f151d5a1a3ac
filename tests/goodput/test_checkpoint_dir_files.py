"""`goodput --checkpoint-dir`: a checkpoint file on disk is a finished save that names what it
wrote. It used to be a save on "line 0" of the log, which a log with no progress line called
"a save begun where the log ends, not seen to finish: not counted" right after "3 checkpoint
file(s) read as commits". Now each is listed by its file name (`file`, no line) and never as
unfinished; a save line of the log itself keeps its line (the negative)."""

from __future__ import annotations

from pathlib import Path

from gpuslo.cli import main
from gpuslo.goodput.logs import analyse_log, load_profiles

PROFILES = load_profiles()
FILES = ("epoch=0-step=1000.ckpt", "epoch=1-step=2000.ckpt", "epoch=2-step=3000.ckpt",
         "last.ckpt")
# Lightning's start-up lines (the newcomer's lightning.log), no progress line read
HEADER = ["GPU available: True (cuda), used: True",
          "TPU available: False, using: 0 TPU cores",
          "LOCAL_RANK: 0 - CUDA_VISIBLE_DEVICES: [0,1,2,3,4,5,6,7]"]
T5X_SAVE = ("I1025 08:58:21.359025 139866418210816 train.py:568] Saving checkpoint before the "
            "training loop starts.")


def _dir(tmp_path: Path) -> Path:
    ckpt = tmp_path / "ckpt"
    ckpt.mkdir()
    for name in FILES:
        (ckpt / name).write_bytes(b"weights")  # an empty file is a save not finished: refused
    return ckpt


def _log(tmp_path: Path, lines: list[str]) -> Path:
    log = tmp_path / "train.log"
    log.write_text("\n".join(lines) + "\n")
    return log


def test_files_are_named_never_line_0_or_unfinished(tmp_path):
    doc = analyse_log(_log(tmp_path, HEADER), PROFILES, gpus=8,
                      checkpoint_dir=str(_dir(tmp_path))).document
    assert [(s["file"], s["step"], s["line"]) for s in doc["checkpoint_saves"]] == [
        (FILES[0], 1000, None), (FILES[1], 2000, None), (FILES[2], 3000, None)]
    assert "3 checkpoint file(s) read as commits" in doc["notes"]
    assert not any("line 0" in n or "not seen to finish" in n for n in doc["notes"])


def test_text_output_names_each_file(tmp_path, capsys):
    log = _log(tmp_path, HEADER)
    main(["goodput", str(log), "--gpus", "8", "--checkpoint-dir", str(_dir(tmp_path))])
    out = capsys.readouterr().out
    assert f"checkpoint file {FILES[0]}: read as the commit of step 1000" in out
    assert "line 0" not in out and "not counted" not in out


def test_negative_a_log_save_line_keeps_its_line_and_no_file(tmp_path):
    lines = [f"2021-03-19T14:41:{10 + k:02d}Z INFO     Epoch {k} training took 6.60sec, of "
             "which waiting for data took 0.45 sec total." for k in range(3)]
    lines.append("2021-03-19T14:41:23Z INFO     Saving latest checkpoint...")
    doc = analyse_log(_log(tmp_path, lines), PROFILES, gpus=8).document
    assert [(s["line"], "file" in s) for s in doc["checkpoint_saves"]] == [(4, False)]


def test_negative_a_log_save_begun_where_it_ends_is_still_not_counted(tmp_path):
    doc = analyse_log(_log(tmp_path, [T5X_SAVE]), PROFILES, gpus=8).document
    assert doc["checkpoint_saves"] == []
    assert any("line 1: a save begun where the log ends" in n for n in doc["notes"])
