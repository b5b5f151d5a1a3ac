"""`gpuslo exporter --slo FILE`: the operator's SLO spec sets the sustained-slowdown rule that
splits the job counters' `slowdown` from progress, as it does for `gpuslo rules` and `report`.

The job, by hand: 8 GPUs, one step per journal line; three 10 s steps (the reference, 10 s),
then two 11.5 s steps (1.15x: two consecutive slow intervals), then 10 s again, checkpointed.
With the built-in rule (threshold 1.03) the two steps are a slowdown of 2 x 1.5 s x 8 GPUs =
24 GPU-seconds; a spec with `slowdown_threshold: 1.2` sees no slow interval, so the same
24 GPU-seconds stay productive.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest
from exporter.test_collector_node import samples

from gpuslo.goodput.journal import encode_line, event

STEPS = [10.0, 10.0, 10.0, 11.5, 11.5, 10.0]


def _journal(path: Path) -> None:
    t, lines = 1_000_000.0, [encode_line(event("job_start", 1_000_000.0, job="j", node="n",
                                                gpus=8))]
    for n, step_s in enumerate(STEPS, start=1):
        t += step_s
        lines.append(encode_line(event("steps", t, step=n, first_step=n, first_t=t, count=1)))
    lines.append(encode_line(event("checkpoint", t, step=len(STEPS))))
    path.write_text("".join(lines))


def _exporter(tmp_path: Path, *extra: str) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "gpuslo", "exporter", "--once", "--journal-dir",
         str(tmp_path / "journals"), "--state-dir", str(tmp_path / "state"),
         "--path.sysfs", str(tmp_path / "nosys"), *extra],
        capture_output=True, text=True, timeout=120)


def _split(stdout: str) -> dict[str, float]:
    return {dict(k)["category"]: v for (name, k), v in samples(stdout).items()
            if name == "gpuslo_job_gpu_seconds_total" and dict(k)["category"] in
            ("productive", "slowdown")}


@pytest.fixture
def journals(tmp_path: Path) -> Path:
    (tmp_path / "journals").mkdir()
    _journal(tmp_path / "journals" / "j.jsonl")
    return tmp_path


def test_the_spec_threshold_decides_the_exported_slowdown_split(journals: Path) -> None:
    default = _exporter(journals)
    assert default.returncode == 0, default.stderr
    assert _split(default.stdout) == {"slowdown": 24.0, "productive": 63 * 8 - 24.0}

    spec = journals / "slo.yaml"
    spec.write_text("slowdown_threshold: 1.2\n")
    strict = _exporter(journals, "--state-dir", str(journals / "state-2"), "--slo", str(spec))
    assert strict.returncode == 0, strict.stderr
    assert _split(strict.stdout) == {"slowdown": 0.0, "productive": 63 * 8}


def test_a_bad_spec_is_one_line_and_exit_2(journals: Path) -> None:
    spec = journals / "slo.yaml"
    spec.write_text("slowdown_threshold: 0.9\n")
    done = _exporter(journals, "--slo", str(spec))
    assert done.returncode == 2 and done.stderr.count("\n") == 1, done.stderr
    assert "slo.yaml" in done.stderr and "slowdown_threshold" in done.stderr
