"""Tailing job journals for the exporter: each poll reads only the bytes appended since the last
one and folds them into the job's running goodput with the shared calculator
(`gpuslo.goodput.calculator`), so the exposed counters equal a recomputation from the journals.

A journal is `<journal_dir>/<job_id>.jsonl`. Fail closed, never stalled, never going down:
- Only regular files are read: each name is `stat`ed first and a FIFO, socket or device named
  `*.jsonl` is refused without being opened; files are opened `O_NONBLOCK` and checked again.
- A trailing partial line is kept until its newline arrives (the writer may be mid-line); a line
  over `MAX_LINE_BYTES` is skipped without being held in memory.
- A journal is read to its end in `READ_CHUNK` pieces before its job is exposed, so a restart
  never exposes the partial sums of a long journal.
- Counters never go down: the exposed values are high-water marks (`marks`, which says what a
  held dip means) persisted in `<state dir>/journal_marks.json` (atomic writes). A journal that
  shrinks (truncated) is reported and followed from its new end, never re-read from the start;
  a journal replaced by another file (new inode) is read from its start and can only raise the
  marks.
- At most `max_journals` journals are followed (the most recently modified); more is reported.
- Every problem is logged once per journal and kind, and counted by reason
  (`names.JOURNAL_ERROR_REASONS`) for `gpuslo_journal_errors_total`: a bad line counts once per
  line (ten bad lines are ten), a file or directory problem once per file.
The exporter polls on its own thread (`server.Exporter.journal_loop`), never on the check thread.
"""

from __future__ import annotations

import copy
import logging
import os
import stat
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from gpuslo import names
from gpuslo.config_file import open_regular_file
from gpuslo.errors import InputError, ParseError
from gpuslo.exporter.jobs.marks import marks_of, raised
from gpuslo.exporter.state import read_json_state, write_json_atomic
from gpuslo.goodput.calculator import GoodputState, JobGoodput
from gpuslo.goodput.journal import (
    FINISHED_HOLD_S,
    FINISHED_STATUSES,
    MAX_LINE_BYTES,
    JournalReader,
    validate_job_id,
)
from gpuslo.goodput.slowdown import SlowdownRule

log = logging.getLogger(__name__)
READ_CHUNK = 16 * 1024 * 1024  # bytes read from a journal at once (memory bound per read)
DEFAULT_MAX_JOURNALS = 10_000
MARKS_FILE = "journal_marks.json"


@dataclass
class _Tail:
    inode: int
    reader: JournalReader
    state: GoodputState = field(default_factory=GoodputState)
    offset: int = 0
    partial: bytes = b""
    skipping: bool = False  # inside a line longer than MAX_LINE_BYTES: drop until its newline
    reported: int = 0
    counted: dict[str, int] = field(default_factory=dict)  # reader.skipped already counted
    caught_up: bool = False  # read to the end once: its sums are whole


def _warn(problem: ParseError) -> None:
    """Log `problem` on one line, the file name as its repr: a newline in a journal's name
    forged a line of the exporter's log."""
    rest = " ".join(str(problem)[len(problem.source):].split())
    log.warning("journal problem: %r%s", problem.source, rest)


class JournalTailer:
    """Follows every `*.jsonl` journal in `journal_dir`.

    Args:
        journal_dir: the exporter's `--journal-dir`. It must exist at start (InputError); one
            that disappears later is reported (`missing_dir`) and its jobs stay exposed.
        report: called once per problem (ParseError naming file and line); default logs a warning.
        state_dir: where the high-water marks persist (None: in memory only).
        max_journals: journals followed at most (the most recently modified first).
        chunk_bytes: bytes read at once (tests make it small).
        rule: the sustained-slowdown rule that splits `slowdown` from progress (the SLO spec's,
            `SloSpec.slowdown_rule()`; default its defaults).
    """

    def __init__(
        self,
        journal_dir: str | os.PathLike[str],
        report: Callable[[ParseError], None] = _warn,
        *,
        state_dir: str | os.PathLike[str] | None = None,
        max_journals: int = DEFAULT_MAX_JOURNALS,
        chunk_bytes: int = READ_CHUNK,
        rule: SlowdownRule | None = None,
    ) -> None:
        self.journal_dir = Path(journal_dir)
        if not self.journal_dir.is_dir():
            what = "not a directory" if self.journal_dir.exists() else "does not exist"
            raise InputError(str(self.journal_dir), f"journal directory {what}")
        self._report = report
        self._max_journals, self._chunk = max_journals, chunk_bytes
        self._rule = rule or SlowdownRule()
        self._tails: dict[str, _Tail] = {}
        self._reported: set[tuple[str, str]] = set()
        self.errors: dict[str, int] = dict.fromkeys(names.JOURNAL_ERROR_REASONS, 0)
        self._marks_path = Path(state_dir) / MARKS_FILE if state_dir is not None else None
        self._marks: dict[str, dict] = {}
        if self._marks_path is not None:
            raw = read_json_state(self._marks_path, {})
            if not isinstance(raw, dict):
                raise ParseError(str(self._marks_path), "state file is not a JSON object")
            self._marks = {str(k): v for k, v in raw.items() if isinstance(v, dict)}
        self._saved_marks: dict | None = None

    def poll(self) -> None:
        """Read what was appended to every journal since the last poll. Never raises for a bad
        journal: it is reported, counted and skipped."""
        try:
            entries = self._journals()
        except OSError as error:
            reason = "missing_dir" if isinstance(error, FileNotFoundError) else "unreadable"
            self._problem(reason, str(self.journal_dir), f"cannot list journals ({error})")
            return
        self._reported.discard(("missing_dir", str(self.journal_dir)))
        for path, st in entries:
            self._poll_one(path, st)
        self._save_marks()

    def _journals(self) -> list[tuple[Path, os.stat_result]]:
        """(path, lstat-free stat) of the journals to follow, most recently modified first."""
        found = []
        with os.scandir(self.journal_dir) as listing:
            for entry in listing:
                if not entry.name.endswith(".jsonl"):
                    continue
                try:
                    found.append((Path(entry.path), entry.stat()))  # follows symlinks
                except OSError as error:
                    self._problem("unreadable", entry.path, f"cannot stat ({error})")
        found.sort(key=lambda item: (-item[1].st_mtime, item[0].name))
        if len(found) > self._max_journals:
            self._problem(
                "too_many_journals",
                str(self.journal_dir),
                f"{len(found)} journals, more than the limit of {self._max_journals}: only the "
                f"{self._max_journals} most recently modified are read",
            )
            found = found[: self._max_journals]
        return found

    def _poll_one(self, path: Path, st: os.stat_result) -> None:
        try:
            job = validate_job_id(path.stem)
        except ValueError as error:
            self._problem("bad_name", str(path), f"not a valid job journal name ({error})")
            return
        if not stat.S_ISREG(st.st_mode):
            self._problem("not_regular_file", str(path), "not a regular file; not opened")
            return
        tail = self._tails.get(job)
        if tail is not None and tail.caught_up and (st.st_ino, st.st_size) == (
            tail.inode,
            tail.offset,
        ):
            return  # nothing new
        try:
            self._read(job, path)
        except OSError as error:
            self._problem("unreadable", str(path), f"cannot read ({error})")

    def _problem(self, reason: str, source: str, message: str, once: bool = True) -> None:
        """Count and report a problem, once per (reason, source) unless `once` is False."""
        if (reason, source) in self._reported:
            return
        if once:
            self._reported.add((reason, source))
        self.errors[reason] += 1
        self._report(ParseError(source, message))

    def _read(self, job: str, path: Path) -> None:
        handle, _ = open_regular_file(path)
        if handle is None:  # replaced between the listing's stat and this open
            self._problem("not_regular_file", str(path), "not a regular file; not read")
            return
        with handle:
            tail = self._tail_for(job, path, os.fstat(handle.fileno()))
            handle.seek(tail.offset)
            while data := handle.read(self._chunk):
                tail.offset += len(data)
                self._feed(tail, data)
            tail.caught_up = True
        for reason, lines in tail.reader.skipped.items():
            self.errors[reason] += lines - tail.counted.get(reason, 0)
        tail.counted = dict(tail.reader.skipped)
        for problem in tail.reader.problems[tail.reported :]:
            self._report(problem)
        tail.reported = len(tail.reader.problems)

    def _tail_for(self, job: str, path: Path, st: os.stat_result) -> _Tail:
        tail = self._tails.get(job)
        if tail is None or tail.inode != st.st_ino:  # new, or replaced: read from its start
            self._mark(job)
            tail = self._tails[job] = _Tail(st.st_ino, JournalReader(str(path)),
                                              GoodputState(self._rule))
        elif st.st_size < tail.offset:
            self._problem(
                "truncated",
                str(path),
                f"journal shrank from {tail.offset} to {st.st_size} bytes (truncated): the "
                "counts read so far are kept and it is followed from its new end, not re-read",
                once=False,
            )
            tail.offset, tail.partial, tail.skipping = st.st_size, b"", False
        return tail

    def _feed(self, tail: _Tail, data: bytes) -> None:
        lines = data.split(b"\n")
        last = lines.pop()  # after the last newline: a partial line
        for raw in lines:
            if tail.skipping:  # the end of an over-long line
                tail.skipping = False
                tail.reader.line_no += 1
                continue
            event = tail.reader.feed_line(tail.partial + raw)
            tail.partial = b""
            if event is not None:
                tail.state.apply(event)
        if not tail.skipping:
            tail.partial += last
            if len(tail.partial) > MAX_LINE_BYTES:
                tail.reader.feed_line(tail.partial)  # reports line_too_long, counts the line
                tail.partial, tail.skipping = b"", True

    def _mark(self, job: str) -> None:
        """Raise the persisted marks of `job` to what its tail exposes now."""
        tail = self._tails.get(job)
        if tail is None or not tail.caught_up:
            return
        self._marks[job] = marks_of(tail.state.result, self._marks.get(job))

    def _save_marks(self) -> None:
        for job in self._tails:
            self._mark(job)
        if self._marks_path is None or self._marks == self._saved_marks:
            return
        try:
            write_json_atomic(self._marks_path, self._marks)
            self._saved_marks = copy.deepcopy(self._marks)
        except OSError as error:
            self._problem("unreadable", str(self._marks_path), f"cannot save marks ({error})")

    def jobs(self, max_jobs: int, now: float | None = None,
             hold_s: float = FINISHED_HOLD_S) -> list[tuple[str, JobGoodput]]:
        """(job id, goodput) of the `max_jobs` jobs with the most recent events, newest first
        (ties by job id), so the job label stays bounded. Only journals read to their end are
        exposed, each counter at least its persisted high-water mark; with `now` (Unix
        seconds), jobs that finished more than `hold_s` before are left out (`unexpired`)."""
        started = [
            (job, raised(t.state.result, self._marks.get(job)))
            for job, t in self._tails.items()
            if t.caught_up and t.state.result.status
        ]
        if now is not None:
            started = unexpired(started, now, hold_s)
        started.sort(key=lambda item: (-item[1].last_event_t, item[0]))
        return started[:max_jobs]


def unexpired(jobs, now: float, hold_s: float = FINISHED_HOLD_S) -> list[tuple[str, JobGoodput]]:
    """The (job id, goodput) pairs of `jobs` still to expose at `now` (Unix seconds): a job that
    finished (completed or cancelled: it will not restart) more than `hold_s` before its last
    event leaves; its counters, exposed from 0 at its start, had `hold_s` of scrapes to show
    their last value. A failed job may still restart, so only --max-jobs bounds it."""
    return [(job, g) for job, g in jobs
            if not (g.status in FINISHED_STATUSES and g.last_event_t < now - hold_s)]
