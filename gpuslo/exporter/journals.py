"""Tailing job journals for the exporter: each poll reads only the bytes appended since the last
one and folds them into the job's running goodput with the shared calculator
(`gpuslo.goodput.calculator`), so the exposed counters equal a recomputation from the journals —
after a restart the exporter simply reads every journal again from the start.

A journal is `<journal_dir>/<job_id>.jsonl`. A trailing partial line is kept until its newline
arrives (the writer may be mid-line). A file that shrinks or is replaced is read again from the
start. Problems (bad lines, bad file names) are reported once each through `report`.
"""

from __future__ import annotations

import logging
import os
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from gpuslo.errors import ParseError
from gpuslo.goodput.calculator import GoodputState, JobGoodput
from gpuslo.goodput.journal import JournalReader, validate_job_id

log = logging.getLogger(__name__)
READ_CHUNK = 16 * 1024 * 1024  # bytes read from one journal per poll at most


@dataclass
class _Tail:
    inode: int
    reader: JournalReader
    state: GoodputState = field(default_factory=GoodputState)
    offset: int = 0
    partial: bytes = b""
    reported: int = 0


def _warn(problem: ParseError) -> None:
    log.warning("journal problem: %s", problem)


class JournalTailer:
    """Follows every `*.jsonl` journal in `journal_dir`.

    Args:
        journal_dir: the exporter's `--journal-dir`; a missing directory means no jobs.
        report: called once per problem (ParseError naming file and line); default logs a warning.
    """

    def __init__(
        self, journal_dir: str | os.PathLike[str], report: Callable[[ParseError], None] = _warn
    ) -> None:
        self.journal_dir = Path(journal_dir)
        self._report = report
        self._tails: dict[str, _Tail] = {}
        self._bad_names: set[str] = set()

    def poll(self) -> None:
        """Read what was appended to every journal since the last poll. Never raises for a bad
        journal: unreadable files are reported and skipped."""
        try:
            paths = sorted(self.journal_dir.glob("*.jsonl"))
        except OSError as error:
            self._report_once(str(self.journal_dir), f"cannot list journals ({error})")
            return
        for path in paths:
            try:
                job = validate_job_id(path.stem)
            except ValueError as error:
                self._report_once(str(path), f"not a valid job journal name ({error})")
                continue
            try:
                self._read(job, path)
            except OSError as error:
                self._report_once(str(path), f"cannot read ({error})")

    def _report_once(self, source: str, message: str) -> None:
        if source not in self._bad_names:
            self._bad_names.add(source)
            self._report(ParseError(source, message))

    def _read(self, job: str, path: Path) -> None:
        with open(path, "rb") as f:
            st = os.fstat(f.fileno())
            tail = self._tails.get(job)
            if tail is None or tail.inode != st.st_ino or st.st_size < tail.offset:
                tail = self._tails[job] = _Tail(st.st_ino, JournalReader(str(path)))
            f.seek(tail.offset)
            data = f.read(READ_CHUNK)
        tail.offset += len(data)
        *lines, tail.partial = (tail.partial + data).split(b"\n")
        for raw in lines:
            event = tail.reader.feed_line(raw.decode("utf-8", errors="replace"))
            if event is not None:
                tail.state.apply(event)
        for problem in tail.reader.problems[tail.reported :]:
            self._report(problem)
        tail.reported = len(tail.reader.problems)

    def jobs(self, max_jobs: int) -> list[tuple[str, JobGoodput]]:
        """(job id, goodput) of the `max_jobs` jobs with the most recent events, newest first
        (ties by job id), so the job label stays bounded."""
        started = [(job, t.state.result) for job, t in self._tails.items() if t.state.result.status]
        started.sort(key=lambda item: (-item[1].last_event_t, item[0]))
        return started[:max_jobs]
