"""Observations of one log → its facts (the `gpuslo goodput` JSON) and Recorder journal events.

`assemble(parsed, job=..., gpus=None) -> LogGoodput` (pure). Three passes:

1. group: progress lines become `Record`s (global step, printed step, step time in seconds),
   save lines one `Save` each (start/part/end/duration lines of one checkpoint), restore lines one
   `Restore`, the error lines of one stop one `Interruption` (the highest-priority cause wins:
   an ECC error beats the Python traceback it raised).
2. time: every item gets a start and end on one clock (Unix seconds). Timestamps win; a log
   without them (Megatron iteration lines) advances by its own step times; tqdm bars by their
   elapsed time. Items before the first timestamp are moved so that they end where it begins
   (the gap between them is not in the log: it is assumed zero and said so in `notes`).
3. journal: the items become schema-v1 journal events (`job_start`, `phase_start`/`phase_end`,
   `steps`, `checkpoint`, `restart`, `job_end`) — the same events the Recorder writes — and the
   one calculator (`compute_goodput`) turns them into GPU-seconds per category.

Interruption layers come from the profiles: hardware errors → node, time limits and preemption →
platform, the job's own exceptions → training, NCCL timeouts and hangs → observability (offline,
with no verdicts to correlate, nothing can tell). An error line followed by more progress
without a restart was not a stop and is not counted.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from statistics import median
from typing import Any

from gpuslo import names
from gpuslo.goodput.calculator import compute_goodput
from gpuslo.goodput.journal import SCHEMA_VERSION, check_event
from gpuslo.goodput.logs.parse import Obs, ParsedLog, number
from gpuslo.goodput.logs.profiles import UNITS
from gpuslo.goodput.slowdown import (
    DEFAULT_MIN_INTERVALS,
    DEFAULT_THRESHOLD,
    Interval,
    sustained_slowdowns,
)

HANG_MIN_S = 600.0  # a pause between progress lines longer than this (and 10 × the step) is a hang
_ELAPSED_MIN_S = 20.0  # tqdm elapsed is whole seconds: use its deltas only over this much time
_CANCELLED = ("time_limit", "preemption", "cancelled", "exit_signal")


@dataclass
class Record:
    """One progress line. `glob` is the step counted over the whole job (epoch × steps per
    epoch + printed, for per-epoch counters); `step_s` the seconds per step this line tells,
    None when it does not; `warm` marks a first record that is not a full step."""

    obs: Obs
    printed: int
    glob: int
    epoch: int | None
    total: int | None
    explicit_s: float | None = None
    rate_s: float | None = None
    elapsed: float | None = None
    delta: int | None = None
    step_s: float | None = None
    dur: float | None = None
    warm: bool = False
    t0: float = 0.0
    t1: float = 0.0


@dataclass
class Save:
    """One checkpoint save, from its start/part/end/duration lines."""

    line: int
    step: int | None
    seconds: float | None = None
    start_ts: float | None = None
    end_ts: float | None = None
    part_ts: float | None = None
    prev_ts: float | None = None
    ended: bool = False
    t0: float = 0.0
    t1: float = 0.0


@dataclass
class Restore:
    """One checkpoint load (`step` None when the log does not name it)."""

    line: int
    step: int | None
    path: str = ""
    start_ts: float | None = None
    end_ts: float | None = None
    seconds: float | None = None
    ended: bool = False
    t0: float = 0.0
    t1: float = 0.0


@dataclass
class Interruption:
    """One stop of the job, from every error line that tells it."""

    line: int
    cause: str
    layer: str
    priority: int
    text: str
    ts: float | None
    hang: bool = False
    ran_for_s: float | None = None
    t0: float = 0.0
    t1: float = 0.0


@dataclass
class Mark:
    """A line that only marks a moment: init, train_start, restart (launcher), alive, end."""

    kind: str
    obs: Obs
    t0: float = 0.0
    t1: float = 0.0


@dataclass
class LogGoodput:
    """`document`: the JSON contract of `gpuslo goodput` (see `document_keys`); `events`: the
    journal events (schema v1, Unix seconds) the log amounts to."""

    document: dict[str, Any]
    events: list[dict[str, Any]] = field(default_factory=list)


def _int(value: Any) -> int | None:
    try:
        return int(str(value).replace(",", ""))
    except (TypeError, ValueError):
        return None


def _clock_s(text: str | None) -> float | None:
    """`[H:]MM:SS` or `D-HH:MM:SS` → seconds."""
    if not text:
        return None
    days = 0
    if "-" in text:
        head, _, text = text.partition("-")
        days = _int(head) or 0
    parts = [_int(p) for p in text.split(":")]
    if not parts or any(p is None for p in parts) or len(parts) > 3:
        return None
    seconds = 0
    for p in parts:
        seconds = seconds * 60 + p  # type: ignore[operator]
    return float(seconds + days * 86400)


def _path_step(path: str, patterns: tuple[re.Pattern[str], ...]) -> int | None:
    for pattern in patterns:
        found = pattern.search(path)
        if found:
            return _int(found.group("step"))
    return None


# -- pass 1: group -----------------------------------------------------------------------------
def _group(parsed: ParsedLog, checkpoint_step: tuple[re.Pattern[str], ...]) -> tuple[list, dict]:
    items: list[Any] = []
    info: dict[str, Any] = {"other_bars": 0, "duplicates": 0, "per_epoch": False}
    epoch: int | None = None
    hint: int | None = None
    last: Record | None = None
    bar_total: int | None = None
    save: Save | None = None
    last_save: Save | None = None
    restore: Restore | None = None
    intr: Interruption | None = None
    for o in parsed.observations:
        d, rule = o.data, o.rule
        if o.kind == "epoch":  # epoch-level progress (nnU-Net): the epoch is the step
            epoch = hint = _int(d.get("epoch"))
        elif o.kind == "hint":
            hint = _int(d.get("step"))
        elif o.kind == "step":
            rec = _record(o, epoch, last)
            if rec is None:
                continue
            if rule.same_total and rec.total is not None:
                bar_total = bar_total if bar_total is not None else rec.total
                if rec.total != bar_total:
                    info["other_bars"] += 1
                    continue
            if last is not None and rec.glob == last.glob:
                info["duplicates"] += 1
                continue
            info["per_epoch"] = info["per_epoch"] or rule.per_epoch
            save = restore = intr = None
            hint = None
            items.append(rec)
            last = rec
        elif o.kind == "save":
            step = _int(d.get("step"))
            if step is None and d.get("path"):
                step = _path_step(d["path"], checkpoint_step)
            if step is None:
                step = hint if hint is not None else (last.glob if last else None)
            seconds = number(d.get("seconds"))
            if seconds is None and d.get("ms") is not None:
                seconds = (number(d["ms"]) or 0.0) / 1000.0
            if rule.phase == "duration":
                target = save or last_save
                if target is not None and target.seconds is None:
                    target.seconds = seconds
                continue
            if (rule.phase != "start" and save is None and last_save is not None
                    and not last_save.ended):
                save = last_save  # the end of a save that progress lines came between
            elif rule.phase == "start" or save is None or save.ended:
                save = Save(o.line, step, prev_ts=o.prev_ts)
                items.append(save)
                last_save = save
            if rule.phase == "start":
                save.start_ts = o.ts
            elif rule.phase == "part" and o.ts is not None:
                save.part_ts = o.ts if save.part_ts is None else max(save.part_ts, o.ts)
            elif rule.phase == "end":
                save.end_ts, save.ended = o.ts, True
            if seconds is not None:
                save.seconds = seconds
            if _int(d.get("step")) is not None:
                save.step = _int(d.get("step"))
        elif o.kind == "restore":
            step = _int(d.get("step"))
            if step is None and d.get("path"):
                step = _path_step(d["path"], checkpoint_step)
            if restore is None or restore.ended:
                restore = Restore(o.line, step, d.get("path", ""))
                items.append(restore)
            restore.step = step if step is not None else restore.step
            if rule.phase == "start":
                restore.start_ts = o.ts
            else:
                restore.end_ts, restore.ended = o.ts, True
            if number(d.get("seconds")) is not None:
                restore.seconds = number(d.get("seconds"))
            save = None
        elif o.kind == "interruption":
            ran_for = number(d.get("ran_for_ms"))
            ran_for_s = ran_for / 1000.0 if ran_for is not None else None
            if intr is not None:
                if rule.priority > intr.priority:
                    intr.cause, intr.layer, intr.priority = rule.cause, rule.layer, rule.priority
                    intr.line, intr.text = o.line, o.text
                intr.hang = intr.hang or rule.hang
                if ran_for_s is not None:
                    intr.ran_for_s = max(intr.ran_for_s or 0.0, ran_for_s)
                if intr.ts is None:
                    intr.ts = o.ts
                continue
            intr = Interruption(o.line, rule.cause, rule.layer, rule.priority, o.text, o.ts,
                                rule.hang, ran_for_s)
            items.append(intr)
            save = None
        else:  # init, train_start, restart, alive, end
            if o.kind in ("init", "restart", "end"):
                intr = None
                save = None
            items.append(Mark(o.kind, o))
    return items, info


def _record(o: Obs, epoch: int | None, last: Record | None) -> Record | None:
    d, rule = o.data, o.rule
    printed = epoch if rule.step_from == "epoch" else _int(d.get("step"))
    if printed is None:
        return None
    rec_epoch = _int(d.get("epoch")) if d.get("epoch") is not None else (
        epoch if rule.step_from == "epoch" else None)
    total = _int(d.get("total")) or _int(d.get("per_epoch"))
    glob = printed
    if rule.per_epoch and rec_epoch is not None and total:
        glob = rec_epoch * total + printed
    rec = Record(o, printed, glob, rec_epoch, total)
    unit = d.get("unit") or rule.unit or "s"
    value = number(d.get("step_time"))
    if value is not None and value > 0:
        rec.explicit_s = value * UNITS.get(unit, 1.0)
    ups = number(d.get("ups"))
    if rec.explicit_s is None and ups:
        rec.explicit_s = 1.0 / ups
    rate = number(d.get("rate"))
    if rate:
        rec.rate_s = rate if d.get("rate_unit") == "s/it" else 1.0 / rate
    rec.elapsed = _clock_s(d.get("elapsed")) if "elapsed" in d else None
    return rec


# -- per-step times ----------------------------------------------------------------------------
def _step_times(records: list[Record], restarts_before: set[int]) -> None:
    """Fill delta, step_s, dur and warm for each record (in place)."""
    for i, rec in enumerate(records):
        prev = records[i - 1] if i and (i not in restarts_before) else None
        nxt = records[i + 1] if i + 1 < len(records) else None
        if prev is not None and rec.glob > prev.glob:
            rec.delta = rec.glob - prev.glob
        est = rec.delta or (nxt.glob - rec.glob if nxt and nxt.glob > rec.glob else 1)
        single = rec.obs.rule.step_time_is == "single"
        if rec.explicit_s is not None:
            rec.step_s = rec.explicit_s
        elif (prev is not None and rec.delta and rec.obs.ts is not None
              and prev.obs.ts is not None and rec.obs.ts > prev.obs.ts):
            rec.step_s = (rec.obs.ts - prev.obs.ts) / rec.delta
        elif (prev is not None and rec.delta and rec.elapsed is not None
              and prev.elapsed is not None and rec.elapsed - prev.elapsed >= _ELAPSED_MIN_S):
            rec.step_s = (rec.elapsed - prev.elapsed) / rec.delta
        elif rec.rate_s is not None:
            rec.step_s = rec.rate_s
        elif prev is None and rec.elapsed and rec.printed > 0 and rec.elapsed >= _ELAPSED_MIN_S:
            rec.step_s = rec.elapsed / rec.printed
        if rec.step_s is not None:
            if single and prev is not None and prev.step_s is not None:
                rec.dur = (est - 1) * prev.step_s + rec.step_s
            else:
                rec.dur = est * rec.step_s
        rec.warm = bool(rec.obs.rule.warmup_first and prev is None
                        and (i in restarts_before or rec.printed <= max(1, est)))


# -- pass 2: time ------------------------------------------------------------------------------
class _Timeline:
    def __init__(self) -> None:
        self.clock: float | None = None
        self.relative = False
        self.placed: list[Any] = []
        self.rebased = False

    def _anchor(self, absolute: float) -> float:
        """Place an absolute time; returns the time to use (never before the clock)."""
        if self.clock is None:
            self.clock = absolute
        elif self.relative:
            shift = absolute - self.clock
            for item in self.placed:
                item.t0 += shift
                item.t1 += shift
            self.clock, self.relative, self.rebased = absolute, False, True
        return max(absolute, self.clock)

    def now(self) -> float:
        if self.clock is None:
            self.clock, self.relative = 0.0, True
        return self.clock

    def place(self, item: Any, t0: float, t1: float) -> None:
        item.t0, item.t1 = t0, max(t0, t1)
        self.clock = max(self.now(), item.t1)
        self.placed.append(item)


def _time(items: list[Any]) -> _Timeline:
    line = _Timeline()
    origin: float | None = None
    last_elapsed: float | None = None
    for item in items:
        if isinstance(item, Record):
            ts = item.obs.ts
            if ts is not None:  # the interval ends at its timestamp, begins dur before
                begin = ts - (item.dur or 0.0)
                if line.clock is None or line.relative:
                    line._anchor(begin)
                t1 = max(ts, line.now())
                line.place(item, min(max(line.now(), begin), t1), t1)
            elif item.elapsed is not None:
                if origin is None or last_elapsed is None or item.elapsed < last_elapsed:
                    origin = line.now() if line.clock is not None else 0.0
                    line.now()
                last_elapsed = item.elapsed
                t1 = max(origin + item.elapsed, line.now())
                start = line.now() if line.placed else origin
                line.place(item, start, t1)
            else:
                start = line.now()
                line.place(item, start, start + (item.dur or 0.0))
        elif isinstance(item, Save):
            _time_save(line, item)
        elif isinstance(item, Restore):
            ts = item.start_ts if item.start_ts is not None else item.end_ts
            start = line._anchor(ts) if ts is not None else line.now()
            end = item.end_ts if item.end_ts is not None and item.end_ts >= start else (
                start + (item.seconds or 0.0))
            line.place(item, start, end)
        elif isinstance(item, Interruption):
            if item.ts is not None:
                fired = line._anchor(item.ts)
                start = max(line.now() if line.placed else fired,
                            fired - (item.ran_for_s or 0.0)) if item.hang else fired
                start = min(start, fired)
                line.place(item, start, fired)
            else:
                start = line.now()
                line.place(item, start, start + (item.ran_for_s or 0.0) if item.hang else start)
        else:
            ts = item.obs.ts
            t = line._anchor(ts) if ts is not None else line.now()
            line.place(item, t, t)
    return line


def _time_save(line: _Timeline, save: Save) -> None:
    if save.start_ts is not None:
        start = line._anchor(save.start_ts)
        end = save.end_ts if save.end_ts is not None else (
            start + save.seconds if save.seconds is not None else (save.part_ts or start))
    elif save.end_ts is not None:
        end = line._anchor(save.end_ts)
        start = end - save.seconds if save.seconds is not None else (save.part_ts or end)
    elif save.part_ts is not None:
        end = save.part_ts
        if save.seconds is not None:
            start = end - save.seconds
        else:
            start = save.prev_ts if save.prev_ts is not None else end
        start = line._anchor(start)
        end = max(end, start)
    else:
        start = line.now()
        end = start + (save.seconds or 0.0)
    if line.placed and not line.relative:
        start = max(start, line.placed[-1].t1)
    line.place(save, start, max(end, start))


# -- pass 3: journal and facts -----------------------------------------------------------------
class _Journal:
    def __init__(self, job: str, gpus: int) -> None:
        self.job, self.gpus = job, gpus
        self.events: list[dict[str, Any]] = []
        self.phase: str | None = None
        self.state = "new"  # new | running | interrupted | completed
        self.last_t = 0.0
        self.committed = -1

    def emit(self, t: float, kind: str, **fields: Any) -> None:
        t = max(t, self.last_t)
        self.last_t = t
        event = {"v": SCHEMA_VERSION, "t": round(t, 6), "event": kind, **fields}
        check_event(event)
        self.events.append(event)

    def start(self, t: float) -> None:
        if self.state == "new":
            self.emit(t, "job_start", job=self.job, node="log", gpus=self.gpus)
            self.state = "running"

    def open_phase(self, t: float, category: str) -> None:
        if self.state != "running" or self.phase == category:
            return
        self.close_phase(t)
        self.emit(t, "phase_start", category=category)
        self.phase = category

    def close_phase(self, t: float) -> None:
        if self.phase is not None:
            self.emit(t, "phase_end", category=self.phase)
            self.phase = None


def assemble(
    parsed: ParsedLog,
    *,
    job: str,
    gpus: int | None = None,
    checkpoint_step: tuple[re.Pattern[str], ...] = (),
    slowdown_threshold: float = DEFAULT_THRESHOLD,
    slowdown_min_intervals: int = DEFAULT_MIN_INTERVALS,
    hang_min_s: float = HANG_MIN_S,
) -> LogGoodput:
    """The facts and journal events of one parsed log (see the module docstring).

    `job`: a valid journal job id; `gpus`: GPUs the job used (GPU-seconds = seconds × gpus;
    None: categories are left null); the slowdown parameters go to
    `gpuslo.goodput.slowdown.sustained_slowdowns` (the rule the Recorder's journals follow too); a
    pause of at least `hang_min_s` seconds (and 10 × the step time) between progress lines is a
    hang. Pure: no I/O, no clock."""
    items, info = _group(parsed, checkpoint_step)
    records = [x for x in items if isinstance(x, Record)]
    restarts_before = _restart_positions(items)
    _step_times(records, restarts_before)
    timeline = _time(items)
    notes: list[str] = []
    if timeline.rebased:
        notes.append("lines before the first timestamp were placed to end where it begins "
                     "(the log does not say the time between them)")
    journal = _Journal(job, gpus or 1)
    facts = _walk(items, journal, notes, hang_min_s)
    doc = _document(parsed, records, facts, info, notes, gpus, timeline,
                    slowdown_threshold, slowdown_min_intervals, journal)
    return LogGoodput(doc, journal.events)


def _restart_positions(items: list[Any]) -> set[int]:
    """Indexes (into the records) of the first record after a (re)start marker."""
    out: set[int] = set()
    index = 0
    armed = False
    for item in items:
        if isinstance(item, Record):
            if armed:
                out.add(index)
                armed = False
            index += 1
        elif isinstance(item, Restore) or (isinstance(item, Mark)
                                           and item.kind in ("init", "restart")):
            armed = True
    return out


def _walk(items: list[Any], j: _Journal, notes: list[str], hang_min_s: float) -> dict[str, Any]:
    saves: list[dict[str, Any]] = []
    restarts: list[dict[str, Any]] = []
    interruptions: list[dict[str, Any]] = []
    hangs: list[dict[str, Any]] = []
    retracted = 0
    last: Record | None = None
    open_intr: Interruption | None = None
    open_entry: dict[str, Any] | None = None
    progressed_since_start = False
    restarted = False  # a restart since the last progress line: its step may go back
    step_times: list[float] = []

    def upcoming_restore(k: int) -> Restore | None:
        for later in items[k + 1:]:
            if isinstance(later, Restore):
                return later
            if isinstance(later, Record):
                return None
        return None

    def do_restart(k: int, t: float, line: int) -> None:
        nonlocal open_intr, open_entry, progressed_since_start, restarted
        restarted = True
        if open_intr is not None:
            _end_interrupted(j, open_intr)
        restore = items[k] if isinstance(items[k], Restore) else upcoming_restore(k)
        from_step = restore.step if restore is not None and restore.step is not None else None
        from_j = from_step if from_step is not None else j.committed
        j.close_phase(t)
        j.emit(t, "restart", from_step=int(from_j))
        j.state, j.committed = "running", int(from_j)
        lost = (last.glob - from_step) if last is not None and from_step is not None else None
        restarts.append({"resumed_from_step": from_step, "lost_steps": lost, "line": line,
                         "_restore": restore})
        open_intr, open_entry, progressed_since_start = None, None, False

    for k, item in enumerate(items):
        if j.state == "new":
            j.start(item.t0)
        if isinstance(item, Record):
            if open_intr is not None:  # progress went on: that error did not stop the job
                interruptions.remove(open_entry)
                retracted += 1
                open_intr, open_entry = None, None
            if last is not None and item.glob < last.glob and not restarted:
                notes.append(f"line {item.obs.line}: step {item.glob} after {last.glob} "
                             "with no restart line: read as a restart")
                interruptions.append({"after_step": last.glob, "cause": "unknown",
                                      "layer": names.LAYER_OBSERVABILITY,
                                      "line": item.obs.line, "text": None})
                do_restart(k, item.t0, item.obs.line)
                restarts[-1]["resumed_from_step"] = None
            if j.state in ("interrupted", "completed"):
                do_restart(k, item.t0, item.obs.line)
            j.close_phase(item.t0)
            if last is not None and item.delta and item.step_s is not None and step_times:
                reference = median(step_times[-50:])
                pause = item.t1 - item.t0 - reference * item.delta
                if pause >= hang_min_s and pause >= 10 * reference * item.delta:
                    hangs.append({"after_step": last.glob, "seconds": round(pause, 3),
                                  "cause": "no_progress", "line": item.obs.line})
            if item.step_s is not None and not item.warm:
                step_times.append(item.step_s)
            j.emit(item.t1, "steps", step=item.glob)
            last, progressed_since_start, restarted = item, True, False
        elif isinstance(item, Save):
            if j.state != "running":
                continue
            j.open_phase(item.t0, "checkpoint_save")
            j.close_phase(item.t1)
            step = item.step if item.step is not None else (last.glob if last else None)
            if step is not None:
                j.emit(item.t1, "checkpoint", step=int(step))
                j.committed = int(step)
            saves.append({"step": step, "seconds": _seconds(item), "line": item.line})
        elif isinstance(item, Restore):
            if open_intr is not None or j.state in ("interrupted", "completed") or (
                    progressed_since_start and last is not None):
                do_restart(k, item.t0, item.line)
            elif not restarts or restarts[-1].get("_restore") is not item:
                restarts.append({"resumed_from_step": item.step, "lost_steps": None,
                                 "line": item.line, "_restore": item})
            j.open_phase(item.t0, "checkpoint_restore")
            j.close_phase(item.t1)
            if item.step is not None:
                j.committed = item.step
        elif isinstance(item, Interruption):
            after = last.glob if last is not None else None
            open_entry = {"after_step": after, "cause": item.cause, "layer": item.layer,
                          "line": item.line, "text": item.text}
            interruptions.append(open_entry)
            open_intr = item
            if item.hang:
                hangs.append({"after_step": after, "seconds": (
                    round(item.ran_for_s, 3) if item.ran_for_s is not None else None),
                    "cause": item.cause, "line": item.line})
        elif isinstance(item, Mark):
            if item.kind == "init":
                if open_intr is not None or j.state in ("interrupted", "completed"):
                    do_restart(k, item.t0, item.obs.line)
                elif progressed_since_start:
                    interruptions.append({"after_step": last.glob if last else None,
                                          "cause": "unknown", "layer": names.LAYER_OBSERVABILITY,
                                          "line": item.obs.line, "text": None})
                    do_restart(k, item.t0, item.obs.line)
                j.open_phase(item.t0, "initialization")
            elif item.kind == "train_start":
                j.close_phase(item.t0)
            elif item.kind == "restart":
                if open_intr is not None:
                    do_restart(k, item.t0, item.obs.line)
            elif item.kind == "end" and j.state == "running":
                j.close_phase(item.t0)
                j.emit(item.t0, "job_end", status="completed")
                j.state = "completed"
            elif item.kind == "alive" and last is not None:
                pause = item.t1 - last.t1
                if pause >= hang_min_s and open_intr is None:
                    entry = next((h for h in hangs if h["cause"] == "no_progress"
                                  and h["after_step"] == last.glob), None)
                    if entry is None:
                        hangs.append({"after_step": last.glob, "seconds": round(pause, 3),
                                      "cause": "no_progress", "line": item.obs.line})
                    else:
                        entry["seconds"] = round(pause, 3)
    if open_intr is not None and j.state == "running":
        _end_interrupted(j, open_intr)
    if retracted:
        notes.append(f"{retracted} error report(s) were followed by more progress without a "
                     "restart: not counted as interruptions")
    for r in restarts:
        r.pop("_restore", None)
    return {"saves": saves, "restarts": restarts, "interruptions": interruptions,
            "hangs": hangs, "step_times": step_times}


def _end_interrupted(j: _Journal, intr: Interruption) -> None:
    if j.state != "running":
        return
    j.close_phase(intr.t0)
    status = "cancelled" if intr.cause in _CANCELLED else "failed"
    j.emit(intr.t0, "job_end", status=status, layer=intr.layer)
    j.state = "interrupted"


def _seconds(save: Save) -> float | None:
    if save.seconds is not None:
        return round(save.seconds, 6)
    if (save.start_ts is not None or save.part_ts is not None) and save.t1 > save.t0:
        return round(save.t1 - save.t0, 6)
    return None


def _document(parsed: ParsedLog, records: list[Record], facts: dict[str, Any],
              info: dict[str, Any], notes: list[str], gpus: int | None, timeline: _Timeline,
              threshold: float, min_intervals: int, journal: _Journal) -> dict[str, Any]:
    times = facts["step_times"] or [r.step_s for r in records if r.step_s is not None]
    intervals, by_first = _intervals(records)
    slowdowns = []
    for s in sustained_slowdowns(intervals, threshold=threshold, min_intervals=min_intervals):
        rec = by_first.get(s.from_step)
        entry = {"from_step": s.from_step, "to_step": s.to_step, "ratio": round(s.ratio, 4),
                 "reference_s": round(s.reference_s, 6), "median_s": round(s.median_s, 6),
                 "intervals": s.intervals, "extra_s": round(s.extra_s, 3)}
        if info["per_epoch"] and rec is not None:
            entry["epoch"] = rec.epoch
            entry["from_step"] = max(0, rec.printed - (rec.delta or 1) + 1)
        slowdowns.append(entry)
    span, span_from = _span(parsed, timeline)
    status = "ok" if records else names.STATUS_UNKNOWN
    goodput = None
    if records and gpus:
        result = compute_goodput(journal.events)
        seconds = {k: round(v, 3) for k, v in result.gpu_seconds.items()}
        accounted = sum(seconds.values()) + result.uncommitted_gpu_s
        slow_s = sum(s["extra_s"] for s in slowdowns) * gpus
        goodput = {
            "gpus": gpus,
            "gpu_seconds": seconds,
            "uncommitted_gpu_s": round(result.uncommitted_gpu_s, 3),
            "slowdown_gpu_s": round(slow_s, 3),
            "accounted_gpu_s": round(accounted, 3),
            "goodput": round(seconds[names.CATEGORY_PRODUCTIVE] / accounted, 6)
            if accounted > 0 else None,
            "interruptions": {k: v for k, v in result.interruptions.items() if v},
        }
    not_read = []
    if not records:
        not_read.append("no progress lines: no step, step time or goodput can be given")
    if parsed.unreadable:
        not_read.append(f"{parsed.unreadable} line(s) of binary noise skipped")
    if parsed.truncated:
        not_read.append(f"{parsed.truncated} line(s) longer than the record limit were cut")
    if info["other_bars"]:
        notes.append(f"{info['other_bars']} progress bar line(s) with another total "
                     "(evaluation or data bars) were not read as training steps")
    first, last = (records[0], records[-1]) if records else (None, None)
    return {
        "framework": parsed.framework,
        "framework_detected": parsed.detected if parsed.framework else None,
        "status": status,
        "read": {"lines": parsed.lines, "matched_lines": parsed.matched,
                 "progress_lines": len(records), "duplicates": info["duplicates"]},
        "not_read": not_read,
        "steps": {
            "first": first.printed if first else None,
            "last": last.printed if last else None,
            "total_planned": last.total if last else None,
            "epoch_first": first.epoch if first else None,
            "epoch_last": last.epoch if last else None,
            "global_first": first.glob if first else None,
            "global_last": last.glob if last else None,
        },
        "step_time_s": {
            "median": round(median(times), 6) if times else None,
            "min": round(min(times), 6) if times else None,
            "max": round(max(times), 6) if times else None,
            "count": len(times),
        },
        "checkpoint_saves": facts["saves"],
        "restarts": facts["restarts"],
        "interruptions": facts["interruptions"],
        "slowdowns": slowdowns,
        "hangs": facts["hangs"],
        "span_s": span,
        "span_from": span_from,
        "gpus": gpus,
        "goodput": goodput,
        "notes": notes,
    }


def _intervals(records: list[Record]) -> tuple[list[Interval], dict[int, Record]]:
    """The logged intervals slowdown detection reads: one per progress line, except tqdm bars
    (a redraw per step, elapsed in whole seconds), merged until they span 20 s of elapsed time."""
    intervals: list[Interval] = []
    by_first: dict[int, Record] = {}
    anchor: Record | None = None
    for rec in records:
        if rec.warm:
            anchor = None
            continue
        if rec.elapsed is not None and rec.explicit_s is None:
            if anchor is None or rec.delta is None or anchor.elapsed is None or (
                    rec.elapsed < anchor.elapsed):
                anchor = rec
                continue
            if rec.elapsed - anchor.elapsed < _ELAPSED_MIN_S or rec.glob <= anchor.glob:
                continue
            first = anchor.glob + 1
            intervals.append(Interval(first, rec.glob,
                                      (rec.elapsed - anchor.elapsed) / (rec.glob - anchor.glob)))
            by_first[first] = rec
            anchor = rec
            continue
        if rec.step_s is None:
            continue
        first = rec.glob - (rec.delta or 1) + 1
        intervals.append(Interval(first, rec.glob, rec.step_s))
        by_first[first] = rec
    return intervals, by_first


def _span(parsed: ParsedLog, timeline: _Timeline) -> tuple[float | None, str | None]:
    """Seconds from the first to the last line the log dates: by its timestamps, or by the
    clock rebuilt from step times and elapsed times when that covers more."""
    stamped = None
    if parsed.first_ts is not None and parsed.last_ts is not None:
        stamped = (parsed.last_ts - parsed.first_ts) or None
    built = None
    if timeline.placed:
        built = max(x.t1 for x in timeline.placed) - min(x.t1 for x in timeline.placed)
        first = timeline.placed[0]
        if isinstance(first, Record) and first.obs.ts is None and stamped is None:
            built += first.t1 - first.t0  # the first progress line's own interval
    if stamped is not None and (built is None or stamped >= built - 1e-6):
        return (round(stamped, 3), "timestamps") if stamped > 0 else (None, None)
    if built:
        return round(built, 3), "step_times"
    return None, None
