"""Learning a log's shape from a sample of its records (pure): which templates are progress.

`learn(records, pins) -> Learnt`: the sample's templates (`templates.group`), each read by
`roles.read_template`; the progress templates fall into families (the same counter named the
same way: `iter` after `epoch`, a bar's `n/N`), and one family is the job's training progress:
the one with the most records (then the one that gives times, then the first: `families`).
Another family joins it when it is a bar like it and none of its records falls between the first
and the last of the main family's (Lightning's `Epoch 0: ... n/3376` bar, then after a restart its
`Training: | | n/?` bar), and so does a bar beside a line family of the same N, outside its span
(zipnerf's `1/25000:loss=…` record, then the tqdm bar `49/25000` of the same loop); a family
whose records fall inside the main one's span is another loop's (evaluation, an epoch bar, an
inner loop) and is not read as steps, unless it is a line glued after the main bar whose counter
is the bar's n plus one offset (Seed-VC's `…| 29/123 [12:45<…]epoch 7, step 890, …`: the job-wide
count of the bar's steps, `glued`), or a line that prints, with its own step time, each step the
bar draws next (verl's `step:20 - … - timing_s/step:9.97`, `twin`); a one-template family whose
template is another's with its first word cut short (the excerpt's `poch 7, step 880, …`) joins
that family. Epoch markers (`Epoch 96/100` alone on a line) are compiled too: they give the epoch
to a per-epoch counter that does not print it (Keras); with no step lines at all, the epoch lines
(markers, or epoch summaries that give a time) are the steps, not a plural `Epochs: 1`
printed once with nothing else (a setting); a counter printed once, with no N and no time, is no
step line beside recurring epoch lines (`epochs.lone_count`). Timing lines are compiled when the
progress lines give no rate of their own (a rate is the reader's last choice of step time,
`progress`): a recurring template with a rate of iterations and no counter (`speed: 0.0589s/iter;
left time: …` under Time-Series-Library's `iters: 300, epoch: 1 | loss: …`; TensorFlow's
`global_step/sec: 0.8039` beside `loss = …, step = 100`); the reader gives each one's time to the
progress record next to it (`reader.LogReader`); so are durations printed on lines of their own
where the progress lines give no time at all (`aside`).
Each template's reading gets a second look (`recheck`: a right-aligned counter printed first,
Keras's time per counted unit, a time that barely rises, the training clock of two), and the
rows of a model-summary table are left out of the sample (`summary`): their counts are no steps.

A family left out whose lines all come before or after the chosen ones', in other words, is
another run or job in the same file (`cat run1.log run2.log`): kept as `Apart` so the document
says it was not read, never dropping it silently. A family of numbered stage headers (`Step 1:
Loading Data`, `Step 2: Preprocessing Data`: one title a number) is no progress (`stages`).

What was read and why, and the recurring templates left unread, are kept for `--explain`.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from gpuslo.goodput.logs.aside import set_apart, untimed
from gpuslo.goodput.logs.bartime import bar_timers
from gpuslo.goodput.logs.counters import is_global, is_step_name, unnamed
from gpuslo.goodput.logs.durations import (
    counted_clock,
    day_clock,
    stride_unsettled,
    window_or_step,
)
from gpuslo.goodput.logs.epochs import lone_count, outer_loop
from gpuslo.goodput.logs.evalblock import evaluation_families
from gpuslo.goodput.logs.families import RECURRING, choose, run_in_gaps, warm_up
from gpuslo.goodput.logs.glued import cut_start
from gpuslo.goodput.logs.matchers import Matcher, compile_reading
from gpuslo.goodput.logs.perstep import per_step_matcher
from gpuslo.goodput.logs.preference import by_preference
from gpuslo.goodput.logs.recheck import recheck
from gpuslo.goodput.logs.roles import (
    NOT_PROGRESS_HEAD,
    Reading,
    Role,
    read_template,
    words,
)
from gpuslo.goodput.logs.stages import stage_headers
from gpuslo.goodput.logs.summary import in_tables
from gpuslo.goodput.logs.templates import SampleRecord, Template, group
from gpuslo.goodput.logs.throughput import declared, throughput_rate
from gpuslo.goodput.logs.windowlines import window_steps

_RATES = ("rate_ips", "rate_spi")


@dataclass
class Learnt:
    """Matchers of the training progress and the epoch markers, and every template's reading
    (for `--explain`)."""

    progress: list[Matcher] = field(default_factory=list)
    markers: list[Matcher] = field(default_factory=list)
    readings: list[Reading] = field(default_factory=list)
    other_families: list[str] = field(default_factory=list)
    timing: list[Matcher] = field(default_factory=list)
    apart: list[Apart] = field(default_factory=list)
    counted: tuple[Matcher, bool] | None = None  # a record printed once per step? (`perstep`)
    inner: list[str] = field(default_factory=list)  # bars run anew between steps (`run_in_gaps`)


@dataclass(frozen=True)
class Apart:
    """A progress family not read as the steps whose lines all lie before (or after) the
    training progress's: another run or job in the same file (two logs concatenated), whose
    steps and time are not accounted. `records` in the sample; `first`, `last` its lines;
    `example` one of them."""

    family: str
    records: int
    first: int
    last: int
    before: bool
    example: str
    warm: bool = False  # its counter is a warm-up's (`families.warm_up`), not another run's


def family_of(reading: Reading) -> str:
    """A progress family's name: bar or line, the counter's name, the two words before it. An
    unnamed counter is named by its shape (`counters.unnamed`): an `n/N` pair and a lone
    integer printed first are not one counter (EasyOCR's `[20000/300000] Train loss: …` and the
    rows of its prediction table, `049481 | 049481 | 0.9509 True`)."""
    tpl = reading.template
    head = tpl.text[:_position(tpl.text, reading.step or 0)]
    before = [w for w in words(head) if not w.isdigit()][-2:]
    step = tpl.fields[reading.step or 0]
    name = step.key.lower() or unnamed(step)
    return f"{'bar' if reading.bar else 'line'}:{name}:{' '.join(before)}"


def _position(text: str, index: int) -> int:
    count = 0
    for pos, ch in enumerate(text):
        if ch in "\x01\x02\x03":  # values; \x04 (a bar's glyphs) is not one
            if count == index:
                return pos
            count += 1
    return len(text)


def _reference(reading: Reading) -> list[float | None]:
    """Seconds at each record of the template: its stamps, else its elapsed field."""
    tpl = reading.template
    if sum(t is not None for t in tpl.stamps) >= 2:
        return list(tpl.stamps)
    for i, role in reading.roles.items():
        if role.role == "elapsed":
            return [n * role.scale if n is not None else None for n in tpl.fields[i].numbers]
    return []


def _epochs_as_steps(marker: Reading) -> Matcher:
    """A log with epoch lines but no step lines (nnU-Net's `epoch:  3`, an epoch summary):
    the epoch is the step."""
    reading = Reading(marker.template, dict(marker.roles), epoch=None, progress=True,
                      why="epoch lines and no step lines: the epoch is the step")
    reading.step = marker.epoch
    reading.roles[marker.epoch] = Role("step", why="the epoch counts the progress")  # type: ignore[index]
    outer = outer_loop(marker.template.fields, marker.epoch)  # type: ignore[arg-type]
    if outer is not None:  # `[Fold 2 Ep 001]`: the epochs run inside each fold
        reading.epoch, reading.per_epoch = outer, True
        reading.roles[outer] = Role("epoch", why="the fold or trial the epochs run inside")
    return compile_reading(reading, "epochs")


def _epoch_summary(reading: Reading) -> bool:
    """An epoch summary with times: no step counter, a named epoch, a duration, printed at least
    twice (`Epoch: 118/200 | Train loss: … | Val loss: … | Time:  27.276s`; InnerEye's `Epoch 1
    training took 6.60sec, …`: two epochs make a count); not an evaluation's. Read as the
    steps only when the log has no step line (`learn`)."""
    tpl = reading.template
    if reading.step is not None or reading.epoch is None or reading.epoch_marker or (
            tpl.count < 2):
        return False
    if not any(r.role in ("step_s", "elapsed") for r in reading.roles.values()):
        return False
    head = tpl.text[:_position(tpl.text, reading.epoch)]
    return not NOT_PROGRESS_HEAD.search(head + " " + tpl.fields[reading.epoch].key)


def _evaluated_steps(reading: Reading) -> bool:
    """An evaluation line that names the step it runs at (`Calculating validation loss at step
    12...`, csm-1b's LoRA script, fresh13 P07), made the steps (the field its `step` role) only
    where the log prints no step line (`learn`): a line that is no progress, one integer field
    named by an evaluation word (`NOT_PROGRESS_HEAD`) and ending in a step's name, printed at
    least `RECURRING` times, rising by one steady stride (the loop evaluates every k steps: the
    numbers are the step count, and the time between lines that stride's, evaluation
    included). An evaluation at an epoch's end (`at end of epoch 3`) names no step; one at
    irregular steps, or a second field beside the step (a metric: `val loss 2.1 at step 40`), is
    left."""
    fields = reading.template.fields
    if reading.progress or reading.epoch_marker or len(fields) != 1:
        return False
    key = fields[0].key
    seen = fields[0].known()
    strides = {b - a for a, b in zip(seen, seen[1:], strict=False)}
    if not (fields[0].integer and key.split() and is_step_name(key.split()[-1])
            and NOT_PROGRESS_HEAD.search(key) and len(seen) >= RECURRING and len(strides) == 1
            and min(strides) > 0):
        return False
    reading.step = 0
    reading.roles[0] = Role("step", why=f"counter ({key.split()[-1]}) of the evaluations")
    return True


def _setting(marker: Reading) -> bool:
    """An epoch marker that is the run's planned count, not an epoch seen: printed once, named
    in the plural, and giving nothing but that number (a QLoRA wrapper's `📚 Epochs: 1` among
    its settings; VITS's one `====> Epoch: 23084` is the epoch it is in)."""
    tpl = marker.template
    return tpl.count < 2 and marker.epoch is not None and words(
        tpl.fields[marker.epoch].key)[-1:] == ["epochs"] and all(
        r.role in ("epoch", "metric") for r in marker.roles.values())


def _timing(reading: Reading) -> bool:
    """A timing line: no counter, recurring (or once where the rate names the global step:
    TPUEstimator's `global_step/sec: 3.37388`, its StepCounterHook's), a rate of iterations,
    not an evaluation's."""
    if reading.step is not None or reading.epoch_marker:
        return False
    rates = [i for i, r in reading.roles.items() if r.role in _RATES]
    if not rates or reading.template.count < 2 and not is_global(
            reading.template.fields[rates[0]].key):
        return False
    head = reading.template.text[:_position(reading.template.text, rates[0])]
    if NOT_PROGRESS_HEAD.search(head + " " + reading.template.fields[rates[0]].key):
        return False
    reading.why = "a timing line: its rate is the time of the progress record beside it"
    return True


def _apart(families: dict[str, list[Reading]], chosen: list[str]) -> list[Apart]:
    """The families left out whose lines (RECURRING or more) all come before the first, or
    after the last, line of the chosen ones, in other words (not the same loop's line with a
    word written otherwise: lit-gpt's `stEp` before its `step`): see `Apart`; said, never
    silently dropped."""
    lines = [n for name in chosen for r in families[name] for n in r.template.lines]
    if not lines:
        return []
    first, last = min(lines), max(lines)
    vocabulary = {w for name in chosen for r in families[name] for w in _words(r)}
    out = []
    for name, readings in families.items():
        own = sorted(n for r in readings for n in r.template.lines)
        count = sum(r.template.count for r in readings)
        if name in chosen or count < RECURRING or not (own[-1] < first or own[0] > last):
            continue
        said = {w for r in readings for w in _words(r)}
        if len(said & vocabulary) >= 0.5 * len(said | vocabulary):
            continue
        example = min(readings, key=lambda r: r.template.lines[0]).template.example
        out.append(Apart(name, count, own[0], own[-1], own[-1] < first, example[:120],
                         warm_up(readings)))
    return out


def _words(reading: Reading) -> set[str]:
    return {w.lower() for w in words(reading.template.text) if not w.isdigit()}


def learn(records: list[SampleRecord], pins: dict[str, str] | None = None) -> Learnt:
    """Learn the progress and epoch-marker templates of a sample (see the module docstring)."""
    out = Learnt()
    families = _read(records, pins, out)
    for readings in families.values():
        _clocks(readings)
    _regroup(families)
    chosen = _not_lone(out, families, choose(families, evaluation_families(families, records)))
    if not chosen:  # no step line: the evaluations may name the steps
        chosen = _evaluations_as_steps(out, families)
    for name in chosen:
        for reading in by_preference(families[name]):  # the one giving the best time first
            out.progress.append(compile_reading(reading, name))
    _epochs_as_progress(out, bool(chosen))
    _timers(out, families, chosen)
    out.counted = per_step_matcher(out.readings) if out.progress else None
    _left_out(out, families, chosen)
    return out


def _read(records: list[SampleRecord], pins: dict[str, str] | None,
          out: Learnt) -> dict[str, list[Reading]]:
    """Every template of the sample read (`out.readings`), its epoch markers compiled
    (`out.markers`), and the progress readings by family (`family_of`); a model summary's
    rows are left out of the sample (`summary`)."""
    tables = in_tables([r.text for r in records])
    templates: list[Template] = group([r for k, r in enumerate(records) if k not in tables])
    families: dict[str, list[Reading]] = {}
    per_step = declared([r.text for r in records])  # items a step, from printed settings
    for tpl in templates:
        reading = recheck(read_template(tpl, pins))
        if reading.progress:
            throughput_rate(reading, per_step)
        out.readings.append(reading)
        if reading.progress:
            families.setdefault(family_of(reading), []).append(reading)
        elif reading.epoch_marker:
            out.markers.append(compile_reading(reading, "epoch"))
    return families


def _clocks(readings: list[Reading]) -> None:
    """How one family's records are timed (`durations`): a time of day rising over its
    templates, a clock counted in steps, a window or a step time, a stride not settled."""
    day_clock(readings)
    for reading in readings:
        counted_clock(reading)
        window_or_step(reading, _reference(reading))
    stride_unsettled(readings, any(
        sum(t is not None for t in _reference(r)) >= 2 for r in readings))


def _regroup(families: dict[str, list[Reading]]) -> None:
    """Families of numbered stage headers are no progress (`stages`); a one-template family
    that is another's template with its first word cut (the excerpt's first line, `glued`)
    joins it. In place."""
    for name in [n for n, readings in families.items() if stage_headers(readings)]:
        for reading in families.pop(name):
            reading.progress = False
            reading.why = "numbered stage headers: each number has its own title (`stages`)"
    for name in list(families):
        whole = cut_start(name, families)
        if whole is not None:
            families[whole] += families.pop(name)


def _not_lone(out: Learnt, families: dict[str, list[Reading]], chosen: list[str]) -> list[str]:
    """`chosen`, or [] where it is one record of a counter with no N and no time beside epoch
    lines that recur (`epochs.lone_count`): those families are dropped, said not progress."""
    summaries = [r for r in out.readings if _epoch_summary(r)]
    counted = [m.reading for m in out.markers if not _setting(m.reading)]
    if not lone_count([r for n in chosen for r in families[n]], counted + summaries):
        return chosen
    for reading in [r for n in chosen for r in families.pop(n)]:
        reading.progress = False
        reading.why = "a counter printed once, no N, no time, beside recurring epoch lines"
    return []


def _evaluations_as_steps(out: Learnt, families: dict[str, list[Reading]]) -> list[str]:
    """Where no family is chosen: the first evaluation line that names the steps it runs at
    (`_evaluated_steps`, asked of every reading) made the progress family; [] when none."""
    evaluated = [r for r in out.readings if _evaluated_steps(r)][:1]
    for reading in evaluated:
        reading.progress = True
        reading.why = ("evaluations at each step they name, steadily spaced, and no step line: "
                       "their numbers count the steps")
        families[family_of(reading)] = [reading]
    return [family_of(r) for r in evaluated]


def _epochs_as_progress(out: Learnt, chosen: bool) -> None:
    """With no progress family `chosen`, the most printed epoch line (a marker that is no
    setting, or an epoch summary with times) is the steps (`_epochs_as_steps`)."""
    summaries = [r for r in out.readings if _epoch_summary(r)]
    counted = [m.reading for m in out.markers if not _setting(m.reading)]
    if not chosen and (counted or summaries):
        best = max(counted + summaries,
                   key=lambda r: (r.template.count, not r.epoch_marker))
        out.markers = [m for m in out.markers if m.reading is not best]
        out.progress.append(_epochs_as_steps(best))


def _timers(out: Learnt, families: dict[str, list[Reading]], chosen: list[str]) -> None:
    """The timing matchers (module docstring): timing lines where the progress gives no rate,
    a bar drawn at a record's step (`bartime`), durations on lines of their own (`aside`,
    `windowlines`)."""
    if not any(r.role in _RATES for m in out.progress for r in m.reading.roles.values()):
        out.timing = [compile_reading(r, "timing") for r in out.readings if _timing(r)]
    out.timing += bar_timers(families, chosen)
    if untimed(out.progress):
        epochs = any(m.family == "epochs" for m in out.progress)
        lines = [m.reading for m in out.progress] if not epochs else []
        for r in out.readings:
            r.window_steps = window_steps(r, lines)
        out.timing += [compile_reading(r, "timing") for r in out.readings
                       if r.window_steps or set_apart(r, epochs)]


def _left_out(out: Learnt, families: dict[str, list[Reading]], chosen: list[str]) -> None:
    """The families not chosen, each reading told why (another loop's, or another run's:
    `_apart`)."""
    out.other_families = [n for n in families if n not in chosen]
    out.inner = [n for n in out.other_families if run_in_gaps(n, families)]  # (not relearnt)
    out.apart = _apart(families, chosen)
    apart = {a.family: a for a in out.apart}
    for name in out.other_families:
        for reading in families[name]:
            reading.progress = False
            reading.why = f"another loop's counter ({name}), not the training steps" if (
                name not in apart) else (f"a warm-up's steps ({name}), not the training's"
                                         if apart[name].warm else
                                         f"another run's or job's steps ({name}): all "
                                         f"{'before' if apart[name].before else 'after'} the "
                                         "steps read, in other words")
