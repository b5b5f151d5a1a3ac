"""A read log → its facts (the `gpuslo goodput` JSON) and Recorder journal events (pure).

`assemble(parsed, job=..., gpus=None, ...) -> LogGoodput`, in small passes:

1. `progress.build_records`: progress records → job-wide steps with step times;
2. `items.group_events`: event lines → saves, restores, stops and marks, in log order with the
   records (checkpoint files given with `--checkpoint-dir` join as saves, `commits_from_files`;
   a run header printed again is a relaunch, `relaunch.headers_again`, and so is the script's
   opening printed again where a new launch follows, `relaunch.reopenings`, and, in a log of
   epoch markers alone, a stamped epoch that falls to 1 after a new process's pause,
   `relaunch.epochs_again`);
3. `timeline.place`: every item on one clock (stamps, else step and elapsed times);
4. `walk.Walk`: the Recorder's journal events, restarts, interruptions and hangs; the one
   calculator (`compute_goodput`) turns the journal into GPU-seconds (`document.goodput_of`);
   a log with commits and steps but no clock at all gets goodput by steps instead
   (`stepbasis.step_goodput`: the same walk and calculator on a clock of one unit per step),
   its GPU-seconds unknown. The journal is kept inside the log's span (`_within_span`;
   `_lead_in` grows it back by a first line's printed steps before the first stamp: the
   document's `lead_in_s`), so no more time is accounted than span and lead-in, and the
   slowdowns listed are the ones that calculator run files (`document.filed_slowdowns`),
   with or without a GPU count;
5. `document.document`: the JSON, with notes for what the log cannot tell.

A clock that steps back is noted per step (the stamps are shifted so that time keeps going,
`clock.Clock`); after several steps back the stamps are not used at all (the log is timed by
its step times), so a day back cannot halve the GPU-seconds.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from gpuslo import names
from gpuslo.goodput.calculator import JobGoodput, compute_goodput
from gpuslo.goodput.journal import SCHEMA_VERSION
from gpuslo.goodput.logs.document import document, filed_slowdowns, goodput_of, span
from gpuslo.goodput.logs.epochs import closing_markers, named_steps
from gpuslo.goodput.logs.epochtail import epoch_went_on
from gpuslo.goodput.logs.filecommits import FileCommit, sound_files
from gpuslo.goodput.logs.interleaved import error_first
from gpuslo.goodput.logs.items import Save, group_events
from gpuslo.goodput.logs.journal_writer import Journal
from gpuslo.goodput.logs.notices import leave_out
from gpuslo.goodput.logs.parsedlog import ParsedLog
from gpuslo.goodput.logs.phases import new_phases
from gpuslo.goodput.logs.progress import Record, build_records
from gpuslo.goodput.logs.ratewindows import saves_in_rates
from gpuslo.goodput.logs.relaunch import epochs_again, headers_again, reopenings
from gpuslo.goodput.logs.runstart import from_start
from gpuslo.goodput.logs.saverates import save_rates
from gpuslo.goodput.logs.stepbasis import step_goodput
from gpuslo.goodput.logs.timeline import Timeline, place
from gpuslo.goodput.logs.walk import Walk
from gpuslo.goodput.slowdown import DEFAULT_MIN_INTERVALS, DEFAULT_THRESHOLD, SlowdownRule

HANG_MIN_S = 600.0  # a pause between progress lines longer than this (and 10 × the step) is a hang


@dataclass
class LogGoodput:
    """`document`: the JSON contract of `gpuslo goodput` (see `document.document`); `events`:
    the journal events (schema v1) the log amounts to, in Unix seconds when `dated`; where the
    log dates nothing (no stamp on any line placed: fairseq's `train_wall`, a bare `step N`
    loop), their times count from the log's own start and `dated` is False: their differences
    are durations, no time of theirs is a time of day."""

    document: dict[str, Any]
    events: list[dict[str, Any]] = field(default_factory=list)
    dated: bool = True


def _with_files(items: list[Any], commits: list[FileCommit], stamped: bool) -> list[Any]:
    """Insert a save per checkpoint file after the first record that reaches its step. The
    file on disk is the save's end (`ended`) and names what it wrote (`named_path`): it is never
    read as a save begun where the log ends or failed by a later error."""
    for commit in commits:
        save = Save(0, commit.step, seconds=None, ended=True, named_path=commit.name)
        save.end_ts = commit.mtime if stamped else None
        at = next((i for i, x in enumerate(items) if isinstance(x, Record)
                   and x.glob >= commit.step), None)
        if at is None:
            items.append(save)
        else:
            items.insert(at + (items[at].glob == commit.step), save)
    return items


def _apart_notes(parsed: ParsedLog) -> list[str]:
    """A progress family wholly before or after the steps read (`learn.Apart`): another run
    or job in the same file (`cat run1.log run2.log`) is said to be left out, never dropped
    silently."""
    apart = parsed.learnt.apart if parsed.learnt is not None else []
    return [f"lines {a.first}-{a.last}: {a.records} progress line(s) of another shape "
            f"({a.example!r}) {'before' if a.before else 'after'} the steps read were not "
            + ("read: a warm-up's steps (its counter says so), not the training's; not "
               "accounted" if a.warm else
               f"read: {'an earlier' if a.before else 'a later'} run or job in the same file? "
               "Its steps and time are not accounted; read it on its own") for a in apart]


def _clock_notes(parsed: ParsedLog) -> list[str]:
    notes = [f"line {line}: the clock goes back {back:g} s (an older run pasted, a clock or "
             "time-zone change): later stamps are shifted so time keeps going"
             for line, back in parsed.clock_back[:5]]
    if parsed.clock_unreliable:
        notes.append(f"the clock went back {len(parsed.clock_back)} times: the stamps do not "
                     "order the log and are not used; the log is timed by its step times")
        _drop_stamps(parsed)
    return notes


def assemble(parsed: ParsedLog, *, job: str, gpus: int | None = None,
             checkpoint_step: tuple[re.Pattern[str], ...] = (),
             slowdown_threshold: float = DEFAULT_THRESHOLD,
             slowdown_min_intervals: int = DEFAULT_MIN_INTERVALS,
             hang_min_s: float = HANG_MIN_S,
             file_commits: list[FileCommit] | None = None,
             saves_silently: bool = False) -> LogGoodput:
    """The facts and journal events of one read log (see the module docstring).

    `job`: a valid journal job id; `gpus`: GPUs the job used (GPU-seconds = seconds × gpus;
    None: no goodput object); the slowdown parameters go to `sustained_slowdowns`; a pause of
    at least `hang_min_s` (and 10 × the step time) between progress lines is a hang;
    `file_commits`: checkpoint files (`--checkpoint-dir`); `saves_silently`: the framework
    writes checkpoints without a line (`Profiles.saves_silently`), so a restore before any
    progress is no commit evidence for the log's own progress. Pure: no I/O, no clock."""
    notes = _apart_notes(parsed) + _clock_notes(parsed)
    records, info = build_records(parsed.progress, _markers(parsed),
                                  named_steps(parsed.observations))
    notes += _frozen_clock(parsed, records)
    save_rates(records, parsed.observations)  # a save line's steps a second, where untimed
    items = _story(parsed, records, checkpoint_step, file_commits or [], notes)
    timeline = place(items, parsed.first_ts)
    if timeline.before_log >= 1.0:
        notes.append(f"the first progress line's cumulative time counts {timeline.before_log:g} s "
                     "more than its own steps took: the job's time before the log, not accounted")
    if timeline.rebased:
        notes.append("lines before the first timestamp were placed to end where it begins "
                     "(the log does not say the time between them)")
    journal = Journal(job, gpus or 1)
    facts = Walk(items, journal, notes, hang_min_s).run()
    span_s = span(parsed, timeline)
    lead, window = _lead_in(journal.events, _window(parsed, timeline, span_s), notes)
    if span_s[1] == "timestamps" and not timeline.relative:
        _unbooked_ends(journal.events, window, notes, epoch_went_on(parsed, records))
    cut = _within_span(journal.events, window)
    if cut >= 1.0:
        notes.append(f"{cut:g} s the lines place after the log's last stamp (a save's printed "
                     "seconds) are not accounted: the log does not show them")
    result = compute_goodput(journal.events,
                             rule=SlowdownRule(slowdown_threshold, slowdown_min_intervals))
    slowdowns = filed_slowdowns(result, gpus)
    commits = journal.commits + (0 if saves_silently else journal.head_restores)
    goodput = _goodput(result, gpus or 1, commits, parsed, records, items,
                       (job, hang_min_s)) if records else None
    unknown = goodput is not None and goodput["status"] != "ok"
    if gpus is None and unknown:  # no GPU-seconds asked for: the same status, its reason a note
        notes.append(f"goodput unknown: {goodput['reason']}")
    doc = document(parsed, records, facts, info, notes, span_s, slowdowns, gpus,
                   goodput if gpus else None)
    if unknown:
        doc["status"] = names.STATUS_UNKNOWN
    if lead:
        doc["lead_in_s"] = lead  # accounted before span_s begins (`_lead_in`)
    _first_from_save(doc["steps"], items)
    _last_from_save(doc["steps"], items)
    return LogGoodput(doc, journal.events, dated=not timeline.relative)


def _story(parsed: ParsedLog, records: list[Record], checkpoint_step: tuple[re.Pattern[str], ...],
           file_commits: list[FileCommit], notes: list[str]) -> list[Any]:
    """Pass 2 (module docstring): the log's items in log order, the records among them
    (`file_commits`: the sound ones join as saves); what the passes say goes to `notes`."""
    items = reopenings(headers_again(group_events(parsed.observations, records,
                                                  checkpoint_step, leave_out)), parsed, notes)
    items = epochs_again(items, parsed)  # epoch markers alone that fall after a new process's pause
    items = error_first(items)  # an error report printed before the bar state it stopped
    if file_commits:
        file_commits, refused = sound_files(
            file_commits, parsed.first_ts, parsed.last_ts,
            max((r.glob for r in records), default=None),
            max((r.delta or 0 for r in records), default=1))
        items = _with_files(items, file_commits, parsed.first_ts is not None)
        notes.append(f"{len(file_commits)} checkpoint file(s) read as commits")
        notes += refused
    items = new_phases(items, notes)  # a counter starting again in one process: no restart
    from_start(items)  # a run's first record after a line naming the step its loop starts from
    saves_in_rates(items)  # a rate over a window that held a save is no step's time
    return items


def _goodput(result: JobGoodput, gpus: int, commits: int, parsed: ParsedLog,
             records: list[Record], items: list[Any],
             job_and_hang: tuple[str, float]) -> dict[str, Any]:
    """The document's `goodput` object for `gpus` (`document.goodput_of`), unknown when the
    clock goes back again and again with no step time, by steps where no clock at all is left
    (`stepbasis.step_goodput`; `job_and_hang`: its job id and hang threshold, seconds).
    Computed whether or not a GPU count was given (`assemble` keeps it only with one): the GPU
    count scales GPU-seconds
    and nothing else, so whether goodput is known, and the log's status, are the same either way
    (newcomer4 finding 9: a log with no save was `ok` without --gpus, `unknown` with them)."""
    goodput = goodput_of(result, gpus, commits)
    if parsed.clock_unreliable and not any(r.step_s for r in records):
        goodput.update(status="unknown", goodput=None, reason=(
            "the clock goes back again and again and the lines give no step time: how long "
            "the steps took cannot be known"))
    elif commits and goodput["accounted_gpu_s"] <= 0:
        # no clock at all (not one dropped for going back: that log's order is in doubt too)
        goodput.update(step_goodput(items, *job_and_hang) or {})
    return goodput


def _window(parsed: ParsedLog, timeline: Timeline, span_s: tuple[float | None, str | None]
            ) -> tuple[float, float] | None:
    """The log's span on the timeline's clock: its first to its last stamp, or the steps'
    times that cover more (`document.span`); None when it has none. Stamps that no item
    carries (DeepSpeech's absl twins `I1008 10:30:58.323175 … Restoring parameters from …`
    beside the unstamped `I Restored variables …` it reads) leave the timeline on its own
    relative clock: the span is then measured back from its end, never on the stamps' clock
    (their Unix seconds before a clock that starts at 0 would account 1.8e9 s as a lead-in)."""
    seconds, source = span_s
    if seconds is None:
        return None
    if source == "timestamps" and parsed.first_ts is not None and parsed.last_ts is not None \
            and not timeline.relative:
        return parsed.first_ts, parsed.last_ts
    end = max(x.t1 for x in timeline.placed)
    return end - seconds, end


def _lead_in(events: list[dict[str, Any]], window: tuple[float, float] | None,
             notes: list[str]) -> tuple[float, tuple[float, float] | None]:
    """(seconds, window): the time a first line's printed step times place before the first
    stamp, and the window grown back by it (T15's first line at 05:19:47 prints 10 steps of
    4.39 s: they ran, and ended where the line is stamped; Megatron's unstamped first iteration
    of T03 ends where its save's first stamp is). That time is the log's own figure, so it is
    accounted and noted (`lead_in_s` in the document; `span_s` stays first to last stamp),
    rather than cut: cutting it books a run's only iteration as nothing, its goodput 0.0."""
    if window is None or not events:
        return 0.0, window
    lead = round(max(0.0, window[0] - events[0]["t"]), 6)
    if lead < 1.0:
        return 0.0, window
    notes.append(f"{lead:g} s before the first stamp are accounted: the first line's printed "
                 "step times, which end where it is stamped (lead_in_s; span_s is stamp to stamp)")
    return lead, (window[0] - lead, window[1])


def _no_step(events: list[dict[str, Any]]) -> str:
    """The note's caveat for a log with no step at all (newcomer8 F8: a `dmesg` capture whose
    first line is nvidia-peermem's, then Xid lines, read as 32 min of a job's initialization):
    nothing in it shows a training job, so the note says what else it may be."""
    if any(e["event"] == "steps" for e in events):
        return ""
    return (" - but no step line follows: if this is not a training log (a kernel log: "
            "`gpuslo inspect` reads those), there was no job to initialize")


def _unbooked_ends(events: list[dict[str, Any]], window: tuple[float, float] | None,
                   notes: list[str], went_on: tuple[float, int] | None = None) -> None:
    """Book the stamped time the walk's events leave out at either end of the log's span
    (newcomer3 #4: a log of no known framework whose `Starting training run` line comes 60 s
    before step 1 had those 60 s in no category, and goodput 0.74 where 0.61 is true): the
    time from the first stamp to the first event is `initialization` (the job shows it started
    and no step yet), and the time from the last event of a running job to the last stamp is
    `other` (lines that are neither steps nor a named phase). Under a second is left alone
    (stamp rounding). Events stay in order; the README's rule: the time the log shows is
    accounted and no more. Where an epoch marker shows a later epoch begun after the last
    progress line (`went_on`: its stamp and epoch, `epochtail`), the time from the last event
    is that epoch's training: progress, uncommitted, not `other`."""
    if window is None or not events:
        return
    lo, hi = window
    first = events[0]
    if first["event"] == "job_start" and first["t"] - lo >= 1.0:
        gap, start = round(first["t"] - lo, 6), first["t"]
        first["t"] = round(lo, 6)
        events[1:1] = [_phase("phase_start", lo, "initialization"),
                       _phase("phase_end", start, "initialization")]
        notes.append(f"{gap:g} s from the log's first stamp to its first event (the job "
                     "started, no step yet) are booked as initialization" + _no_step(events))
    last = events[-1]
    if hi - last["t"] >= 1.0 and not any(e["event"] == "job_end" for e in events):
        gap, end = round(hi - last["t"], 6), last["t"]
        step = next((e["step"] for e in reversed(events) if e["event"] == "steps"), None)
        if went_on is not None and step is not None and went_on[0] <= end + 1.0:
            events.append({"v": SCHEMA_VERSION, "t": round(hi, 6), "event": "steps",
                           "step": step, "count": 0})  # time on, no step numbered
            notes.append(f"{gap:g} s from the last event to the log's last stamp are the "
                         f"training of epoch {went_on[1]}, begun after the last progress line, "
                         "whose steps the log does not number: progress, uncommitted")
            return
        events += [_phase("phase_start", end, "other"),
                   _phase("phase_end", hi, "other")]
        notes.append(f"{gap:g} s from the last event to the log's last stamp (lines that are "
                     "neither steps nor a named phase) are booked as other")


def _phase(kind: str, t: float, category: str) -> dict[str, Any]:
    return {"v": SCHEMA_VERSION, "t": round(t, 6), "event": kind, "category": category}


def _within_span(events: list[dict[str, Any]], window: tuple[float, float] | None) -> float:
    """Move the journal's events into the log's span (`_lead_in`'s window), so no more time is
    accounted than the span shows; returns the seconds cut off. Events stay in order."""
    if window is None or not events:
        return 0.0
    lo, hi = window
    cut = max(0.0, lo - events[0]["t"]) + max(0.0, events[-1]["t"] - hi)
    for event in events:
        event["t"] = round(min(max(event["t"], lo), hi), 6)
    return cut


def _first_from_save(steps: dict[str, Any], items: list[Any]) -> None:
    """A save that prints its step before the first progress line, below that line's step, is
    the first step the log shows (fairseq's `saved checkpoint … (epoch 17 @ 3842 updates)`,
    then the summary of epoch 18 at `num_updates 4068`): `steps.first` and `global_first`
    become it. A save whose step only its path names (`…/checkpoint-416`: a file name, not
    the run's counter) or was inferred, and any restore, change nothing."""
    for item in items:
        if isinstance(item, Record):
            return
        if isinstance(item, Save) and item.named and item.step is not None and (
                steps["first"] is not None and item.step < steps["first"]):
            steps["first"] = steps["global_first"] = item.step
            return


def _last_from_save(steps: dict[str, Any], items: list[Any]) -> None:
    """A save after the last progress line that prints its step, above that line's, is the last
    step the log shows (fairseq prints `train_inner` every 200 updates, the last at 4600, then
    `Saved checkpoint … (epoch 10 @ 4791 updates …)` at the epoch's end: the run reached 4791,
    fresh15 R02): `steps.last` and `global_last` become it, where the two agree (a counter
    numbered per epoch is no job-wide count to compare) and the step lies inside the logging
    interval after the last line (below its step plus the records' stride, a stride above one):
    steps the thinned printing hid. A save one step past a log printed every step, or past a
    lone step line (Megatron's `saving checkpoint at iteration 33241` after `iteration 33240`,
    shared T03), a save whose step only its path names, or one inferred, change nothing."""
    saves_after: list[Save] = []
    for item in reversed(items):
        if isinstance(item, Record):
            stride = item.delta or 0
            for save in saves_after:
                if save.named and save.step is not None and steps["last"] is not None and (
                        steps["last"] == steps["global_last"] and stride > 1
                        and steps["last"] < save.step < steps["last"] + stride):
                    steps["last"] = steps["global_last"] = save.step
            return
        if isinstance(item, Save):
            saves_after.insert(0, item)


# A clock whose stamps span less than this share of the time the records' own step times add
# up to, over at least FROZEN_MIN_S, is not the run's clock (a logger printing a fixed or cached
# time: every line `[2026-01-01 00:00:00]`); placed by it, all but one step would take no time.
FROZEN_SHARE, FROZEN_MIN_S = 0.1, 60.0


def _drop_stamps(parsed: ParsedLog) -> None:
    """Forget every stamp of the log (a clock not to be trusted): it is timed by its step times."""
    for obs in parsed.observations:
        obs.ts = obs.prev_ts = None
    for prog in parsed.progress:
        prog.ts = None


def _frozen_clock(parsed: ParsedLog, records: list) -> list[str]:
    """Drop stamps that do not advance while the steps' printed times do (see FROZEN_SHARE): the
    log is then timed by its step times, as a log without stamps is. Returns the note."""
    stamps = [r.ts for r in records if r.ts is not None]
    timed = sum(r.dur for r in records if r.dur)
    if len(stamps) < 2 or timed < FROZEN_MIN_S or max(stamps) - min(stamps) >= FROZEN_SHARE * timed:
        return []
    _drop_stamps(parsed)
    parsed.clock_unreliable = True
    return [f"the stamps span {max(stamps) - min(stamps):g} s while the lines' step times add up "
            f"to {timed:g} s: they are not the run's clock and are not used; the log is timed "
            "by its step times"]


def _markers(parsed: ParsedLog) -> list[tuple[int, int]]:
    """(seq, epoch) of the epoch markers printed by a process that prints steps too: a marker
    under another rank prefix than every step line's, or none where they all have one, is
    another process's (cosmos-rl's `[Controller] Epoch 150 finished.` counts the prompt data's
    epochs, while the policy prints `[rank0]:… Step: 826/4725`). A marker-shaped line that
    is an end line (Keras's `Epoch 00008: early stopping`, 0-based, printed inside the ninth
    epoch's record, fresh14 Q16) tells the end, not an epoch. Markers that each close their
    epoch open the next (`epochs.closing_markers`)."""
    ranks = {p.rank for p in parsed.progress}
    ends = {o.seq for o in parsed.observations if o.kind == "end"}
    return closing_markers([(o.seq, int(o.data["epoch"]), o.text) for o in parsed.observations
                            if o.kind == "epoch" and (not ranks or o.data.get("rank") in ranks)
                            and o.seq not in ends])
