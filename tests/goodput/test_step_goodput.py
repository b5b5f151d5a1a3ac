"""Goodput by steps (issue 23, `stepbasis`): a log that proves commits and numbers its steps but
gives no time at all gets goodput as committed steps over steps run, with every GPU-second
figure unknown; a log with a clock keeps time-based goodput; a log with no commit evidence, or
with no progress line, has none. Hand-varied lines (darkflow-like `step N - loss`, a generic
`iter N | loss`), none a first-contact case's own."""

from __future__ import annotations

from pathlib import Path

from gpuslo.cli.goodput import _one_model, render_text
from gpuslo.goodput.calculator import compute_goodput
from gpuslo.goodput.logs import LogGoodput
from gpuslo.goodput.logs.assemble import assemble
from gpuslo.goodput.logs.reader import parse_lines
from gpuslo.goodput.logs.stepbasis import BASIS_GPU_SECONDS, BASIS_STEPS
from gpuslo.goodput.slowdown import SlowdownRule
from tests.goodput.test_log_classes import PROFILES, read


def _iters(first: int, last: int) -> list[str]:
    return [f"iter {n} | loss {5 - n / 100:.3f}" for n in range(first, last + 1)]


def _save(step: int) -> str:
    return f"Saving checkpoint to ckpt/model_step{step}.pt"


def test_commits_and_steps_with_no_clock_give_goodput_by_steps() -> None:
    # darkflow-like wording, saves every 8 steps, 4 steps after the last save
    lines = []
    for n in range(41, 61):
        lines.append(f"step {n} - loss {90 - n / 10:.4f} - moving ave loss {91 - n / 10:.4f}")
        if n % 8 == 0:
            lines.append(f"Checkpoint at step {n}")
    g = read(lines)["goodput"]
    assert g["goodput_basis"] == BASIS_STEPS and g["status"] == "ok"
    assert g["steps"] == {"productive": 16, "wasted": 0, "uncommitted": 4, "accounted": 20}
    assert g["goodput"] == 0.8
    assert "no clock" in g["reason"] and "GPU-seconds unknown" in g["reason"]


def test_every_gpu_second_figure_stays_unknown_by_steps() -> None:
    g = read(_iters(1, 10) + [_save(10)] + _iters(11, 20) + [_save(20)])["goodput"]
    assert g["goodput"] == 1.0
    assert set(g["gpu_seconds"].values()) == {None}
    assert g["uncommitted_gpu_s"] is None and g["accounted_gpu_s"] is None
    assert g["slowdown_gpu_s"] is None


def test_steps_rerun_after_a_restore_are_wasted_by_steps() -> None:
    # saved at 10, ran to 15, restored from 10, ran 11..30 and saved: 11..15 ran twice
    lines = (_iters(1, 10) + [_save(10)] + _iters(11, 15)
             + ["Loading checkpoint from ckpt/model_step10.pt"] + _iters(11, 30) + [_save(30)])
    doc = read(lines)
    assert doc["restarts"][0]["resumed_from_step"] == 10
    assert doc["goodput"]["steps"] == {"productive": 30, "wasted": 5, "uncommitted": 0,
                                       "accounted": 35}
    assert doc["goodput"]["goodput"] == round(30 / 35, 6)


def test_a_log_with_a_clock_keeps_time_based_goodput() -> None:
    # negative: the same lines, stamped one second apart
    lines = _iters(1, 10) + [_save(10)] + _iters(11, 20) + [_save(20)] + _iters(21, 30)
    stamped = [f"2024-03-01 10:{k // 60:02d}:{k % 60:02d} {line}" for k, line in enumerate(lines)]
    g = read(stamped)["goodput"]
    assert g["goodput_basis"] == BASIS_GPU_SECONDS and "steps" not in g
    assert g["gpu_seconds"]["productive"] > 0 and 0 < g["goodput"] < 1


def test_no_commit_evidence_stays_unknown_without_a_clock() -> None:
    # negative: steps, no save, no restore: which steps were committed cannot be known
    g = read(_iters(1, 30))["goodput"]
    assert g["status"] == "unknown" and g["goodput"] is None
    assert g["goodput_basis"] == BASIS_GPU_SECONDS and "no commit evidence" in g["reason"]


def test_a_restore_with_no_progress_line_has_nothing_to_apportion() -> None:
    doc = read(["Loading checkpoint from ckpt/model_step10.pt", "resuming training"])
    assert doc["status"] == "unknown" and doc["goodput"] is None
    assert doc["restarts"][0]["resumed_from_step"] == 10


def _analysis(lines: list[str]) -> LogGoodput:
    parsed = parse_lines(lines, PROFILES)
    result = assemble(parsed, job="t", gpus=2, checkpoint_step=PROFILES.checkpoint_step)
    return LogGoodput({"file": "t.log", **result.document}, result.events)


def test_the_journal_events_book_no_gpu_seconds_by_steps() -> None:
    # what the exporter (--job-log) and `report --training-log` compute from: the events stay
    # those of the log's own clock, so step-based goodput is never booked as GPU-seconds
    analysis = _analysis(_iters(1, 10) + [_save(10)] + _iters(11, 14))
    assert analysis.document["goodput"]["goodput_basis"] == BASIS_STEPS
    booked = compute_goodput(analysis.events)
    assert sum(booked.gpu_seconds.values()) == 0 and booked.uncommitted_gpu_s == 0


def test_the_cli_keeps_and_says_goodput_by_steps() -> None:
    doc = _one_model(_analysis(_iters(1, 10) + [_save(10)] + _iters(11, 14)), SlowdownRule())
    g = doc["goodput"]
    assert g["goodput_basis"] == BASIS_STEPS and g["goodput"] == round(10 / 14, 6)
    assert g["accounted_gpu_s"] is None
    doc.setdefault("interruptions", [])
    text = render_text(doc)
    assert "goodput by steps: productive 10, wasted 0, uncommitted 4 of 14 steps" in text
    assert "GPU-seconds (2 GPUs) unknown (no clock)" in text and "None" not in text


K10 = next((Path(__file__).parent.parent / "data" / "training_logs" / "fresh8" / "cases"
            ).glob("K10_*.log")).read_text().splitlines()


def test_a_restart_whose_resumed_step_is_unknown_gives_no_goodput_by_steps() -> None:
    # real lines (fresh8 K10, improved-diffusion): `loading model from checkpoint:
    # MAINMOD_70K/ema_0.9999_070000.pt...`, the counter at 0, a save at 0; no clock. Was 1.0.
    doc = read(K10)
    g = doc["goodput"]
    assert doc["restarts"][0]["resumed_from_step"] is None
    assert g["goodput_basis"] == BASIS_STEPS and g["status"] == "unknown"
    assert g["goodput"] is None and doc["status"] == "unknown"
    assert g["steps"] == {"productive": None, "wasted": None, "uncommitted": None,
                          "accounted": 1}
    assert "restart at line 1 does not say the step it resumed from" in g["reason"]
    doc.setdefault("interruptions", [])
    doc.setdefault("file", "k10.log")
    assert "None" not in render_text(doc)


def test_a_restart_whose_resumed_step_is_named_keeps_goodput_by_steps() -> None:
    # negative: the same lines, the checkpoint's file named by its step and the counter going
    # on from it (as improved-diffusion does when the file name gives its step)
    named = [line.replace("ema_0.9999_070000.pt", "ckpt-70000.pt")
             .replace("| step      | 0        |", "| step      | 70000    |") for line in K10]
    doc = read(named)
    assert doc["restarts"][0]["resumed_from_step"] == 70000
    assert doc["goodput"]["status"] == "ok" and doc["goodput"]["goodput"] is not None
