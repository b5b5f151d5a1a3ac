"""Checkpoint files given with `--checkpoint-dir` → the commits they prove (pure).

A file (or directory) whose name gives a step is the end of a save of that step, but only when
it can be this run's and holds something. `commits_from_files` turns the names into
`FileCommit`s; `sound_files` refuses, each with a note naming it:

- an empty one (a directory with no entry, a file of 0 bytes): a save in progress, or one that
  failed, commits nothing;
- one whose step lies beyond the log's last step by more than the widest stride between two of
  its progress lines (a save at the last step, or a few steps after the last line printed, is
  this run's; step 5000 after a log that reached step 200 is another run's);
- one whose time lies more than `ZONE_TOLERANCE_S` (14 h: the widest time-zone offset, since
  stamps without a zone are read as UTC) before the log's first stamp or after its last: another
  run's, or a copy. A time outside the span but within that tolerance keeps the commit at its
  step and drops the time (`mtime` None): copied or touched, the name still proves the step.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass

from gpuslo.goodput.logs.items import path_step

# A checkpoint file may be written a little after the log's last line (the save that ends it).
FILE_AFTER_S = 600.0
ZONE_TOLERANCE_S = 14 * 3600.0


@dataclass(frozen=True)
class FileCommit:
    """A checkpoint file: the step its name says, its modification time (Unix seconds), name,
    and whether it is empty (a directory with no entry, a file of 0 bytes)."""

    step: int
    mtime: float | None  # None: its time not used (outside the log's span)
    name: str
    empty: bool = False


def commits_from_files(files: list[tuple], patterns: tuple[re.Pattern[str], ...]
                       ) -> list[FileCommit]:
    """Checkpoint files (name, mtime[, empty]) → the commits their names say, by step (pure)."""
    out = [FileCommit(step, f[1], f[0], bool(f[2]) if len(f) > 2 else False) for f in files
           if (step := path_step(f[0], patterns)) is not None]
    return sorted(out, key=lambda c: (c.step, c.mtime))


def sound_files(commits: list[FileCommit], first_ts: float | None, last_ts: float | None,
                last_step: int | None, stride: int) -> tuple[list[FileCommit], list[str]]:
    """(the commits kept, a note per file refused or per group of times dropped); see the
    module docstring. `first_ts`/`last_ts`: the log's stamps (Unix seconds, None: no stamps,
    no time rule); `last_step`: the last step read (None: none, no step rule); `stride`: the
    widest step gap between two progress lines (≥ 1)."""
    kept, notes, dropped, after = [], [], 0, 0
    for c in commits:
        why = _refusal(c, first_ts, last_ts, last_step, stride)
        if why:
            notes.append(f"checkpoint file {c.name}: {why}: refused, not read as a commit")
        elif first_ts is not None and last_ts is not None and c.mtime is not None and not (
                first_ts <= c.mtime <= last_ts + FILE_AFTER_S):
            kept.append(FileCommit(c.step, None, c.name))
            dropped += 1
        elif last_ts is not None and c.mtime is not None and c.mtime > last_ts:
            # written after the log's last line: committed by then, but nothing is placed after
            # the last stamp (the log does not show that time; newcomer3 #13)
            kept.append(FileCommit(c.step, last_ts, c.name))
            after += 1
        else:
            kept.append(c)
    if dropped:
        notes.append(f"{dropped} checkpoint file time(s) outside the log's span (copied or "
                     "touched later, or another run's): not used as times; those commits are "
                     "placed at their step, not at the file's time")
    if after:
        notes.append(f"{after} checkpoint file(s) written after the log's last stamp: "
                     "committed at that stamp (the log does not show the time after it)")
    return kept, notes


def _refusal(c: FileCommit, first_ts: float | None, last_ts: float | None,
             last_step: int | None, stride: int) -> str | None:
    if c.empty:
        return "empty (a save in progress, or one that failed)"
    if last_step is not None and c.step > last_step + max(stride, 1):
        return (f"step {c.step} is beyond the log's last step {last_step} (by more than its "
                f"widest stride between progress lines, {max(stride, 1)}): another run's")
    if first_ts is None or last_ts is None or c.mtime is None:
        return None
    if c.mtime < first_ts - ZONE_TOLERANCE_S or c.mtime > last_ts + ZONE_TOLERANCE_S:
        return (f"its time {_utc(c.mtime)} is more than 14 h outside the log's span "
                f"({_utc(first_ts)} to {_utc(last_ts)}; stamps without a zone read as UTC): "
                "another run's, or a copy")
    return None


def _utc(t: float) -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(t))
