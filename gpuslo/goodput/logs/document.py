"""The `gpuslo goodput` JSON document of one log (pure), from its records, facts and journal.

Keys (always present, null when the log does not say): framework, framework_detected, status (`ok`;
`unknown` when no progress was read, or when the goodput is unknown, with or without `--gpus`:
`goodput.reason` says why, or without `--gpus` a note `goodput unknown: ...`), read{lines,
matched_lines, progress_lines, duplicates}, not_read[], steps{first, last, total_planned,
epoch_first, epoch_last, global_first, global_last}, step_time_s{median, min, max, count},
checkpoint_saves[{step, seconds, line; a --checkpoint-dir file: line null, file}],
restarts[{resumed_from_step, lost_steps, line, opens_log (true: a restore before any progress;
the run before is not in the log)}], interruptions[{after_step, cause, layer, line, text}],
slowdowns[{from_step, to_step, ratio, ...}], hangs[{after_step, seconds, cause, line}], span_s,
span_from, gpus, goodput, notes[]; lead_in_s (seconds accounted before span_s begins, from a
first line's printed step times) where there are any.

`goodput` (with `--gpus`): GPU-seconds per category from the one calculator,
`uncommitted_gpu_s`, `goodput` = productive / accounted. Fail closed: when nothing in the log
(or the checkpoint directory) proves a commit of the progress it shows - no save line, no
restore of a step a run passed (nor one before any progress, where the framework saves silently:
Lightning), no checkpoint file - `goodput` is `{"status": "unknown", "goodput": null, "reason":
...}`: the calculator would book every second as uncommitted or wasted, which the log cannot
tell, so `productive`, `wasted_progress` and `uncommitted_gpu_s` are null too and
`progress_gpu_s` is their sum (`fate_unknown`); steps, step time and restarts are still given. A
log whose steps have no time at all (no stamps, durations or rates) but proves a commit gets
goodput by steps (`stepbasis`): `goodput_basis` `steps` (else `gpu_seconds`), a `steps` object
{productive, wasted, uncommitted, accounted}, every GPU-second figure null, and the reason says
so; with no progress line it has no goodput. `steps.first/last` are job-wide steps (per-epoch
counters made global, see `progress`), except where that count rests on an epoch length the log
never prints (a per-epoch counter with no N across epochs: `epochs.Untotalled`'s estimate):
then they are the counter as printed and a note says so (`estimated_scale`). A counter printed
as ranges whose lower end is a step of the range (`range_first`) shows steps from the first
range's lower end.
"""

from __future__ import annotations

from collections import Counter
from statistics import median
from typing import Any

from gpuslo import names
from gpuslo.goodput.calculator import JobGoodput, summary
from gpuslo.goodput.logs.parsedlog import ParsedLog
from gpuslo.goodput.logs.progress import Record
from gpuslo.goodput.logs.stepbasis import BASIS_GPU_SECONDS
from gpuslo.goodput.logs.timeline import Timeline


def goodput_of(result: JobGoodput, gpus: int, commits: int) -> dict[str, Any]:
    """The `goodput` object (see the module docstring) of the calculator's `result` for the
    log's journal; `commits`: checkpoint events written."""
    facts = summary(result)
    seconds = facts["gpu_seconds"]
    accounted = sum(seconds.values()) + result.uncommitted_gpu_s
    out = {
        "gpus": gpus,
        "status": "ok",
        "goodput_basis": BASIS_GPU_SECONDS,
        "gpu_seconds": seconds,
        "uncommitted_gpu_s": facts["uncommitted_gpu_s"],
        "slowdown_gpu_s": facts["slowdown_gpu_s"],
        "accounted_gpu_s": round(accounted, 3),
        "goodput": round(seconds[names.CATEGORY_PRODUCTIVE] / accounted, 6)
        if accounted > 0 else None,
        "interruptions": facts["interruptions"],
    }
    if not commits:
        out.update(status=names.STATUS_UNKNOWN, goodput=None, reason=(
            "no commit evidence: no checkpoint save line, nor a restore of a step a run in "
            "the log passed, proves a commit of the progress the log shows (a restore before "
            "any progress proves an earlier run's, and where the framework saves without a "
            "line, as Lightning does, its silence after tells nothing; a save begun and not "
            "shown finished - cut short by a stop, or one to a temporary name the log ends "
            "inside - commits nothing; no checkpoint file was given, or each one was refused), so "
            "which progress was committed cannot be known"))
        fate_unknown(out)
    elif accounted <= 0:
        out.update(status=names.STATUS_UNKNOWN, reason=(
            "no clock: the log gives no time for its steps (no timestamps, durations or "
            "rates), so GPU-seconds cannot be apportioned although commits are proven"))
    elif result.uncommitted_gpu_s > 0:
        out["reason"] = ("progress after the last proven commit is uncommitted: the end of "
                         "training is not taken as a commit")
    return out


def filed_slowdowns(result: JobGoodput, gpus: int | None) -> list[dict[str, Any]]:
    """The sustained slowdowns the calculator filed for the log's journal (written for one GPU
    without `gpus`), so the list is the same with or without a GPU count: {from_step, to_step,
    ratio, reference_s, steps, extra_s (seconds per GPU), gpu_seconds (× gpus; null without
    them)}."""
    scale = result.gpus or 1
    return [{**s, "extra_s": round(s["gpu_seconds"] / scale, 3),
             "gpu_seconds": s["gpu_seconds"] if gpus else None}
            for s in summary(result)["slowdowns"]]


# The categories a commit decides: progress is productive once committed, wasted once a restart
# discards it, uncommitted until then (`calculator`). The others (phases, recovery, slowdown) do
# not depend on what was committed.
FATE_CATEGORIES = (names.CATEGORY_PRODUCTIVE, "wasted_progress")


def fate_unknown(out: dict[str, Any]) -> None:
    """Make a goodput object with no commit evidence say so in its figures too: productive,
    wasted progress and uncommitted GPU-seconds become None (a restart after progress would
    otherwise book it all as wasted, which nothing in the log proves), their sum stays as
    `progress_gpu_s` (the time the steps took, committed or not; None when nothing was
    accounted: steps whose time the log does not give). The calculator's other
    categories stay. In place; `gpuslo goodput` calls it again after its own calculator run."""
    seconds, uncommitted = out["gpu_seconds"], out["uncommitted_gpu_s"]
    if uncommitted is None:
        return  # done already
    progress = sum(seconds[c] for c in FATE_CATEGORIES) + uncommitted
    # steps with no time (no clock, or a duration whose basis is unknown: `durations`) took an
    # unknown time, not none
    out["progress_gpu_s"] = round(progress, 3) if out.get("accounted_gpu_s") else None
    out["uncommitted_gpu_s"] = None
    for category in FATE_CATEGORIES:
        seconds[category] = None


def span(parsed: ParsedLog, timeline: Timeline) -> tuple[float | None, str | None]:
    """Seconds from the first to the last line the log dates: by its stamps, or by the clock
    rebuilt from step and elapsed times when that covers more."""
    stamped = None
    if parsed.first_ts is not None and parsed.last_ts is not None and not parsed.clock_unreliable:
        stamped = (parsed.last_ts - parsed.first_ts) or None
    built = None
    if timeline.placed:
        built = max(x.t1 for x in timeline.placed) - min(x.t1 for x in timeline.placed)
        first = timeline.placed[0]
        if isinstance(first, Record) and first.ts is None and stamped is None:
            built += first.t1 - first.t0  # the first progress line's own interval
    if stamped is not None and (built is None or stamped >= built - 1e-6):
        return (round(stamped, 3), "timestamps") if stamped > 0 else (None, None)
    if built:
        return round(built, 3), "step_times"
    return None, None


def _stats(times: list[float]) -> dict[str, Any]:
    return {"median": round(median(times), 6) if times else None,
            "min": round(min(times), 6) if times else None,
            "max": round(max(times), 6) if times else None, "count": len(times)}


def _not_read(parsed: ParsedLog, records: list[Record]) -> list[str]:
    out = []
    if not records and parsed.rates:
        out.append("no progress lines: no step or goodput can be given; the step time is "
                   f"from {len(parsed.rates)} rate line(s) of steps")
    elif not records:
        out.append("no progress lines: no step, step time or goodput can be given")
    if parsed.unreadable:
        out.append(f"{parsed.unreadable} line(s) of binary noise skipped")
    if parsed.truncated:
        out.append(f"{parsed.truncated} line(s) longer than the record limit were cut")
    return out


def estimated_scale(records: list[Record]) -> bool:
    """True when a job-wide step was built from a per-epoch counter that prints no N (PaddleRec's
    `epoch: 3, batch_id: 500`, prednet-paddle's `Epoch 2, Step 125`): the epoch's length is the
    counter's last value plus its stride, an estimate (PaddleRec's epoch of about 1,980 batches
    read as 2,000), so the job-wide numbers are not counts the log shows. A counter printed at
    every batch (its usual rise 1: icefall's `Epoch 0, batch 66` right before `Saving checkpoint
    to …/epoch-0.pt` and `Epoch 1, batch 0`) prints each epoch's last batch: its count is exact."""
    built = [r for r in records if r.total is None and r.epoch is not None]
    if not any(r.glob != r.printed for r in built):
        return False
    rises = Counter(b.printed - a.printed for a, b in zip(built, built[1:], strict=False)
                    if a.epoch == b.epoch and b.printed > a.printed)
    return not rises or rises.most_common(1)[0][0] != 1


def range_first(records: list[Record]) -> int | None:
    """The first step a log of step ranges `[a-b]` shows, where the lower end `a` is a step the
    range covers: CNTK's ProgressPrinter prints `Minibatch[{updates[0] + 1}-{updates[1]}]`,
    minibatches `a` to `b` counted from 1, so its ranges tile (`[   1- 500]`, `[ 501-1000]`) and
    a launch's first starts at 1 (fresh16 S18). MXNet's Speedometer prints `Batch [a-b]` from
    the count at its last report (`[115980-116000]`, `[116000-116020]`; `[0-20]`, `[0-40]`
    with auto_reset off): `a` is no step of the range, and the first step shown stays the
    first upper end. Inclusive means: each range of the first run after the first starts one
    past the previous one's end, or, with one range only, it starts at 1. None where that does
    not hold, where the first record is no range, or where its job-wide step is not the
    printed one (a per-epoch counter)."""
    if not records or records[0].prog.complete().range_from is None:
        return None
    first = records[0]
    run = [r for r in records if r.run == first.run and r.prog.complete().range_from is not None]
    pairs = [(a, b) for a, b in zip(run, run[1:], strict=False) if b.printed != a.printed]
    lower = first.prog.range_from
    tiled = all(b.prog.range_from == a.printed + 1 for a, b in pairs) if pairs else lower == 1
    return lower if tiled and lower <= first.printed == first.glob else None


def document(parsed: ParsedLog, records: list[Record], facts: dict[str, Any],
             info: dict[str, Any], notes: list[str], span_s: tuple[float | None, str | None],
             slowdowns: list[dict[str, Any]], gpus: int | None,
             goodput: dict[str, Any] | None) -> dict[str, Any]:
    """The document (see the module docstring)."""
    times = facts["step_times"] or [r.step_s for r in records if r.step_s is not None] or (
        [] if records else parsed.rates)  # a log of rates of steps and no counter
    first, last = (records[0], records[-1]) if records else (None, None)
    shown = (first.glob, last.glob) if first and last else (None, None)
    glob_first = first.glob if first else None
    if (start := range_first(records)) is not None:
        shown, glob_first = (start, shown[1]), start
    if first and last and estimated_scale(records):
        shown = (first.printed, last.printed)
        notes.append("the step counter restarts each epoch and the log never prints an epoch's "
                     f"length: steps are the counter as printed ({first.printed}..{last.printed}"
                     f" in epochs {first.epoch}..{last.epoch}); the job-wide count "
                     f"{first.glob}..{last.glob} (global_first/last) rests on an estimated length")
    if info.get("per_call"):
        notes.append(f"{info['per_call']} finished progress bars of varying totals, one loop each "
                     "(a fit per file or clip): no run-wide step is printed; steps count their "
                     "batches in order")
    if info.get("other_bars"):
        notes.append(f"{info['other_bars']} progress bar line(s) with another total "
                     "(evaluation or data bars) were not read as training steps")
    return {
        "framework": parsed.framework,
        "framework_detected": parsed.detected if parsed.framework else None,
        "status": "ok" if records and (goodput is None or goodput["status"] == "ok")
        else names.STATUS_UNKNOWN,
        "read": {"lines": parsed.lines, "matched_lines": parsed.matched,
                 "progress_lines": len(records), "duplicates": info.get("duplicates", 0)},
        "not_read": _not_read(parsed, records),
        "steps": {
            "first": shown[0],
            "last": shown[1],
            "total_planned": last.total if last else None,
            "epoch_first": first.epoch if first else None,
            "epoch_last": last.epoch if last else None,
            "printed_first": first.printed if first else None,
            "printed_last": last.printed if last else None,
            "global_first": glob_first,
            "global_last": last.glob if last else None,
        },
        "step_time_s": _stats(times),
        "checkpoint_saves": facts["saves"],
        "restarts": facts["restarts"],
        "interruptions": facts["interruptions"],
        "slowdowns": slowdowns,
        "hangs": facts["hangs"],
        "span_s": span_s[0],
        "span_from": span_s[1],
        "gpus": gpus,
        "goodput": goodput,
        "notes": notes,
    }
