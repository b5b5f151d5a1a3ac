"""A serving replica's timeline from its engine log, where only logs exist (issue 29, item 3).

`serving_log(path, gpus=None) -> dict` reads the log's markers (`markers`), turns them
into the replica's state intervals (`replica_states`, `replica_idle` frames of
`gpuslo.slo.frames`) with `states_from_markers`, and accounts them with
`gpuslo.slo.serving.serving_account`, so each second of the log's span gets one category of
names.SERVING_CATEGORIES and lost time its layer, exactly as the metrics side does.

Rules (times are the markers' stamps; the replica's window is the log's first to last stamp):

- a `loading` marker starts `loading` (at the log's first stamp when it is the first marker: the
  lines before it are the same start-up);
- a `ready` marker starts `ready`; when it is the first marker, the time before it is `loading`
  (a log that prints a ready marker printed its start-up before it);
- a `throughput` line means ready: the first one, with no marker before, makes the replica ready
  from the start of the window it reports on (`first_ready`: one stats interval before it, not
  before the log's first stamp; the first stamp when no interval is shown). Its window is the time
  since the previous throughput line (or the ready marker, or the first stamp); the window is
  `idle_capacity` when the line says 0 running and 0 waiting and no token processed (vLLM prints
  `Running: 0 reqs` also for a window whose requests finished in it, with non-zero throughput:
  that window served). vLLM stops printing while idle, so the silence after an idle line is
  `idle_capacity` too, up to the next marker (a crash shows a batch running: the time before it
  stays as it was), or for a busy throughput line up to one stats interval before it
  (`logging_interval`: the line's own requests ran in that interval; the whole silence when no
  interval is shown), or the log's end (newcomer3 #5: 27 minutes after `Running: 0 reqs` were
  booked serving);
- a `crash` marker starts `not_ready` with its reason (engine_oom, engine_crash); a later
  `loading` is the restart (serving.py gives the reload the crash's cause);
- a `shutdown` marker starts `draining`, unless the replica is already not_ready;
- a stall (`stalls`): consecutive throughput lines that each say requests run (or wait) and no
  token was processed in their window, spanning at least `STALL_S`, is `not_ready`, reason
  `engine_stall`, from the first such line's window to the last line (worst-first over the
  ready state). vLLM prints its stats line every 10 s while requests run
  (`VLLM_LOG_STATS_INTERVAL`); a running request that makes no prompt or generation token for
  two whole intervals is not being answered (newcomer 7 F2: vllm #17972 "server hangs", #6614
  "No available block found": `Running: 1 reqs` at 0.0 tokens/s until the requests time out).
  A single such line (one interval, e.g. a long prefill) stays as it was, unless nothing runs
  while requests wait (`_queued_only`: nothing admitted, so no prefill explains it; newcomer8
  F5, vllm PR #8378's hang): that one window is already a stall;
- time before the first marker has no state: `other` (observability, no_data).

The document says `unknown`, with the reason, when the log cannot tell: no stamp (no time at
all), no serving marker, or no ready marker, throughput line nor crash (the log ends while
loading: whether the engine became ready after it is not in the log; the loading time is still
counted). A replica made ready by a throughput line, with no ready marker in the log (an excerpt
that starts mid-run), is `ok` and says so in `notes`. A marker
line without a stamp of its own takes the stamp of the record before it (said in `notes`).
"""

from __future__ import annotations

import os
from collections import Counter

import pandas as pd

from gpuslo import names
from gpuslo.config_file import EMPTY_DATA
from gpuslo.goodput.logs import job_id_for
from gpuslo.goodput.logs.stamps import REFERENCE_YEAR
from gpuslo.slo.frames import empty, iso_utc, make_frame
from gpuslo.slo.serving import serving_account
from gpuslo.slo.serving_logs.markers import (
    Marker,
    MarkerLog,
    MarkerWording,
    load_wording,
    read_markers,
    recurring_unread,
)

_NODE = "log"
STALL_S = 20.0  # two of vLLM's default 10 s stats intervals without a token (see the docstring)
STALL_REASON = "engine_stall"


def states_from_markers(markers: list[Marker], first_ts: float, last_ts: float
                        ) -> tuple[list[dict], list[dict]]:
    """(state rows, idle rows) for one replica: dicts with start, end (Unix seconds), and for
    states `state` (names.REPLICA_STATES), `reason` and `line` (the marker's line). Pure; see
    the module docstring for the rules. Markers without ts are skipped; a stamp earlier than
    the marker before it counts at that marker's time."""
    states: list[dict] = []
    idle: list[dict] = []
    window: float | None = None
    interval = logging_interval(markers)
    quiet: float | None = None  # since when the engine has said it is idle (0 running, waiting)

    def enter(state: str, at: float, line: int, reason: str = "") -> None:
        if states and states[-1]["state"] == state:
            return
        if states:
            states[-1]["end"] = at
        states.append({"state": state, "start": at, "end": last_ts, "reason": reason,
                       "line": line})

    for m in (m for m in markers if m.ts is not None):
        current = states[-1]["state"] if states else None
        # ranks interleave their lines: a stamp up to clock.BACK_TOLERANCE_S before the one
        # above it is the same clock; it never reopens time already painted
        at = max(float(m.ts), states[-1]["start"] if states else first_ts,  # type: ignore[arg-type]
                 window if window is not None else first_ts)
        if quiet is not None and m.kind != "crash" and not _idle(m):
            busy_from = at - interval if m.kind == "throughput" and interval else at
            if busy_from > quiet:  # the silence after an idle line is idle (newcomer3 #5)
                idle.append({"start": quiet, "end": busy_from})
                window = busy_from if window is not None else window
        quiet = None if m.kind != "throughput" or not _idle(m) else quiet
        if m.kind == "loading":
            enter("loading", first_ts if current is None else at, m.line)
        elif m.kind == "ready":
            if current is None and at > first_ts:
                enter("loading", first_ts, m.line)
            enter("ready", at, m.line)
            window = at
        elif m.kind == "throughput":
            if current != "ready":
                begun = at if current is not None else first_ready(at, first_ts, interval)
                enter("ready", begun, m.line)
                window = begun
            if window is not None and _idle(m):
                idle.append({"start": window, "end": at})
                quiet = at
            window = at
        elif m.kind == "crash":
            _crash(states, enter, m, at)
        elif m.kind == "shutdown" and current != "not_ready":
            enter("draining", at, m.line)
    if quiet is not None and last_ts > quiet:
        idle.append({"start": quiet, "end": last_ts})
    return states, idle


def first_ready(at: float, first_ts: float, interval: float | None) -> float:
    """When a replica first shown by a throughput line at `at` (no marker before it) is ready:
    the start of the window the line reports on, one `interval` before it, never before the
    log's first stamp; the first stamp when no interval is shown. vLLM prints its stats line
    every interval while requests run, so an earlier silence is not shown serving (newcomer7
    F17: booked from line 1 while the note named line 5)."""
    return first_ts if interval is None else max(first_ts, at - interval)


def stalls(markers: list[Marker], first_ts: float) -> list[dict]:
    """The stalls of a replica (pure): dicts with start, end (Unix seconds), `line` (the first
    stalled line) and `lines`, one per run of consecutive stamped throughput lines that say
    requests run or wait and no token was processed (`busy` False) and report at least
    `STALL_S` (`seconds`): from the first line's window (since the line before, else one
    `logging_interval` before it) to the last line; `start` is never before `first_ts` (the
    time before the log is not booked). Lines whose engine prints no rate (busy None) never
    stall."""
    interval = logging_interval(markers) or 0.0
    out: list[dict] = []
    run: list[Marker] = []
    previous: float | None = None

    def close() -> None:
        queued = any(_queued_only(m) for m in run)  # nothing admitted: no prefill to wait on
        if len(run) >= 2 or queued:
            end = float(run[-1].ts)  # type: ignore[arg-type]
            if end - window_start >= (STALL_S if not queued else 0.0) and end > window_start:
                out.append({"start": max(first_ts, window_start), "end": end,
                            "line": run[0].line, "lines": len(run),
                            "seconds": end - window_start})
        run.clear()

    window_start = first_ts
    for m in (m for m in markers if m.kind == "throughput" and m.ts is not None):
        stalled = m.busy is False and ((m.running or 0) > 0 or (m.waiting or 0) > 0)
        if stalled and not run:
            window_start = previous if previous is not None else float(m.ts) - interval
        if stalled:
            run.append(m)
        else:
            close()
        previous = float(m.ts)  # type: ignore[arg-type]
    close()
    return out


def logging_interval(markers: list[Marker]) -> float | None:
    """The engine's stats interval (seconds): the shortest gap between two stamped throughput
    lines where the first did not say idle (vLLM prints its stats line every interval while
    requests run and stops once idle, so a gap after an idle line is silence, not an
    interval); None when no such gap is shown. Pure."""
    lines = [m for m in markers if m.kind == "throughput" and m.ts is not None]
    gaps = [float(b.ts) - float(a.ts)  # type: ignore[arg-type]
            for a, b in zip(lines, lines[1:], strict=False)
            if not _idle(a) and float(b.ts) > float(a.ts)]  # type: ignore[arg-type]
    return min(gaps) if gaps else None


def _queued_only(m: Marker) -> bool:
    """A throughput line with requests waiting, none running and no token processed: the
    scheduler admitted nothing in the whole window (newcomer8 F5, vllm PR #8378 "requests just
    stack up in pending ... it just hangs": `Running: 0 reqs, ... Pending: 22 reqs` at 0.0
    tokens/s). Unlike a running request at 0 tokens (a long prefill can fill one interval),
    nothing is running, so one such line is already a stall."""
    return m.busy is False and m.running == 0 and (m.waiting or 0) > 0


def _idle(m: Marker) -> bool:
    """A throughput line that says nothing ran, waited or was processed in its window."""
    return m.kind == "throughput" and m.running == 0 and m.waiting == 0 and m.busy is not True


def _crash(states: list[dict], enter, m: Marker, at: float) -> None:
    """Enter not_ready; an OOM line after a generic crash line of the same instant names it."""
    if states and states[-1]["state"] == "not_ready":
        if m.reason == "engine_oom" and states[-1]["start"] == at:
            states[-1]["reason"] = m.reason
        return
    enter("not_ready", at, m.line, m.reason)


def serving_log(path: str | os.PathLike[str], gpus: int | None = None,
                wording: MarkerWording | None = None) -> dict:
    """The replica timeline document of the log at `path` (keys in `_document`). `gpus`: the
    replica's GPU count, for GPU-hours (None: seconds only). Raises InputError when the file
    cannot be read."""
    wording = wording or load_wording()
    log = read_markers(path, wording)
    replica = job_id_for(path)
    doc = _skeleton(str(path), replica, log, gpus)
    if not log.binary:
        doc["unread"], progress = recurring_unread(path, wording)
        if progress:
            doc["notes"].append(f"{progress} training progress record(s): a training log? "
                                "(gpuslo goodput reads those)")
    reason = _unknown_reason(log)
    if reason is not None:
        doc["status"], doc["reason"] = names.STATUS_UNKNOWN, reason
        return doc
    assert log.first_ts is not None and log.last_ts is not None
    states, idle = states_from_markers(log.markers, log.first_ts, log.last_ts)
    stalled = stalls(log.markers, log.first_ts)
    stall_rows = [{"state": "not_ready", "start": s["start"], "end": s["end"],
                   "reason": STALL_REASON, "line": s["line"]} for s in stalled]
    _account(doc, replica, log, states + stall_rows, idle, gpus or 1, gpus is not None)
    doc["facts"] = _facts(log, states, idle)
    doc["facts"]["stalls"] = [{"from_s": _offset(log.first_ts, s["start"]),
                               "to_s": _offset(log.first_ts, s["end"]), "line": s["line"]}
                              for s in stalled]
    doc["notes"] += [f"line {s['line']}: {s['lines']} throughput line(s) in a row with requests "
                     f"running or waiting and no token processed for {_round(s['seconds']):g} s "
                     f"(≥ {STALL_S:g} s, or none running while requests wait): a stalled "
                     f"engine, not_ready ({STALL_REASON}), not serving" for s in stalled]
    inferred = next((s for s in states if s["state"] == "ready"), None)
    if inferred is not None and not doc["markers"]["ready"]:
        doc["notes"].append(_inferred_note(inferred, log))
    if not any(s["state"] in ("ready", "not_ready") for s in states):
        doc["status"] = names.STATUS_UNKNOWN
        doc["reason"] = ("no ready marker or throughput line: the log never shows the engine "
                         "ready, and whether it became ready after its last line is not in it")
    return doc


def _inferred_note(ready: dict, log: MarkerLog) -> str:
    """The note of a replica made ready by its first throughput line: from when, and why."""
    interval = logging_interval(log.markers)
    since = _offset(log.first_ts or 0.0, ready["start"])
    window = (f"the start of the {interval:g} s stats window the throughput line at line "
              f"{ready['line']} reports on" if interval is not None else
              f"the log's first stamp (the throughput line at line {ready['line']} shows no "
              "stats interval)")
    return (f"no ready marker: ready from {since:g} s into the log, {window} (an engine that "
            "reports the requests it runs is answering them; the start-up is not in the log)")


def _skeleton(path: str, replica: str, log: MarkerLog, gpus: int | None) -> dict:
    counts = Counter(m.kind for m in log.markers)
    engines = Counter(m.engine for m in log.markers if m.engine)
    notes = [f"line {m.line}: {m.kind} marker without its own stamp, timed by the record before"
             for m in log.markers if m.carried]
    if log.first_ts is not None and not log.year_known:
        notes.append(f"no stamp prints a year: times read in {REFERENCE_YEAR}"
                     if log.year_assumed is None else
                     f"no stamp prints a year: {log.year_assumed} assumed, the latest year the "
                     f"first stamp fits before {log.said}")
    if log.long_lines:
        notes.append(f"{log.long_lines} line(s) over 64 KiB: only their start read")
    return {
        "file": path, "replica": replica,
        "engine": engines.most_common(1)[0][0] if engines else None,
        "status": "ok", "reason": None, "gpus": gpus,
        "read": {"lines": log.lines, "records": log.records, "stamped": log.stamped,
                 "stamp_layouts": log.stamp_layouts, "binary": log.binary},
        "markers": {k: counts.get(k, 0) for k in ("loading", "ready", "throughput", "crash",
                                                   "shutdown")},
        "span": {"start": _iso(log.first_ts), "end": _iso(log.last_ts),
                 "seconds": _round(log.last_ts - log.first_ts)
                 if log.first_ts is not None and log.last_ts is not None else None},
        "timeline": [], "seconds": None, "gpu_hours": None, "lost_gpu_hours_by_layer": None,
        "facts": None, "unread": [], "notes": notes,
    }


def _unknown_reason(log: MarkerLog) -> str | None:
    if log.binary:
        return "the file is binary (control bytes in its first 64 KiB): not read"
    if not log.lines:  # the words every reader gives an empty file (newcomer8 F10)
        return EMPTY_DATA
    if not log.markers and log.traceback_line is not None:  # newcomer8 F7
        return (f"no serving marker: a Python traceback from line {log.traceback_line} without "
                "its exception line, so whether the engine crashed, and why, is not in the log")
    if not log.markers:
        return "no serving marker (loading, ready, throughput, crash or shutdown line)"
    if log.first_ts is None or all(m.ts is None for m in log.markers):
        return "no stamp on any marker: the log cannot say when anything happened"
    return None


def _account(doc: dict, replica: str, log: MarkerLog, states: list[dict], idle: list[dict],
             gpus: int, with_hours: bool) -> None:
    """Fill timeline, seconds (wall seconds per category), gpu_hours and lost layers."""
    start, end = _ts(log.first_ts), _ts(log.last_ts)
    replicas = make_frame("replicas", [{"replica": replica, "node": _NODE, "gpus": gpus,
                                        "start": start, "end": end, "engine": doc["engine"] or ""}])
    st = make_frame("replica_states", [{"replica": replica, "start": _ts(s["start"]),
                                        "end": _ts(s["end"]), "state": s["state"],
                                        "reason": s["reason"]} for s in states]
                    or None)
    idle_frame = make_frame("replica_idle", [{"replica": replica, "start": _ts(i["start"]),
                                              "end": _ts(i["end"])} for i in idle] or None)
    acc = serving_account(replicas, st, idle_frame, empty("faults"), start, end)
    doc["timeline"] = _merged(acc.segments, start, gpus)
    per = acc.fleet_hours()
    doc["seconds"] = {c: _round(h * 3600 / gpus) for c, h in per.items()}
    if with_hours:
        doc["gpu_hours"] = {c: _round(h) for c, h in per.items()}
        doc["lost_gpu_hours_by_layer"] = {k: _round(v) for k, v in acc.lost_by_layer().items()}


def _merged(segments: pd.DataFrame, start: pd.Timestamp, gpus: int) -> list[dict]:
    """Consecutive segments of one (category, reason, layer) as one timeline entry."""
    out: list[dict] = []
    for row in segments.sort_values("start").itertuples(index=False):
        key = (str(row.category), str(row.reason), str(row.layer))
        if out and out[-1]["_key"] == key and out[-1]["_end"] == row.start:
            out[-1]["_end"] = row.end
            continue
        out.append({"_key": key, "_start": row.start, "_end": row.end})
    return [{"category": e["_key"][0], "reason": e["_key"][1] or None,
             "layer": e["_key"][2] or None, "start": _iso(e["_start"].value / 1e9),
             "end": _iso(e["_end"].value / 1e9),
             "offset_s": _round((e["_start"] - start).total_seconds()),
             "seconds": _round((e["_end"] - e["_start"]).total_seconds())} for e in out]


def _facts(log: MarkerLog, states: list[dict], idle: list[dict]) -> dict:
    """Hand-checkable facts: offsets in seconds from the log's first stamp, in whole
    microseconds like the timeline."""
    t0 = round((log.first_ts or 0.0) * 1e6)

    def off(ts: float) -> float:
        return _round((round(ts * 1e6) - t0) / 1e6)

    return {
        "loading_began_s": [off(s["start"]) for s in states if s["state"] == "loading"],
        "ready_s": [off(s["start"]) for s in states if s["state"] == "ready"],
        "crashes": [{"at_s": off(s["start"]), "reason": s["reason"], "line": s["line"]}
                    for s in states if s["state"] == "not_ready"],
        "draining_s": [off(s["start"]) for s in states if s["state"] == "draining"],
        "throughput": [{"at_s": off(m.ts), "running": m.running, "waiting": m.waiting,
                        "busy": m.busy} for m in log.markers
                       if m.kind == "throughput" and m.ts is not None],
        "idle_windows_s": [[off(i["start"]), off(i["end"])] for i in idle],
    }


def _offset(first_ts: float, ts: float) -> float:
    """Seconds from the log's first stamp, in whole microseconds like the timeline."""
    return _round((round(ts * 1e6) - round(first_ts * 1e6)) / 1e6)


def _ts(seconds: float | None) -> pd.Timestamp:
    return pd.Timestamp(round((seconds or 0.0) * 1e6), unit="us", tz="UTC")


def _iso(seconds: float | None) -> str | None:
    if seconds is None:
        return None
    return iso_utc(seconds)


def _round(value: float) -> float:
    """Six decimals (microseconds, the finest stamp logs print): no float noise in JSON."""
    return round(float(value), 6) + 0.0
