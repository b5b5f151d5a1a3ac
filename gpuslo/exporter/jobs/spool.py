"""The job-log tailer's state on disk (`logs.JobLogTailer` extends `TailStore`): per job a
`_Job` (its files by inode, decoded lines, reader, GPU count, marks), the spool of its decoded
lines and its cursor, written and restored here.

Restart-safe, exactly once. Per job the state dir holds `job_logs/<job>.lines`, the decoded
lines so far (append-only: `<CRI time or ->` TAB `<line>`), and `job_logs/<job>.cursor.json`,
written atomically after the lines are appended and synced: per file (by inode, so a rotation
that renames `0.log` is followed) the byte offset read, the CRI partials not yet joined, the
GPU count and the length of the `.lines` file it covers. After kill -9 the exporter truncates
`.lines` to that length (lines appended after the last cursor are read again from the logs),
replays it, and goes on from the offsets, so the counters equal a recomputation from the logs
and nothing is counted twice — even after the kubelet deleted rotated files. A job whose log
directory is gone (pod deleted) is dropped with its state.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from gpuslo.errors import ParseError
from gpuslo.exporter.jobs.marks import Marks, loaded
from gpuslo.exporter.state import read_json_state, write_json_atomic
from gpuslo.goodput.calculator import JobGoodput
from gpuslo.goodput.logs import last_written
from gpuslo.goodput.logs.cri_log import CriJoiner, PodLogIdentity
from gpuslo.goodput.logs.profiles import Profiles
from gpuslo.goodput.logs.reader import LogReader

log = logging.getLogger(__name__)
STATE_DIR = "job_logs"
CURSOR_VERSION = 1


@dataclass
class _Job:
    """One job's tail: its files by inode, its decoded lines, its reader and what it read
    (`facts`: the `gpuslo goodput` document of the lines so far, once the GPU count is known)."""

    job: str
    identity: PodLogIdentity | None
    parser: LogReader
    said: str  # when the job's log was last written, in words (`last_written`): the year's source
    files: dict[str, dict[str, Any]] = field(default_factory=dict)  # inode -> {name, offset}
    joiner: CriJoiner = field(default_factory=CriJoiner)
    gpus: int | None = None
    restarts: int | None = None  # highest restart count (<n>.log) read, None before any line
    spool_bytes: int = 0
    result: JobGoodput | None = None
    facts: dict[str, Any] | None = None
    dirty: bool = True
    marks: Marks = field(default_factory=dict)  # high-water of each published counter
    seen: tuple[int, float] | None = None  # undated log: (last step, Unix s the tailer saw it)


class TailStore:
    """Where each job's tail is kept across restarts: `dir` (the state dir's `job_logs/`) holds
    `<job>.lines` and `<job>.cursor.json` (see the module docstring); `_jobs` the tails restored
    or started, `_now` the clock (Unix seconds) where no file's modification time can be read."""

    dir: Path
    profiles: Profiles
    _jobs: dict[str, _Job]
    _now: Callable[[], float]

    # -- restart ---------------------------------------------------------------------------
    def _paths(self, job: str) -> tuple[Path, Path]:
        return self.dir / f"{job}.lines", self.dir / f"{job}.cursor.json"

    def _restore(self, job: str) -> None:
        spool, cursor_path = self._paths(job)
        try:
            cursor = read_json_state(cursor_path, None)
            if not isinstance(cursor, dict) or cursor.get("v") != CURSOR_VERSION:
                raise ParseError(str(cursor_path), "not a job-log cursor of this version")
            size = spool.stat().st_size if spool.exists() else 0
            if size < cursor["spool_bytes"]:
                raise ParseError(str(spool), f"{size} bytes, the cursor covers "
                                             f"{cursor['spool_bytes']}: lines lost")
            known = cursor["identity"]
            reference = cursor.get("reference")  # absent from a cursor written before it was kept
            reference = (float(reference), cursor["said"]) if reference is not None else \
                last_written("-", self._now)
            tail = self._new(job, PodLogIdentity(**known) if known is not None else None,
                             reference)
            with open(spool, "r+b" if spool.exists() else "w+b") as f:
                f.truncate(cursor["spool_bytes"])  # lines appended after the last cursor
                for raw in f.read().decode("utf-8", errors="replace").splitlines():
                    ts, _, text = raw.partition("\t")
                    tail.parser.feed(text, None if ts == "-" else float(ts))
            tail.files = {str(k): dict(v) for k, v in cursor["files"].items()}
            tail.joiner = CriJoiner({k: list(v) for k, v in cursor["pending"].items()})
            tail.gpus, tail.spool_bytes = cursor["gpus"], cursor["spool_bytes"]
            tail.restarts = cursor.get("restarts")
            tail.marks = loaded(cursor.get("marks"))
            seen = cursor.get("seen")  # absent before it was kept, or for a dated log
            tail.seen = (int(seen[0]), float(seen[1])) if seen is not None else None
        except (OSError, ParseError, KeyError, TypeError, ValueError, AttributeError) as error:
            log.warning("job log state of %r unusable (%s): reading its logs from the start",
                        job, " ".join(str(error).split()))
            self._forget(job)
            return
        self._jobs[job] = tail

    def _new(self, job: str, identity: PodLogIdentity | None,
             reference: tuple[float, str]) -> _Job:
        """A job's tail whose reader dates year-less stamps from `reference` ((Unix seconds,
        in words) its log was last written, `last_written`)."""
        return _Job(job, identity, LogReader(self.profiles, reference=reference[0]),
                    reference[1])

    def _forget(self, job: str) -> None:
        self._jobs.pop(job, None)
        for path in self._paths(job):
            path.unlink(missing_ok=True)

    def _write_cursor(self, tail: _Job) -> None:
        identity = None if tail.identity is None else vars(tail.identity)
        write_json_atomic(self._paths(tail.job)[1], {
            "v": CURSOR_VERSION, "job": tail.job, "files": tail.files, "gpus": tail.gpus,
            "pending": tail.joiner.pending, "spool_bytes": tail.spool_bytes,
            "identity": identity, "restarts": tail.restarts, "marks": tail.marks,
            "reference": tail.parser.clock.reference, "said": tail.said,
            "seen": tail.seen})
