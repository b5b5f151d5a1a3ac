"""`gpuslo goodput`: goodput facts from the training logs jobs already print.

    gpuslo goodput LOG... [--framework NAME] [--gpus N] [--profiles FILE]
                   [--checkpoint-dir DIR|GLOB] [--explain]
                   [--slowdown-threshold R] [--slowdown-intervals N] [--format text|json]

One JSON object per LOG (a single LOG prints the object itself, several a list). Keys are always
present, null when the log does not say: framework, steps{first,last,...},
step_time_s{median,...}, checkpoint_saves[{step,seconds}], restarts[{resumed_from_step,
lost_steps}], interruptions[{after_step,cause,layer,line,why}] (`why`: why a cause is put on the
observability layer, names.OBSERVABILITY_WHY; null on the others),
slowdowns[{from_step,ratio,...}], hangs[{after_step,seconds}], span_s, and `goodput`
(GPU-seconds per category, from the same calculator as the Recorder's journals) when --gpus is
given; without any commit evidence (no save or restore line, no checkpoint file) its `goodput`
is null with status `unknown` and a reason, never 0.0, and so are its productive,
wasted_progress and uncommitted GPU-seconds (`progress_gpu_s` is their sum). `--checkpoint-dir`
reads the steps committed from checkpoint file names (`checkpoint-500`,
`epoch=0-step=2532.ckpt`) when the log prints no save line, refusing (with a note naming it)
an empty one, one beyond the log's last step, or one dated far outside its span
(`goodput.logs.filecommits`). `--explain` adds what was read and
why: the templates read as progress (with the role of each field), epoch markers, counters not
read as steps, event templates and recurring templates left unread.

Exit status (the README's: 0 done, 1 unknown, 2 usage or input error): 0 every log was read and
its goodput is known, 1 some log's status is `unknown` (nothing to read: binary, no progress
line; or its goodput unknown: no commit evidence, no clock — with or without --gpus, which
scale GPU-seconds only; without them the reason is a note), 2 usage or input error (one line on
stderr naming the file).
"""

from __future__ import annotations

import argparse
import json
import sys

from gpuslo import names
from gpuslo.cli.terminal import whole
from gpuslo.config_file import not_a_log_file, stdin_at_most_once
from gpuslo.errors import InputError, UsageError
from gpuslo.goodput.calculator import compute_goodput, summary
from gpuslo.goodput.journal import MAX_GPUS
from gpuslo.goodput.logs import analyse_log, load_profiles
from gpuslo.goodput.logs.document import fate_unknown
from gpuslo.goodput.logs.reader import UNREAD_EVERY
from gpuslo.goodput.logs.stepbasis import BASIS_STEPS
from gpuslo.goodput.slowdown import DEFAULT_MIN_INTERVALS, DEFAULT_THRESHOLD, SlowdownRule

# The heading where no profile's own line names the framework (`Profiles.choose`): nothing is
# missing, the log is read by its templates and the common wording families.
UNNAMED = "framework not named by its lines (read by template)"



def configure(parser: argparse.ArgumentParser) -> None:
    """Arguments of `gpuslo goodput`."""
    parser.add_argument("logs", nargs="+", metavar="LOG",
                        help="training log file(s); - reads standard input")
    parser.add_argument("--framework", help="profile name (default: detected from the log)")
    parser.add_argument("--gpus", type=whole(1, MAX_GPUS, "GPUs"),
                        help="GPUs the job used: gives GPU-seconds")
    parser.add_argument("--profiles", help="operator overlay YAML merged on the packaged profiles")
    parser.add_argument("--checkpoint-dir", metavar="DIR|GLOB",
                        help="checkpoint files whose names give the committed steps")
    parser.add_argument("--explain", action="store_true",
                        help="say which templates were read as progress or events and why")
    parser.add_argument("--slowdown-threshold", type=float, default=DEFAULT_THRESHOLD,
                        help=f"step time / reference above which an interval is slow "
                             f"(default {DEFAULT_THRESHOLD})")
    parser.add_argument("--slowdown-intervals", type=int, default=DEFAULT_MIN_INTERVALS,
                        help="consecutive slow intervals that make a slowdown "
                             f"(default {DEFAULT_MIN_INTERVALS})")
    parser.add_argument("--format", choices=("text", "json"), default="text")


def run(args: argparse.Namespace) -> int:
    """Read every LOG and print its facts; returns 0, or 1 when some log's status is unknown
    (nothing read, or its goodput unknown, with or without --gpus)."""
    if not args.slowdown_threshold > 1.0 or args.slowdown_intervals < 1:
        raise UsageError("--slowdown-threshold must be above 1 and --slowdown-intervals >= 1")
    profiles = load_profiles(args.profiles)
    if args.framework is not None and args.framework not in profiles.frameworks:
        raise UsageError(f"--framework: unknown framework {args.framework!r}; known: "
                         f"{', '.join(profiles.frameworks)}")
    stdin_at_most_once(args.logs)
    for path in args.logs:
        why = not_a_log_file(path)
        if why is not None:  # a FIFO no one writes to would read as an empty log
            raise InputError(str(path), f"{why}: not read")
    rule = SlowdownRule(args.slowdown_threshold, args.slowdown_intervals)
    docs = [_one_model(analyse_log(path, profiles, framework=args.framework, gpus=args.gpus,
                                   slowdown_threshold=args.slowdown_threshold,
                                   slowdown_min_intervals=args.slowdown_intervals,
                                   checkpoint_dir=args.checkpoint_dir, with_explain=args.explain),
                       rule)
            for path in args.logs]
    for doc in docs:
        for interruption in doc["interruptions"]:
            interruption["why"] = _why(interruption)
    if args.format == "json":
        out = docs[0] if len(docs) == 1 else docs
        print(json.dumps(out, indent=2, sort_keys=True, allow_nan=False))
    else:
        for doc in docs:
            sys.stdout.write(render_text(doc))
    return 1 if any(d["status"] == names.STATUS_UNKNOWN for d in docs) else 0


def _one_model(analysis, rule: SlowdownRule) -> dict:
    """The log's document with its goodput from one calculator run (`calculator.summary` of
    its journal events, under the flags' slowdown rule), as `gpuslo report --training-log`
    files them. Its slowdowns are the same run's already (`assemble`, with or without --gpus:
    the GPU count scales GPU-seconds only)."""
    doc = analysis.document
    if doc["goodput"] is None or not analysis.events:
        return doc
    facts = summary(compute_goodput(analysis.events, rule=rule))
    del facts["slowdowns"]
    if doc["goodput"].get("status") == names.STATUS_UNKNOWN:  # fail closed: no commit proven
        facts["goodput"] = None
    if doc["goodput"].get("goodput_basis") == BASIS_STEPS:  # no clock: the events hold no time
        return doc
    doc["goodput"].update(facts)
    if "progress_gpu_s" in doc["goodput"]:  # no commit evidence: what was committed is unknown
        fate_unknown(doc["goodput"])
    return doc


def _why(interruption: dict) -> str | None:
    """Why an interruption is on the observability layer (names.OBSERVABILITY_WHY); None on the
    other layers, where the cause names its culprit."""
    if interruption.get("layer") != names.LAYER_OBSERVABILITY:
        return None
    return names.OBSERVABILITY_WHY.get(interruption.get("cause"), names.OBSERVABILITY_WHY_DEFAULT)


def _said(value: object, unit: str = "", missing: str = "unknown") -> str:
    """A value for the text table; what the log does not say reads as `missing`, a phrase
    naming what is missing (`its duration not printed`), never as `None`, nor as a bare "not
    in the log" that leaves the reader asking what is not."""
    return missing if value is None else f"{value}{unit}"


def _step(what: str, step: object, missing: str) -> str:
    """`WHAT STEP` (`checkpoint save at step 300`), or `WHAT'S HEAD (MISSING)` when the log
    printed no step for it (`checkpoint save (its step not printed)`)."""
    if step is not None:
        return f"{what} {step}"
    return f"{what.rsplit(' ', 2)[0]} ({missing})"


def _event_lines(doc: dict) -> list[str]:
    """One line per checkpoint save, restart, interruption, slowdown and hang; a figure the log
    did not give is named as such (`its step not printed`, `its duration not printed`)."""
    lines = []
    for s in doc["checkpoint_saves"]:
        if s.get("file"):  # --checkpoint-dir: the file is the commit, not a line of the log
            lines.append(f"  checkpoint file {s['file']}: read as the commit of step {s['step']}")
            continue
        lines.append(f"  {_step('checkpoint save at step', s['step'], 'its step not printed')}: "
                     f"{_said(s['seconds'], ' s', 'its duration not printed')}")
    for r in doc["restarts"]:
        if r.get("opens_log"):  # the run before is not in the log: nothing here was lost
            head = _step("resumed from step", r["resumed_from_step"], "its step not printed")
            lines.append(f"  {head} as the log opens (the run before it is outside this log)")
            continue
        head = _step("restart from step", r["resumed_from_step"], "its step not printed")
        lost = _said(r["lost_steps"], " steps", "an unknown number of steps")
        lines.append(f"  {head} (lost {lost})")
    for i in doc["interruptions"]:
        head = _step("interruption after step", i["after_step"], "before any printed step")
        layer = f"{i['layer']}: {i['why']}" if i.get("why") else i["layer"]
        lines.append(f"  {head}: {i['cause']} ({layer}), line {i['line']}")
    for s in doc["slowdowns"]:
        head = _step("slowdown from step", s["from_step"], "its step not printed")
        against = (f" against {s['reference_s']:g} s (the median of the steady intervals "
                   "before it)" if s.get("reference_s") else "")
        lines.append(f"  {head}: x{_said(s['ratio'], '', '? (ratio unknown)')}{against}")
    for h in doc["hangs"]:
        head = _step("hang after step", h["after_step"], "before any printed step")
        lines.append(f"  {head}: {_said(h['seconds'], ' s', 'duration unknown')} ({h['cause']})")
    return lines


def render_text(doc: dict) -> str:
    """A few lines per log for a person (the JSON has everything)."""
    lines = [f"{doc['file']}: {doc['framework'] or UNNAMED} — {doc['status']}"]
    steps, st = doc["steps"], doc["step_time_s"]
    if steps["first"] is not None:
        epoch = (f" (epochs {steps['epoch_first']}.."
                 f"{_said(steps['epoch_last'], '', '? (last epoch not printed)')})"
                 if steps["epoch_first"] is not None else "")
        last = _said(steps["last"], "", "? (last step not printed)")
        lines.append(f"  steps {steps['first']}..{last}{epoch}, median step "
                     f"{_said(st['median'], ' s')} over {st['count']} interval(s), span "
                     f"{_said(doc['span_s'], ' s')}")
    lines += _event_lines(doc)
    if doc["goodput"] and doc["goodput"].get("goodput_basis") == BASIS_STEPS:
        g, n = doc["goodput"], doc["goodput"]["steps"]
        lines.append(f"  goodput by steps: productive {_said(n['productive'])}, wasted "
                     f"{_said(n['wasted'])}, uncommitted {_said(n['uncommitted'])} of "
                     f"{n['accounted']} steps; goodput {_said(g['goodput'])}; GPU-seconds "
                     f"({g['gpus']} GPUs) unknown (no clock)")
        lines.append(f"  goodput: {g['reason']}")
    elif doc["goodput"]:
        g = doc["goodput"]
        parts = ", ".join(f"{k} {v}" for k, v in g["gpu_seconds"].items() if v)
        verdict = g["goodput"] if g["goodput"] is not None else "unknown"
        if "progress_gpu_s" not in g:
            said = f"{parts or 'none committed'}; uncommitted {g['uncommitted_gpu_s']}"
        else:  # no commit evidence
            progress = _said(g["progress_gpu_s"])
            said = ", ".join(filter(None, (parts, f"progress {progress} (committed, wasted or "
                                                  "uncommitted: unknown)")))
        lines.append(f"  GPU-seconds ({g['gpus']} GPUs): {said}; goodput {verdict}")
        if g.get("reason"):
            lines.append(f"  goodput: {g['reason']}")
    for note in doc["not_read"] + doc["notes"]:
        lines.append(f"  note: {note}")
    if doc.get("explain"):
        lines += _explain_lines(doc["explain"])
    return "\n".join(lines) + "\n"


def _sample_lines(ex: dict) -> list[str]:
    """Say when the explanation's record counts rest on a sample, and how large: shapes are
    learnt from the log's head (`reader.SAMPLE_LINES`), unread records counted one in
    `reader.UNREAD_EVERY` after the first few."""
    sample = ex.get("sample")
    if not sample:
        return []
    out = []
    if not sample["whole"]:
        out.append(f"    sampled: shapes learnt from the first {sample['lines']:,} of "
                   f"{sample['of_lines']:,} lines; the progress, marker and event counts "
                   "below are counts in them")
    if sample["unread_counted"] < sample["unread_seen"]:
        out.append(f"    sampled: unread counts are over {sample['unread_counted']:,} of the "
                   f"{sample['unread_seen']:,} records nothing read "
                   f"(the first {4 * UNREAD_EVERY}, then 1 in {UNREAD_EVERY})")
    return out


def _explain_lines(ex: dict) -> list[str]:
    """The `--explain` section for a person: every field's role but the metrics, except one
    read as a metric because what it times is unknown (its reason says so)."""
    out = [f"  explain: stamps {', '.join(ex['stamps']) or 'none'}", *_sample_lines(ex)]
    for title, key in (("progress", "progress"), ("epoch marker", "epoch_markers")):
        for e in ex[key]:
            out.append(f"    {title} ({e['records']}x, line {e['first_line']}): {e['template']}")
            out += [f"      {name}: {role}" for name, role in e["fields"].items()
                    if not role.startswith("metric") or role.endswith("unknown)")]
    for e in ex["not_progress"]:
        out.append(f"    not progress ({e['records']}x): {e['template']} - {e['why']}")
    for e in ex["events"]:
        out.append(f"    event {'/'.join(e['kinds'])} ({e['records']}x): {e['template']}")
    for e in ex["unread"]:
        out.append(f"    unread ({e['records']}x, line {e['first_line']}): {e['template']}")
    return out
