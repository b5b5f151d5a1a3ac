"""The exporter's fast path for a followed kernel-log file (`--kernel-log`, issue 30): when the
watcher sees a GPU record appended, the xid check's judgment is brought up to the end of the file
in process, from where its last whole-file run stopped, and published at once; no child process,
no cycle of the other checks.

How it stays the xid check's answer:
- The whole-file run (in its isolated child, at its interval, with its deadline) is still the
  only owner of the file offset: its answer carries a `checks.xid_file.FileResume` (inode,
  offset after its last complete line, its scan). The fast path never keeps an offset of its
  own: each time it resumes a copy of that scan with the bytes from that offset to the end and
  judges the whole with the check's own pure `judge_scan`. Its counts are therefore the same
  whole-file totals a run would report; `state.CounterCarry` adds only their growth, so an Xid
  counted on the fast path is not counted again when the next run reports it.
- After every cycle the exporter brings the run's answer up to the end of the file the same way
  before it is published (`after_cycle`), so a run that started before an append never takes a
  total back (which the carry would read as a restarted source and count again). A run answer
  that cannot be brought forward (the file was rotated or truncated since) and is older than what
  was published keeps the published xid results until the next run, made due at once.
- Anything the fast path cannot do exactly — no answer to resume yet, a run that timed out or
  failed (the runner then drops its resume: `Runner.replace_results` refuses), another file at
  the path, a truncated file, a head that is no longer a kernel log, more than
  `xid_file.MAX_RESUME_BYTES` new, no run for 3 intervals (the loop is stuck: the fast path
  must not keep the xid results fresh) — it declines, and the caller makes the xid check due as
  before: the isolated run judges it, fail closed.
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Callable
from typing import Any

from gpuslo.errors import GpusloError
from gpuslo.exporter.answers import with_facts
from gpuslo.exporter.checks.base import CheckOutput, KernelLogFacts
from gpuslo.exporter.checks.xid import NAME, judge_scan
from gpuslo.exporter.checks.xid_file import FileResume, resume_scan
from gpuslo.exporter.policy.xid import XidPolicy, load_policy
from gpuslo.exporter.snapshot import NodeSnapshot

STALE_RUNS = 3  # as `verdict.stale_as_unknown`: no run for 3 intervals, no fast path either


class FastXid:
    """Judges the followed kernel-log file from the xid check's latest resume (see the module
    docstring).

    Args:
        runner: the exporter's `Runner` (its `resume` and `replace_results`).
        policy_path: the operator's Xid policy overlay, as the check's context names it.
        clock: Unix seconds.
    """

    def __init__(self, runner: Any, policy_path: str | None,
                 clock: Callable[[], float] = time.time) -> None:
        self.runner, self.policy_path, self.clock = runner, policy_path, clock
        self._policy: XidPolicy | None = None
        self.published: tuple[int, int] | None = None  # (inode, offset) last judged to
        self.published_output: CheckOutput | None = None

    def policy(self) -> XidPolicy:
        """The Xid policy, loaded once (raises ConfigError as the check would)."""
        if self._policy is None:
            self._policy = load_policy(self.policy_path)
        return self._policy

    def judged(self) -> tuple[FileResume, CheckOutput, int] | None:
        """(the resume used, the xid check's output for the file as it is now, the offset it
        reaches); None when the file cannot be judged from the latest resume."""
        resume = self.runner.resume.get(NAME)
        if not isinstance(resume, FileResume):
            return None
        started = time.monotonic()
        now = self.clock()
        if now - self.runner.heartbeats[NAME].last_run > STALE_RUNS * self.runner.intervals[NAME]:
            return None  # the whole-file run has stopped answering: its results go stale
        resumed = resume_scan(resume, now)
        if resumed is None:
            return None
        scan, offset = resumed
        try:
            output = judge_scan(scan, resume.path, self.policy(), resume.family, now)
        except GpusloError:
            return None
        spent = time.monotonic() - started
        results = [dataclasses.replace(r, duration_s=spent) for r in output.results]
        return resume, dataclasses.replace(output, results=results), offset

    def refresh(self, snapshot: NodeSnapshot) -> NodeSnapshot | None:
        """`snapshot` with the xid results and facts of the file as it is now, also kept as
        the runner's latest; None when the fast path declines (the caller makes the check
        due)."""
        judged = self.judged()
        if judged is None:
            return None
        resume, output, offset = judged
        facts = output.facts if isinstance(output.facts, tuple) else (output.facts,)
        if not self.runner.replace_results(NAME, resume, output.results, facts):
            return None
        self.published, self.published_output = (resume.inode, offset), output
        return with_xid(snapshot, output)

    def after_cycle(self, snapshot: NodeSnapshot) -> tuple[NodeSnapshot, bool]:
        """A cycle's snapshot brought up to the end of the file, and whether the xid check
        should run again at once (its answer could not be brought forward and is older than
        what was published, whose xid results and facts are kept meanwhile)."""
        refreshed = self.refresh(snapshot)
        if refreshed is not None:
            return refreshed, False
        resume = self.runner.resume.get(NAME)
        if not isinstance(resume, FileResume) or self.published is None:
            return snapshot, False
        inode, offset = self.published
        if resume.inode != inode or resume.offset >= offset or self.published_output is None:
            return snapshot, False
        kept = self.published_output
        facts = kept.facts if isinstance(kept.facts, tuple) else (kept.facts,)
        self.runner.replace_results(NAME, resume, kept.results, facts)  # the loop's own resume
        return with_xid(snapshot, kept), True


def with_xid(snapshot: NodeSnapshot, output: CheckOutput) -> NodeSnapshot:
    """`snapshot` with the xid check's results and kernel-log facts replaced by `output`'s
    (pure)."""
    results = tuple(r for r in snapshot.results if r.check != NAME) + tuple(output.results)
    facts = output.facts if isinstance(output.facts, tuple) else (output.facts,)
    kernel = [f for f in facts if isinstance(f, KernelLogFacts)]
    return with_facts(dataclasses.replace(snapshot, results=results), *kernel)
