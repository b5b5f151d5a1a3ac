"""newcomer8 F3 and F4 (tests/data/newcomer8/FINDINGS.md), `gpuslo report --training-log DIR`.

F3: one 8 s dated log (pytorch/torchtitan PR #3393) beside two undated ones (epfLLM/Megatron-LLM
#11, four unstamped iterations; PixelLib #59, three Keras epochs) removed the undated jobs
(2.3 GPU-h) from the job table and every figure. Each log is a job timed by its own span
(README): the undated ones now count, placed from the dated log's start, and the data quality
names them. F4: with every log's goodput unknown, the job badput, lost GPU-hours and slowdown
badput read 0.0; they are unknown (—), never 0.0. Negatives: undated logs alone keep their
undated window; a log with commit evidence keeps its 0.0-or-more badput figures.
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

from gpuslo.cli import main

INPUTS = Path(__file__).resolve().parents[1] / "data" / "newcomer8" / "inputs"
UNDATED = ("megatronllm11_iterations.log", "pixellib59_keras_epochs.log")
DATED = "torchtitan3393_nockpt.log"


def _report(tmp_path: Path, capsys, folder: Path, *names: str) -> tuple[dict, str]:
    folder.mkdir()
    for name in names:
        shutil.copy(name if Path(name).is_absolute() else INPUTS / name, folder / Path(name).name)
    main(["report", "--training-log", str(folder), "--gpus", "8", "--out",
          str(tmp_path / "r"), "--format", "json,md"])
    capsys.readouterr()
    return (json.loads((tmp_path / "r" / "report.json").read_text()),
            (tmp_path / "r" / "report.md").read_text())


def _section(md: str, title: str) -> str:
    return md.split(f"## {title}", 1)[1].split("\n## ", 1)[0]


def test_newcomer8_f3_undated_logs_stay_in_the_jobs_beside_a_dated_one(tmp_path, capsys):
    doc, md = _report(tmp_path, capsys, tmp_path / "logs", *UNDATED, DATED)
    jobs = {job["job"]: job for job in doc["jobs"]}
    assert set(jobs) == {"megatronllm11_iterations", "pixellib59_keras_epochs",
                         "torchtitan3393_nockpt"}
    # each timed by its own span: 553 s and 510.9 s (the goodput command's spans) × 8 GPUs
    assert round(jobs["pixellib59_keras_epochs"]["allocated_gpu_seconds"]) == 553 * 8
    assert round(jobs["megatronllm11_iterations"]["allocated_gpu_seconds"]) == round(510.908 * 8)
    assert doc["data_quality"]["goodput_logs"] == {"known": 0, "logs": 3}
    placed = doc["data_quality"]["cannot_fill"]["undated_logs"]
    assert "megatronllm11_iterations.log" in placed and "calendar place unknown" in placed
    assert "no place beside the dated logs" not in md


def test_undated_logs_alone_keep_their_undated_window(tmp_path, capsys):  # negative
    doc, md = _report(tmp_path, capsys, tmp_path / "logs", *UNDATED)
    assert "undated (relative to the log's start)" in md.split("\n")[2]
    assert "undated_logs" not in doc["data_quality"]["cannot_fill"]
    assert len(doc["jobs"]) == 2


def test_newcomer8_f4_unknown_goodput_everywhere_is_unknown_badput_not_0(tmp_path, capsys):
    _, md = _report(tmp_path, capsys, tmp_path / "logs", *UNDATED, DATED)
    causes = _section(md, "Top causes by layer and reason")
    assert "0.0 GPU-hours lost in total" not in causes and "0.0 job badput" not in causes
    assert "GPU-hours lost in total unknown" in causes and "job badput unknown" in causes
    node = next(line for line in causes.splitlines() if line.startswith("| node |"))
    assert node == "| node | — | — | — | — |"
    crawl = _section(md, "The crawl")
    assert "0.0 GPU-hours lost to steps slower" not in crawl and "unknown" in crawl


LORA2 = Path(__file__).resolve().parents[1] / "fixtures" / "newcomer6" / "logs" / "lora2.log"


def test_a_log_with_commit_evidence_keeps_its_badput_figures(tmp_path, capsys):  # negative
    _, md = _report(tmp_path, capsys, tmp_path / "logs", str(LORA2), DATED)
    causes = _section(md, "Top causes by layer and reason")
    assert "GPU-hours lost in total:" in causes and "job badput unknown" not in causes
    assert "GPU-hours lost to steps slower" in _section(md, "The crawl")


# -- F2's class on the report path: GPU-ticks of a long log on a million GPUs must not wrap ------
LONG = ("2024-01-01 00:00:00 step 1 loss 1.0\n2024-06-01 00:00:00 step 2 loss 1.0\n"
        "2024-12-31 00:00:00 step 3 loss 1.0\n2024-12-31 00:00:01 checkpoint saved at step 3\n")


def _long_report(tmp_path: Path, capsys, gpus: int) -> dict:
    folder = tmp_path / f"logs{gpus}"
    folder.mkdir()
    (folder / "year.log").write_text(LONG)
    main(["report", "--training-log", str(folder), "--gpus", str(gpus), "--out",
          str(tmp_path / f"r{gpus}"), "--format", "json"])
    capsys.readouterr()
    return json.loads((tmp_path / f"r{gpus}" / "report.json").read_text())


def test_newcomer8_f2_a_year_on_a_million_gpus_never_wraps(tmp_path, capsys):
    doc = _long_report(tmp_path, capsys, 1_000_000)
    span_s = 31_536_001  # 2024-01-01 to 2024-12-31 00:00:01
    assert doc["allocated_gpu_hours"] > 0 and doc["productive_gpu_hours"] > 0
    assert abs(doc["allocated_gpu_hours"] - span_s * 1e6 / 3600) / (span_s * 1e6 / 3600) < 1e-9


def test_a_small_job_keeps_its_exact_hours(tmp_path, capsys):  # negative: 1 ns ticks as before
    doc = _long_report(tmp_path, capsys, 8)
    assert doc["allocated_gpu_hours"] == round(31_536_001 * 8 / 3600, 6) or abs(
        doc["allocated_gpu_hours"] - 31_536_001 * 8 / 3600) < 1e-6
