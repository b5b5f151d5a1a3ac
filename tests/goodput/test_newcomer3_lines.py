"""Lines newcomer evaluation #3 (/work/wt/newcomer3_findings.md) showed misread, each on the
newcomer's line shapes with a negative beside it: a save the log says failed is no commit (#3)."""

from __future__ import annotations

import pytest

from gpuslo.goodput.logs import load_profiles
from gpuslo.goodput.logs.assemble import assemble
from gpuslo.goodput.logs.reader import parse_lines

PROFILES = load_profiles()


def read(lines: list[str]) -> dict:
    parsed = parse_lines(lines, PROFILES)
    return assemble(parsed, job="t", gpus=8, checkpoint_step=PROFILES.checkpoint_step).document


def stamp(s: int) -> str:
    return f"2026-11-03 10:{s // 60:02d}:{s % 60:02d},000"


def steps(first: int, last: int, at: int) -> list[str]:
    """`step: N` lines 1 s apart, step `first` stamped `at` seconds after 10:00."""
    return [f"{stamp(at + n - first)} INFO step: {n} | loss: 2.000 | step_time: 1.00s"
            for n in range(first, last + 1)]


def saved_then(after_save: list[str]) -> list[str]:
    """Steps 1..200 with a save begun at 100 and what `after_save` says of it 10 s later,
    then a CUDA error after step 200 (newcomer3's save_fail_*.log)."""
    return [*steps(1, 100, 0), f"{stamp(99)} INFO Saving checkpoint to /ckpt/step_100",
            *[f"{stamp(109)} {text}" for text in after_save], *steps(101, 200, 110),
            f"{stamp(210)} ERROR RuntimeError: CUDA error: an illegal memory access was "
            "encountered"]


FAILED = [
    "WARNING Checkpoint save failed for /ckpt/step_100: [Errno 122] Disk quota exceeded; "
    "continuing training",
    "ERROR Error saving checkpoint: RuntimeError: [enforce fail at inline_container.cc:595] . "
    "unexpected pos 1234 vs 5678",
    "ERROR [engine.py:3301:save_checkpoint] Failed to save checkpoint at step 100 to "
    "/ckpt/step_100",
    "ERROR RuntimeError: [enforce fail at inline_container.cc:595] . unexpected pos 1234 vs 5678",
    "ERROR OSError: [Errno 28] No space left on device",
]


@pytest.mark.parametrize("text", FAILED)
def test_a_save_the_log_says_failed_commits_nothing_when_training_goes_on(text: str) -> None:
    doc = read(saved_then([text]))
    assert doc["checkpoint_saves"] == [] and doc["status"] != "ok"  # no commit evidence: unknown
    assert any("a save begun and failed" in note for note in doc["notes"])


def test_a_megatron_failed_save_commits_nothing() -> None:
    lines = [f"[2026-11-03 10:0{i // 3}:{i % 3 * 20:02d}] iteration {10 * i:8d}/   10000 | "
             "elapsed time per iteration (ms): 2000.0 | lm loss: 3.2E+00 |" for i in range(1, 11)]
    lines += ["[2026-11-03 10:03:20] saving checkpoint at iteration     100 to /ckpt",
              "[2026-11-03 10:03:50] ERROR: failed to save checkpoint at iteration     100 to "
              "/ckpt: [Errno 122] Disk quota exceeded"]
    lines += [f"[2026-11-03 10:04:{i * 10:02d}] iteration {100 + 10 * i:8d}/   10000 | "
              "elapsed time per iteration (ms): 2000.0 | lm loss: 3.2E+00 |" for i in range(1, 5)]
    doc = read(lines)
    assert doc["checkpoint_saves"] == [] and doc["status"] != "ok"


@pytest.mark.parametrize("after", [
    ["INFO Checkpoint saved to /ckpt/step_100"],
    # a local save done, then its upload failed: the checkpoint is on disk (newcomer3's control)
    ["INFO Checkpoint saved to /ckpt/step_100",
     "ERROR checkpoint upload to s3://bucket/ckpt/step_100 failed: AccessDenied"],
    # a retry that the log shows succeeding
    ["WARNING Checkpoint save failed for /ckpt/step_100: timeout; retrying",
     "INFO Checkpoint saved to /ckpt/step_100"],
])
def test_a_save_shown_finished_still_commits(after: list[str]) -> None:
    doc = read(saved_then(after))
    assert [s["step"] for s in doc["checkpoint_saves"]] == [100] and doc["status"] == "ok"
    assert doc["goodput"]["gpu_seconds"]["productive"] == 800.0


def test_a_full_disk_outside_a_save_names_no_save() -> None:
    """The negative of the write-error rules: outside an open save they mark nothing."""
    lines = [*steps(1, 100, 0), f"{stamp(99)} INFO Saving checkpoint to /ckpt/step_100",
             f"{stamp(109)} INFO Checkpoint saved to /ckpt/step_100", *steps(101, 150, 110),
             f"{stamp(160)} WARNING could not write metrics.csv: No space left on device",
             *steps(151, 200, 161)]
    doc = read(lines)
    assert [s["step"] for s in doc["checkpoint_saves"]] == [100] and doc["status"] == "ok"
    assert not any("failed" in note for note in doc["notes"])


# -- #4: start-up before the first step, and a trailing gap, are booked, never dropped ----------
def init_then_steps(tail: list[str]) -> list[str]:
    """newcomer3's single_run_init2.log: a run-start line 60 s before step 1, 250 steps of
    1 s with saves at 100 and 200 (10 s each), then `tail`."""
    lines = [f"{stamp(0)} INFO Starting training run, world_size=64"]
    at = 61
    for n in range(1, 251):
        lines.append(f"{stamp(at)} INFO step: {n} | loss: 2.000 | step_time: 1.00s")
        if n in (100, 200):
            lines += [f"{stamp(at)} INFO Saving checkpoint to /ckpt/step_{n}",
                      f"{stamp(at + 10)} INFO Checkpoint saved to /ckpt/step_{n}"]
            at += 10
        at += 1
    return lines + tail


def accounted(doc: dict) -> float:
    goodput = doc["goodput"]
    return sum(goodput["gpu_seconds"].values()) + goodput["uncommitted_gpu_s"]


def test_start_up_before_the_first_step_is_initialization() -> None:
    doc = read(init_then_steps([]))
    assert doc["span_s"] == 330.0 and accounted(doc) == 330.0 * 8
    assert doc["goodput"]["gpu_seconds"]["initialization"] == 60.0 * 8
    assert doc["goodput"]["goodput"] == round(200 / 330, 6)  # 200 committed steps of 1 s


def test_a_trailing_gap_before_a_last_line_is_booked() -> None:
    doc = read(init_then_steps([f"{stamp(450)} INFO Starting training run, world_size=64"]))
    assert doc["span_s"] == 450.0 and accounted(doc) == 450.0 * 8
    assert doc["goodput"]["gpu_seconds"]["other"] == 120.0 * 8


def test_a_log_that_opens_on_a_step_and_ends_on_one_books_nothing_more() -> None:
    """The negative: a log whose first and last stamps are its steps' has no start-up or
    trailing time to book (its first step's printed time is the lead-in, as before)."""
    doc = read(init_then_steps([])[1:])
    assert doc["goodput"]["gpu_seconds"]["initialization"] == 0.0
    assert doc["goodput"]["gpu_seconds"]["other"] == 0.0
    assert not any("booked as" in note for note in doc["notes"])


# -- #6: a Unix time that opens a record is its clock; a JSON save event is a save -------------
def jsonl(time_key: str = "ts", saved: str = "checkpoint_saved") -> list[str]:
    """newcomer3's jsonl.log: 200 steps 0.5 s apart, `saved` events at steps 100 and 200."""
    out = []
    t = 1762164000.5
    for n in range(1, 201):
        out.append(f'{{"{time_key}": {t}, "step": {n}, "loss": 1.0, "tokens_per_sec": 100000}}')
        t += 0.5
        if n in (100, 200):
            t += 4.5
            out.append(f'{{"{time_key}": {t}, "event": "{saved}", "step": {n}}}')
            t += 0.5
    return out


def test_a_json_log_with_a_unix_ts_has_a_clock_and_its_saves() -> None:
    doc = read(jsonl())
    assert doc["span_s"] == 109.5 and doc["status"] == "ok"
    assert [s["step"] for s in doc["checkpoint_saves"]] == [100, 200]
    assert doc["goodput"]["gpu_seconds"]["productive"] > 0


def test_a_bare_unix_time_opening_each_line_is_the_clock() -> None:
    lines = [f"{1762164000.5 + n / 2:.3f} step={n} loss=1.0" for n in range(1, 201)]
    assert read(lines)["span_s"] == 99.5


def test_a_number_that_does_not_behave_as_a_clock_is_no_stamp() -> None:
    """The negatives: an id that never changes, and an event whose name says no save."""
    lines = [f'{{"ts": 1762164000, "step": {n}, "loss": 1.0}}' for n in range(1, 201)]
    assert read(lines)["span_s"] is None
    doc = read(jsonl(saved="checkpoint_save_skipped"))
    assert doc["checkpoint_saves"] == [] and doc["status"] != "ok"


# -- #13: a checkpoint file written seconds after the log's last line does not stretch it -----
def quiet_run(tmp_path, step300_after_s: float) -> dict:
    """newcomer3's lightning_quiet.log: 300 steps 1 s apart from 10:00:01, no save line, and
    Lightning's files for steps 100, 200, 300; the last written `step300_after_s` after the
    log's last line."""
    import calendar
    import os

    from gpuslo.goodput.logs import analyse_log

    start = calendar.timegm((2026, 11, 3, 10, 0, 0))
    log = tmp_path / "train.log"
    log.write_text("".join(f"2026-11-03 10:{n // 60:02d}:{n % 60:02d} Epoch 0: step {n} "
                           "loss=2.0\n" for n in range(1, 301)))
    folder = tmp_path / "ckpts"
    folder.mkdir()
    for step, t in ((100, start + 105), (200, start + 205), (300, start + 300 + step300_after_s)):
        path = folder / f"epoch=0-step={step}.ckpt"
        path.write_bytes(b"weights")
        os.utime(path, (t, t))
    return analyse_log(log, PROFILES, gpus=8, checkpoint_dir=str(folder / "*")).document


def test_a_file_written_after_the_last_line_adds_no_time(tmp_path) -> None:
    doc = quiet_run(tmp_path, 5.0)
    assert doc["span_s"] == 299.0
    assert doc["goodput"]["gpu_seconds"]["productive"] == 299.0 * 8
    assert any("written after the log's last stamp" in n for n in doc["notes"])


def test_a_file_written_at_the_last_line_is_as_before(tmp_path) -> None:
    """The negative: a file time inside the span is used as it is, with no note."""
    doc = quiet_run(tmp_path, 0.0)
    assert doc["span_s"] == 299.0 and doc["goodput"]["gpu_seconds"]["productive"] == 299.0 * 8
    assert not any("after the log's last stamp" in n for n in doc["notes"])


# -- #12: a lone stamped save line after a step line: the pause is the save's ------------------
def ampm(saved: str) -> list[str]:
    """newcomer3's ampm.log: `Step N: loss=2.0` every 1 s across noon, `saved` 5 s after steps
    100, 200 and 300 (the next step 1 s after it)."""
    out, t = [], 11 * 3600 + 58 * 60
    for n in range(1, 301):
        t += 1
        out.append(f"11/03/2026 {(t // 3600 - 1) % 12 + 1:02d}:{t // 60 % 60:02d}:{t % 60:02d} "
                   f"{'AM' if t < 12 * 3600 else 'PM'} - INFO - Step {n}: loss=2.0")
        if n % 100 == 0:
            t += 5
            out.append(f"11/03/2026 {(t // 3600 - 1) % 12 + 1:02d}:{t // 60 % 60:02d}:"
                       f"{t % 60:02d} {'AM' if t < 12 * 3600 else 'PM'} - INFO - "
                       + saved.format(n))
    return out


def test_a_lone_stamped_save_line_books_the_pause_before_it_as_the_save() -> None:
    doc = read(ampm("Saved checkpoint at step {}"))
    assert doc["goodput"]["gpu_seconds"]["checkpoint_save"] == 3 * 5.0 * 8
    assert [s["step"] for s in doc["checkpoint_saves"]] == [100, 200, 300]


def test_a_pause_before_a_line_that_is_no_save_is_not_a_save() -> None:
    """The negative: the same pause before a line that names no save books no save time."""
    doc = read(ampm("Evaluated at step {}: acc=0.5"))
    assert doc["goodput"] is None or doc["goodput"]["gpu_seconds"]["checkpoint_save"] == 0.0
