"""Recorder journals (`gpuslo.goodput.journal`, schema v1) as `job_events` and `allocations` frames.

Layout: any `*.jsonl` under the directory, e.g. `<dir>/<node>/<job>.jsonl` as `gpuslo simulate`
writes and as the exporter's `--journal-dir` holds per node. Each file is one job on one node;
its `job_start` names the job and node (else the file's stem and parent directory do).

- `events_from_journal(events, job, node)` (pure) → job_events rows.
- `allocations_from_events(job_events)` (pure) → allocations: one row per (job, node) run, from
  each `job_start`/`restart` to the next `job_end` or interruption (else the last event). Journals
  name a GPU count, not GPU UUIDs, so an allocation uses uuid "" — every GPU of the node (gang
  jobs hold whole nodes; a node shared by two jobs at once is reported by the accounting).
- `load_journals(directory)` (I/O) → `Frames` with job_events and allocations, plus the
  journals' problems (bad lines are skipped and reported, never silently dropped) in
  `Frames.cannot_fill["journal_problems"]`.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from gpuslo.config_file import open_regular_file
from gpuslo.errors import InputError
from gpuslo.goodput.journal import parse_journal
from gpuslo.slo.frames import Frames, empty, make_frame

MAX_JOURNALS = 1_000_000  # journals one report reads at most (a clear error beyond)
_COLUMNS = ("job", "node", "time", "event", "step", "category", "gpus", "status", "layer",
            "count", "step_time_s", "compute_s")


def events_from_journal(events: list[dict], job: str, node: str) -> list[dict]:
    """Rows for the job_events frame from one journal's valid events (Unix-seconds times)."""
    job = next((e["job"] for e in events if e["event"] == "job_start"), job)
    node = next((e["node"] for e in events if e["event"] == "job_start" and e.get("node")), node)
    return [{"job": job, "node": node, "time": e["t"], "event": e["event"],
             "step": e.get("from_step", e.get("step")), "category": e.get("category", ""),
             "gpus": e.get("gpus"), "status": e.get("status", ""), "layer": e.get("layer", ""),
             "count": e.get("count"), "step_time_s": e.get("step_time_s"),
             "compute_s": e.get("compute_s")}
            for e in events]


def allocations_from_events(job_events: pd.DataFrame) -> pd.DataFrame:
    """Allocations (job, node, uuid "", start, end) from job_events: a run starts at `job_start`
    or `restart` and ends at the next `job_end`, or the event before the next restart, or the
    last event of the journal."""
    if job_events.empty:
        return empty("allocations")
    ev = job_events.sort_values(["job", "node", "time"], kind="stable").reset_index(drop=True)
    key = ev["job"].astype(str) + "\0" + ev["node"].astype(str)
    starts = ev["event"].isin(["job_start", "restart"]).to_numpy()
    run = pd.Series(starts).cumsum().to_numpy()
    grouped = ev.assign(run=run, key=key).groupby(["key", "run"], sort=False)
    runs = grouped.agg(job=("job", "first"), node=("node", "first"), start=("time", "first"),
                       end=("time", "last"), opens=("event", "first")).reset_index(drop=True)
    runs = runs[runs["opens"].isin(["job_start", "restart"]) & (runs["end"] > runs["start"])]
    return make_frame(
        "allocations", runs.assign(uuid="")[["job", "node", "uuid", "start", "end"]], "journals"
    )


def read_journal_bytes(path: Path) -> bytes | None:
    """The bytes of the journal at `path`, or None when it is not a regular file (a FIFO named
    `*.jsonl` is refused after `stat`, without being opened: `config_file.open_regular_file`).
    Raises InputError when it cannot be read."""
    try:
        handle, _ = open_regular_file(path)
        if handle is None:
            return None
        with handle:
            return handle.read()
    except OSError as error:
        raise InputError(str(path), f"cannot read journal: {error}") from None


def load_journals(directory: str | Path) -> Frames:
    """Read every journal under `directory`. Raises InputError when the directory cannot be read,
    holds no journal, or no valid event at all (the message names the first bad file and line:
    a folder whose only line is malformed said "no timestamps"); bad lines are skipped and
    listed in cannot_fill["journal_problems"]."""
    root = Path(directory)
    if not root.is_dir():
        raise InputError(str(root), "not a directory of journals")
    paths = sorted(root.rglob("*.jsonl"))
    if not paths:
        raise InputError(str(root), "no journals (*.jsonl) found")
    if len(paths) > MAX_JOURNALS:
        raise InputError(str(root), f"{len(paths)} journals, more than the limit of {MAX_JOURNALS}")
    rows, problems = [], []
    for path in paths:
        data = read_journal_bytes(path)
        if data is None:
            problems.append(f"{path}: not a regular file; not opened")
            continue
        events, found = parse_journal(data, str(path))
        problems += [str(p) for p in found]
        rows += events_from_journal(events, path.stem, path.parent.name)
    if not rows and problems:
        more = f" (and {len(problems) - 1} more problems)" if len(problems) > 1 else ""
        raise InputError(str(root), f"no valid journal event; {problems[0]}{more}")
    job_events = make_frame("job_events", pd.DataFrame(rows, columns=list(_COLUMNS)), str(root))
    cannot_fill = {
        "capacity": "journals alone carry no GPU inventory or verdicts; add --prometheus or --data"
    }
    if problems:
        cannot_fill["journal_problems"] = "; ".join(problems[:20]) + (
            f"; … {len(problems) - 20} more" if len(problems) > 20 else ""
        )
    return Frames(job_events=job_events, allocations=allocations_from_events(job_events),
                  cannot_fill=cannot_fill, source=str(root))
