"""scontrol as an adversary (issue 25 #2, #13): bytes that are not UTF-8 in what it prints, and
a hung scontrol whose children would outlive its deadline."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from gpuslo.exporter.evidence.slurm import SlurmUnavailable, read_node, run_command


def alive(pid: int) -> bool:
    """True while `pid` runs (a zombie waiting for its reaper does not count)."""
    try:
        state = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]
    except (OSError, IndexError):
        return False
    return state != "Z"


def fake_scontrol(tmp_path: Path, body: str) -> str:
    script = tmp_path / "scontrol"
    script.write_text("#!/bin/sh\n" + body)
    script.chmod(0o755)
    return str(script)


@pytest.mark.parametrize("exits_first", [False, True])
def test_a_hung_scontrols_children_are_killed_at_the_deadline(tmp_path, exits_first):
    """A wrapper that starts a child and hangs (or exits, its child keeping the pipe open): at
    the 1 s deadline the whole process group is killed, the call ends, no child is left."""
    pids = tmp_path / "pids"
    scontrol = fake_scontrol(tmp_path, f"sleep 300 &\necho $! > {pids}\necho $$ >> {pids}\n"
                                       + ("exit 0\n" if exits_first else "sleep 300\n"))
    began = time.monotonic()
    with pytest.raises(SlurmUnavailable) as error:
        run_command([scontrol, "show", "node", "n"], 1.0)
    assert error.value.reason == "check_timeout" and time.monotonic() - began < 3
    children = [int(p) for p in pids.read_text().split()]
    deadline = time.monotonic() + 5
    while any(map(alive, children)) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not any(map(alive, children)), children


def test_bytes_that_are_not_utf8_are_replaced_never_a_crash(tmp_path):
    """A Latin-1 drain reason (`Lüfter defekt` written by an admin's tool) raised
    UnicodeDecodeError out of the HealthCheckProgram; it now reads with U+FFFD."""
    show = b"NodeName=n State=IDLE+DRAIN Reason=L\xfcfter defekt [admin@2026-12-01T10:00:00]\n"
    (tmp_path / "show.txt").write_bytes(show)
    scontrol = fake_scontrol(tmp_path, 'case "$1" in --json) echo "unrecognized option" >&2; '
                                       f'exit 1;; esac\ncat {tmp_path / "show.txt"}\n')
    node = read_node("n", scontrol, run_command, 5.0)
    assert node.drained and node.reason == "L\ufffdfter defekt" and node.reason_user == "admin"


def test_the_platform_sample_stays_unknown_whatever_reading_slurm_raises():
    """Issue 25 #2: any error reading Slurm leaves the series, unknown, never a crash."""
    from gpuslo.exporter.slurm.state import PlatformSampler

    def run(argv, timeout_s):
        raise RuntimeError("scontrol wrapper\nexploded")

    sampler = PlatformSampler("n", run=run)
    assert sampler.sample() == [("gpuslo_slurm_node_state",
                                 ("unknown", "observability", "tool_error"), 1.0)]
    assert sampler.samples() == sampler.sample()
