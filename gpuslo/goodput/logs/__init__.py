"""Goodput from the logs training jobs already print (DESIGN.md §5, issue 14).

Layout: `profiles` (the packaged YAML of regexes per framework, with an operator overlay),
`read` (the I/O edge: streamed lines, binary refused), `parse` (lines → observations),
`assemble` (observations → facts and Recorder journal events, goodput from the one calculator),
`slowdown` (sustained slowdowns against the job's own steady state).

`analyse_log(path, ...)` is the one call that does all of it for a file.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

from gpuslo import names
from gpuslo.goodput.logs.assemble import LogGoodput, assemble
from gpuslo.goodput.logs.parse import LogParser
from gpuslo.goodput.logs.profiles import Profiles, load_profiles
from gpuslo.goodput.logs.read import ReadStats, read_lines
from gpuslo.goodput.slowdown import DEFAULT_MIN_INTERVALS, DEFAULT_THRESHOLD

__all__ = ["LogGoodput", "analyse_log", "job_id_for", "load_profiles"]


def job_id_for(path: str | os.PathLike[str]) -> str:
    """A valid journal job id from a log's file name (`train-1234.log` → `train-1234`)."""
    stem = Path(path).name
    for suffix in (".log", ".txt", ".out", ".err"):
        if stem.endswith(suffix) and len(stem) > len(suffix):
            stem = stem[: -len(suffix)]
    cleaned = re.sub(r"[^A-Za-z0-9._:@+=-]", "_", stem).lstrip("._:@+=-")[:128]
    return cleaned or "log"


def analyse_log(
    path: str | os.PathLike[str],
    profiles: Profiles | None = None,
    *,
    framework: str | None = None,
    gpus: int | None = None,
    job: str | None = None,
    slowdown_threshold: float = DEFAULT_THRESHOLD,
    slowdown_min_intervals: int = DEFAULT_MIN_INTERVALS,
) -> LogGoodput:
    """Read the log at `path` and return its facts and journal events.

    Raises InputError when the file cannot be read, UsageError for an unknown `framework`.
    A binary file, or a log with no progress, gives a document with status `unknown` (what was
    read and what was not is in `read` and `not_read`), never a made-up goodput."""
    profiles = profiles or load_profiles()
    parser = LogParser(profiles, framework)
    stats = ReadStats()
    for line in read_lines(path, stats):
        parser.feed(line)
    parsed = parser.finish()
    result = assemble(parsed, job=job or job_id_for(path), gpus=gpus,
                      checkpoint_step=profiles.checkpoint_step,
                      slowdown_threshold=slowdown_threshold,
                      slowdown_min_intervals=slowdown_min_intervals)
    doc = {"file": str(path), **result.document}
    doc["read"] = {"bytes": stats.bytes, "binary": stats.binary, **doc["read"]}
    if stats.binary:
        doc["status"] = names.STATUS_UNKNOWN
        doc["not_read"] = ["the file is binary (control bytes in its first 64 KiB): not read"]
    if stats.long_lines:
        doc["not_read"].append(f"{stats.long_lines} line(s) over 64 KiB: only their start read")
    return LogGoodput(doc, result.events)
