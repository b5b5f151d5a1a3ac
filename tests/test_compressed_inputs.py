"""xz and bzip2 evidence and logs are decompressed as they are read by every command, as gzip
is; zstd is refused with one line saying so (newcomer6 finding 15, tests/fixtures/newcomer6/
hostile: one Xid 79 line compressed with `xz`, `zstd` and `bzip2` by the newcomer; `inspect`
read the xz and zstd files' visible bytes as text while `goodput` called the xz one binary, and
the README named gzip only). The negatives: a text file that starts with `BZh` is text, and a
file with xz's magic that does not decompress is one line, exit 2."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from gpuslo.cli import main

HOSTILE = Path(__file__).parent / "fixtures" / "newcomer6" / "hostile"


def _json(capsys, *argv: str) -> tuple[int, dict]:
    code = main([*argv, "--format", "json"])
    return code, json.loads(capsys.readouterr().out)


@pytest.mark.parametrize("name", ["x.txt", "x.txt.xz", "x.txt.bz2"])
def test_every_command_reads_the_decompressed_line(name, capsys):
    code, doc = _json(capsys, "inspect", str(HOSTILE / name))
    assert code == 1 and doc["verdict"] == "unhealthy"
    assert any(f.get("signal") == "Xid 79" or f.get("xid") == 79 for f in doc["findings"]), doc
    code, doc = _json(capsys, "goodput", str(HOSTILE / name))
    assert [i["cause"] for i in doc["interruptions"]] == ["xid"], doc["interruptions"]


def test_zstd_is_refused_in_one_line(capsys):
    for command in ("inspect", "goodput"):
        assert main([command, str(HOSTILE / "x.txt.zst")]) == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and "zstd-compressed: not read" in err, err


def test_negative_text_that_starts_like_bzip2_is_text(tmp_path, capsys):
    path = tmp_path / "bz.txt"
    path.write_text("BZh9 is not a kernel log line\n" + (HOSTILE / "x.txt").read_text())
    code, doc = _json(capsys, "inspect", str(path))
    assert doc["verdict"] == "unhealthy"


def test_negative_a_corrupt_xz_is_one_line_exit_2(tmp_path, capsys):
    path = tmp_path / "cut.log.xz"
    path.write_bytes((HOSTILE / "x.txt.xz").read_bytes()[:40])
    assert main(["inspect", str(path)]) == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "corrupt xz" in err, err
