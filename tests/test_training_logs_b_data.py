"""Corpus B of real training logs loads: each expected_b.yaml entry names a case file of its half.

Shapes: tests/data/training_logs/{dev,holdout}/expected_b.yaml, a list of {case, file, facts, ...};
`file` is relative to the half's folder; its name starts with the case id (the checker's glob).
"""
from pathlib import Path

import pytest
import yaml

ROOT = Path(__file__).parent / "data" / "training_logs"


@pytest.mark.parametrize("half", ["dev", "holdout"])
def test_expected_b_names_existing_files(half):
    entries = yaml.safe_load((ROOT / half / "expected_b.yaml").read_text())
    ids = [e["case"] for e in entries]
    assert len(ids) == len(set(ids))
    for e in entries:
        path = ROOT / half / e["file"]
        assert path.is_file(), e["file"]
        assert path.name.startswith(e["case"] + "_")
        assert isinstance(e.get("facts"), dict), e["case"]
    listed = {Path(e["file"]).name for e in entries}
    assert {p.name for p in (ROOT / half / "cases").glob("B*")} == listed
