"""The check runner: every check in its own child process, all at once, each with a deadline.

Why child processes from a `forkserver`: NVML and the tools checks call can block inside the
driver, and a thread cannot be cancelled, so each run is a process the runner can kill
(shared/DESIGN.md §3). The forkserver forks each child from a clean, single-threaded server that
has already imported gpuslo, so a child starts in milliseconds (a full `spawn` costs an
interpreter start per check per cycle) without inheriting the runner's threads and locks (a plain
`fork` from a threaded exporter can deadlock). Each child puts itself in its own process group,
so a timeout kills the tools it started too. The child receives the parent's current `sys.path`
and environment, so it behaves as the parent would, and sends back its CheckResults pickled over
a pipe.

Mapping (never `ok`): no answer by the deadline → `unknown`/`check_timeout` (the child is
killed), and so is a source's own deadline (`DeadlineExceeded`: an HTTP read, a subprocess, an
NVML call); `DependencyMissing` → `dependency_missing`; `ToolError`, a crash, a non-zero exit or an
exit without an answer → `tool_error`; `ParseError` → `parse_error`; a check still running from an
earlier cycle (stuck in the kernel, unkillable) is not started again and reports `check_timeout`.
A run ends within its deadline plus one second. Each run updates the check's `Heartbeat`. A
child whose runner is gone (the exporter was killed with SIGKILL) says so in one line on stderr
and exits, instead of a BrokenPipeError traceback.
"""

from __future__ import annotations

import contextlib
import dataclasses
import multiprocessing
import os
import pickle
import signal
import socket
import sys
import threading
import time
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from multiprocessing.connection import wait
from typing import Any

from gpuslo import names
from gpuslo.errors import DeadlineExceeded, DependencyMissing, ParseError, ToolError
from gpuslo.exporter.answers import keep_facts, results_of, with_facts
from gpuslo.exporter.checks.base import CheckContext, CheckOutput, Facts
from gpuslo.exporter.checks.gpu_inventory import load_expected
from gpuslo.exporter.policy.dcgm import on_this_node
from gpuslo.exporter.snapshot import Heartbeat, NodeSnapshot
from gpuslo.verdict import CheckResult, stale_as_unknown

KILL_GRACE_S = 0.5  # how long to wait for a killed child to be reaped
ANSWERED = (names.STATUS_OK, names.STATUS_WARN, names.STATUS_FAIL)


# imported once by the forkserver so each child starts with them loaded (never pynvml: the fake
# NVML of the tests is chosen per run through the environment). The xid check is here because the
# kernel-log watcher runs it the moment a GPU record arrives: importing it in the child (the
# kernel-log readers, the Xid policy, YAML) cost ~0.3 s of each wake-up on a loaded machine.
PRELOAD = [
    "gpuslo.exporter.checks.xid",
    "gpuslo.exporter.runner",
    "gpuslo.exporter.checks.registry",
    "gpuslo.exporter.evidence.nvml",
    "gpuslo.exporter.checks.gpu_inventory",
    "gpuslo.exporter.checks.gpu_memory",
    "gpuslo.exporter.checks.thermal",
    "gpuslo.exporter.checks.nvlink",
    "gpuslo.exporter.checks.pcie",
]


def _child_main(payload: bytes, path: list[str], environ: dict[str, str], conn: Any) -> None:
    """Run one check in the child and send ("ok", output) or (reason, message) back."""
    os.setpgrp()
    sys.path[:] = path
    os.environ.clear()
    os.environ.update(environ)
    check: Any = None
    try:
        check, context = pickle.loads(payload)
        answer: tuple[str, Any] = ("ok", check.run(context))
    except DependencyMissing as error:
        answer = ("dependency_missing", str(error))
    except DeadlineExceeded as error:  # a source's own deadline: a timeout like the runner's
        answer = ("check_timeout", str(error))
    except ToolError as error:
        answer = ("tool_error", str(error))
    except ParseError as error:
        answer = ("parse_error", str(error))
    except BaseException as error:  # noqa: BLE001 - any failure of a check is reported, not raised
        answer = ("tool_error", f"{type(error).__name__}: {error}")
    try:
        _send(conn, answer)
    except OSError as error:  # BrokenPipeError: the runner is gone; nobody is left to tell
        name = getattr(check, "name", "?")
        sys.stderr.write(f"gpuslo: check {name} (pid {os.getpid()}): its runner is gone "
                         f"({type(error).__name__}); answer dropped\n")
    finally:
        with contextlib.suppress(OSError):
            conn.close()


def _send(conn: Any, answer: tuple[str, Any]) -> None:
    """Send `answer`, or a tool_error saying why it could not be pickled. Raises OSError when
    the pipe is gone."""
    try:
        conn.send(answer)
    except OSError:
        raise
    except Exception as error:  # noqa: BLE001 - an answer that cannot be pickled
        conn.send(("tool_error", f"answer could not be sent: {error}"))


@dataclass
class _Run:
    check: Any
    process: Any
    conn: Any
    started: float
    deadline: float
    answer: tuple[str, Any] | None = None


def _exit_text(code: int | None) -> str:
    if code is not None and code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exited with code {code}"


def _kill(process: Any) -> bool:
    """SIGKILL the child's process group; True when it was reaped within KILL_GRACE_S."""
    try:
        os.killpg(process.pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError):
        process.kill()
    process.join(KILL_GRACE_S)
    return not process.is_alive()


class Runner:
    """Runs checks in isolated children and keeps the node's latest results and heartbeats.

    Args:
        checks: objects following `checks.base.Check`.
        context: the CheckContext every check gets (its `timeout_s` replaced per check).
        clock: returns Unix seconds; every timestamp the runner records comes from it.
        timeouts: per-check deadline (seconds), default `context.timeout_s`.
        intervals: per-check interval (seconds), default the check's `interval_s`.
        node: node name for the snapshot, default the hostname.
    """

    def __init__(
        self,
        checks: Iterable[Any],
        context: CheckContext,
        *,
        clock: Callable[[], float] = time.time,
        timeouts: dict[str, float] | None = None,
        intervals: dict[str, float] | None = None,
        node: str | None = None,
    ) -> None:
        self.checks = list(checks)
        self.context = context
        self.clock = clock
        self.timeouts = {
            c.name: (timeouts or {}).get(c.name, context.timeout_s) for c in self.checks
        }
        self.intervals = {c.name: (intervals or {}).get(c.name, c.interval_s) for c in self.checks}
        self.node = node or socket.gethostname()
        self.heartbeats = {c.name: Heartbeat(c.name, self.intervals[c.name]) for c in self.checks}
        self.results: dict[str, list[CheckResult]] = {}
        self.facts: dict[type, Facts] = {}  # the latest facts of each kind
        self.resume: dict[str, Any] = {}  # check name -> its latest answer's CheckOutput.resume
        self._record_lock = threading.Lock()  # results, facts and resume change together
        self._stuck: dict[str, Any] = {}  # check name -> a killed child not yet reaped
        self._next_due: dict[str, float] = {}
        self._lock = threading.Lock()
        self._mp = multiprocessing.get_context("forkserver")
        self._mp.set_forkserver_preload(PRELOAD)

    def cycle(self, force: bool = False) -> NodeSnapshot:
        """Run every check that is due (all of them when `force` or on the first cycle),
        concurrently, and return the new snapshot. Returns within the largest deadline + 1 s."""
        with self._lock:
            now = self.clock()
            due = [c for c in self.checks if force or now >= self._next_due.get(c.name, 0.0)]
            runs = [run for run in (self._start(c) for c in due) if run is not None]
            self._wait(runs)
            return self.snapshot()

    def make_due(self, name: str) -> None:
        """Run check `name` at the next cycle whatever its interval (the kernel-log watcher's
        hook: a new NVRM record makes the xid check due at once)."""
        self._next_due[name] = 0.0

    def _start(self, check: Any) -> _Run | None:
        started = self.clock()
        self._next_due[check.name] = started + self.intervals[check.name]
        stuck = self._stuck.get(check.name)
        if stuck is not None and stuck.is_alive():
            message = f"still running from an earlier cycle (pid {stuck.pid}); not started again"
            self._record(check, started, ("check_timeout", message))
            return None
        self._stuck.pop(check.name, None)
        timeout = self.timeouts[check.name]
        context = dataclasses.replace(self.context, timeout_s=timeout)
        try:
            payload = pickle.dumps((check, context))
            receive, send = self._mp.Pipe(duplex=False)
            args = (payload, list(sys.path), dict(os.environ), send)
            process = self._mp.Process(target=_child_main, args=args, daemon=True)
            process.start()
        except Exception as error:  # noqa: BLE001 - a check that cannot even start is reported
            self._record(check, started, ("tool_error", f"could not start: {error}"))
            return None
        send.close()
        return _Run(check, process, receive, started, time.monotonic() + timeout)

    def _wait(self, runs: list[_Run]) -> None:
        pending = list(runs)
        while pending:
            timeout = max(0.0, min(run.deadline for run in pending) - time.monotonic())
            ready = set(
                wait([r.conn for r in pending] + [r.process.sentinel for r in pending], timeout)
            )
            for run in list(pending):
                if run.conn in ready or run.process.sentinel in ready:
                    self._receive(run)
                elif time.monotonic() >= run.deadline:
                    self._timeout(run)
                else:
                    continue
                pending.remove(run)

    def _receive(self, run: _Run) -> None:
        answer: tuple[str, Any] | None
        try:
            answer = run.conn.recv() if run.conn.poll() else None
        except EOFError:
            answer = None  # the child died without sending anything
        except (OSError, pickle.UnpicklingError, AttributeError, ImportError) as error:
            answer = ("tool_error", f"unreadable answer: {error}")
        if answer is None:
            run.process.join(KILL_GRACE_S)
            answer = ("tool_error", f"{_exit_text(run.process.exitcode)} without an answer")
        self._finish(run, answer)

    def _timeout(self, run: _Run) -> None:
        timeout = self.timeouts[run.check.name]
        message = f"no answer within the deadline of {timeout:g} s; killed"
        if not _kill(run.process):
            self._stuck[run.check.name] = run.process
            message = (
                f"no answer within the deadline of {timeout:g} s; kill sent, process not yet gone"
            )
        self._finish(run, ("check_timeout", message), killed=True)

    def _finish(self, run: _Run, answer: tuple[str, Any], killed: bool = False) -> None:
        if not killed:  # answered (or died): whatever is left in its process group goes too
            _kill(run.process)
        run.conn.close()
        self._record(run.check, run.started, answer)

    def _record(self, check: Any, started: float, answer: tuple[str, Any]) -> None:
        ended = self.clock()
        duration = max(0.0, ended - started)
        kind, value = answer
        with self._record_lock:
            results = results_of(check.name, kind, value, self.facts)
            # a resume only with the check's own results (not the runner's unknown for a
            # malformed answer): a run that failed is never gone on from
            own = kind == "ok" and isinstance(value, CheckOutput) and (
                isinstance(value.results, list | tuple) and results == list(value.results))
            self.resume[check.name] = value.resume if own else None
            results = [
                dataclasses.replace(r, observed_at=ended, duration_s=duration) for r in results
            ]
            self.results[check.name] = results
        beat = self.heartbeats[check.name]
        errors = dict(beat.errors_total)
        failed_reasons = {r.reason for r in results if r.status == names.STATUS_UNKNOWN}
        for reason in failed_reasons:
            errors[reason] = errors.get(reason, 0) + 1
        answered = any(r.status in ANSWERED for r in results) and not failed_reasons
        self.heartbeats[check.name] = dataclasses.replace(
            beat,
            last_run=ended,
            last_success=ended if answered else beat.last_success,
            duration_s=duration,
            runs_total=beat.runs_total + 1,
            errors_total=errors,
        )

    def replace_results(
        self, name: str, resume: Any, results: list[CheckResult], facts: tuple[Facts, ...]
    ) -> bool:
        """Take `results` and `facts` as check `name`'s latest, judged in process from its
        `resume` (the exporter's fast path); False, changing nothing, when an answer of the
        check came since and replaced that resume (a timeout or error included: fail closed)."""
        with self._record_lock:
            if resume is None or self.resume.get(name) is not resume:
                return False
            self.results[name] = list(results)
            for fact in facts:
                keep_facts(self.facts, fact)
            return True

    def snapshot(self) -> NodeSnapshot:
        """The latest results (older than 3 intervals → stale unknown), heartbeats, facts and
        the expected GPU count (configured, else the baseline file gpu_inventory persisted); the
        dcgm check's results only for this node's GPUs (`policy.dcgm.on_this_node`)."""
        now = self.clock()
        results = []
        for check in self.checks:
            interval = self.intervals[check.name]
            results += [
                stale_as_unknown(r, now, interval) for r in self.results.get(check.name, [])
            ]
        snapshot = NodeSnapshot(
            node=self.node,
            results=tuple(results),
            heartbeats=tuple(self.heartbeats[c.name] for c in self.checks),
            taken_at=now,
            gpus_expected=self._expected_gpus(),
        )
        snapshot = with_facts(snapshot, *self.facts.values())
        local = {g.uuid for g in snapshot.gpus}  # a dcgm page of another node is not merged
        return dataclasses.replace(snapshot, results=tuple(on_this_node(results, local)))

    def _expected_gpus(self) -> int | None:
        """The configured or learned expected GPU count; None when unknown or its state file is
        broken (gpu_inventory then reports that itself as `unknown`)."""
        try:
            return load_expected(self.context)[0]
        except (ParseError, ToolError):
            return None

    def close(self) -> None:
        """Kill children still stuck from earlier cycles."""
        for process in self._stuck.values():
            _kill(process)
        self._stuck.clear()
