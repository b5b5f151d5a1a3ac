"""Lines newcomer evaluation #2 showed misread, each on realistic lines with a negative beside
it: a silent hang that Slurm's time limit ends (finding 3)."""

from __future__ import annotations

from gpuslo.goodput.logs import load_profiles
from gpuslo.goodput.logs.assemble import assemble
from gpuslo.goodput.logs.reader import parse_lines

PROFILES = load_profiles()
CANCEL = ("slurmstepd: error: *** JOB 88231 ON gpu-node-07 CANCELLED AT {} DUE TO TIME LIMIT "
          "***")


def read(lines: list[str]) -> dict:
    parsed = parse_lines(lines, PROFILES)
    return assemble(parsed, job="t", gpus=8, checkpoint_step=PROFILES.checkpoint_step).document


def steps_then(cancel_at: str) -> list[str]:
    """Steps 10..200 every 20 s (2 s/it), a save at 100, then Slurm's time-limit cancel."""
    lines = []
    for i in range(1, 21):
        t = 1793700000 + 20 * i
        stamp = f"2026-11-03 10:{(t - 1793700000) // 60:02d}:{(t - 1793700000) % 60:02d}"
        lines.append(f"{stamp} | INFO | step {10 * i}/1000 | loss 2.0 | 2.00 s/it")
        if i == 10:
            lines.append(f"{stamp} | INFO | Saved checkpoint to /ckpt/step_100.pt")
    return [*lines, CANCEL.format(cancel_at)]


def test_an_hour_of_silence_before_a_time_limit_cancel_is_a_hang_of_the_job() -> None:
    doc = read(steps_then("2026-11-03T11:06:40"))
    assert [(h["after_step"], h["seconds"]) for h in doc["hangs"]] == [(200, 3600.0)]
    assert [(i["cause"], i["layer"]) for i in doc["interruptions"]] == [("time_limit", "training")]
    seconds = doc["goodput"]["gpu_seconds"]
    assert seconds["other"] == 3600.0 * 8  # the stall, not uncommitted progress
    assert doc["goodput"]["uncommitted_gpu_s"] == 200.0 * 8  # steps 101..200, 2 s each
    assert doc["goodput"]["interruptions"] == {"training": 1}


def test_a_time_limit_cancel_right_after_progress_is_no_hang() -> None:
    doc = read(steps_then("2026-11-03T10:06:42"))
    assert doc["hangs"] == []
    assert [(i["cause"], i["layer"]) for i in doc["interruptions"]] == [("time_limit", "platform")]
    assert doc["goodput"]["gpu_seconds"]["other"] == 0.0
