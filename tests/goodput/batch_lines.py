"""Helpers of the per-batch line tests (test_fresh16b_lines.py, test_fresh17u_runs.py): lines
read as `gpuslo goodput` reads a log (one GPU), and a scored case's lines by its id."""

from __future__ import annotations

from pathlib import Path

from gpuslo.goodput.logs import load_profiles
from gpuslo.goodput.logs.assemble import assemble
from gpuslo.goodput.logs.reader import parse_lines

PROFILES = load_profiles()
LOGS = Path(__file__).resolve().parents[1] / "data" / "training_logs"


def read(lines: list[str]) -> dict:
    """The goodput document of `lines` (job `t`, one GPU)."""
    parsed = parse_lines(lines, PROFILES)
    return assemble(parsed, job="t", gpus=1, checkpoint_step=PROFILES.checkpoint_step).document


def case(batch: str, name: str) -> list[str]:
    """The lines of case `name` (`S03`) of tests/data/training_logs/<batch>/cases."""
    (path,) = (LOGS / batch / "cases").glob(f"{name}_*.log")
    return path.read_text(encoding="utf-8").splitlines()
