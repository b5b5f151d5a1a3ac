"""Time a log explains as other than steps is not productive (a newcomer's round-8 files):
a hang between two progress lines (even when the next line prints the whole pause as its step
time), stamps that jump past the printed step times, checkpoint file times outside the log, a
byte-order mark hiding the start-up line, Megatron's (min, max) save timer, a load with no time
of its own inside a restart's start-up. Hand-written lines in the frameworks' shapes; each class
has a negative beside it."""

from __future__ import annotations

import calendar
import os
from pathlib import Path

import pytest

from gpuslo.goodput.logs import analyse_log
from tests.goodput.test_log_classes import PROFILES, read


def _log(pause_s: int) -> list[str]:
    lines = ["[2026-12-01 10:00:00] using world size: 8"]
    t = 90
    for step in range(10, 110, 10):
        if step == 60:
            t += pause_s
        elapsed = 3000.0 + (pause_s * 100.0 if step == 60 else 0.0)
        lines.append(f" [2026-12-01 {10 + t // 3600:02d}:{t // 60 % 60:02d}:{t % 60:02d}] "
                     f"iteration {step:>8}/    1000 | elapsed time per iteration (ms): "
                     f"{elapsed} | lm loss: 5.1E+00 |")
        if step in (50, 100):
            lines += [f"saving checkpoint at iteration {step:>7} to /ckpt",
                      f"  successfully saved checkpoint from iteration {step:>7} to /ckpt"]
        t += 30
    return lines


def test_a_hang_between_progress_lines_is_booked_other_not_productive() -> None:
    doc = read(_log(3600), gpus=8)
    assert [h["cause"] for h in doc["hangs"]] == ["no_progress"]
    seconds = doc["goodput"]["gpu_seconds"]
    assert seconds["other"] == doc["hangs"][0]["seconds"] * 8
    assert doc["goodput"]["goodput"] < 0.2


def test_negative_no_pause_no_hang_and_nothing_other() -> None:
    doc = read(_log(0), gpus=8)
    assert doc["hangs"] == []
    assert doc["goodput"]["gpu_seconds"].get("other", 0.0) == 0.0
    assert doc["goodput"]["goodput"] > 0.7


def _jumped(jump_s: int) -> list[str]:
    """Megatron-style lines every 30 s printing 3 s steps; the stamps jump `jump_s` forward
    before step 60 while the printed step times stay."""
    lines = ["[2026-12-01 10:00:00] using world size: 8"]
    for k, step in enumerate(range(10, 110, 10)):
        t = 90 + 30 * k + (jump_s if step >= 60 else 0)
        day, rest = 1 + t // 86400, t % 86400
        lines.append(f" [2026-12-{day:02d} {10 + rest // 3600:02d}:{rest // 60 % 60:02d}:"
                     f"{rest % 60:02d}] iteration {step:>8}/    1000 | elapsed time per "
                     "iteration (ms): 3000.0 | lm loss: 5.1E+00 |")
        if step in (50, 100):
            lines += [f"saving checkpoint at iteration {step:>7} to /ckpt",
                      f"  successfully saved checkpoint from iteration {step:>7} to /ckpt"]
    return lines


def test_a_clock_that_jumps_forward_is_noted_and_not_booked_as_progress() -> None:
    doc = read(_jumped(86400), gpus=8)
    assert any("jump 86400 s forward" in n for n in doc["notes"])
    assert doc["goodput"]["gpu_seconds"]["productive"] < 10_000
    assert doc["goodput"]["gpu_seconds"]["other"] >= 86400 * 8 * 0.99


def test_negative_a_steady_clock_has_no_jump_note_and_nothing_other() -> None:
    doc = read(_jumped(0), gpus=8)
    assert not any("forward" in n for n in doc["notes"])
    assert doc["goodput"]["gpu_seconds"].get("other", 0.0) == 0.0


# -- checkpoint file times outside the log's span (round 8, newcomer's hf_nockpt + copied dirs) --
def _hf_log(tmp_path: Path) -> Path:
    lines = ["[INFO|trainer.py:2048] 2026-12-01 10:00:00,000 >> ***** Running training *****"]
    lines += [f" {s // 10}%|█         | {s}/1000 [{s * 2 // 60:02d}:{s * 2 % 60:02d}<10:00,  "
              "2.00s/it]" for s in range(10, 310, 10)]
    path = tmp_path / "train.log"
    path.write_text("\n".join(lines) + "\n")
    return path


def _ck(tmp_path: Path, when: float | None) -> str:
    folder = tmp_path / "ck"
    for step in (100, 200):
        (folder / f"checkpoint-{step}").mkdir(parents=True)
        (folder / f"checkpoint-{step}" / "model.safetensors").write_bytes(b"weights")
        if when is not None:
            t = when + step * 2.0
            os.utime(folder / f"checkpoint-{step}", (t, t))
    return str(folder)


def test_checkpoint_file_times_outside_the_log_are_refused_not_stretching_the_span(
        tmp_path: Path) -> None:
    doc = analyse_log(_hf_log(tmp_path), PROFILES, gpus=8,
                      checkpoint_dir=_ck(tmp_path, None)).document  # made now: days later
    assert doc["span_s"] < 700
    # days after the log (beyond the 14 h zone tolerance): another run's, refused as commits
    # (newcomer12 F2; round 8 kept them at their step)
    assert sum("more than 14 h outside the log's span" in n for n in doc["notes"]) == 2
    assert doc["goodput"]["goodput"] is None


def test_checkpoint_file_times_just_outside_the_log_keep_the_step_not_the_time(
        tmp_path: Path) -> None:
    start = calendar.timegm((2026, 12, 1, 10, 0, 0))
    doc = analyse_log(_hf_log(tmp_path), PROFILES, gpus=8,
                      checkpoint_dir=_ck(tmp_path, start + 3600)).document  # copied an hour on
    assert doc["span_s"] < 700
    assert any("outside the log's span" in n for n in doc["notes"])
    assert 0 < doc["goodput"]["goodput"] < 0.9


def test_negative_checkpoint_file_times_inside_the_log_are_used(tmp_path: Path) -> None:
    start = calendar.timegm((2026, 12, 1, 10, 0, 0))
    doc = analyse_log(_hf_log(tmp_path), PROFILES, gpus=8,
                      checkpoint_dir=_ck(tmp_path, start)).document
    assert not any("outside the log's span" in n for n in doc["notes"])
    assert doc["span_s"] < 700 and 0 < doc["goodput"]["goodput"] < 0.9


# -- a UTF-8 byte-order mark before the first line (round 8, newcomer's megbom.log) -----------
def _started(bom: str) -> list[str]:
    lines = [f"{bom}[2026-12-01 10:00:00] using world size: 64"]
    for k, step in enumerate(range(10, 110, 10)):
        t = 120 + 30 * k
        lines.append(f" [2026-12-01 10:{t // 60:02d}:{t % 60:02d}] iteration {step:>8}/    1000 "
                     "| elapsed time per iteration (ms): 3000.0 | lm loss: 5.1E+00 |")
        if step in (50, 100):
            lines += [f"saving checkpoint at iteration {step:>7} to /ckpt",
                      f"  successfully saved checkpoint from iteration {step:>7} to /ckpt"]
    return lines


def test_a_byte_order_mark_does_not_hide_the_first_line() -> None:
    with_bom, without = read(_started("\ufeff"), gpus=8), read(_started(""), gpus=8)
    assert with_bom["goodput"]["gpu_seconds"] == without["goodput"]["gpu_seconds"]
    assert with_bom["goodput"]["gpu_seconds"].get("initialization", 0.0) > 0


def test_negative_a_mark_inside_a_later_line_is_left_alone() -> None:
    lines = _started("")
    lines[1] = "\ufeff" + lines[1]
    doc = read(lines, gpus=8)
    assert doc["goodput"]["gpu_seconds"].get("initialization", 0.0) > 0


# -- Megatron's (min, max) timer block gives the save's duration (round 8, meg_save.log) -------
def _saved(timer: str) -> list[str]:
    lines = ["[2026-12-01 10:00:00] using world size: 8"]
    t = 150
    for step in range(10, 110, 10):
        lines.append(f" [2026-12-01 10:{t // 60:02d}:{t % 60:02d}] iteration {step:>8}/    1000 "
                     "| elapsed time per iteration (ms): 3000.0 | lm loss: 5.1E+00 |")
        t += 30
        if step == 50:
            lines += [f"saving checkpoint at iteration {step:>7} to /ckpt",
                      f"  successfully saved checkpoint from iteration {step:>7} to /ckpt",
                      "(min, max) time across ranks (ms):",
                      f"    {timer} ................................: (59990.12, 60000.45)"]
            t += 60
    lines += ["saving checkpoint at iteration     100 to /ckpt",
              "  successfully saved checkpoint from iteration     100 to /ckpt"]
    return lines


def test_megatrons_min_max_save_timer_is_the_saves_duration() -> None:
    doc = read(_saved("save-checkpoint"), gpus=8)
    assert doc["checkpoint_saves"][0]["seconds"] == pytest.approx(60.0, abs=0.01)
    assert doc["goodput"]["gpu_seconds"]["checkpoint_save"] >= 60 * 8 * 0.99


def test_negative_another_timer_of_the_block_is_no_save_duration() -> None:
    doc = read(_saved("forward-backward"), gpus=8)
    assert doc["checkpoint_saves"][0]["seconds"] is None
    assert doc["goodput"]["gpu_seconds"].get("checkpoint_save", 0.0) == 0.0


# -- a restore with no time of its own inside a start-up is not progress (megatron_restart.log) --
def _restarted(with_load: bool) -> list[str]:
    def it(t: int, step: int) -> str:
        return (f" [2026-12-01 10:{t // 60:02d}:{t % 60:02d}] iteration {step:>8}/    1000 | "
                "elapsed time per iteration (ms): 3000.0 | lm loss: 5.1E+00 |")
    lines = ["[2026-12-01 10:00:00] using world size: 8"]
    lines += [it(120 + 30 * k, s) for k, s in enumerate(range(10, 60, 10))]
    lines += ["saving checkpoint at iteration      50 to /ckpt",
              "  successfully saved checkpoint from iteration      50 to /ckpt",
              it(300, 60), "[E ProcessGroupNCCL.cpp:475] [Rank 3] Watchdog caught collective "
              "operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE) ran for 600123 "
              "milliseconds before timing out.",
              "[2026-12-01 10:20:00] using world size: 8"]
    if with_load:
        lines += [" loading checkpoint from /ckpt at iteration 50",
                  "  successfully loaded checkpoint from /ckpt [ t 0/8, p 0/1 ] at iteration 50"]
    lines += [f" [2026-12-01 10:{23 + k // 2:02d}:{30 * (k % 2):02d}] iteration {s:>8}/    1000 "
              "| elapsed time per iteration (ms): 3000.0 | lm loss: 5.1E+00 |"
              for k, s in enumerate(range(60, 110, 10))]
    return lines + ["saving checkpoint at iteration     100 to /ckpt",
                    "  successfully saved checkpoint from iteration     100 to /ckpt"]


def test_a_load_without_its_own_time_leaves_the_start_up_unproductive() -> None:
    with_load, without = read(_restarted(True), gpus=8), read(_restarted(False), gpus=8)
    assert with_load["restarts"] and with_load["restarts"][0]["resumed_from_step"] == 50
    assert with_load["goodput"]["gpu_seconds"]["productive"] == pytest.approx(
        without["goodput"]["gpu_seconds"]["productive"], abs=1.0)


def test_negative_a_stamped_load_keeps_its_own_restore_phase() -> None:
    lines = _restarted(True)
    k = next(i for i, x in enumerate(lines) if "successfully loaded" in x)
    lines[k - 1] = "[2026-12-01 10:21:00]" + lines[k - 1]
    lines[k] = "[2026-12-01 10:22:00]" + lines[k]
    doc = read(lines, gpus=8)
    assert doc["goodput"]["gpu_seconds"].get("checkpoint_restore", 0.0) > 0
