"""Which of a template's durations time one step (pure): passes over a `Reading` that re-read
a `step_s` field as something else when the line says so.

- `line_times`: an unnamed duration beside a rate, a duration beside one named per step (the
  whole step's where a generic `timing` names its parts too), a part
  printed with its share, or the time of a smaller unit than the step (`line_s`);
- `window_by_rate`, `epoch_window`, `epoch_time`, `since_report`, `window_or_step`: the
  duration of the whole logging window (`window_s`), seen from the line's rate of steps, an
  epoch-end line, a time per epoch, TensorFlow's `(124.394 sec)` after the step, or the time
  between records;
- `counted_clock`: the training time so far (`elapsed`), seen from its rising with the counter;
- `operand`: a duration inside a worked sum is an operand, no time of the job's;
- `unit_done`: the time one unit of work took to be done (`sample processed in 14.73s`), the
  `unit_s` role: a step's only where one such line is printed per step (`perstep`).

Each docstring names the real line that showed the class.
"""

from __future__ import annotations

import math
import re
from statistics import median

from gpuslo.goodput.logs.counters import words
from gpuslo.goodput.logs.partsum import sum_of_parts
from gpuslo.goodput.logs.reading import Reading, Role
from gpuslo.goodput.logs.templates import Field

# names of one step's time (`Time per batch: 2.223[s]`, reid-strong-baseline's epoch summary: the
# epoch's mean batch, never the epoch's time over its batches; fresh20 X16)
PER_STEP_HINTS = ("per iter", "per step", "per_iter", "per_step", "/step", "step_time",
                  "iter_time", "batch_time", "batch_cost", "timing", "time/step", "sec/step",
                  "s/step", "steptime", "iter time", "step time", "this_iter", "time_this",
                  "per batch", "per_batch")
# a duration set in a worked sum: an operator standing apart (spaces around it) before the value
# or right after its unit; `key=value` glues its `=` to the name (llama.cpp's `dt=00:04:59 eta=`)
_OPERATOR_BEFORE = re.compile(r"(?:^|\s)[*×+=]\s*$")
_OPERATOR_AFTER = re.compile(r"^\s*[A-Za-zµ]{0,7}\s+[*×+=]\s")
LINE_WORDS = {"iter", "iters", "iteration", "micro", "microbatch", "microstep", "batch"}


# a unit of work a loop handles, then a verb saying it was done: `<unit> <verb> in <duration>`
UNIT_NOUNS = {"sample", "batch", "step", "iteration", "iter", "example", "item", "episode",
              "update", "minibatch"}
DONE_VERBS = {"processed", "done", "finished", "completed", "handled", "took"}


def unit_done(f: Field) -> str | None:
    """The unit whose whole handling the duration `f` times, when its name is a unit noun then a
    verb of completion (PostTraining-LLM-Small's `[timing] sample processed in 14.73s`: the
    sample's time from its start to after its optimizer step); None otherwise. Such a time is
    no part of a step (`sample` alone also names RL's sampling phase, a part) and no step's
    either until the lines show one unit per step (`perstep`)."""
    ws = words(f.key)
    for noun, verb in zip(ws, ws[1:], strict=False):
        if noun.lower() in UNIT_NOUNS and verb.lower() in DONE_VERBS:
            return noun.lower()
    return None


def operand(f: Field) -> bool:
    """True when the duration `f` is an operand of arithmetic printed in prose, an operator
    before it or right after its unit (a model's worked answer in an evaluation sample,
    PostTraining-LLM-Small's `[eval]` generations: `Distance = 62 km/h * 2 h = 124 km`):
    nothing the job measured. A log field is named, not computed (`time=0.5s step=3`, llama.cpp's
    `dt=00:04:59 eta=03:29:33`: the `=` glued to the next name opens a field)."""
    return bool(_OPERATOR_BEFORE.search(f.key) or _OPERATOR_AFTER.match(f.after))


def _whole(named: list[int], fields: list[Field]) -> list[int]:
    """Of the durations named per step, those named after the step itself when some are: the
    generic `timing` names every part of a step as well (verl's `timing_s/gen`, `timing_s/ref`,
    `timing_s/update_actor`, … beside `timing_s/step:9.97`, the whole step)."""
    whole = [i for i in named if any(h in fields[i].key.lower() for h in PER_STEP_HINTS
                                     if h != "timing")]
    return whole or named


def line_times(reading: Reading) -> None:
    """Unnamed durations beside a rate are not step times (Keras `3s 134ms/step`: the epoch's
    time); beside a duration named per step, or a line's (not a bar's) seconds per step
    (RETURNN's `0.855 sec/step` after `max_size:time 291200` and `elapsed 0:16:59`), another
    duration is no step time; a duration named after another counter than the step (`iter
    time` beside `step`) times one line's iteration, summed per step (`line_s`)."""
    fields, roles = reading.template.fields, reading.roles
    has_rate = any(r.role in ("rate_ips", "rate_spi") for r in roles.values())
    step_words = set(words(fields[reading.step].key)) if reading.step is not None else set()
    counters = {w for f in fields if f.integer and f.index != reading.step for w in words(f.key)}
    named = [i for i, r in roles.items() if r.role == "step_s"
             and any(h in fields[i].key.lower() for h in PER_STEP_HINTS)]
    named = _whole(named, fields)
    if (whole := sum_of_parts(fields, roles)) is not None:  # ESPnet2's `train_time`
        named = [whole]
    if not reading.bar:  # a line's own `0.855 sec/step` names the step time as well
        named += [i for i, r in roles.items() if r.role == "rate_spi"]
    for i, role in list(roles.items()):
        if role.role in ("step_s", "elapsed", "smoothed_s") and _share(fields, i):
            roles[i] = Role("metric", role.scale, "a part of a whole: its share (n%) follows it")
        if roles[i].role != "step_s":
            continue
        if named and i not in named:
            roles[i] = Role("metric", role.scale, "another duration than the one named per step")
            continue
        ws = set(words(fields[i].key))
        if not fields[i].key and has_rate:
            roles[i] = Role("metric", role.scale, "a duration beside a rate: not a step time")
        elif ws & LINE_WORDS & counters and not ws & step_words:
            roles[i] = Role("line_s", role.scale, f"the time of one {sorted(ws & LINE_WORDS)[0]}"
                            ", summed per step")


def window_by_rate(reading: Reading) -> None:
    """A duration that, times the line's rate of steps, is the counter's advance since the line
    before is the window's time, not one step's (keras-rl's episode rows: `39943/50000: …,
    duration: 2.289s, episode steps: 446, steps per second: 195`: 2.289 s × 195 = 446 steps)."""
    if reading.step is None:
        return
    fields, roles = reading.template.fields, reading.roles
    rates = [i for i, r in roles.items() if r.role in ("rate_ips", "rate_spi")]
    steps = fields[reading.step].numbers
    for i, role in list(roles.items()):
        if role.role != "step_s" or not rates:
            continue
        rate = rates[0]
        per_step, per_window = [], []
        for k in range(1, min(len(steps), len(fields[i].numbers), len(fields[rate].numbers))):
            s0, s1, d, r = steps[k - 1], steps[k], fields[i].numbers[k], fields[rate].numbers[k]
            if None in (s0, s1, d, r) or s1 <= s0 + 1 or d <= 0 or r <= 0:  # type: ignore
                continue
            ips = r / roles[rate].scale if roles[rate].role == "rate_ips" else 1 / (
                r * roles[rate].scale)  # type: ignore[operator]
            covered = d * role.scale * ips  # type: ignore[operator]
            per_step.append(abs(math.log(covered)))
            per_window.append(abs(math.log(covered / (s1 - s0))))  # type: ignore[operator]
        if per_step and median(per_window) + 0.1 < median(per_step):
            roles[i] = Role("window_s", role.scale, "times the rate of steps, the counter's "
                            "advance: a duration of the whole logging window")


_EPOCH_END = re.compile(r"(?i)\bepoch\b[^,;|]{0,40}\b(?:finished|completed|ended|done)\b"
                        r"|\bend of epoch\b")


def epoch_window(reading: Reading) -> None:
    """A duration on a line that says an epoch ended (tensorpack's `Epoch 4 (global_step 2000)
    finished, time:3 minutes 43 seconds.`) is the epoch's time, not one step's: a window over
    the steps since the line before (none on the first line: its step time is not known)."""
    if reading.step is None or reading.epoch is None:
        return
    if not _EPOCH_END.search(reading.template.text):
        return
    for i, role in list(reading.roles.items()):
        key = reading.template.fields[i].key.lower()
        if role.role == "step_s" and not any(h in key for h in PER_STEP_HINTS):
            reading.roles[i] = Role("window_s", role.scale, "the time of the epoch that ended")


_PER_EPOCH = re.compile(r"(?i)^(?P<unit>ms|s|sec|secs|min)/epoch$")
_PER_EPOCH_SCALE = {"ms": 1e-3, "s": 1.0, "sec": 1.0, "secs": 1.0, "min": 60.0}


def epoch_time(reading: Reading) -> None:
    """A duration whose unit is a time per epoch (`358ms/epoch`, `5s/epoch`) on a line whose
    counter is an `n/N` printed at its `N` (the epoch's last step) is the epoch's time: a window
    over the steps since the line before. Keras `fit(verbose=2)` prints one such line an epoch
    (`128/128 - 0s - loss: 2.9102 - accuracy: 0.1586 - 358ms/epoch - 3ms/step`), its `ms/step`
    rounded to whole milliseconds (3 for 2.8): the epoch's time over its steps is the finer
    figure. A line printed inside the epoch (`n < N`) has no epoch's time to give."""
    if reading.step is None or reading.total is None:
        return
    fields = reading.template.fields
    seen, limit = fields[reading.step].known(), fields[reading.total].known()
    if not seen or seen != limit:
        return
    for i, role in list(reading.roles.items()):
        found = _PER_EPOCH.match(fields[i].unit)
        if found and role.role == "metric":
            scale = _PER_EPOCH_SCALE[found.group("unit").lower()]
            reading.roles[i] = Role("window_s", scale, f"the epoch's time ({fields[i].unit})")


def since_report(reading: Reading) -> None:
    """An unnamed duration in parentheses right after the step counter is the time since the
    previous report (TensorFlow's LoggingTensorHook, `loss = 4.26, step = 100 (124.394 sec)`:
    `(%.3f sec)` over its `every_n_iter` steps): a window, not one step's time. So is a
    duration named a time delta (the Mario-RL tutorial's MetricLogger, `Time Delta 17.004`:
    `record_time - last_record_time`, fresh24 AB16)."""
    if reading.step is None or reading.step + 1 >= len(reading.template.fields):
        return
    for i, role in list(reading.roles.items()):
        if role.role == "step_s" and sorted(words(reading.template.fields[i].key)) == [
                "delta", "time"]:
            reading.roles[i] = Role("window_s", role.scale, "a time delta: since the last record")
    step, nxt = reading.template.fields[reading.step], reading.template.fields[reading.step + 1]
    role = reading.roles[nxt.index]
    if role.role == "step_s" and not nxt.key and step.after.strip() == "(" and (
            nxt.after.strip().endswith(")")):
        reading.roles[nxt.index] = Role("window_s", role.scale, "in parentheses after the step:"
                                        " the time since the previous report")


def _share(fields: list[Field], i: int) -> bool:
    """A duration followed by its share in parentheses (DeepSpeed-Chat's `Generate time=1.59s
    (75.13%)`, a part of the `E2E latency` printed before it): a part, not the step."""
    nxt = fields[i + 1] if i + 1 < len(fields) else None
    return nxt is not None and nxt.unit == "%" and fields[i].after.strip().startswith("(")


def window_or_step(reading: Reading, reference: list[float | None]) -> None:
    """Re-read `step_s` fields as `window_s` when they match the time between records (from
    stamps or an elapsed field: `reference`, seconds per record, None where unknown) better
    than that time divided by the steps between them (MMF's `time:` per 100 updates)."""
    if reading.step is None:
        return
    steps = reading.template.fields[reading.step].numbers
    for i, role in list(reading.roles.items()):
        if role.role != "step_s":
            continue
        f = reading.template.fields[i]
        per_step, per_window = [], []
        for k in range(1, min(len(steps), len(f.numbers), len(reference))):
            s0, s1, t0, t1, d = steps[k - 1], steps[k], reference[k - 1], reference[k], f.numbers[k]
            if None in (s0, s1, t0, t1, d) or s1 <= s0 or t1 <= t0 or d <= 0:  # type: ignore
                continue
            wall = t1 - t0  # type: ignore[operator]
            delta = s1 - s0  # type: ignore[operator]
            per_step.append(abs(math.log(d * role.scale * delta / wall)))
            per_window.append(abs(math.log(d * role.scale / wall)))
        if _label(f, per_step, per_window):
            reading.roles[i] = Role("metric", why="the same on every line while the time between "
                                    "lines varies, and matching neither it nor it per step")
        elif per_step and median(per_window) + 0.1 < median(per_step):
            reading.roles[i] = Role("window_s", role.scale, "matches the time between lines: a "
                                    "duration of the whole logging window")


MISMATCH = math.log(2.0)  # a duration further than this from both readings of the clock


def _label(f: Field, per_step: list[float], per_window: list[float]) -> bool:
    """A duration-shaped value printed the same on every record (3 or more intervals) that is
    over twice off both the time between the records and that time per step: a label, not a
    time (ILM-ASSL's `[3:20 high]` before `iter [11220/49000]`, 52-57 s between the lines of 10
    iterations). A measured time that is steady but near either reading stays a time."""
    return len(per_step) >= 3 and f.constant() and min(
        median(per_step), median(per_window)) > MISMATCH


PROPORTIONAL = 0.5  # a clock's growth may differ from the counter's by this share of it
MIN_GROWTH = math.log(1.25)  # the counter must grow this much over the records to tell


def counted_clock(reading: Reading) -> None:
    """An unnamed or plainly named duration that rises on every record, in proportion to the
    step counter, is the training time so far, not one step's (ParlAI's `[ time:2.0s
    total_exs:3616 … ] {… 'num_updates': 113 …}`, then 4.0 s at 230 and 6.0 s at 304: a clock
    started with the count). A step's own time barely moves while the counter grows (Swin's
    `time 0.6408` at iterations 250 .. 300); the counter must grow by a quarter at least."""
    if reading.step is None:
        return
    steps = reading.template.fields[reading.step].numbers
    for i, role in list(reading.roles.items()):
        f = reading.template.fields[i]
        if role.role != "step_s" or any(h in f.key.lower() for h in PER_STEP_HINTS):
            continue
        pairs = [(s, d) for s, d in zip(steps, f.numbers, strict=False)
                 if s is not None and d is not None and s > 0 and d > 0]
        if len(pairs) < 3 or any(b[0] <= a[0] or b[1] <= a[1]
                                 for a, b in zip(pairs, pairs[1:], strict=False)):
            continue
        grown = math.log(pairs[-1][0] / pairs[0][0])
        clock = math.log(pairs[-1][1] / pairs[0][1])
        if grown >= MIN_GROWTH and abs(clock - grown) < PROPORTIONAL * grown:
            reading.roles[i] = Role("elapsed", role.scale, "rises with the step counter, in "
                                    "proportion: the training time so far")


HOUR_S = 3600.0  # a clock printed with its hours (`12:46:47`) that rises on every record


def day_clock(readings: list[Reading]) -> None:
    """A named clock-shaped duration of an hour or more (`time=12:46:47`) that rises on every
    record of one family (the templates of one loop's lines, 3 records at least), by less than
    its own value each time, is a clock - the time of day or the time since some start - not
    one step's time (`metric`: it would give a span from midnight); the durations beside it
    with no per-step name are the time since the previous record (`window_s`). Applio's (RVC's
    `EpochRecorder.record()`: `time={now:%H:%M:%S} | training_speed={now - last_time}`) per-epoch
    line `… | epoch=1 | step=40 | time=12:46:47 | training_speed=0:00:27`, then 12:47:14 and
    12:47:41 on lines with more fields: `time` was read as a step of 46,034 s. A step's own time
    does not climb on every record by a fraction of its value. A clock that passes midnight
    does not rise everywhere; its field stays a duration."""
    by_key: dict[str, list[tuple[int, float]]] = {}
    for r in readings:
        for i, role in r.roles.items():
            f = r.template.fields[i]
            if role.role == "step_s" and f.kind == "dur" and f.key and not any(
                    h in f.key.lower() for h in PER_STEP_HINTS):
                by_key.setdefault(f.key, []).extend(
                    (line, n) for line, n in zip(r.template.lines, f.numbers, strict=False)
                    if n is not None)
    clocks = set()
    for key, points in by_key.items():
        seen = [n for _, n in sorted(points)]
        if len(seen) >= 3 and min(seen) >= HOUR_S and all(
                0 < b - a < a for a, b in zip(seen, seen[1:], strict=False)):
            clocks.add(key)
    if clocks:
        for r in readings:
            _beside_clock(r, clocks)


def _beside_clock(reading: Reading, clocks: set[str]) -> None:
    for i, role in list(reading.roles.items()):
        f = reading.template.fields[i]
        if role.role != "step_s" or any(h in f.key.lower() for h in PER_STEP_HINTS):
            continue
        if f.key in clocks:
            reading.roles[i] = Role("metric", why="a clock of an hour or more rising on every "
                                    "record of its loop: the time of day, no step's time")
        else:
            reading.roles[i] = Role("window_s", role.scale, "beside a clock of the day: the "
                                    "time since the previous record")


# words that name one step in a duration's key (`batch time`, `iter_time`): singular, a
# duration's own naming; the counters' wider `counters.STEP_WORDS` names a step counter
PER_STEP_WORDS = {"step", "batch", "iter", "iteration", "update", "microbatch", "microstep"}
TIME_UNITS = {"ms", "msec", "msecs", "s", "sec", "secs", "second", "seconds", "min", "mins",
              "us", "µs"}


def _family_stride(readings: list[Reading]) -> float | None:
    """The median rise of a family's step counter between its records in line order (the
    templates of one loop interleave: each template's own numbers skip the others'), None when
    it never rises."""
    points = sorted((line, r.template.fields[r.step].numbers[k])
                    for r in readings if r.step is not None
                    for k, line in enumerate(r.template.lines)
                    if k < len(r.template.fields[r.step].numbers))
    seen = [n for _, n in points if n is not None]
    ups = [b - a for a, b in zip(seen, seen[1:], strict=False) if b > a]
    return median(ups) if ups else None


def stride_unsettled(readings: list[Reading], clocked: bool) -> None:
    """A duration on the records of a loop whose counter rises by k > 1 between prints is
    either each step's time or the time of the k steps since the print before: a custom loop's
    `ep: 0, batch: 40, time: 8.38, …` printed every 20 batches, its `time_period = time() -
    stime` reset at each print (Barber0/LLM-pretrain's `train_epoch.py`), is the interval's,
    0.42 s a step, not 8.38 (newcomer4 #3). A clock between the prints (stamps or an elapsed
    field: `clocked`, `window_or_step` settles it) or the line itself (`_settled`) tells which.
    Every printer of this kind scored so far times one step (torchvision's MetricLogger,
    AverageMeter loops, SfMLearner, nanoGPT, ssd.pytorch), so the field stays a step's unless
    the line sums up its interval: a whole count printed as a mean (`_averaged_count`,
    `ntokens: 485.20/513`); then, unsettled, it is read as no step's time (`metric`): step time
    and span unknown, never a k-fold figure. A counter that rises by one leaves no doubt."""
    if clocked:
        return
    stride = _family_stride(readings)
    if stride is None or stride <= 1:
        return
    for reading in readings:
        fields = reading.template.fields
        if not _averaged_count(fields):
            continue  # the printers scored time one step and print it every k (`_settled`)
        for i, role in list(reading.roles.items()):
            if role.role == "step_s" and not _settled(fields, i):
                reading.roles[i] = Role("metric", why=(
                    f"a duration on lines {stride:g} steps apart, no clock between them: each "
                    f"step's time or the {stride:g} steps' - the lines cannot tell, unknown"))


def _settled(fields: list[Field], i: int) -> bool:
    """Whether the line says its duration is one step's although printed every k steps: a
    per-step name (`time/step`, CSRA's `batch time:0.3074`: `PER_STEP_HINTS`, a step word), a
    meter's latest value beside its running average (`_meter`), or a unit printed with it.
    The printers known to time one step and print it every k steps label its unit: nanoGPT's
    `time {dt*1000:.2f}ms` (`t0` reset each iteration, printed every `log_interval`) and its
    descendants (modded-llama2's `40 | loss 6.6875 | lr 3.0e-04 | 13808.97ms`), ssd.pytorch's
    `timer: %.4f sec.` (`t1 - t0` around one iteration, every 10); a bare `time: 8.38` states
    neither its unit nor what it timed. A prior from those printers, not a proof: a loop that
    prints its interval's time with a unit is read per step."""
    key = fields[i].key
    return any(h in key.lower() for h in PER_STEP_HINTS) or bool(
        set(words(key)) & PER_STEP_WORDS) or _meter(fields, i) or _unit_printed(fields[i])


def _unit_printed(f: Field) -> bool:
    """A unit of time printed with the value: glued (`13808.97ms`), the next word (`0.2110
    sec.`), in its name (`time_ms`, `time (s)`), or a clock form (`0:00:39`)."""
    after = f.after.strip().split(" ")[0].strip(",)|].") if f.after.strip() else ""
    return f.kind == "dur" or f.unit.lower() in TIME_UNITS or after.lower() in TIME_UNITS or (
        bool(set(words(f.key)) & TIME_UNITS))


def _meter(fields: list[Field], i: int) -> bool:
    """A duration followed by an unnamed one in parentheses, `Time 0.396 (1.135)`: the PyTorch
    ImageNet example's `AverageMeter` (`{val:.3f} ({avg:.3f})`, `batch_time.update(time.time() -
    end)` once a batch): the latest batch's time beside the running average of every batch's,
    each step's time whatever the print interval (imagenet18's lines every 5 batches)."""
    nxt = fields[i + 1] if i + 1 < len(fields) else None
    return nxt is not None and not nxt.key and fields[i].after.strip() == "(" and (
        nxt.after.strip().startswith(")"))


def _averaged_count(fields: list[Field]) -> bool:
    """A count out of a whole printed with a fraction, `ntokens: 485.20/513`: the mean over the
    batches since the last print (a batch holds whole tokens), so the line sums up its print
    interval, and a bare duration on it may be that interval's."""
    return any(f.after.strip() == "/" and k + 1 < len(fields) and fields[k + 1].integer and any(
        n is not None and n != int(n) for n in f.numbers) for k, f in enumerate(fields))
