"""Roles of a template's numeric fields, from their names and from how they behave (pure).

`read_template(template, pins) -> Reading` gives each field of a template one role:

- `step` the step counter, `total` the `N` of its `n/N`, `epoch` an integer named as an epoch:
  which shapes count the steps is `counters`' (`global_step` over `step` over `iter`, a bar's
  `n/N`, a counter printed first or in brackets, `NNN updates`); the step counter is per epoch
  when an epoch is printed beside an `n/N` or `iter`/`batch` counter that is not global.
- `elapsed` cumulative time (a bar's `[00:18<`, `0:00:39 •`, `02:50 <`; `train_time:74701ms`,
  `time_since_start`, `wall=`, `'elapsed_time': '1h 54m 53s'` when it rises), `remaining`
  (after `<`/`•`, `eta`): not read.
- `step_s` a per-step duration (`elapsed time per iteration (ms)`, `time 1099.34ms`,
  `iter_time: 0.771s`, `train_step_timing in s`, `57.126 sec/step`, `batch_cost`), `window_s`
  a duration of the whole logging window (MMF's `time: 02m 16s 175ms` per 100 updates: seen
  against the stamps), `smoothed_s` an average (`step_avg`, `avg_...`, `AvgTime`), `line_s` the
  time of a smaller unit than the step (`iter time` when the counter is `step`: summed per step).
  Names are read as words: camelCase split (`AvgTime`), `(t)` is time (open_clip's `Batch (t)`);
  a `latency` is one event's duration, never a running total (DeepSpeed-Chat's `E2E latency`),
  and a duration followed by its share `(75.13%)` is a part of a whole, not the step.
- `unit_s` the whole time of one unit of work (`sample processed in 14.73s`): not read, unless
  the lines show one per step (`perstep`).
- `rate_ips`/`rate_spi` iterations per second or seconds per iteration (`75.75it/s`,
  `2.88s/it`, `It/sec 1.133`, `ups`, `batches_per_second`); rates of samples, tokens or images
  are throughput, not step time.
- everything else (`loss`, `lr`, `grad norm`, memory, `TFLOPs`, `consumed samples`) is
  `metric`: not progress.

Units come from the value (`ms`, `s`), the text after it, or the name (`(ms)`, `_ms`, `in s`),
with `K/M/G` suffixes already applied; a duration without any unit is in seconds.
`pins` (the profile overlay's `roles`) force a role on the fields whose name they give.
A template is progress when it has a step counter and is not an evaluation, checkpoint, data,
profiling or run-control line (its words before the counter say so, `notprogress`'s families
name it in `--explain`; TPUEstimator's infeed/outfeed threads' `Outfeed
finished for iteration (1, 11675)` move data) and not an epoch bar (`Epoch: 13/13` alone).
"""

from __future__ import annotations

import re

from gpuslo.goodput.logs.bars import elapsed_after_total, is_bar
from gpuslo.goodput.logs.countdown import count_down
from gpuslo.goodput.logs.counters import (
    EPOCH_WORDS,
    below_epochs,
    bracket_epoch,
    is_epoch_name,
    is_global,
    is_step_name,
    opening,
    per_epoch,
    postfix_step,
    range_end,
    step_score,
    unnamed,
    words,
)
from gpuslo.goodput.logs.durations import (
    PER_STEP_HINTS,
    UNIT_NOUNS,
    epoch_time,
    epoch_window,
    line_times,
    operand,
    since_report,
    unit_done,
    window_by_rate,
)
from gpuslo.goodput.logs.heldpair import held_pair
from gpuslo.goodput.logs.leadpair import inner_pair, unnamed_counter
from gpuslo.goodput.logs.notprogress import NOT_PROGRESS_HEAD, not_progress_label
from gpuslo.goodput.logs.reading import Reading, Role
from gpuslo.goodput.logs.sharecount import glued_after_share
from gpuslo.goodput.logs.slidpair import turn_slid_pair
from gpuslo.goodput.logs.templates import Field, Template

# `timer`: a timer's reading (YOLACT's `|| timer: 1.618`, the seconds of the iteration printed)
TIME_WORDS = {"time", "elapsed", "dt", "duration", "took", "latency", "wall", "runtime",
              "timing", "cost", "sec", "secs", "seconds", "walltime", "train_time", "timer"}
COMPONENT_WORDS = {"eta", "remaining", "remain", "left", "data", "reader", "dataloader", "loader",
                   "fwd", "bwd", "forward", "backward", "optimizer", "optim", "comm", "io", "save",
                   "saving", "eval", "val", "valid", "load", "wait", "sync", "gc", "compile",
                   "allreduce", "microstep", "inner", "validation", "test", "rollout", "gen",
                   "generation", "ref", "update_actor", "reward", "grad", "sample", "sampling",
                   "learn", "apply", "policy", "env", "h2d", "d2h", "prefetch"}
CUMULATIVE_WORDS = {"elapsed", "wall", "since", "train_time", "runtime", "walltime", "total", "tot"}
SMOOTH_WORDS = {"avg", "mean", "average", "ema", "running", "smoothed"}
THROUGHPUT = re.compile(r"(?i)(?:samples?|tokens?|toks?|imgs?|images?|examples?|ex|task|b|kb|mb|"
                        r"gb|files?|words?|seqs?|sequences?|frames?)/s(?:ec)?\b|\btps\b|\bwps\b")
_IPS = re.compile(r"(?i)^(?:global[_ ])?(?:it|its|iter|iters|iterations?|steps?|batch(?:es)?"
                  r"|updates?)/s(?:ec)?\b"
                  r"|^it/sec|^ups$|batches_per_second|steps_per_second|iter/s|it/sec"
                  r"|^(?:it|iters?|iterations?|steps?|batch(?:es)?|updates?) per second$")
# HiFi-GAN's `s/b : 1.131` is seconds per batch (`time.time() - start_b` of the printed batch)
_SPI = re.compile(r"(?i)^(?:m?s|sec|secs|seconds?)/(?:it|iters?|steps?|batch|b)\b")
_PER_SECOND = re.compile(r"(?i)/s(?:ec)?\b|per_?sec|per_second|per second|/second")
_UNIT = {"ms": 1e-3, "s": 1.0, "sec": 1.0, "secs": 1.0, "seconds": 1.0, "second": 1.0,
         "min": 60.0, "mins": 60.0, "h": 3600.0, "hr": 3600.0, "us": 1e-6, "µs": 1e-6}
# nouns that say a number counts data, not time (icefall's `utt_duration=599.6 frames`)
COUNT_NOUNS = {"frames", "frame", "utterances", "utterance", "tokens", "token", "samples",
               "sample", "words", "word", "bytes", "chars", "characters", "images", "examples"}
# a duration of one event, never a running total (DeepSpeed-Chat's `E2E latency=2.12s` per step)
PER_EVENT_WORDS = {"latency"}
# a value named as a loss is no time whatever else its name holds (Coqui TTS's VITS
# `| > loss_duration: 1.76319  (2.02938)`: the duration predictor's loss, beside `step_time`)
LOSS_WORDS = {"loss", "losses"}
# a rate named by one of these times an evaluation, not the training steps (`eval_steps_per_second`)
EVAL_RATE_WORDS = {"eval", "val", "valid", "validation", "test", "evaluation"}
HEAD_WORDS = 48  # characters at the start of a template that say what its counter counts
def _time_scale(f: Field) -> float | None:
    """Seconds per unit of a duration field, None when the field is not a duration (nor one
    named as a loss: LOSS_WORDS). A `Cost`
    named alone, with no unit, is PaddlePaddle's loss (`Pass 0, Batch 100, Cost 2.26`: the v2
    trainer's `event.cost`), a time only when qualified (`batch_cost`, `reader_cost`)."""
    if f.kind == "dur":
        return 1.0
    unit = f.unit.lower()
    if unit in _UNIT:
        return _UNIT[unit]
    # (a unit closing its sentence: ssd.pytorch's `Timer: 0.2110 sec.`)
    # a word of its own closing the sentence that is no unit counts something else
    # (`Timer: 3 steps.`): no duration, whatever the name says
    after = f.after.strip().split(" ")[0].strip(",)|]").lower() if f.after.strip() else ""
    if after.endswith(".") and after[:-1].isalpha() and after[:-1] not in _UNIT:
        return None
    after = after[:-1] if after.endswith(".") and after[:-1] in _UNIT else after
    if after in _UNIT and not f.unit:
        return _UNIT[after]
    # a count noun right after the value says what it counts (icefall's
    # `utt_duration=599.6 frames`: a length in feature frames): no time, whatever the name says
    if not f.unit and after in COUNT_NOUNS:
        return None
    if f.unit or _PER_SECOND.search(f.key):
        return None
    ws = words(f.key)
    if not set(ws) & TIME_WORDS or ws == ["cost"] or set(ws) & LOSS_WORDS:
        return None
    for w in reversed(ws):
        if w in _UNIT:
            return _UNIT[w]
    return 1.0


def _rate(f: Field) -> Role | None:
    """A `rate_ips`/`rate_spi` role for a rate of iterations (`ms/step` scaled to seconds),
    None otherwise (throughput of samples or tokens is None). A rate whose name says it is an
    evaluation's (HF Trainer's `'eval_steps_per_second': 5.179`, `val_it/s`) times the
    evaluation's batches, not the training steps: a metric."""
    if set(words(f.key)) & EVAL_RATE_WORDS:
        return Role("metric", why=f"an evaluation's rate ({f.key})")
    after = f.after.strip()
    for text in (f.unit, after.split(" ")[0].rstrip(",)]") if after else "", f.key):
        if not text:
            continue
        if THROUGHPUT.search(text):
            return None
        if _SPI.search(text):
            scale = 1e-3 if text.lower().startswith("ms") else 1.0
            return Role("rate_spi", scale, f"seconds per iteration ({text})")
        if _IPS.search(text) or (text is f.key and words(text)[-1:] == ["ups"]):
            return Role("rate_ips", 1.0, f"iterations per second ({text})")
    return None


def _duration_role(f: Field, scale: float) -> Role:
    """step_s, smoothed_s, elapsed, remaining or metric for a duration field (cues first)."""
    low, ws = f.key.lower(), set(words(f.key))
    if operand(f):
        return Role("metric", scale, f"an operand of a worked sum ({f.key})")
    if ws & {"eta", "remaining", "remain", "left"}:
        return Role("remaining", scale, "named as time left")
    if any(h in low for h in PER_STEP_HINTS) or ws & {"batch"} and ws & {"cost", "time"}:
        kind = "smoothed_s" if ws & SMOOTH_WORDS and "batch" not in ws else "step_s"
        return Role(kind, scale, f"named as a time per step ({f.key})")
    if ws & COMPONENT_WORDS:
        if ws & COMPONENT_WORDS <= UNIT_NOUNS and unit_done(f):  # `sample processed in`
            return Role("unit_s", scale, f"one {unit_done(f)}'s whole time ({f.key})")
        return Role("metric", scale, f"a part of the step ({f.key})")
    if ws & SMOOTH_WORDS:
        return Role("smoothed_s", scale, f"an average ({f.key})")
    values = f.known()
    cumulative = len(values) >= 2 and f.rising() >= 0.8 and not f.constant() and (
        (f.stride() or 0) * 3 < max(values)) and not f.one_digit_apart()
    if ws & PER_EVENT_WORDS:
        return Role("step_s", scale, f"the duration of one event ({f.key})")
    if ws & CUMULATIVE_WORDS and (len(values) < 2 or cumulative or (
            f.rising() == 1.0 and not f.constant())):
        return Role("elapsed", scale, f"cumulative time ({f.key})")
    if cumulative and len(values) >= 3 and f.of_day:  # newcomer7 F7: torch_xla's `Time=22:00:10`
        return Role("elapsed", scale, "rises line after line, printed HH:MM:SS under 24 h: the "
                    "time of day, whose differences time the steps", day=True)
    if cumulative and len(values) >= 3:
        return Role("elapsed", scale, "rises line after line: cumulative time")
    return Role("step_s", scale, f"a duration ({f.key or 'unnamed'})")


def _slash(after: str) -> bool:
    """The text between two numbers makes them `n/N`: a `/` with nothing named after it. A `/`
    that opens the next named value is a separator (DeepLearningExamples' BERT TF2 `Train Step:
    23/90  / loss = 11.3 / time = 0.134 sec`: loss and time are no N)."""
    rest = after.strip()
    return rest.startswith("/") and not any(ch.isalpha() for ch in rest[1:])


def _cue_role(f: Field, fields: list[Field]) -> Role:
    prev = fields[f.index - 1] if f.index else None
    if prev is not None and f.kind == "num" and (_slash(prev.after) or (
            prev.after.strip() == "of" and prev.integer and f.integer)):
        return Role("total" if f.integer else "metric", why="the N of n/N")  # or `n of N`
    if f.kind == "dur":
        before = prev.after.strip() if prev is not None else ""
        if before.startswith(("<", "•")):
            return Role("remaining", why="after < or •: time left")
        if f.after.lstrip().startswith(("<", "•")):
            return Role("elapsed", why="before < or •: a bar's elapsed time")
        return _duration_role(f, 1.0)
    if f.kind != "num":
        return Role("metric")
    if f.unit == "%":
        return Role("metric", why="a percentage")
    rate = _rate(f)
    if rate:
        return rate
    scale = _time_scale(f)
    if scale is not None:
        return _duration_role(f, scale)
    if is_epoch_name(f.key):
        return Role("epoch" if f.integer else "metric", why=f"named {f.key}")
    return Role("metric")


def read_template(tpl: Template, pins: dict[str, str] | None = None) -> Reading:
    """The roles of `tpl`'s fields and whether it is progress (see the module docstring)."""
    reading = Reading(tpl)
    fields = tpl.fields
    roles = {f.index: _cue_role(f, fields) for f in fields}
    if (held := held_pair(fields)) is not None:  # WeNet's `Batch {epoch}/{batch_idx}`
        roles[held[0]], roles[held[1]] = Role("epoch", why="holds while its pair rises"), Role(
            "step", why="rises while the number before its `/` holds: epoch/batch")
    for f in fields:
        pinned = (pins or {}).get(f.key)
        if pinned:
            roles[f.index] = Role(pinned, _time_scale(f) or 1.0, "pinned by the overlay")
    reading.roles, reading.bar = roles, is_bar(fields, roles)
    burst = tpl.copies()
    names = {i: r.role for i, r in roles.items()}
    lead = opening(tpl.text)
    scores = [(step_score(f, fields, names, reading.bar, burst, lead), -f.index) for f in fields]
    pinned_step = [f.index for f in fields if roles[f.index].role == "step"]
    if pinned_step:
        reading.step = pinned_step[0]
    elif (glued := glued_after_share(fields)) is not None:  # `[51200/490871 (10%)]100`
        reading.step = glued
    elif scores and max(scores)[0] > 0 and (max(scores)[0] > 1 or tpl.count >= 3):
        reading.step = range_end(fields, -max(scores)[1])
    elif (unnamed_at := unnamed_counter(tpl)) is not None:
        epoch, reading.step = unnamed_at
        if epoch is not None:  # `333 161 Loss=…`, then `334 1 …` (`lead_pair`)
            roles[epoch] = Role("epoch", why="opens the record; resets it")
    if reading.step is not None and (inner := inner_pair(fields, reading.step)) is not None:
        roles[reading.step] = Role("epoch", why="the first of two unnamed n/N: the epoch")
        reading.step = inner  # `0/29  40/165`: the batch within it (`leadpair.inner_pair`)
    if reading.step is not None and bracket_epoch(fields, reading.step, lead):
        roles[0] = Role("epoch", why="the opening [e] before the step: the epoch")
    _place_counter(reading)
    _postfix_clock(reading, names)
    line_times(reading)
    window_by_rate(reading)
    epoch_window(reading)
    epoch_time(reading)
    since_report(reading)
    count_down(reading)
    _decide(reading)
    return reading


def _postfix_clock(reading: Reading, names: dict[int, str]) -> None:
    """A step from a bar's postfix (`counters.postfix_step`, newcomer6 #19: `2/2 [00:03<00:00,
    1.92s/it, v_num=2, step=7440.0]`) is not what the bar's clock counts (its own iterations):
    its times are read as none, the step time unknown, not 3 s over 7,440 steps."""
    fields = reading.template.fields
    if reading.step is None or not postfix_step(fields[reading.step], fields, names,
                                                reading.bar):
        return
    for i, role in reading.roles.items():
        if role.role in ("elapsed", "remaining", "rate_spi", "rate_ips"):
            reading.roles[i] = Role("metric", why="the bar's clock: its iterations, not the step")


def _place_counter(reading: Reading) -> None:
    """Set step/total/epoch roles and per_epoch around the chosen step field."""
    fields, roles = reading.template.fields, reading.roles
    epochs = [i for i, r in roles.items() if r.role == "epoch"]
    reading.epoch = epochs[0] if epochs else None
    if turn_slid_pair(reading) or reading.step is None:
        return
    step = fields[reading.step]
    name = step.key or unnamed(step)
    roles[step.index] = Role("step", why=roles[step.index].why or f"counter ({name})")
    for i, r in list(roles.items()):
        if r.role == "total" and i != step.index + 1:
            roles[i] = Role("metric", why="the N of another pair")
    if step.index + 1 < len(fields) and roles[step.index + 1].role == "total":
        reading.total = step.index + 1
    _outer_pair(reading)
    _leading_pair(reading)
    elapsed = elapsed_after_total(fields, reading.total) if reading.bar else None
    if elapsed is not None and roles[elapsed].role in ("step_s", "elapsed"):
        roles[elapsed] = Role("elapsed", roles[elapsed].scale,
                              "unnamed, right after a bar's n/N: its elapsed time")
    if reading.epoch is None or is_global(step.key):
        return
    reading.per_epoch = per_epoch(fields[reading.epoch], step, reading.total is not None) or (
        below_epochs(fields, reading.epoch, reading.total))


def _outer_pair(reading: Reading) -> None:
    """An unnamed `[e/E]` glued right before the step's `[n/N]` (`[e/E][n/N]`, no epoch named)
    is the epoch of E and the step counts within it: PyTorch's DCGAN example prints
    `[%d/%d][%d/%d]` (epoch, niter, i, len(dataloader)), Pointcept's InformationWriter
    `Train: [{epoch}/{max_epoch}][{iter}/{max_iter}]` (a `Train:` before it names the loop, not
    the counter). It holds where the outer n never falls
    while the inner one moves."""
    fields, roles = reading.template.fields, reading.roles
    if reading.epoch is not None or reading.total is None or reading.step is None:
        return
    i = reading.step - 2
    if i < 0 or not set(words(fields[i].key)) <= {"train", "training"} or (
            not fields[i].integer or not fields[i].after.startswith("/")):
        return
    if fields[i + 1].after.strip() != "][" or not fields[i + 1].integer:
        return
    outer = [n for n in fields[i].numbers if n is not None]
    if any(b < a for a, b in zip(outer, outer[1:], strict=False)) or min(outer, default=0) < 0:
        return
    roles[i] = Role("epoch", why="the outer n/N of [e/E][n/N]: the epoch")
    roles[i + 1] = Role("metric", why="the number of epochs")
    reading.epoch, reading.per_epoch = i, True


def _leading_pair(reading: Reading) -> None:
    """An unnamed n/N that opens a bar's record, before the bar's own n/N, is the epoch of N and
    the bar counts within it: Ultralytics YOLO prints `  1/5  3.51G  1.234  2.345  1.456  32
    640: 100%|██████████| 118/118 [00:45<00:00,  2.60it/s]` (epoch/epochs, GPU memory, losses,
    then the batch bar). It holds where nothing names it, the leading n never falls, its N
    stays and n <= N."""
    fields, roles = reading.template.fields, reading.roles
    if (reading.epoch is not None or not reading.bar or reading.total is None
            or reading.step is None or reading.step < 2):
        return
    lead, of = fields[0], fields[1]
    if lead.key or not (lead.integer and of.integer) or not lead.after.startswith("/") or (
            not of.constant()):
        return
    seen, limit = lead.known(), of.known()
    if not seen or not limit or min(seen) < 0 or max(seen) > limit[0] or any(
            b < a for a, b in zip(seen, seen[1:], strict=False)):
        return
    roles[0] = Role("epoch", why="an unnamed n/N that opens a bar's record: the epoch")
    roles[1] = Role("metric", why="the number of epochs")
    reading.epoch, reading.per_epoch = 0, True


# a logger's source location names code, not what the line does: InternLM's `%(filename)s:
# %(lineno)s in %(funcName)s -- ` (`train.py:317 in record_current_batch_training_metrics -- `)
_LOCATION = re.compile(r"[\w./-]+\.py:\x01(?:\s+in\s+[\w.<>]+)?(?:\s+--)?")


def _decide(reading: Reading) -> None:
    """progress / epoch_marker and why, from the chosen counter and the template's words."""
    tpl, roles = reading.template, reading.roles
    if reading.step is None:
        if reading.epoch is not None and all(
                r.role in ("epoch", "total", "metric") for r in roles.values()) and (
                len([r for r in roles.values() if r.role != "metric"]) <= 2):
            reading.epoch_marker = True
            reading.why = "an epoch marker: sets the epoch of the lines after it"
        else:
            reading.why = "no step counter"
        return
    head = _LOCATION.sub(" ", _head(tpl.text, reading.step))
    words_before = set(words(head))
    said = head[:HEAD_WORDS] + " " + tpl.fields[reading.step].key + " " + _verb(
        tpl.fields[reading.step].after)
    found = NOT_PROGRESS_HEAD.search(said)
    if found:
        reading.why = not_progress_label(found.group(0), head)
    elif reading.epoch is None and words_before and words_before <= EPOCH_WORDS | {"train"} \
            and reading.bar:
        reading.epoch_marker = True
        reading.why = "an epoch bar: its counter is the epoch"
    elif any(THROUGHPUT.search(f.unit + " " + f.after[:12]) for f in tpl.fields) and not any(
            r.role in ("rate_ips", "rate_spi") for r in roles.values()) and reading.bar and (
            not is_step_name(tpl.fields[reading.step].key)):
        reading.why = "a bar of samples, tasks or bytes, not of steps"
    else:
        reading.progress = True
        reading.why = f"progress: step from {tpl.fields[reading.step].key or 'n/N'}"


def _verb(after: str) -> str:
    """The word that opens a line after its bracketed counter (3DGS's `[ITER 7000] Evaluating
    test: …`, `[ITER 7000] Saving Checkpoint`): what the line does at that step."""
    return (after[1:].split() or [""])[0] if after.startswith("]") else ""


def _head(text: str, index: int) -> str:
    """The template's text before its `index`-th value."""
    count = 0
    for pos, ch in enumerate(text):
        if ch in "\x01\x02\x03":  # values; \x04 (a bar's glyphs) is not one
            if count == index:
                return text[:pos]
            count += 1
    return text
