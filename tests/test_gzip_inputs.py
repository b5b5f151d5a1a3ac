"""gzip-compressed evidence and logs (`kern.log.2.gz`, kubelet's `0.log.<time>.gz`, rotated
training logs): detected by gzip's magic bytes 1f 8b (RFC 1952 §2.3.1), not by the name, and
decompressed as they are read, so `goodput`, `inspect` and `report --training-log DIR` answer
as for the plain file. A corrupt gzip is one stderr line naming the file, exit 2. A directory
given to `report --training-log` never drops a file silently: what it did not read is listed
under data_quality.cannot_fill.training_logs.
"""

from __future__ import annotations

import gzip
import json
from pathlib import Path

import pytest
from conftest import CORPUS

from gpuslo.cli import main

TRAINING_LOG = Path(__file__).parent / "goodput" / "data" / "torchtitan_crash_restart.log"
KERNEL_LOG = CORPUS / "cases" / "002_xid45-secondary-to-xid149-xid145.txt"


def _gzip(source: Path, target: Path) -> Path:
    target.write_bytes(gzip.compress(source.read_bytes()))
    return target


def _json(capsys, *argv: str) -> tuple[int, dict]:
    code = main([*argv, "--format", "json"])
    return code, json.loads(capsys.readouterr().out)


def _without_names(doc):
    """`doc` with every file name dropped (the .gz copy is named differently)."""
    if isinstance(doc, dict):
        return {k: _without_names(v) for k, v in doc.items() if k not in ("file", "files")}
    if isinstance(doc, list):
        return [_without_names(v) for v in doc]
    return doc


def test_goodput_reads_a_gzip_log_as_the_plain_log(tmp_path, capsys):
    plain = _json(capsys, "goodput", str(TRAINING_LOG), "--gpus", "8")
    packed = _json(capsys, "goodput", str(_gzip(TRAINING_LOG, tmp_path / "train.log.2.gz")),
                   "--gpus", "8")
    assert packed[0] == plain[0]
    assert _without_names(packed[1]) == _without_names(plain[1])


def test_inspect_reads_a_gzip_kernel_log_as_the_plain_one(tmp_path, capsys):
    plain = _json(capsys, "inspect", str(KERNEL_LOG))
    packed = _json(capsys, "inspect", str(_gzip(KERNEL_LOG, tmp_path / "kern.log.2.gz")))
    assert packed[0] == plain[0] and packed[1]["verdict"] == plain[1]["verdict"]
    xids = {f.get("xid") for f in plain[1]["findings"]} - {None}
    assert xids and {f.get("xid") for f in packed[1]["findings"]} - {None} == xids


@pytest.mark.parametrize("command", (["goodput", "--gpus", "8"], ["inspect"]))
def test_a_corrupt_gzip_is_one_line_naming_the_file_exit_2(tmp_path, capsys, command):
    cut = tmp_path / "0.log.20240501-120000.gz"
    cut.write_bytes(gzip.compress(TRAINING_LOG.read_bytes())[:300])  # a copy that stopped
    assert main([command[0], str(cut), *command[1:]]) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and str(cut) in err and "corrupt gzip" in err


def test_negative_a_gz_name_without_the_magic_is_read_as_text(tmp_path, capsys):
    named = tmp_path / "train.log.gz"
    named.write_bytes(TRAINING_LOG.read_bytes())  # not compressed: the name is not the rule
    plain = _json(capsys, "goodput", str(TRAINING_LOG), "--gpus", "8")
    assert _without_names(_json(capsys, "goodput", str(named), "--gpus", "8")[1]) == \
        _without_names(plain[1])


def test_negative_one_magic_byte_is_not_gzip(tmp_path, capsys):
    text = tmp_path / "odd.log"
    text.write_bytes(b"\x1f" + KERNEL_LOG.read_bytes())  # 1f then text: not 1f 8b
    code, doc = _json(capsys, "inspect", str(text))  # read as text: no gzip error, exit 2
    assert code == 1 and "gzip" not in capsys.readouterr().err
    assert {f.get("xid") for f in doc["findings"]} >= {145, 149}


def test_report_reads_gzip_logs_in_a_directory_and_lists_what_it_did_not(tmp_path, capsys):
    logs = tmp_path / "logs"
    logs.mkdir()
    _gzip(TRAINING_LOG, logs / "train.log.1.gz")
    (logs / "model.ckpt").write_bytes(b"\0" * 64)
    assert main(["report", "--training-log", str(logs), "--gpus", "8",
                 "--out", str(tmp_path / "out"), "--format", "json"]) == 0
    doc = json.loads((tmp_path / "out" / "report.json").read_text())
    assert [j["job"] for j in doc["jobs"]] and doc["productive_gpu_hours"] > 0
    listed = doc["data_quality"]["cannot_fill"]["training_logs"]
    assert f"{logs / 'model.ckpt'}: not read" in listed and "train.log.1.gz" not in listed


def test_negative_a_directory_of_logs_only_lists_nothing_unread(tmp_path):
    logs = tmp_path / "logs"
    logs.mkdir()
    (logs / "train.log").write_bytes(TRAINING_LOG.read_bytes())
    assert main(["report", "--training-log", str(logs), "--gpus", "8",
                 "--out", str(tmp_path / "out"), "--format", "json"]) == 0
    doc = json.loads((tmp_path / "out" / "report.json").read_text())
    assert "training_logs" not in doc["data_quality"]["cannot_fill"]


def test_inspect_reads_gzip_on_standard_input(capsys, monkeypatch):
    import io

    plain = _json(capsys, "inspect", str(KERNEL_LOG))
    packed = io.BytesIO(gzip.compress(KERNEL_LOG.read_bytes()))
    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(packed))
    code, doc = _json(capsys, "inspect", "-")
    def facts(report):
        return sorted((f.get("xid") or 0, f.get("class"), f.get("events") or 0,
                       f.get("action") or "") for f in report["findings"])

    assert code == plain[0] and doc["verdict"] == plain[1]["verdict"]
    assert facts(doc) == facts(plain[1]) and any(x for x, *_ in facts(doc))
