"""The check runner: each outcome of a check run maps to the status fail-closed demands, every run
ends within its deadline plus one second, and heartbeats record every run."""

from __future__ import annotations

import subprocess
import time

import pytest
from exporter.test_runner_checks import Behaving

from gpuslo.exporter.checks.base import CheckContext
from gpuslo.exporter.runner import Runner

DEADLINE = 1.0


def run_one(behaviour: str, tmp_path, timeout: float = DEADLINE):
    runner = Runner(
        [Behaving("probe", behaviour)], CheckContext(state_dir=tmp_path, timeout_s=timeout)
    )
    try:
        started = time.monotonic()
        snapshot = runner.cycle()
        return snapshot, time.monotonic() - started
    finally:
        runner.close()


@pytest.mark.parametrize(
    ("behaviour", "status", "reason", "words"),
    [
        ("ok", "ok", "", "ok"),
        ("slow", "ok", "", "slow"),
        ("hang", "unknown", "check_timeout", "no answer within the deadline of 1 s"),
        ("tool-hang", "unknown", "check_timeout", "killed"),
        ("crash", "unknown", "tool_error", "SIGSEGV"),
        ("exit", "unknown", "tool_error", "exited with code 4"),
        ("dependency", "unknown", "dependency_missing", "ibstat"),
        ("tool", "unknown", "tool_error", "No devices were found"),
        ("parse", "unknown", "parse_error", "nvidia-smi:3"),
        ("bug", "unknown", "tool_error", "IndexError"),
        ("garbage", "unknown", "tool_error", "returned str"),
        ("empty", "unknown", "no_data", "no result"),
        ("misnamed", "unknown", "tool_error", "other"),
    ],
)
def test_each_outcome_maps_fail_closed(behaviour, status, reason, words, tmp_path):
    snapshot, took = run_one(behaviour, tmp_path)
    (result,) = snapshot.results
    assert (result.status, result.reason) == (status, reason)
    assert words in result.message
    assert took < DEADLINE + 1.0
    if status == "unknown":
        assert result.layer == "observability"


def test_a_hung_check_does_not_hold_up_the_others(tmp_path):
    checks = [Behaving("hung", "hang"), Behaving("fine", "ok"), Behaving("dead", "crash")]
    runner = Runner(checks, CheckContext(state_dir=tmp_path, timeout_s=DEADLINE))
    started = time.monotonic()
    snapshot = runner.cycle()
    took = time.monotonic() - started
    runner.close()
    by_check = {r.check: r for r in snapshot.results}
    assert by_check["fine"].status == "ok"
    assert by_check["fine"].duration_s < DEADLINE  # answered without waiting for the hung one
    assert by_check["hung"].reason == "check_timeout"
    assert by_check["dead"].reason == "tool_error"
    assert took < DEADLINE + 1.0  # concurrent: not 2 x DEADLINE


@pytest.mark.parametrize("behaviour", ["tool-hang", "orphan"])
def test_the_tools_a_check_started_do_not_outlive_it(behaviour, tmp_path):
    runner = Runner([Behaving("tools", behaviour)], CheckContext(state_dir=tmp_path, timeout_s=0.5))
    runner.cycle()
    runner.close()
    time.sleep(0.1)
    left = subprocess.run(["pgrep", "-f", "time.sleep\\(1000\\)"], capture_output=True, text=True)
    # the grandchild sleeping 1000 s was in the check's process group: killed with it
    assert left.stdout.strip() == ""


class Clock:
    def __init__(self, now: float) -> None:
        self.now = now

    def __call__(self) -> float:
        return self.now


def test_heartbeats_count_runs_errors_and_last_success(tmp_path):
    clock = Clock(1_000.0)
    checks = [Behaving("good", "ok", interval_s=30), Behaving("bad", "dependency", interval_s=30)]
    runner = Runner(checks, CheckContext(state_dir=tmp_path, timeout_s=DEADLINE), clock=clock)
    runner.cycle()
    clock.now = 1_030.0
    snapshot = runner.cycle()
    runner.close()
    beats = {h.check: h for h in snapshot.heartbeats}
    assert beats["good"].runs_total == 2 and beats["good"].last_success == 1_030.0
    assert beats["good"].errors_total == {}
    assert beats["bad"].runs_total == 2 and beats["bad"].last_run == 1_030.0
    assert beats["bad"].last_success == 0.0  # never answered
    assert beats["bad"].errors_total == {"dependency_missing": 2}
    assert all(r.observed_at == 1_030.0 for r in snapshot.results)


def test_checks_run_when_due_and_old_results_turn_stale(tmp_path):
    clock = Clock(1_000.0)
    checks = [Behaving("fast", "ok", interval_s=10), Behaving("slow", "ok", interval_s=100)]
    runner = Runner(checks, CheckContext(state_dir=tmp_path, timeout_s=DEADLINE), clock=clock)
    runner.cycle()
    clock.now = 1_040.0  # fast is due, slow is not
    snapshot = runner.cycle()
    beats = {h.check: h.runs_total for h in snapshot.heartbeats}
    assert beats == {"fast": 2, "slow": 1}
    clock.now = 1_000.0 + 301.0  # slow's result is now older than 3 x 100 s
    snapshot = runner.snapshot()
    runner.close()
    slow = next(r for r in snapshot.results if r.check == "slow")
    assert (slow.status, slow.reason) == ("unknown", "stale_data")


def test_a_check_still_running_is_not_started_twice(tmp_path):
    # a child the kernel has not let go of (e.g. stuck in the driver) from an earlier cycle
    runner = Runner([Behaving("nvml", "ok")], CheckContext(state_dir=tmp_path, timeout_s=DEADLINE))
    stuck = runner._mp.Process(target=time.sleep, args=(30,), daemon=True)
    stuck.start()
    runner._stuck["nvml"] = stuck
    try:
        snapshot = runner.cycle()
        (result,) = snapshot.results
        assert (result.status, result.reason) == ("unknown", "check_timeout")
        assert f"pid {stuck.pid}" in result.message and "not started again" in result.message
        stuck.kill()
        stuck.join()
        snapshot = runner.cycle(force=True)  # gone now: the check runs again
        assert snapshot.results[0].status == "ok"
    finally:
        stuck.kill()
        runner.close()


def test_unpicklable_check_is_reported_not_raised(tmp_path):
    check = Behaving("weird", "ok")
    check.dependencies = (lambda: None,)  # type: ignore[assignment]
    runner = Runner([check], CheckContext(state_dir=tmp_path, timeout_s=DEADLINE))
    snapshot = runner.cycle()
    runner.close()
    assert (snapshot.results[0].status, snapshot.results[0].reason) == ("unknown", "tool_error")


def test_a_listed_check_whose_module_is_missing_reports_dependency_missing(tmp_path, monkeypatch):
    from gpuslo.exporter.checks import registry

    monkeypatch.setitem(registry.CHECKS, "nvswitch", "NVSwitch state (not written yet)")
    check = registry.load_check("nvswitch")
    runner = Runner([check], CheckContext(state_dir=tmp_path, timeout_s=DEADLINE))
    snapshot = runner.cycle()
    runner.close()
    (result,) = snapshot.results
    assert (result.status, result.reason) == ("unknown", "dependency_missing")
    assert "gpuslo.exporter.checks.nvswitch" in result.message


def test_registry_finds_every_listed_check():
    from gpuslo.exporter.checks.registry import CHECKS, UnavailableCheck, load_checks

    checks = load_checks(active=True)
    assert [c.name for c in checks] == list(CHECKS)
    assert not [c.name for c in checks if isinstance(c, UnavailableCheck)]


ORPHANING = """
import os, signal, sys, threading, time
sys.path[:0] = {path!r}
from exporter.test_runner_checks import Behaving
from gpuslo.exporter.checks.base import CheckContext
from gpuslo.exporter.runner import Runner
from multiprocessing import forkserver
runner = Runner([Behaving(f"c{{i}}", "slow") for i in range(4)],
                CheckContext(state_dir={state!r}, timeout_s=10.0))
threading.Thread(target=runner.cycle, daemon=True).start()
def children(pid):
    try:
        tasks = os.listdir(f"/proc/{{pid}}/task")
        return sum(len(open(f"/proc/{{pid}}/task/{{n}}/children").read().split()) for n in tasks)
    except OSError:
        return 0
for _ in range(100):  # every child sleeping its 5 s: now the runner dies as kill -9 kills it
    time.sleep(0.05)
    server = getattr(forkserver._forkserver, "_forkserver_pid", None)
    if server and children(server) == 4:
        break
os.kill(os.getpid(), signal.SIGKILL)
"""


def test_children_of_a_killed_runner_say_one_line_each_not_a_traceback(tmp_path):
    """Issue 25: each kill -9 of the exporter left ~80 lines of BrokenPipeError tracebacks
    from its orphaned check children in the log."""
    import sys
    from pathlib import Path

    tests = str(Path(__file__).resolve().parent.parent)
    script = ORPHANING.format(path=[tests, *sys.path], state=str(tmp_path))
    done = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True,
                          timeout=60)  # stderr ends when the last orphan has closed it
    lines = done.stderr.splitlines()
    assert done.returncode == -9 and "Traceback" not in done.stderr, done.stderr
    assert 1 <= len(lines) <= 4 and all("its runner is gone" in line for line in lines), lines
