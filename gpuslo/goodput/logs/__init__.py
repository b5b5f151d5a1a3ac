"""Goodput from the logs training jobs already print (DESIGN.md §5, issue 14).

The reader learns each log's shape from the log itself (issue 23); profiles only refine it.
Stages, in order: `read` (the I/O edge: streamed lines, binary refused, checkpoint files),
`reader` (learn on the head, then per line: `pipe` → `normalise` → `wording` events and the
`matchers` of `learn`ed progress templates; `tokens`, `stamps`, `templates`, `roles` are the
learner's parts), `assemble` (`progress` → `items` → `timeline` → `walk` (writing a
`journal_writer.Journal`) → `document`, goodput from the one calculator), `explain` (what was
read and why, for `--explain`), `profiles` (the packaged wording families and framework
refinements, with an operator overlay).

`analyse_log(path, ...)` is the one call that does all of it for a file.
"""

from __future__ import annotations

import os
import re
import stat
import time
from collections.abc import Callable, Iterable
from pathlib import Path

from gpuslo import names
from gpuslo.config_file import BINARY_DATA, EMPTY_DATA, STDIN, data_name
from gpuslo.errors import InputError
from gpuslo.goodput.logs.assemble import LogGoodput, assemble
from gpuslo.goodput.logs.envelope import Envelope
from gpuslo.goodput.logs.explain import explain
from gpuslo.goodput.logs.filecommits import commits_from_files
from gpuslo.goodput.logs.gcscope import young_collections_only
from gpuslo.goodput.logs.profiles import Profiles, load_profiles
from gpuslo.goodput.logs.read import ReadStats, checkpoint_files, read_blocks
from gpuslo.goodput.logs.reader import LogReader, ParsedLog
from gpuslo.goodput.slowdown import DEFAULT_MIN_INTERVALS, DEFAULT_THRESHOLD

__all__ = ["LogGoodput", "analyse_log", "job_id_for", "load_profiles"]


def job_id_for(path: str | os.PathLike[str]) -> str:
    """A valid journal job id from a log's file name (`train-1234.log` → `train-1234`;
    standard input, `-`, is `stdin`)."""
    if str(path) == STDIN:
        return "stdin"
    stem = Path(path).name
    for suffix in (".log", ".txt", ".out", ".err"):
        if stem.endswith(suffix) and len(stem) > len(suffix):
            stem = stem[: -len(suffix)]
    cleaned = re.sub(r"[^A-Za-z0-9._:@+=-]", "_", stem).lstrip("._:@+=-")[:128]
    return cleaned or "log"


def last_written(path: str | os.PathLike[str], now: Callable[[], float] = time.time
                 ) -> tuple[float, str]:
    """(Unix seconds, in words) when the log at `path` was last written, the reference for the
    year of stamps that print none (`clock.year_before`): its modification time for a regular
    file, `now()` for standard input, a pipe or a path that cannot be read (the read then says
    why). The exporter's job-log tailer asks the same of the files it follows."""
    if str(path) != STDIN:
        try:
            found = os.stat(path)
        except OSError:
            found = None
        if found is not None and stat.S_ISREG(found.st_mode):
            when = time.strftime("%Y-%m-%d", time.gmtime(found.st_mtime))
            return found.st_mtime, f"the file's last change ({when})"
    at = now()
    return at, f"the time it was read ({time.strftime('%Y-%m-%d', time.gmtime(at))})"


def year_note(parsed: ParsedLog, said: str) -> list[str]:
    """The note a log whose stamps print no year gets ([] when they print one, or none was
    read): the year assumed and the reference it came from (`said`, `last_written`'s words)."""
    if parsed.year_assumed is None or parsed.first_ts is None:
        return []
    return [f"the stamps print no year: {parsed.year_assumed} assumed, the latest year the "
            f"first stamp fits before {said}"]


def feed_log(reader: LogReader, blocks: Iterable[list[str]], reference: float | None) -> None:
    """Feed `blocks` (`read.read_blocks`) to `reader`; a collector's envelope around every line
    (`envelope`: kubectl/docker stamps, CRI files, journald, `ts`), found on the first block,
    is removed on the way and its time given as the transport time, which dates only records
    without a stamp of their own."""
    wrapper: Envelope | None = None
    for block in blocks:
        if wrapper is None:
            wrapper = Envelope.detect(block, reference)
        if wrapper.kind is None:
            reader.feed_block(block)
            continue
        for line in block:
            for ts, text in wrapper.unwrap(line):
                reader.feed(text, ts)
    for ts, text in wrapper.flush() if wrapper is not None else []:
        reader.feed(text, ts)


def analyse_log(
    path: str | os.PathLike[str],
    profiles: Profiles | None = None,
    *,
    framework: str | None = None,
    gpus: int | None = None,
    job: str | None = None,
    slowdown_threshold: float = DEFAULT_THRESHOLD,
    slowdown_min_intervals: int = DEFAULT_MIN_INTERVALS,
    checkpoint_dir: str | None = None,
    with_explain: bool = False,
) -> LogGoodput:
    """Read the log at `path` (`-`: standard input) and return its facts and journal events.

    `checkpoint_dir`: a directory or glob of checkpoint files whose names give the steps
    committed (`--checkpoint-dir`); `with_explain` adds the `explain` section. Raises
    InputError when the file (or the checkpoint directory) cannot be read or no checkpoint
    name in it gives a step, UsageError for an unknown `framework`. A binary file, or a log
    with no progress, gives a document with status `unknown` (what was read and what was not
    is in `read` and `not_read`), never a made-up goodput."""
    profiles = profiles or load_profiles()
    reference, said = last_written(path)
    reader = LogReader(profiles, framework, reference)
    stats = ReadStats()
    with young_collections_only():  # no full collection walks the records (gcscope)
        feed_log(reader, read_blocks(path, stats), reference)
        parsed = reader.finish()
    commits = None
    if checkpoint_dir is not None:
        files = checkpoint_files(checkpoint_dir)
        commits = commits_from_files(files, profiles.checkpoint_step)
        if not commits:  # given on purpose: never silently read as "no checkpoint"
            raise InputError(checkpoint_dir, f"--checkpoint-dir: no name among its {len(files)} "
                             f"entries gives a step (e.g. {files[0][0]!r})")
    with young_collections_only():
        result = assemble(parsed, job=job or job_id_for(path), gpus=gpus,
                          checkpoint_step=profiles.checkpoint_step,
                          slowdown_threshold=slowdown_threshold,
                          slowdown_min_intervals=slowdown_min_intervals, file_commits=commits,
                          saves_silently=profiles.saves_silently(parsed.framework))
    doc = {"file": data_name(path), **result.document}
    doc["read"] = {"bytes": stats.bytes, "binary": stats.binary, **doc["read"]}
    if stats.binary:
        doc["status"] = names.STATUS_UNKNOWN
        doc["not_read"] = [BINARY_DATA]
    elif stats.bytes == 0:
        doc["not_read"].insert(0, EMPTY_DATA)
    if stats.long_lines:
        doc["not_read"].append(f"{stats.long_lines} line(s) over 64 KiB: only their start read")
    if stats.nul_bytes and not stats.binary:
        doc["not_read"].append(f"{stats.nul_bytes} NUL byte(s) of padding in {stats.nul_runs} "
                               "run(s) skipped (logrotate copytruncate, or a crash mid-write)")
    doc["notes"] += year_note(parsed, said)
    if with_explain:
        doc["explain"] = explain(parsed, reader.wording)
    return LogGoodput(doc, result.events, result.dated)
