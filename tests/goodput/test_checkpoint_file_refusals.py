"""`goodput --checkpoint-dir` refuses files that cannot be this run's finished saves (newcomer12
F2, `gpuslo.goodput.logs.filecommits`). A tester built the repro: an HF log of steps 1..200
(2026-11-01 10:00:02 to 10:06:40, 2 s a step, no save line) beside `checkpoint-5000` dated
2025 (another run's: goodput 1.0, exit 0) and an empty `checkpoint-100/` (a save in progress
or failed, read as a commit). Each is refused with a note naming it; goodput stays unknown
when nothing is left; a sound file of this run still commits (the negatives)."""

from __future__ import annotations

import calendar
import os
from pathlib import Path

from gpuslo.goodput.logs import analyse_log, load_profiles
from gpuslo.goodput.logs.filecommits import FileCommit, sound_files

PROFILES = load_profiles()
START = calendar.timegm((2026, 11, 1, 10, 0, 0))


def _log(tmp_path: Path) -> Path:
    lines = [f"[INFO|2026-11-01 10:{(2 * s) // 60:02d}:{(2 * s) % 60:02d}] {{'loss': 2.4, "
             f"'grad_norm': 1.2, 'learning_rate': 5e-05, 'epoch': {s / 200:.2f}, 'step': {s}}}"
             for s in range(1, 201)]
    path = tmp_path / "train.log"
    path.write_text("\n".join(lines) + "\n")
    return path


def _checkpoint(tmp_path: Path, step: int, when: float, content: bool = True) -> str:
    folder = tmp_path / "ck" / f"checkpoint-{step}"
    folder.mkdir(parents=True)
    if content:
        (folder / "model.safetensors").write_bytes(b"{}")
    os.utime(folder, (when, when))
    return str(tmp_path / "ck" / "*")


def _goodput(tmp_path: Path, spec: str) -> dict:
    return analyse_log(_log(tmp_path), PROFILES, gpus=8, checkpoint_dir=spec).document


def test_another_runs_checkpoint_beyond_the_logs_steps_and_time_is_refused(tmp_path):
    doc = _goodput(tmp_path, _checkpoint(tmp_path, 5000, calendar.timegm((2025, 1, 1, 0, 0, 0))))
    assert doc["goodput"]["goodput"] is None and doc["goodput"]["status"] == "unknown"
    assert any("checkpoint file checkpoint-5000: step 5000 is beyond the log's last step 200"
               in n for n in doc["notes"])
    assert doc["checkpoint_saves"] == []


def test_a_checkpoint_dated_long_before_the_log_is_refused_even_at_a_step_it_reached(tmp_path):
    doc = _goodput(tmp_path, _checkpoint(tmp_path, 100, calendar.timegm((2025, 1, 1, 0, 0, 0))))
    assert doc["goodput"]["goodput"] is None
    assert any("checkpoint-100: its time 2025-01-01T00:00:00Z is more than 14 h outside" in n
               for n in doc["notes"])


def test_an_empty_checkpoint_directory_is_a_save_not_finished(tmp_path):
    doc = _goodput(tmp_path, _checkpoint(tmp_path, 100, START + 200, content=False))
    assert doc["goodput"]["goodput"] is None
    assert any("checkpoint file checkpoint-100: empty" in n for n in doc["notes"])


def test_negative_this_runs_checkpoint_commits(tmp_path):
    doc = _goodput(tmp_path, _checkpoint(tmp_path, 100, START + 200))
    assert doc["goodput"]["status"] == "ok" and 0.45 < doc["goodput"]["goodput"] < 0.55
    assert not any("refused" in n for n in doc["notes"])
    assert [s["step"] for s in doc["checkpoint_saves"]] == [100]


def test_negative_a_save_a_stride_past_the_last_line_is_this_runs():
    """HF logs every `logging_steps`; the final save may name a step just past the last line."""
    kept, notes = sound_files([FileCommit(205, None, "checkpoint-205"),
                               FileCommit(260, None, "checkpoint-260")],
                              None, None, last_step=200, stride=10)
    assert [c.step for c in kept] == [205] and len(notes) == 1 and "260" in notes[0]
