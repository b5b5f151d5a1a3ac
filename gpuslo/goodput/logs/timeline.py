"""Every item of a log on one clock (pure): `place(items) -> Timeline` sets each item's t0/t1.

Stamps win: a progress record ends at its stamp and began its steps' duration before. A log
without stamps (Megatron iteration lines) advances by its own step times; a progress bar or a
cumulative timer by its elapsed time. Items before the first stamp are moved so that they end
where it begins (the gap between them is not in the log: assumed zero, and `rebased` says so).
A cumulative timer on lines (not a bar's) that the log first shows far along (fairseq's
`train_wall=4501` on its first line, the job's time since its start) times its first record by
that record's own steps (`dur`) where its step is past them (the log starts mid-run): what it
counted before is not in the log (`before_log`, noted; newcomer5 #1); a first record with no
time of its own (no step time yet: Ray Tune's trial table, `iter 317, total time (s) 395.588`
the first row, fresh20 X18) stands for none of it. A bar's elapsed since it
began is the bar's own steps' (its `n` from 0), and a time of day read as the clock (torch_xla's
`Time=22:00:10`, `reading.Role.day`) counted nothing before the log.
The clock never goes back: an item stamped before the clock is placed at the clock.
"""

from __future__ import annotations

from typing import Any

from gpuslo.goodput.logs.items import Interruption, Mark, Restore, Save
from gpuslo.goodput.logs.progress import Record


class Timeline:
    """The clock being built: `clock` the latest time placed (None before the first item),
    `relative` True while no stamp has been seen (times count from 0), `placed` the items in
    order, `rebased` whether relative items were moved onto the first stamp."""

    def __init__(self) -> None:
        self.clock: float | None = None
        self.relative = False
        self.placed: list[Any] = []
        self.rebased = False
        self.before_log = 0.0  # seconds a cumulative timer counted before its first record
        self.floor: float | None = None  # the log's first stamp (`place`)

    def anchor(self, absolute: float) -> float:
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
        """The clock (0.0 and relative when nothing was placed yet)."""
        if self.clock is None:
            self.clock, self.relative = 0.0, True
        return self.clock

    def put(self, item: Any, t0: float, t1: float) -> None:
        """Give `item` the interval [t0, max(t0, t1)] and move the clock to its end."""
        item.t0, item.t1 = t0, max(t0, t1)
        self.clock = max(self.now(), item.t1)
        self.placed.append(item)


class _Elapsed:
    """Where a cumulative timer's zero is on the clock."""

    def __init__(self) -> None:
        self.origin: float | None = None
        self.last: float | None = None
        self.printed: int | None = None  # the counter of the last record it timed


def _record(line: Timeline, rec: Record, timer: _Elapsed) -> None:
    ts, elapsed = rec.ts, rec.prog.elapsed
    if ts is not None:  # the interval ends at its stamp, begins dur before
        begin = ts - (rec.dur or 0.0)
        if rec.step_s is None and line.floor is not None:
            begin = max(begin, min(line.floor, ts))  # timed by the next record only
        if line.clock is None or line.relative:
            line.anchor(begin)
        t1 = max(ts, line.now())
        line.put(rec, min(max(line.now(), begin), t1), t1)
    elif elapsed is not None:
        first = timer.origin is None
        if timer.origin is None or timer.last is None or elapsed < timer.last or (
                rec.prog.bar and timer.printed is not None and rec.printed <= timer.printed):
            timer.origin = line.now() if line.clock is not None else 0.0
        start = line.now() if line.placed else timer.origin
        if first and not rec.prog.bar and elapsed > (rec.dur or 0.0) and _of_day(rec):
            timer.origin -= elapsed - (rec.dur or 0.0)  # its zero is midnight, not the job's
        elif first and not rec.prog.bar and elapsed > (rec.dur or 0.0) and _mid_run(rec):
            line.before_log = elapsed - (rec.dur or 0.0)  # what it counted before the log
            timer.origin -= line.before_log
        timer.last, timer.printed = elapsed, rec.printed
        t1 = timer.origin + elapsed
        if rec.prog.bar and rec.dur is not None and rec.delta:  # whole seconds: by step time
            t1 = min(max(start + rec.dur, t1 - 1.0), t1 + 1.0)
        line.put(rec, start, max(t1, line.now()))
    else:
        start = line.now()
        line.put(rec, start, start + (rec.dur or 0.0))


def _of_day(rec: Record) -> bool:
    """Whether the record's elapsed time is a time of day (`reading.Role.day`: torch_xla's
    `Time=22:00:10`): its value is no time since the job began, so nothing came before the log
    (newcomer7 F7)."""
    matcher = rec.prog.matcher
    return matcher is not None and any(
        role.day for role in matcher.reading.roles.values() if role.role == "elapsed")


def _mid_run(rec: Record) -> bool:
    """Whether the record's step is past the steps it stands for: the log starts mid-run (a
    run the log shows from its first steps keeps its timer's start-up time)."""
    steps = round(rec.dur / rec.step_s) if rec.dur and rec.step_s else 1
    return rec.glob > max(1, steps)


def _save(line: Timeline, save: Save) -> None:
    """Place a save. Its printed seconds win over stamps that hold less: a save whose start and
    end lines share a stamp but print `writing took 20.0 seconds` (fairseq's `Saving checkpoint
    to` and `Finished saving` come after the write began) began that long before its end, never
    before the item placed before it."""
    _held(line, save)
    if save.start_ts is not None:
        start = line.anchor(save.start_ts)
        end = save.end_ts if save.end_ts is not None else (
            start + save.seconds if save.seconds is not None else (save.part_ts or start))
        if save.seconds is not None and save.end_ts is not None and end - start < save.seconds:
            start = end - save.seconds  # the write began before its start line (see `_save`)
    elif save.end_ts is not None and (save.seconds is not None or save.lines < 2):
        end = line.anchor(save.end_ts)
        start = end - save.seconds if save.seconds is not None else (save.part_ts or end)
        if save.line and save.seconds is None and save.part_ts is None and _stamped_record(line):
            # a lone stamped `Saved checkpoint at step N` after a stamped step line: the save
            # ran from that step's end to its own stamp (newcomer3 #12: 5 s pauses were
            # booked productive)
            start = line.placed[-1].t1
    elif save.part_ts is not None or save.end_ts is not None:  # lines of one save, no start
        end = max(t for t in (save.part_ts, save.end_ts) if t is not None)
        start = end - save.seconds if save.seconds is not None else (
            save.prev_ts if save.prev_ts is not None else end)
        start = line.anchor(start)
        end = max(end, start)
    else:
        start = line.now()
        end = start + (save.seconds or 0.0)
    if line.placed and not line.relative:
        start = max(start, line.placed[-1].t1)
    line.put(save, start, max(end, start))


def _stamped_record(line: Timeline) -> bool:
    """The item placed last is a progress record that carries a stamp of its own."""
    last = line.placed[-1] if line.placed and not line.relative else None
    return isinstance(last, Record) and last.ts is not None


def _held(line: Timeline, save: Save) -> None:
    """A stamped save that began inside the interval of the record placed just before it: that
    record was stamped by a later line whose time held the save (nnU-Net prints `This epoch
    took 634.08 s` after the epoch's `saving checkpoint...`/`done, saving took 2.62 seconds`):
    the record ends where the save begins, so the save's seconds are the save's, not a step's
    as well."""
    start = save.start_ts if save.start_ts is not None else (
        save.end_ts - save.seconds if save.end_ts is not None and save.seconds is not None
        else None)
    last = line.placed[-1] if line.placed and not line.relative else None
    if start is not None and isinstance(last, Record) and last.t0 <= start < last.t1:
        last.t1 = start
        line.clock = start


def _other(line: Timeline, item: Any) -> None:
    if isinstance(item, Restore):
        ts = item.start_ts if item.start_ts is not None else item.end_ts
        start = line.anchor(ts) if ts is not None else line.now()
        end = item.end_ts if item.end_ts is not None and item.end_ts >= start else (
            start + (item.seconds or 0.0))
        line.put(item, start, end)
    elif isinstance(item, Interruption):
        if item.ts is not None:
            fired = line.anchor(item.ts)
            start = max(line.now() if line.placed else fired,
                        fired - (item.ran_for_s or 0.0)) if item.hang else fired
            line.put(item, min(start, fired), fired)
        else:
            start = line.now()
            line.put(item, start, start + (item.ran_for_s or 0.0) if item.hang else start)
    elif isinstance(item, Mark):
        ts = item.obs.ts
        t = line.anchor(ts) if ts is not None else line.now()
        line.put(item, t, t)


def place(items: list[Any], first_ts: float | None = None) -> Timeline:
    """Put every item on one clock (see the module docstring). `first_ts`: the log's first
    stamp, before which a record timed by no time of its own (`steptimes._first_by_next`) is
    not placed: its steps' time is carved out of the time the log shows, never added to it."""
    line, timer = Timeline(), _Elapsed()
    line.floor = first_ts
    for item in items:
        if isinstance(item, Record):
            _record(line, item, timer)
        elif isinstance(item, Save):
            _save(line, item)
        else:
            _other(line, item)
    return line
