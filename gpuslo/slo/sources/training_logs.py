"""Training logs (`gpuslo.goodput.logs`) as `job_events` and `allocations` frames.

Each log becomes the journal events it amounts to (the same schema the Recorder writes), then
the journal source's own pure functions turn them into frames, so `gpuslo report --training-log`
computes goodput with the one calculator, exactly as for `--journals`. One log is one job (its
file name) on one node (`log`); `gpus` is the GPUs it used.

`load_training_logs(paths, gpus)` (I/O): each path is a log file or a directory of them (`*.log`,
`*.txt`, `*.out` under it, rotated `*.log.1` and gzip-compressed `*.log.2.gz` too; every other
file there is listed as not read in `cannot_fill["training_logs"]`), or `-`, standard input, read
once (`stdin_at_most_once`, as `gpuslo goodput -` reads it; named `<stdin>`). Raises InputError
when a path cannot be read or holds no log or when no log gives GPU-seconds (each one's reason in
the message: an empty or binary stdin is one line naming `<stdin>`), UsageError for gpus below 1
or `-` named twice. Logs that tell nothing (binary, no progress line) are listed in
`cannot_fill["training_logs"]`, never given a made-up goodput. A log that is read but whose
goodput is unknown (no commit evidence: Lightning saves silently) keeps its events, so its span,
interruptions, hangs and restarts count (newcomer6 finding 7: a directory of crashing jobs read
"0 job interruptions"), and is named in `Frames.goodput_unknown`, which the engine leaves out of
every goodput figure (the calculator would book its progress as uncommitted or wasted, a held
0.0 and ETTR 0.0); `cannot_fill` then says which logs the goodput covers (`goodput_coverage`:
"goodput covers k of n training logs", or `job_goodput` when it covers none). Logs
whose lines carry no dates (every time before DATED_FROM: they count from the log's first line)
set `cannot_fill["dates"]`, so the report gives a window length and no calendar date; beside
dated logs each is placed from the earliest dated log's start, counted by its own span, and
`cannot_fill["undated_logs"]` names them (newcomer8 F3).
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from gpuslo.config_file import STDIN, data_name, not_a_log_file, stdin_at_most_once
from gpuslo.errors import InputError, UsageError
from gpuslo.goodput.logs import analyse_log, load_profiles
from gpuslo.slo.frames import TRAINING_LOGS_BASIS, Frames, make_frame
from gpuslo.slo.sources.journals import _COLUMNS, allocations_from_events, events_from_journal

LOG_SUFFIXES = (".log", ".txt", ".out")
# No training log predates this (CUDA is from 2007): a log whose times all fall before it carries
# no dates, and its times count from its first line (`goodput.logs` places it at 0).
DATED_FROM = pd.Timestamp("2000-01-01", tz="UTC").timestamp()
UNDATED = "the training logs carry no dates: their times count from the first line"


def why_unknown(document: dict) -> str:
    """Why a log whose status is `unknown` adds no GPU-seconds: what was not read, else the
    reason its goodput is unknown (no commit evidence, no clock)."""
    goodput = document.get("goodput") or {}
    return "; ".join(document["not_read"]) or f"goodput unknown: {goodput.get('reason')}"


def is_log_name(path: Path) -> bool:
    """True when one of the name's suffixes is a LOG_SUFFIXES one, so rotated and compressed
    logs count too: `train.log`, `train.log.1`, `kern.log.2.gz`, kubelet's
    `0.log.20240501-120000.gz` (a gzip file is decompressed as it is read); `model.ckpt`,
    `data.bin` do not."""
    return any(suffix in LOG_SUFFIXES for suffix in path.suffixes)


def log_files(paths: list[str], skipped: list[str] | None = None) -> list[Path]:
    """The log files `paths` name: files as given, `-` (standard input) as itself, directories
    searched for `is_log_name` files. Every other file under a directory is appended to
    `skipped` as `PATH: why`, so nothing in a directory is left out silently. Raises UsageError
    when `-` is named twice, InputError for a path that is no log file or directory."""
    stdin_at_most_once(paths)
    found: list[Path] = []
    for raw in paths:
        path = Path(raw)
        if raw == STDIN:
            found.append(path)
        elif path.is_dir():
            found += _logs_under(path, skipped)
        elif not_a_log_file(path) is not None:  # a FIFO made with mkfifo, a socket, a device
            raise InputError(str(path), f"{not_a_log_file(path)}: not read")
        elif path.is_file() or path.is_fifo():  # a pipe: `<(kubectl logs ...)`
            found.append(path)
        elif path.exists():  # a device never ends
            raise InputError(str(path), "not a log file or directory (a device or socket)")
        else:
            raise InputError(str(path), "no such log file or directory")
    return found


def _logs_under(folder: Path, skipped: list[str] | None) -> list[Path]:
    """The `is_log_name` regular files under `folder`; every other entry that is not a folder
    is appended to `skipped` as `PATH: why` (a FIFO, socket or device named like a log too: it
    is never opened). Raises InputError when none is a log, naming what was skipped."""
    entries = sorted(p for p in folder.rglob("*") if not p.is_dir())
    logs = [p for p in entries if p.is_file() and is_log_name(p)]
    passed = [f"{p}: skipped: not a regular file" if not p.is_file() else
              f"{p}: not read (no {'/'.join(LOG_SUFFIXES)} in its name)"
              for p in entries if p not in logs]
    if not logs:
        odd = [w for w in passed if w.endswith("not a regular file")][:3]
        raise InputError(str(folder), f"no training logs ({', '.join(LOG_SUFFIXES)}) found"
                         + "".join(f"; {w}" for w in odd))
    if skipped is not None:
        skipped += passed
    return logs


def load_training_logs(paths: list[str], gpus: int, profiles_path: str | None = None) -> Frames:
    """Frames (job_events, allocations) from training logs; see the module docstring."""
    if gpus is None or gpus < 1:
        raise UsageError("--training-log needs --gpus N (the GPUs the job used, 1 or more)")
    profiles = load_profiles(profiles_path)
    named = ", ".join(map(data_name, paths))
    dated, undated, unread, skipped = [], [], [], []
    unknown: dict[str, tuple[str, str]] = {}  # job -> (log name, why its goodput is unknown)
    found = log_files(paths, skipped)
    not_read = 0  # files with nothing read (binary, empty...): not among the logs "read"
    for path in found:
        result = analyse_log(path, profiles, gpus=gpus)
        document = result.document
        if document["status"] != "ok" and (document["not_read"] or not result.events):
            unread.append(f"{data_name(path)}: {why_unknown(document)}")  # nothing read
            not_read += 1
            continue
        job = result.events[0]["job"]
        if document["status"] != "ok":  # read, its goodput unknown: span, crashes still count
            unknown[job] = (data_name(path), why_unknown(document))
        rows = events_from_journal(result.events, job, "log")
        (dated if max(e["t"] for e in result.events) >= DATED_FROM else undated).append(
            (path, rows))
    placed = _place_undated(dated, undated) if dated and undated else ""
    rows = [row for _, found_rows in dated + undated for row in found_rows]
    if not rows:  # one line, naming why, rather than the engine's "no timestamps"
        # the error names the file(s): each reason says it once
        why = [u.removeprefix(f"{named}: ") for u in unread[:3]]
        raise InputError(named, "no training log to report on (none gives GPU-seconds): "
                         + " | ".join(why))
    job_events = make_frame("job_events", pd.DataFrame(rows, columns=list(_COLUMNS)),
                            named)
    cannot_fill = {"capacity": "training logs carry no GPU inventory or verdicts"}
    if placed:
        cannot_fill["undated_logs"] = placed
    elif undated:
        cannot_fill["dates"] = UNDATED
    if unread or skipped:
        cannot_fill["training_logs"] = _listed(unread + skipped)
    known = len(dated) + len(undated) - len(unknown)
    read = len(found) - not_read  # newcomer 7 F18: a file not read is not a log "read"
    cannot_fill.update(goodput_coverage(known, read, list(unknown.values())))
    return Frames(job_events=job_events, allocations=allocations_from_events(job_events),
                  cannot_fill=cannot_fill, source=f"training logs {named}",
                  jobs_from=TRAINING_LOGS_BASIS, goodput_unknown=frozenset(unknown),
                  goodput_logs=(known, read))


def _place_undated(dated: list[tuple[Path, list[dict]]],
                   undated: list[tuple[Path, list[dict]]]) -> str:
    """Move each undated log's rows (in place) to start where the earliest dated log starts, and
    return the note that says so. An undated job still has its span, GPU-time and interruptions
    (README: each log is a job timed by its own span); only its calendar place is unknown, so it
    is counted beside the dated ones rather than dropped (newcomer8 F3: one 8 s dated log removed
    two undated jobs, 2.3 GPU-h, from every figure while the header counted three logs)."""
    anchor = min(row["time"] for _, rows in dated for row in rows)
    for _, rows in undated:
        shift = anchor - min(row["time"] for row in rows)
        for row in rows:
            row["time"] += shift
    logs = ", ".join(data_name(path) for path, _ in undated[:LISTED])
    more = f" and {len(undated) - LISTED} more" if len(undated) > LISTED else ""
    return (f"{len(undated)} training log(s) carry no dates ({logs}{more}): each is counted by "
            "its own span from the earliest dated log's start, its calendar place unknown")


def goodput_coverage(known: int, logs: int, unknown: list[tuple[str, str]]) -> dict[str, str]:
    """The `cannot_fill` entry for logs whose goodput is unknown (`unknown`: (log name, why)),
    grouped by reason so twelve logs with one reason say it once: `job_goodput` (the SLO is not
    measured) when no log of `logs` has a known goodput, else `goodput_coverage` ("goodput
    covers k of n training logs"); {} when every log read has one."""
    if not unknown:
        return {}
    by_reason: dict[str, list[str]] = {}
    for name, why in unknown:
        by_reason.setdefault(why, []).append(name)
    reasons = "; ".join(f"{why} ({len(names_)} log{'s' * (len(names_) > 1)}: "
                        f"{_listed(names_).replace('; ', ', ')})"
                        for why, names_ in by_reason.items())
    if not known:
        return {"job_goodput": f"goodput unknown for every training log read ({logs}); their "
                               f"interruptions and spans are still counted: {reasons}"}
    return {"goodput_coverage": f"goodput covers {known} of {logs} training logs; unknown for "
                                f"{len(unknown)}, whose interruptions and spans are still "
                                f"counted: {reasons}"}


LISTED = 20  # files named in `cannot_fill["training_logs"]`; the rest are counted


def _listed(items: list[str]) -> str:
    """The first LISTED of `items` joined with `; `, then `and N more` for the rest."""
    more = f"; and {len(items) - LISTED} more" if len(items) > LISTED else ""
    return "; ".join(items[:LISTED]) + more
