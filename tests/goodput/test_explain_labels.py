"""`gpuslo goodput --explain`: the label of a counter not read as training steps says the
family of the word that ruled it out, and shows a template's numbers as `<n>`, never the
control characters that stand for them inside the reader."""

from __future__ import annotations

import re

from conftest import SHARED

from gpuslo.goodput.logs import analyse_log
from gpuslo.goodput.logs.roles import not_progress_label

CASES = SHARED / "training_logs" / "cases"
_CONTROL = re.compile(r"[\x00-\x1f]")


def _log(tmp_path, lines: list[str]):
    path = tmp_path / "train.log"
    path.write_text("\n".join(lines) + "\n")
    return path


def _not_progress(path) -> list[str]:
    return [e["why"] for e in analyse_log(path, with_explain=True).document["explain"]
            ["not_progress"]]


def test_each_family_is_named_by_its_words():
    assert not_progress_label("saving", "saving checkpoint at iteration ").startswith(
        "a checkpoint line ('saving' in 'saving checkpoint at iteration')")
    assert not_progress_label("Validation", "Validation ").startswith("an evaluation line")
    assert not_progress_label("Downloading", "Downloading shard ").startswith(
        "a data or set-up line")
    assert not_progress_label("Dumping", "Dumping profiler traces at ").startswith(
        "a profiling or summary line")
    assert not_progress_label("from", "resumed from ").startswith("a run-control line")


def test_numbers_before_the_counter_print_as_n(tmp_path):
    """The head before the counter held earlier numbers as `\\x01`: the label printed them raw
    (`'[\\x01/\\x01] Validation'`)."""
    rows = []
    for i in range(1, 41):
        rows.append(f"[2024-04-06 02:00:{i % 60:02d}] step {i}/40 loss 2.{i % 10} lr 3e-4")
        if i % 10 == 0:
            rows += [f"[{i // 10}/4] Validation batch {b}/5 loss 1.{b}" for b in range(1, 6)]
    whys = _not_progress(_log(tmp_path, rows))
    assert whys and all(not _CONTROL.search(w) for w in whys), whys
    assert any(w.startswith("an evaluation line ('Validation' in '[<n>/<n>] Validation")
               for w in whys), whys


def test_real_logs_name_checkpoint_and_profiler_lines_for_what_they_are():
    """T03 prints Megatron's `saving checkpoint at iteration N`, T12 torchtitan's `Dumping
    profiler traces at step N`: both were labelled `an evaluation, data or download line`."""
    t03 = _not_progress(next(CASES.glob("T03_*.log")))
    t12 = _not_progress(next(CASES.glob("T12_*.log")))
    assert any(w.startswith("a checkpoint line ('saving'") for w in t03), t03
    assert any(w.startswith("a profiling or summary line ('Dumping'") for w in t12), t12
