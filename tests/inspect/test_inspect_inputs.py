"""`gpuslo inspect` options and inputs a newcomer got wrong: unknown `--csv-columns` names,
standard input named twice. Each must be a one-line usage error (exit 2), never `healthy`."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from gpuslo.cli import main
from gpuslo.errors import UsageError
from gpuslo.exporter.evidence.nvidia_smi.csv_output import check_columns
from gpuslo.exporter.inspect.kinds import inspect_files
from gpuslo.exporter.inspect.options import InspectOptions
from tests.conftest import CORPUS

CLI = [sys.executable, "-m", "gpuslo"]
RESET_CSV = (
    CORPUS / "cases" / "033_smi-csv-gpu-recovery-action-reset.txt"
)  # "1, Reset" among 8 rows


def _cli(*argv: str, stdin: str = "") -> subprocess.CompletedProcess:
    return subprocess.run(
        [*CLI, "inspect", *argv], input=stdin, capture_output=True, text=True, timeout=60
    )


def test_unknown_csv_columns_are_a_usage_error_naming_them():
    proc = _cli("--csv-columns", "bogus,xx", str(RESET_CSV))
    assert proc.returncode == 2 and proc.stdout == ""
    assert "'bogus'" in proc.stderr and "'xx'" in proc.stderr and "Traceback" not in proc.stderr
    assert len(proc.stderr.strip().splitlines()) == 1


def test_one_unknown_column_among_known_ones_is_named():
    with pytest.raises(UsageError, match="'gpu_recovery_actoin'"):
        check_columns(("index", "gpu_recovery_actoin"))


@pytest.mark.parametrize("columns", [("index", "index"), ()])
def test_duplicate_or_no_csv_columns_are_usage_errors(columns):
    with pytest.raises(UsageError):
        check_columns(columns)


def test_known_columns_gpuslo_does_not_read_are_accepted_with_units():
    assert check_columns(("index", "power.draw [W]", "Memory.Used", "gpu_recovery_action")) == (
        "index",
        "power.draw",
        "memory.used",
        "gpu_recovery_action",
    )


def test_right_csv_columns_find_the_reset(capsys):
    code = main(
        [
            "inspect",
            "--csv-columns",
            "index,gpu_recovery_action",
            str(RESET_CSV),
            "--format",
            "json",
        ]
    )
    report = json.loads(capsys.readouterr().out)
    assert code == 1 and report["verdict"] == "unhealthy"
    assert any(
        f.get("signal") == "recovery_action" and f.get("gpu") == "1" for f in report["findings"]
    )


def test_column_count_that_does_not_match_the_rows_is_unknown(capsys):
    # 033 has 2 fields a row; 3 named columns cannot be read, so the GPUs are not healthy.
    code = main(
        [
            "inspect",
            "--csv-columns",
            "index,uuid,gpu_recovery_action",
            str(RESET_CSV),
            "--format",
            "json",
        ]
    )
    report = json.loads(capsys.readouterr().out)
    assert code == 1 and report["verdict"] == "unknown"
    assert any("2 fields where the columns are 3" in f["message"] for f in report["findings"])


def test_stdin_named_twice_is_a_usage_error():
    proc = _cli("-", "-", stdin=RESET_CSV.read_text())
    assert proc.returncode == 2 and proc.stdout == "" and "Traceback" not in proc.stderr
    assert "standard input" in proc.stderr and len(proc.stderr.strip().splitlines()) == 1


def test_stdin_once_beside_a_file_is_read():
    case = CORPUS / "cases" / "022_nvidia-smi-q-remapped-rows-pending.txt"
    proc = _cli("--format", "json", str(case), "-", stdin=case.read_text())
    report = json.loads(proc.stdout)
    assert [f["file"] for f in report["files"]] == [str(case), "-"]
    assert all(f["verdict"] == "unhealthy" for f in report["files"])


# Regression (newcomer report): binary bytes pasted before or after real evidence were dropped
# without a word and a fatal finding beside them could vanish, so the verdict read `healthy`.
CASES_DIR = CORPUS / "cases"
NOISE = bytes(range(256)) * 8  # every byte value: not UTF-8, control characters, NULs


@pytest.mark.parametrize("where", ["before", "after"])
def test_binary_beside_any_corpus_case_is_never_healthy(tmp_path, where):
    cases = sorted(CASES_DIR.glob("*.txt"))
    if not cases:
        pytest.skip(f"{CASES_DIR} is not there")
    for case in cases:
        data = case.read_bytes()
        mangled = tmp_path / case.name
        mangled.write_bytes(NOISE + b"\n" + data if where == "before" else data + b"\n" + NOISE)
        report = inspect_files([str(mangled)], InspectOptions())
        assert report["verdict"] != "healthy", case.name
        read = [f for f in report["findings"] if f.get("signal") != "nothing_recognised"]
        if read:  # something was read: the unread binary lines are named beside it
            assert any("binary data" in f.get("message", "") for f in report["findings"]), case.name


def test_a_prompt_before_a_dcgmi_dmon_table_keeps_its_xid(tmp_path):
    (case,) = CASES_DIR.glob("034_*.txt") or pytest.skip("corpus not there")
    pasted = tmp_path / "pasted.txt"
    pasted.write_text("junk " + case.read_text())
    report = inspect_files([str(pasted)], InspectOptions())
    assert report["verdict"] == "unhealthy"
    assert any(f.get("xid") == 120 for f in report["findings"])


@pytest.mark.parametrize("via", ["file", "stdin", "large file"])
def test_an_unterminated_last_line_is_not_read_as_an_event(via, tmp_path, capsys, monkeypatch):
    """Issue 25 #11: `...: 63` cut after its 6 is not an Xid 6. Like the live check, inspect reads
    complete lines only; the cut-off line holding a GPU marker makes the verdict unknown (never
    healthy, never a fatal Xid that is not there), and the inventory finding says the last line
    was incomplete."""
    import io
    import json

    from gpuslo.cli import main

    whole = "[  100.000000] NVRM: Xid (PCI:0000:3b:00): 13, pid=1, Graphics Exception\n"
    cut = "[  200.000000] NVRM: Xid (PCI:0000:3b:00): 6"
    filler = "[    0.000000] Linux version 6.8.0 (buildd@lcy02) #1 SMP\n" * (
        160_000 if via == "large file" else 0)  # past STREAM_BYTES: the streamed scan
    path = tmp_path / "kern.log"
    path.write_text(filler + whole + cut)
    if via == "stdin":
        monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(path.read_bytes())))
    code = main(["inspect", "-" if via == "stdin" else str(path), "--format", "json"])
    report = json.loads(capsys.readouterr().out)
    findings = report["findings"] if isinstance(report, dict) else report
    assert code == 1 and not any(f.get("xid") == 6 for f in findings), findings
    (cut_off,) = [f for f in findings if f.get("signal") == "incomplete_last_line"]
    assert cut_off["class"] == "unknown" and cut_off["reason"] == "parse_error"
    (read,) = [f for f in findings if f.get("signal") == "kernel_log_read"]
    assert "is incomplete (no newline), not read" in read["message"]
    assert any(f.get("xid") == 13 for f in findings)
