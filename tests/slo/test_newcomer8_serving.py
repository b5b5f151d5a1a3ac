"""newcomer8 F2 and F5 (tests/data/newcomer8/FINDINGS.md), `gpuslo serving-log`.

F2: `--gpus` had no upper bound and the accounting counted a replica's GPU-ticks in 1 ns ticks
chosen for one GPU per row, so 20 s × 5e8 GPUs passed 2^63 and printed negative GPU-hours as
`ok`. The tick now fits every GPU held, and the CLI bounds --gpus to 1..1,000,000 as goodput does.
Real input: intel/llm-scaler #391 (three vLLM V1 stats lines, 10 s apart).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from gpuslo.cli import main
from gpuslo.slo.serving_logs import serving_log

INPUTS = Path(__file__).resolve().parents[1] / "data" / "newcomer8" / "inputs"
SCALER = INPUTS / "llmscaler391_running1_waiting14.log"


@pytest.mark.parametrize("gpus", [461_168_602, 500_000_000, 4_294_967_296, 10**10])
def test_newcomer8_f2_gpu_hours_never_wrap(gpus):
    doc = serving_log(SCALER, gpus=gpus)  # the library, past the CLI's bound
    assert doc["status"] == "ok"
    assert doc["gpu_hours"]["serving"] == pytest.approx(20 * gpus / 3600, rel=1e-9)
    assert all(h >= 0 for h in doc["gpu_hours"].values())


def test_a_sane_gpu_count_keeps_its_exact_figure():  # negative: 8 GPUs, 1 ns ticks as before
    doc = serving_log(SCALER, gpus=8)
    assert doc["gpu_hours"]["serving"] == round(20 * 8 / 3600, 6)


@pytest.mark.parametrize("value, fine", [("1000000", True), ("1000001", False),
                                         ("500000000", False), ("0", False)])
def test_newcomer8_f2_cli_bounds_gpus_like_goodput(capsys, value, fine):
    try:
        code = main(["serving-log", str(SCALER), "--gpus", value])
    except SystemExit as stop:  # argparse's usage error
        code = stop.code
    err = capsys.readouterr().err
    if fine:
        assert code == 0 and err == ""
    else:
        assert code == 2 and err.count("\n") == 1 and "expected 1 to 1,000,000 GPUs" in err


# -- F5: vllm-project/vllm PR #8378 (comment 2024-09-18): "requests just stack up in pending after
# a few get through ... it just hangs". Judged a stall: nothing runs, 22 wait, no token in 5 s.
PENDING = INPUTS / "vllm8378_pending_no_progress.log"


def test_newcomer8_f5_a_queue_with_nothing_running_and_no_token_is_a_stall():
    doc = serving_log(PENDING, gpus=8)
    assert doc["status"] == "ok"
    assert (doc["seconds"]["serving"], doc["seconds"]["not_ready"]) == (5.0, 5.0)
    assert [(e["category"], e["reason"]) for e in doc["timeline"]] == [
        ("serving", None), ("not_ready", "engine_stall")]
    assert doc["facts"]["stalls"] == [{"from_s": 5.0, "to_s": 10.0, "line": 9}]


def test_a_queue_with_tokens_processed_still_serves(tmp_path):  # negative: line 5 of #8378
    lines = PENDING.read_text().splitlines()
    assert "Running: 0 reqs" in lines[4] and "Pending: 12 reqs" in lines[4]
    path = tmp_path / "vllm.log"
    path.write_text("\n".join(lines[:5]) + "\n")  # 70.6 prompt tokens/s: the window served
    doc = serving_log(path, gpus=8)
    assert doc["seconds"]["serving"] == 5.0 and doc["facts"]["stalls"] == []


def test_one_running_line_at_zero_tokens_is_still_no_stall(tmp_path):  # negative: prefill
    line = PENDING.read_text().splitlines()[8].replace("Running: 0 reqs", "Running: 1 reqs")
    path = tmp_path / "vllm.log"
    path.write_text("\n".join(PENDING.read_text().splitlines()[:8] + [line]) + "\n")
    assert serving_log(path, gpus=8)["facts"]["stalls"] == []


# -- F6: `serving-log -` was refused while `<(...)` and /dev/stdin pipes were read ---------------
def test_newcomer8_f6_standard_input_is_read_like_a_file(monkeypatch, capsys):
    import io
    import json

    monkeypatch.setattr("sys.stdin", io.TextIOWrapper(io.BytesIO(PENDING.read_bytes())))
    assert main(["serving-log", "-", "--gpus", "8"]) == 0
    doc = json.loads(capsys.readouterr().out)
    assert doc["file"] == "<stdin>"
    assert doc["seconds"] == serving_log(PENDING, gpus=8)["seconds"]  # the file's own reading


# -- F7: vllm-project/vllm #48707, EngineCore ERROR frames with no final exception line ----------
def test_newcomer8_f7_a_traceback_without_its_exception_line_is_named():
    doc = serving_log(INPUTS / "vllm48707_enginecore_crash.log", gpus=1)
    assert doc["status"] == "unknown" and doc["markers"]["crash"] == 0
    assert "Python traceback from line 3 without its exception line" in doc["reason"]


def test_a_log_with_no_traceback_and_no_marker_keeps_its_reason(tmp_path):  # negative
    path = tmp_path / "app.log"
    path.write_text('INFO:     10.0.0.99:58210 - "POST /v1/chat/completions HTTP/1.1" 200 OK\n')
    doc = serving_log(path)
    assert doc["reason"] == "no serving marker (loading, ready, throughput, crash or shutdown line)"


# -- F10: an empty file says "empty", in the words inspect and goodput use ---------------------
def test_newcomer8_f10_an_empty_log_says_empty():
    doc = serving_log(INPUTS / "hostile" / "empty.log")
    assert (doc["status"], doc["reason"]) == ("unknown", "empty file: nothing to read")


def test_a_blank_line_is_not_an_empty_file(tmp_path):  # negative: one line, no marker
    path = tmp_path / "blank.log"
    path.write_text("\n")
    assert serving_log(path)["reason"] != "empty file: nothing to read"
