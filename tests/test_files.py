"""gpuslo.files: atomic, all-or-nothing writes."""

import pytest

from gpuslo.errors import InputError
from gpuslo.files import write_all_atomic, write_atomic, write_text_files


def test_write_atomic_replaces_and_leaves_no_temporary_file(tmp_path):
    target = tmp_path / "deep" / "state.json"
    write_atomic(target, b"one")
    write_atomic(target, b"two")
    assert target.read_bytes() == b"two"
    assert [p.name for p in target.parent.iterdir()] == ["state.json"]


def test_several_files_are_all_or_nothing(tmp_path):
    (tmp_path / "report.json").mkdir()  # cannot become a file
    with pytest.raises(OSError) as raised:
        write_all_atomic({tmp_path / "report.md": b"md", tmp_path / "report.json": b"{}"})
    assert raised.value.filename == str(tmp_path / "report.json")
    assert sorted(p.name for p in tmp_path.iterdir()) == ["report.json"]


def test_text_files_error_names_what_failed(tmp_path):
    (tmp_path / "b.yml").mkdir()
    with pytest.raises(InputError, match="b.yml"):
        write_text_files(tmp_path, {"a.yml": "a", "b.yml": "b"})
    assert not (tmp_path / "a.yml").exists()
    assert write_text_files(tmp_path / "out", {"z": "1", "a": "2"}) == [
        tmp_path / "out" / "a",
        tmp_path / "out" / "z",
    ]
