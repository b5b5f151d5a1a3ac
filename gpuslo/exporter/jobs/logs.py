"""Tailing job logs for the exporter (`--job-log GLOB`): the lines training jobs already print
become the same job metrics as the Recorder's journals (`gpuslo_job_*`), read by the same reader
as `gpuslo goodput` (`gpuslo.goodput.logs.reader.LogReader`: it learns the log's templates and
field roles on the head of the stream, learns again when an unread shape recurs, then reads each
line with a prefilter and the compiled matchers; `assemble` and the one calculator), fed line by
line as the files grow, so a container log gives the facts `gpuslo goodput` gives for the same
lines in a file (`facts(job)`). This module is the I/O and state half: globbing, offsets, the
spool and the cursor (kept on disk by `spool`), the GPU count, settling and the published marks.

Jobs. Which job a file is, the order a job's files are read in and how a raw line decodes are
the pure half, `log_reading` (`jobs_of`, `file_order`, `decode`): the files of one kubelet
container's directory are one job `<namespace>:<pod>:<container>`, read restart by restart,
rotated before live; any other file is a job named after the path parts the glob varies over
(`/runs/*/train.log`: `jobA`), and two different files are never one job (a clash is logged and
each named after its path); a glob that matches nothing is logged and counted (`no_match`); CRI
records are joined and every physical line dated. `log_reading.recompute` reads a whole list of
lines at once: what the tailer must equal.

GPUs. GPU-seconds need the job's GPU count: `gpus_for(identity)` (the exporter asks the kubelet
allocations: the GPUs the container holds), else `default_gpus` (`--job-log-gpus`). A job whose
count is unknown is read but not exposed until it is known; the first count seen is kept (a
container's GPUs do not change while it lives).

Container restarts. The kubelet starts `<n+1>.log` when the container restarts: before the first
line of a file with a higher restart count than any read so far for the job, the tailer puts
`restart_line(n+1, time)` (dated by the new file's first line), which the common profile reads
as a (re)start — so the progress since the last checkpoint is `wasted_progress` and the gap until
the new container runs `recovery`, with the cause the old log printed, else `unknown`
(observability). The restart count seen is in the cursor, so a restarted exporter adds it once.

Restart-safe, exactly once: per job the spool of decoded lines and the cursor in the state dir,
replayed after a restart, are `spool` (`TailStore`, the half of the tailer that keeps them).

Year-less stamps. glog's `I1205 10:00:00.123` and syslog's `Dec  5 10:00:00` print no year: it
is inferred as `gpuslo goodput` infers it (`clock.year_before`: the latest year in which the
first such stamp is not after the log's last write), from the newest modification time of the
job's files when the tailer first meets the job (`last_written`; the injected clock where none
can be read), never a fixed year. That reference is kept in the cursor, so a restarted exporter
replays the spool with the same years; the facts say the year assumed, as `gpuslo goodput` does.

Undated logs. A log with no stamp and no CRI time (a plain file of fairseq's `train_wall` or a
bare `step N` loop) gives durations, never a time of day: its last progress time is when the
tailer saw the step count change (`_seen`, kept in the cursor), not its clock since its start.

Settling. A log is read to its end, but events younger than `settle_s` (wall clock) are not
counted yet: a line that comes later can still change what the last ones meant (progress after
an error line retracts the interruption), and exposed counters must not go down.

Counters never go down. Each update recomputes the job from all its lines, and a recomputation
can still book seconds it counted in one category to another for a while (a re-attribution of
the same seconds: a replay of an mmdet log across an epoch boundary showed `productive` go
210.73 -> 168.93 -> 210.73). What is published is held at each series' high-water mark
(`marks.raised`, as the journals do): a dip is not published, the series holds until the
recomputed value passes its mark, and the sum over categories may exceed the GPU-seconds held by
the seconds of a held dip (see `marks`). The marks are in the cursor, so a restart keeps them.
"""

from __future__ import annotations

import contextlib
import glob
import logging
import os
import time
from collections.abc import Callable, Iterable
from dataclasses import replace
from pathlib import Path
from typing import Any

from gpuslo import names
from gpuslo.config_file import BINARY_DATA, open_regular_file
from gpuslo.exporter.jobs.log_reading import (
    ROTATED,
    Line,
    complete_lines,
    file_order,
    goodput_from,
    job_of,  # noqa: F401 - re-exported
    jobs_of,
    read_log,
    recompute,  # noqa: F401 - re-exported
    restart_marker,
)
from gpuslo.exporter.jobs.marks import marks_of, raised
from gpuslo.exporter.jobs.spool import STATE_DIR, TailStore, _Job
from gpuslo.goodput.calculator import JobGoodput
from gpuslo.goodput.logs import last_written, load_profiles
from gpuslo.goodput.logs.cri_log import PodLogIdentity, decode
from gpuslo.goodput.logs.profiles import Profiles
from gpuslo.goodput.slowdown import SlowdownRule

log = logging.getLogger(__name__)
READ_CHUNK = 8 * 1024 * 1024  # bytes read from one file per poll at most
DEFAULT_SETTLE_S = 120.0
GpusFor = Callable[[PodLogIdentity | None], int | None]


class JobLogTailer(TailStore):
    """Follows every file `patterns` match (see the module docstring).

    Args:
        patterns: globs (`/var/log/pods/*/*/*.log`).
        state_dir: the exporter's state dir (`job_logs/` is created in it).
        gpus_for: GPU count of a pod's container (the kubelet allocations), None when unknown.
        default_gpus: GPU count for jobs `gpus_for` does not know, None to wait for it.
        profiles: the training-log profiles (default: the packaged ones).
        clock: Unix seconds (settling; the year of year-less stamps where no file's
            modification time can be read); settle_s: seconds events wait before they count.
        rule: the sustained-slowdown rule (the SLO spec's; default its defaults).
    """

    def __init__(self, patterns: Iterable[str], state_dir: str | os.PathLike[str],
                 gpus_for: GpusFor = lambda identity: None, default_gpus: int | None = None,
                 profiles: Profiles | None = None, clock: Callable[[], float] | None = None,
                 settle_s: float = DEFAULT_SETTLE_S, rule: SlowdownRule | None = None) -> None:
        self.patterns = list(patterns)
        self.dir = Path(state_dir) / STATE_DIR
        self.gpus_for, self.default_gpus, self.settle_s = gpus_for, default_gpus, settle_s
        self.profiles = profiles or load_profiles()
        self.clock, self.rule = clock, rule
        self._now: Callable[[], float] = clock or time.time
        self._jobs: dict[str, _Job] = {}
        self._warned: set[str] = set()
        # files that could not be read, by `names.JOURNAL_ERROR_REASONS` reason, once per file
        self.errors: dict[str, int] = dict.fromkeys(names.JOURNAL_ERROR_REASONS, 0)
        self._counted: set[tuple[str, str]] = set()
        self.dir.mkdir(parents=True, exist_ok=True)
        for cursor in sorted(self.dir.glob("*.cursor.json")):
            self._restore(cursor.name[: -len(".cursor.json")])

    def _written(self, paths: list[Path]) -> tuple[float, str]:
        """When the newest of a job's files was last written (`last_written`, the clock where
        none can be stat'ed): the reference of its year-less stamps."""
        return max((last_written(path, self._now) for path in paths), key=lambda w: w[0])

    # -- polling ---------------------------------------------------------------------------
    def poll(self) -> None:
        """Read what was appended to every matched file since the last poll and recompute the
        jobs that changed. Never raises for one bad file: it is logged once and skipped."""
        matches: list[tuple[str, str]] = []
        for pattern in self.patterns:
            found = sorted(glob.glob(pattern))
            if not found:  # a typo in a DaemonSet's glob must not pass silently (newcomer3 #9)
                self._error("no_match", pattern, "matches no file: no job read from it")
            matches += [(pattern, name) for name in found]
        named, clashes = jobs_of(matches)
        for clash in clashes:
            self._warn_once(clash, f"job log {clash}")
        groups = {job: (identity, [Path(p) for p in paths])
                  for job, (identity, paths) in named.items()}
        for job in [j for j in self._jobs if j not in groups]:
            log.info("job log %r: its files are gone; dropping the job", job)
            self._forget(job)
        for job, (identity, paths) in sorted(groups.items()):
            tail = self._jobs.get(job) or self._jobs.setdefault(
                job, self._new(job, identity, self._written(paths)))
            tail.identity = tail.identity or identity
            try:
                self._read_job(tail, self._files_of(identity, paths))
            except OSError as error:
                self._error("unreadable", job, f"cannot read ({error})", job)
            self._update(tail)

    def _files_of(self, identity: PodLogIdentity | None, paths: list[Path]) -> list[Path]:
        """The files of one job in reading order; for a container, its rotated files too."""
        if identity is None:
            return paths
        folder = paths[0].parent
        names = {p.name for p in paths}
        with contextlib.suppress(OSError):  # the folder went away: the glob's files only
            names |= {n for n in os.listdir(folder)
                      if ROTATED.fullmatch(n) and not n.endswith((".gz", ".tmp"))}
        return [folder / n for n in sorted(names, key=file_order)]

    def _read_job(self, tail: _Job, paths: list[Path]) -> None:
        lines: list[Line] = []
        seen: dict[str, dict[str, Any]] = {}
        behind = False  # a file not read to its end: later files wait (lines stay in order)
        restarts = tail.restarts
        for path in paths:
            if behind:
                seen.update({k: v for k, v in tail.files.items() if v["name"] == path.name})
                continue
            try:
                opened = self._open_regular(tail.job, path)
                if opened is None:
                    continue  # a FIFO, socket or device: counted, never opened for reading
                with opened as f:
                    st = os.fstat(f.fileno())
                    key = f"{st.st_dev}:{st.st_ino}"
                    entry = tail.files.get(key, {"name": path.name, "offset": 0})
                    if st.st_size < entry["offset"]:  # truncated or a new file on a reused inode
                        entry = {"name": path.name, "offset": 0}
                    f.seek(entry["offset"])
                    data = f.read(READ_CHUNK)
            except FileNotFoundError:
                continue  # rotated away or deleted between listing and opening
            behind = len(data) == READ_CHUNK
            chunk = complete_lines(data, entry["offset"], bool(entry.get("skip")), behind)
            if chunk.problem:
                self._problem(tail.job, path, chunk.problem)
            if chunk.problem == "parse_error":
                behind = False
                continue  # binary: not read, judged again when it changes
            text = chunk.data.decode("utf-8", errors="replace")
            decoded = [line for raw in text.split("\n")[:-1] for line in decode(raw, tail.joiner)]
            marker, restarts = restart_marker(tail.identity is not None, restarts, path.name,
                                             decoded)
            lines += marker + decoded
            seen[key] = {"name": path.name, "offset": entry["offset"] + chunk.end,
                         **({"skip": True} if chunk.skipping else {})}
        if lines or seen != tail.files:
            tail.restarts = restarts
            self._commit(tail, lines, seen)

    def _problem(self, job: str, path: Path, reason: str) -> None:
        """Count what `complete_lines` found: each line too long (`line_too_long`, logged once
        per job), a binary file once (`parse_error`, `_error`)."""
        if reason == "line_too_long":
            self.errors[reason] += 1
            self._warn_once(f"{job}:long", f"job log {str(path)!r}: a line over {READ_CHUNK} "
                            "bytes skipped (counted in gpuslo_journal_errors_total"
                            "{reason=\"line_too_long\"})")
        else:
            self._error(reason, path, BINARY_DATA, job)

    def _open_regular(self, job: str, path: Path) -> Any:
        """`path` opened for reading (binary), or None when it is not a regular file
        (`config_file.open_regular_file`: never opened, so a FIFO, socket or device matched by
        the glob cannot block the reading thread and with it every job), counted as
        `not_regular_file` once per file and logged once per `job`. Raises OSError
        (FileNotFoundError when it went away)."""
        handle, kind = open_regular_file(path)
        if handle is None:
            self._error("not_regular_file", path, f"not a regular file ({kind}); not read", job)
        return handle

    def _error(self, reason: str, source: str | Path, message: str, job: str = "") -> None:
        """Count a file (or a job's files) that cannot be read under `reason`, once per source,
        and log it once per job (as the job's other warnings)."""
        if (reason, str(source)) in self._counted:
            return
        self._counted.add((reason, str(source)))
        self.errors[reason] += 1
        self._warn_once(job or str(source), f"job log {str(source)!r}: {message}")

    def _commit(self, tail: _Job, lines: list[Line], files: dict[str, dict[str, Any]]) -> None:
        """Append `lines` to the job's .lines (synced), then write its cursor atomically, then
        feed the parser: a crash between the two leaves lines the cursor does not cover, which
        the next start truncates and reads again from the logs."""
        spool, cursor = self._paths(tail.job)
        if lines:
            data = "".join(f"{'-' if ts is None else repr(ts)}\t{text}\n"
                           for ts, text in lines).encode("utf-8", errors="replace")
            with open(spool, "ab") as f:
                f.write(data)
                f.flush()
                os.fsync(f.fileno())
            tail.spool_bytes += len(data)
        self._learn_gpus(tail)
        tail.files = files
        self._write_cursor(tail)
        for ts, text in lines:
            tail.parser.feed(text, ts)
        tail.dirty = tail.dirty or bool(lines)

    def _learn_gpus(self, tail: _Job) -> bool:
        """Ask for the job's GPU count while it is unknown; True when it was just learned."""
        if tail.gpus is not None:
            return False
        tail.gpus = self.gpus_for(tail.identity) or self.default_gpus
        return tail.gpus is not None

    def _update(self, tail: _Job) -> None:
        if self._learn_gpus(tail):
            tail.dirty = True
            self._write_cursor(tail)  # the first count seen is kept, across restarts too
        if tail.gpus is None:
            self._warn_once(tail.job, f"job log {tail.job!r}: GPU count unknown (no allocation, "
                                      "no --job-log-gpus): read, not exposed")
            return
        parsed = tail.parser.parsed()
        until = None if self.clock is None else self.clock() - self.settle_s
        settling = until is not None and parsed.last_ts is not None and parsed.last_ts > until
        if tail.dirty or settling or tail.result is None:
            read = read_log(parsed, tail.job, tail.gpus, self.profiles, tail.said)
            tail.facts = read.document
            tail.result = self._held(tail, goodput_from(read, tail.job, until, self.rule))
            if not read.dated:
                tail.result = self._seen(tail, tail.result)
            tail.dirty = False

    def _seen(self, tail: _Job, result: JobGoodput | None) -> JobGoodput | None:
        """A log that dates nothing: its last progress (and last event) is when the tailer saw
        the step count change (the clock; kept in the cursor, so a restarted exporter keeps it):
        at most a poll late, which is what the stall alert needs."""
        if result is None or result.last_step < 0:
            return result
        if tail.seen is None or tail.seen[0] != result.last_step:
            tail.seen = (result.last_step, self._now())
            self._write_cursor(tail)
        return replace(result, last_progress_t=tail.seen[1],
                                   last_event_t=tail.seen[1])

    def _held(self, tail: _Job, result: JobGoodput | None) -> JobGoodput | None:
        """`result` with each counter at least its published high-water mark (a recomputed
        dip is held, `marks`); the marks rise with it and are saved in the cursor."""
        if result is None:
            return None
        result = raised(result, tail.marks)
        marks = marks_of(result)
        if getattr(result, "goodput_unknown", ""):  # its GPU-seconds are not published:
            marks["gpu_seconds"] = dict(tail.marks.get("gpu_seconds", {}))  # no mark from them
        if marks != tail.marks:
            tail.marks = marks
            self._write_cursor(tail)
        return result

    def _warn_once(self, key: str, message: str) -> None:
        if key not in self._warned:
            self._warned.add(key)
            log.warning("%s", " ".join(message.split()))  # one line, whatever it quotes

    def facts(self, job: str) -> dict[str, Any] | None:
        """What `gpuslo goodput` would say of the job's lines so far (its JSON document), None
        before its GPU count is known or for an unknown job."""
        tail = self._jobs.get(job)
        return None if tail is None else tail.facts

    def jobs(self, max_jobs: int) -> list[tuple[str, JobGoodput]]:
        """(job id, goodput) of the `max_jobs` jobs with the most recent events, newest first
        (ties by job id); jobs with no progress or no GPU count yet are left out. A job whose
        log gives no goodput (no commit evidence, no clock) is a `log_reading.LogJobGoodput`
        saying why: its progress is still published."""
        ready = [(job, t.result) for job, t in self._jobs.items()
                 if t.result is not None and t.result.status]
        ready.sort(key=lambda item: (-item[1].last_event_t, item[0]))
        return ready[:max_jobs]
